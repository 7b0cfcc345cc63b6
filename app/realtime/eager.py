"""Starting a coroutine at once, as Python 3.12's eager tasks do, on 3.11 too, and without a
Task at all for one that never waits.

A Task per client message would cost its creation, a loop pass, its step and its
done-callback. Almost every message runs to its end without waiting (its room's lock is
free; its answer and the states it causes are queued, not awaited), so `first_step` runs
it right away, where its frame is read; only one that waits (a held lock, a lag-fair
slap's judging) goes on from that wait as a task, and the connection's next frame is read
meanwhile.

`ResumingWork` is what such a task runs: a `collections.abc.Coroutine` that hands the task
what the work waits on first, then passes each value and exception the task sends (a
result, a cancellation, even one thrown before its first step) into the work, exactly as if
the task had run it from its start.

The first step runs in the caller's task and context (the task uvicorn reads the
websocket in). Code that needs its own task before its first wait (`asyncio.timeout`, and
`asyncio.wait_for` on 3.12) must not be started this way: its deadline would be the
reader's, or none at all where a frame is read in the protocol's callback. The transport
(app/realtime/transport.py `HOT_EVENT`) starts only a game's own events so (a flip, a
slap, a pong), whose handlers use neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

_GIVEN = object()  # what the first step waits on was handed over: the work goes on itself


class ResumingWork(Coroutine[Any, Any, Any]):
    """`work` for a task to run, or to be awaited (it is its own iterator: `await` sends and
    throws as a task does), from the wait its first step reached (`waits_on`)."""

    __slots__ = ("_waits_on", "work")

    def __init__(self, work: Coroutine[Any, Any, Any], waits_on: Any) -> None:
        self.work, self._waits_on = work, waits_on

    def send(self, value: Any) -> Any:
        if self._waits_on is not _GIVEN:
            waits_on, self._waits_on = self._waits_on, _GIVEN
            return waits_on  # the task now waits on it, as the work does
        return self.work.send(value)

    def throw(self, *error: Any) -> Any:
        self._waits_on = _GIVEN  # a cancellation before the first step goes into the work too
        return self.work.throw(*error)

    def close(self) -> None:
        self._waits_on = _GIVEN
        self.work.close()

    def __next__(self) -> Any:
        return self.send(None)

    def __await__(self) -> ResumingWork:  # type: ignore[override]
        return self

    @property
    def __name__(self) -> str:
        """The work's, as a task's repr shows it (and `cr_frame` and `cr_code`, where it waits)."""
        return str(getattr(self.work, "__qualname__", type(self.work).__name__))

    @property
    def cr_frame(self) -> Any:
        return getattr(self.work, "cr_frame", None)

    @property
    def cr_code(self) -> Any:
        return getattr(self.work, "cr_code", None)


def first_step(work: Coroutine[Any, Any, Any]) -> ResumingWork | None:
    """Runs `work` now, up to its first wait: None if it ended there, or else the rest of
    it for a task to run. An exception it ends with is raised here (a cancellation ends
    it quietly, as it ends a task)."""
    try:
        waits_on = work.send(None)
    except (StopIteration, asyncio.CancelledError):
        return None
    return ResumingWork(work, waits_on)
