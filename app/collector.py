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
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time

from app.logs import log_event
from app.timers import TIMER_CONTEXT

FULL_GROWTH = 0.25  # a full collection once the heap grew by this much
FULL_SECONDS = 300.0  # and no sooner than this after the last one (or the start)
# At the latest this long after the last: the allocated blocks count small objects only
# (pymalloc's, up to 512 bytes), and a cycle holding big ones would not move them.
LONGEST_SECONDS = 1800.0


class Collector:
    def __init__(
        self,
        interval: float,
        *,
        full_growth: float = FULL_GROWTH,
        full_seconds: float = FULL_SECONDS,
        longest_seconds: float = LONGEST_SECONDS,
    ) -> None:
        if interval <= 0:
            raise ValueError("a collector's interval is positive")
        self.interval, self.full_growth = interval, full_growth
        self.full_seconds, self.longest_seconds = full_seconds, longest_seconds
        self.young = 0  # young collections made
        self.fulls = 0  # full collections made
        self._baseline = 0  # the heap's allocated blocks after the last full collection
        self._last_full = 0.0  # when that was (time.monotonic(); the start at first)
        self._timer: asyncio.TimerHandle | None = None
        self._was_enabled = True
        # The heap's growth is looked at about once a second, not every tick: counting the
        # blocks visits every pool of every arena (12,000 of them at 200 MB).
        self._ticks_per_look = max(1, round(1 / interval))

    def start(self) -> None:
        """Takes the collector over on the running loop: what is alive now is frozen."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        gc.freeze()
        self._baseline = sys.getallocatedblocks()
        self._last_full = time.monotonic()
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
        self._timer = asyncio.get_running_loop().call_later(
            self.interval, self._tick, context=TIMER_CONTEXT
        )

    def _tick(self) -> None:
        self._arm()
        self.collect()

    def collect(self) -> None:
        """A young collection, then what survived it frozen; a full one when it is due."""
        gc.collect(0)
        gc.freeze()
        self.young += 1
        if self.young % self._ticks_per_look == 0 and self.full_due(time.monotonic()):
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
        self._last_full = time.monotonic()
        self.fulls += 1
        log_event(
            "gc_full_collection",
            ms=round((time.perf_counter() - began) * 1000, 1),
            freed=freed,
            blocks_before=blocks,
            blocks_after=self._baseline,
        )
