"""The garbage collector's schedule for a long-running server (`python -m app`).

CPython's collector is generational: a young collection walks everything made since the
last one that is still alive. A server full of tables keeps replacing objects that live a
while (each connection's frame parser and last frame, each table's timers and newest
state): the old ones die by reference count, the new ones wait in the young generation,
and since a death counts against the allocations that trigger a collection, one comes
only after tens of thousands of them piled up. At 1,000 tables every young collection
walked about 55,000 objects: 20-30 ms with every table waiting.

So here the collector runs on a clock instead (SLAPJACK_GC_YOUNG_SECONDS): automatic
collection is off, and every interval a young collection walks only what the last
interval made, then `gc.freeze()` moves what survived into the permanent generation (a
list splice: no walk), where no collection looks at it again. Frozen objects still die by
reference count as ever; only cyclic garbage among them (what a closed connection leaves)
waits, for a full collection (`gc.unfreeze()`, `gc.collect()`, `gc.freeze()`). That walks
the whole heap (about 300 ms at 1,000 tables), so it comes rarely: once the heap has grown
by a quarter since the last one (the interpreter's allocated blocks,
`sys.getallocatedblocks()`, kept per arena, where counting the frozen objects walks every
one of them: 6 ms a call at two million) and no sooner than FULL_SECONDS after it, or
LONGEST_SECONDS after it whatever the growth. CPython's own collector, with the thresholds
this server used before, came to about as rare a full collection: a quarter more
long-lived objects, after ten middle collections of a hundred young ones each. What waits
meanwhile is what a closed room or connection left in cycles: memory, never correctness.

The interval follows the load (`next_interval`): SLAPJACK_GC_YOUNG_SECONDS is the shortest,
kept while young collections take PAUSE_TARGET of CPU or more (600 tables of four: 0.7-0.9
ms each, every 25 ms, as before), and it stretches up to STRETCH times that while they take
under half of it. A young collection's cost grows much more slowly than its interval (200
tables: 0.08-0.1 ms every 25 ms, about 0.3 ms every 100-200 ms), so fewer of them cost
less: side by side, 2% less of the server's CPU per message at 200 tables. A collection
over the target halves the interval at once; it grows back by a quarter a collection.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable

from app.ops.clock import REAL_TIME, Clock, Handle
from app.ops.logs import log_event

FULL_GROWTH = 0.25  # a full collection once the heap grew by this much
FULL_SECONDS = 300.0  # and no sooner than this after the last one (or the start)
# A young collection's CPU time the interval keeps near (next_interval), and how far the
# interval may stretch from the shortest (SLAPJACK_GC_YOUNG_SECONDS) while they stay under.
PAUSE_TARGET = 0.0005
STRETCH = 8
# At the latest this long after the last: the allocated blocks count small objects only
# (pymalloc's, up to 512 bytes), and a cycle holding big ones would not move them.
LONGEST_SECONDS = 1800.0


def next_interval(
    interval: float, pause: float, shortest: float, longest: float, target: float = PAUSE_TARGET
) -> float:
    """The interval after a young collection that took `pause` (CPU seconds) at `interval`:
    half of it (no shorter than `shortest`) if the pause passed `target`, a quarter more (no
    longer than `longest`) if it stayed under half the target, else the same."""
    if pause > target:
        return max(shortest, interval / 2)
    if pause < target / 2:
        return min(longest, interval * 1.25)
    return interval


class Collector:
    def __init__(
        self,
        interval: float,
        *,
        stretch: float = STRETCH,
        pause_target: float = PAUSE_TARGET,
        cpu_clock: Callable[[], float] = time.thread_time,
        full_growth: float = FULL_GROWTH,
        full_seconds: float = FULL_SECONDS,
        longest_seconds: float = LONGEST_SECONDS,
        clock: Clock = REAL_TIME,
    ) -> None:
        if interval <= 0 or stretch < 1:
            raise ValueError("a collector's interval is positive, and stretches 1 time or more")
        # The interval now, between the shortest (under load) and the longest (`next_interval`).
        self.shortest, self.longest = interval, interval * stretch
        self.interval, self.pause_target, self._cpu_clock = interval, pause_target, cpu_clock
        self.full_growth = full_growth
        self.clock = clock  # the app's: when collections come, and how long since a full one
        self.full_seconds, self.longest_seconds = full_seconds, longest_seconds
        self.young = 0  # young collections made
        self.fulls = 0  # full collections made
        self._baseline = 0  # the heap's allocated blocks after the last full collection
        self._last_full = 0.0  # when that was (the clock's time; the start at first)
        self._timer: Handle | None = None
        self._was_enabled = True
        # The heap's growth is looked at about once a second, not every tick: counting the
        # blocks visits every pool of every arena (12,000 of them at 200 MB).
        self._next_look = 0.0

    def start(self) -> None:
        """Takes the collector over on the running loop: what is alive now is frozen."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        gc.freeze()
        self._baseline = sys.getallocatedblocks()
        self._last_full = self.clock.now()
        self._next_look = self._last_full + 1.0
        self._arm()

    def stop(self) -> None:
        """Hands the collector back to CPython, the frozen too (so the collection at exit
        finalizes what they left in cycles)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def _arm(self) -> None:
        self._timer = self.clock.call_later(self.interval, self._tick)

    def _tick(self) -> None:
        try:
            self.collect()
        finally:
            self._arm()  # at the interval this collection left

    def collect(self) -> None:
        """A young collection, then what survived it frozen (the next interval set by its
        CPU time); a full one when it is due."""
        began = self._cpu_clock()
        gc.collect(0)
        pause = self._cpu_clock() - began
        self.interval = next_interval(
            self.interval, pause, self.shortest, self.longest, self.pause_target
        )
        gc.freeze()  # last: what the lines above made is frozen too, none left young
        self.young += 1
        now = self.clock.now()
        if now >= self._next_look:
            self._next_look = now + 1.0
            if self.full_due(now):
                self.full()

    def full_due(self, now: float) -> bool:
        since = now - self._last_full
        return since >= self.longest_seconds or (
            since >= self.full_seconds
            and sys.getallocatedblocks() > self._baseline * (1 + self.full_growth)
        )

    def full(self) -> None:
        """Every object is walked once more: cyclic garbage among the frozen is freed."""
        began = time.perf_counter()
        blocks = sys.getallocatedblocks()
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        self._baseline = sys.getallocatedblocks()
        self._last_full = self.clock.now()
        self.fulls += 1
        log_event(
            "gc_full_collection",
            ms=round((time.perf_counter() - began) * 1000, 1),
            freed=freed,
            blocks_before=blocks,
            blocks_after=self._baseline,
        )
