"""Named one-shot timers for a room, and the room's lock with a watchdog on it.

A job runs under the room's lock, like everything else that changes the room, and is
told the time it fired: that is its place in the room's arrival order. A job that fired
but was replaced or cancelled while it waited for the lock does not run: it would act
on a table that has moved on (an autopilot flip for the wrong seat, a bot's stale plan).

A job never runs before its time: uvloop fires `call_later` up to about a millisecond
early (it truncates to milliseconds and reads a cached clock), and a job that re-checks
"has the time come?" then found it had not and did nothing, for good. An early wake-up
re-arms for the remainder. Timed checks still compare with TIMER_SLACK to spare: a
sum of float seconds minus one of its terms may be an ulp short.

A timer moved later (the autopilot, pushed back by every flip) keeps its loop timer: it
wakes at the earlier time and sleeps the rest, the way an early wake-up does. A table
moves its timers at every change, and a loop timer cancelled and made again each time
was most of what timers cost. Likewise the lock's watchdog is one check a tenth of a
second for all of a process's held locks (`LockWatch`, one the registry of rooms owns), not
a loop timer made and cancelled per hold.

Time is the injected clock's (app/ops/clock.py): a test's ManualClock fires these timers
when it is advanced.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict, deque
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from app.ops.clock import Clock, Handle
from app.ops.logs import log_event
from app.ops.metrics import Metrics

Job = Callable[[float], Coroutine[Any, Any, None]]  # called with the time it fired
TIMER_SLACK = 0.001  # seconds: what a timed check forgives (float rounding, not lateness)
LOCK_WATCHDOG_SECONDS = 1.0  # a room's lock held longer than this is logged and counted
LOCK_WATCH_SECONDS = 0.1  # how often held locks are looked at: a long hold is told this late


class _Armed:
    """A named timer's loop timer (`handle`, due at `wakes`) and what it is for: `job` at
    `when` (no sooner than `wakes`: a timer moved later sleeps the rest when it wakes)."""

    __slots__ = ("generation", "handle", "job", "wakes", "when")

    def __init__(self, handle: Handle, when: float, job: Job, generation: int):
        self.handle, self.wakes, self.when, self.job = handle, when, when, job
        self.generation = generation


def _always() -> bool:
    return True


class Timers:
    def __init__(self, lock: asyncio.Lock, clock: Clock) -> None:
        self._lock = lock
        self._clock = clock
        self._handles: dict[str, _Armed] = {}
        self._generation: defaultdict[str, int] = defaultdict(int)
        self._tasks: set[asyncio.Task[None]] = set()
        # Asked before each job, under the lock: False skips it (a paused room, whose owner
        # sets every timer again from its state when it goes on).
        self.gate: Callable[[], bool] = _always

    def at(self, name: str, when: float, job: Job) -> None:
        """Runs `job(now)` at the clock's time `when` (at once if past), replacing `name`."""
        armed = self._handles.get(name)
        if armed is not None and armed.wakes <= when:
            armed.when, armed.job = when, job  # it wakes no later, and sleeps the rest then
            return
        self.cancel(name)
        generation = self._generation[name]
        armed = _Armed(self._call_at(when, name), when, job, generation)
        self._handles[name] = armed

    def _call_at(self, when: float, name: str) -> Handle:
        return self._clock.call_at(when, self._fire, name)

    def cancel(self, name: str) -> None:
        self._generation[name] += 1  # a fired job still waiting for the lock is void too
        armed = self._handles.pop(name, None)
        if armed is not None:
            armed.handle.cancel()

    def cancel_all(self) -> None:
        for name in list(self._handles):
            self.cancel(name)
        for task in list(self._tasks):
            if task is not asyncio.current_task():  # a timer job may close its own room
                task.cancel()

    def pending(self, name: str) -> bool:
        return name in self._handles

    def _fire(self, name: str) -> None:
        armed = self._handles.get(name)
        if armed is None:
            return  # cancelled as it fired
        now = self._clock.now()
        if now < armed.when:  # woken early, or moved later since: sleep the rest
            armed.handle, armed.wakes = self._call_at(armed.when, name), armed.when
            return
        del self._handles[name]
        task = asyncio.get_running_loop().create_task(
            self._run(name, armed.generation, armed.job, now)
        )
        self._tasks.add(task)  # keep a reference until done: asyncio holds tasks weakly
        task.add_done_callback(self._done)

    async def _run(self, name: str, generation: int, job: Job, now: float) -> None:
        async with self._lock:
            if self._generation[name] == generation and self.gate():
                await job(now)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log_event("room_timer_failed", level=logging.ERROR, error=repr(task.exception()))


class WatchedLock(asyncio.Lock):
    """A room's lock that measures how long each holder keeps it, and past `limit` seconds
    logs the room (once per hold) while it is still held: a stuck room shows up live."""

    # asyncio.Lock's own state (the same on Python 3.11 to 3.13), read by `take`; listed in
    # app/realtime/internals.py with the other libraries' internals we rely on
    _locked: bool
    _waiters: deque[asyncio.Future[Any]] | None

    def __init__(
        self, room: str, metrics: Metrics, watch: LockWatch, limit: float = LOCK_WATCHDOG_SECONDS
    ) -> None:
        super().__init__()
        self.room, self.metrics, self.limit = room, metrics, limit
        self._watch = watch
        self._now = watch.clock.now
        self._since = 0.0
        self._told = False

    def acquire_now(self) -> bool:
        """Takes the lock at once if it is free and nobody waits for it: what `acquire`
        does then (asyncio.Lock's own first test, whose state it reads), without the
        coroutines of `async with` (`__aenter__`, `acquire`, the base's `acquire`,
        `__aexit__`), for the messages that take a free room's lock, nearly all. False, and
        nothing done, otherwise: the caller then awaits `acquire` and takes its turn."""
        if self._locked or self._waiters:
            return False
        self._locked = True
        self._held()
        return True

    async def acquire(self) -> Literal[True]:
        await super().acquire()
        self._held()
        return True

    def _held(self) -> None:
        self._since = self._now()
        self._told = False
        self._watch.hold(self)

    def release(self) -> None:
        held = self._now() - self._since
        self._watch.let_go(self)
        self.check(self._since + held)  # a hold that ended between two looks is told too
        self.metrics.lock_released(held)
        super().release()

    def check(self, now: float) -> None:
        """Logs this hold once it has lasted past the limit (the watch asks while it is
        held, and its release once more)."""
        held = now - self._since
        if held > self.limit and not self._told:
            self._told = True
            self.metrics.lock_held_long.inc()
            log_event(
                "room_lock_held_long", level=logging.WARNING, room=self.room, seconds=round(held, 3)
            )


class LockWatch:
    """Every room lock held, checked every LOCK_WATCH_SECONDS while any is held (one timer
    for them all, armed only then). The registry of rooms owns one, on its clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.held: dict[WatchedLock, None] = {}
        self.armed = False

    def hold(self, lock: WatchedLock) -> None:
        self.held[lock] = None
        if not self.armed:
            self.armed = True
            self.clock.call_later(LOCK_WATCH_SECONDS, self._check)

    def let_go(self, lock: WatchedLock) -> None:
        self.held.pop(lock, None)

    def _check(self) -> None:
        try:
            now = self.clock.now()
            for lock in list(self.held):
                lock.check(now)
        finally:  # never lose the watch: every later hold depends on it
            if self.held:
                self.clock.call_later(LOCK_WATCH_SECONDS, self._check)
            else:
                self.armed = False
