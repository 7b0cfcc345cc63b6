"""Named one-shot timers for a room: setting a name again replaces its timer.

A job runs under the room's lock, like everything else that changes the room, and is
told the time it fired: that is its place in the room's arrival order. A job that fired
but was replaced or cancelled while it waited for the lock does not run: it would act
on a table that has moved on (an autopilot flip for the wrong seat, a bot's stale plan).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Coroutine
from typing import Any

from app.logs import log_event

Job = Callable[[float], Coroutine[Any, Any, None]]  # called with the time it fired


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
        self._handles[name] = loop.call_later(delay, self._fire, name, generation, job)

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

    def _fire(self, name: str, generation: int, job: Job) -> None:
        self._handles.pop(name, None)
        now = time.monotonic()
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
