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
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from app.logs import log_event
from app.metrics import Metrics

Job = Callable[[float], Coroutine[Any, Any, None]]  # called with the time it fired
TIMER_SLACK = 0.001  # seconds: what a timed check forgives (float rounding, not lateness)
LOCK_WATCHDOG_SECONDS = 1.0  # a room's lock held longer than this is logged and counted
# The context every room timer runs its callback in. `call_later` otherwise copies the
# caller's contextvars.Context for each handle: an object per timer the collector walks
# while the timer waits (a table keeps several waiting), and the app sets no context
# variable for a callback to see. A job's task copies this (empty) context as its own.
TIMER_CONTEXT = contextvars.Context()


class Timers:
    def __init__(self, lock: asyncio.Lock) -> None:
        self._lock = lock
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._generation: defaultdict[str, int] = defaultdict(int)
        self._tasks: set[asyncio.Task[None]] = set()

    def at(self, name: str, when: float, job: Job) -> None:
        """Runs `job(now)` at monotonic time `when` (at once if past), replacing `name`."""
        self.cancel(name)
        loop = asyncio.get_running_loop()
        delay = max(0.0, when - time.monotonic())
        generation = self._generation[name]
        self._handles[name] = loop.call_later(
            delay, self._fire, name, generation, job, when, context=TIMER_CONTEXT
        )

    def cancel(self, name: str) -> None:
        self._generation[name] += 1  # a fired job still waiting for the lock is void too
        handle = self._handles.pop(name, None)
        if handle is not None:
            handle.cancel()

    def cancel_all(self) -> None:
        for name in list(self._handles):
            self.cancel(name)
        for task in list(self._tasks):
            if task is not asyncio.current_task():  # a timer job may close its own room
                task.cancel()

    def pending(self, name: str) -> bool:
        return name in self._handles

    def _fire(self, name: str, generation: int, job: Job, when: float) -> None:
        now = time.monotonic()
        if now < when:  # woken early: sleep the rest, never run before the due time
            loop = asyncio.get_running_loop()
            self._handles[name] = loop.call_later(
                when - now, self._fire, name, generation, job, when, context=TIMER_CONTEXT
            )
            return
        self._handles.pop(name, None)
        task = asyncio.get_running_loop().create_task(self._run(name, generation, job, now))
        self._tasks.add(task)  # keep a reference until done: asyncio holds tasks weakly
        task.add_done_callback(self._done)

    async def _run(self, name: str, generation: int, job: Job, now: float) -> None:
        async with self._lock:
            if self._generation[name] == generation:
                await job(now)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log_event("room_timer_failed", level=logging.ERROR, error=repr(task.exception()))


class WatchedLock(asyncio.Lock):
    """A room's lock that measures how long each holder keeps it, and past `limit` seconds
    logs the room (once per hold) while it is still held: a stuck room shows up live."""

    def __init__(self, room: str, metrics: Metrics, limit: float = LOCK_WATCHDOG_SECONDS) -> None:
        super().__init__()
        self.room, self.metrics, self.limit = room, metrics, limit
        self._since = 0.0
        self._watchdog: asyncio.TimerHandle | None = None

    async def acquire(self) -> Literal[True]:
        await super().acquire()
        self._since = time.monotonic()
        self._watchdog = asyncio.get_running_loop().call_later(
            self.limit, self._still_held, context=TIMER_CONTEXT
        )
        return True

    def release(self) -> None:
        held = time.monotonic() - self._since
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self.metrics.lock_released(held)
        super().release()

    def _still_held(self) -> None:
        self._watchdog = None
        self.metrics.lock_held_long.inc()
        held = round(time.monotonic() - self._since, 3)
        log_event("room_lock_held_long", level=logging.WARNING, room=self.room, seconds=held)
