"""Named one-shot timers for a room: setting a name again replaces its timer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)

Job = Callable[[], Coroutine[Any, Any, None]]


class Timers:
    def __init__(self) -> None:
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def at(self, name: str, when: float, job: Job) -> None:
        """Runs `job()` at monotonic time `when` (at once if past), replacing `name`'s timer."""
        self.cancel(name)
        loop = asyncio.get_running_loop()
        delay = max(0.0, when - time.monotonic())
        self._handles[name] = loop.call_later(delay, self._fire, name, job)

    def cancel(self, name: str) -> None:
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

    def _fire(self, name: str, job: Job) -> None:
        self._handles.pop(name, None)
        task = asyncio.get_running_loop().create_task(job())
        self._tasks.add(task)  # keep a reference until done: asyncio holds tasks weakly
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("room timer failed", exc_info=task.exception())
