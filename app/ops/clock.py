"""The one clock the shell reads time from and schedules on, made by app/main.py and handed
to the registry of rooms (and through it to each room, its timers and its saver), the
cluster's ownership and the garbage collector's schedule.

    clock.now()                          # seconds on a monotonic scale
    handle = clock.call_at(when, fn, *args)   # fn(*args) at `when`; handle.cancel()
    handle = clock.call_later(delay, fn, *args)
    await clock.sleep(seconds)

`Clock` is real time: `time.monotonic()` and the running loop's timers. It reads
`time.monotonic()` rather than `loop.time()`: asyncio's `loop.time()` is that same call,
but uvloop's is libuv's loop time, the same CLOCK_MONOTONIC truncated to whole
milliseconds, and two slaps a fraction of a millisecond apart must keep their order and
their margin. A timer is the loop's `call_later` with the delay to `when`: uvloop may fire
it up to about a millisecond early (it truncates to milliseconds and reads its cached
time), so a caller that must not act early re-checks `now()` when it fires (app/ops/timers.py
re-arms for the remainder; the saver forgives EARLY_SECONDS).

`ManualClock` is time a test turns: `await clock.advance(seconds)` runs every callback due
by then in time order, each at its own time, and lets the tasks they start run before the
next; nothing waits for real time. It is the idea of trio's and anyio's MockClock, and of
Colyseus's `Room.clock`, which a room's tests tick by hand.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Any, Protocol

# The context every timer runs its callback in. `call_later` otherwise copies the caller's
# contextvars.Context for each handle: an object per timer the collector walks while the
# timer waits (a table keeps several waiting), and the app sets no context variable for a
# callback to see. A task a callback starts copies this (empty) context as its own.
TIMER_CONTEXT = contextvars.Context()
# What `ManualClock.advance` lets run after each callback: enough turns of the loop for a
# timer's task to take a free lock, run its job and start the saves and sends that follow.
SETTLE_TURNS = 20


class Handle(Protocol):
    """A scheduled callback (asyncio.TimerHandle is one)."""

    def cancel(self) -> None: ...

    def cancelled(self) -> bool: ...

    def when(self) -> float: ...


class Clock:
    """Real time, on the running loop."""

    def __init__(self) -> None:
        # Bound straight to the C function: reading the clock costs what it did before
        # there was a clock object (a flip reads it several times).
        self.now: Callable[[], float] = time.monotonic

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Handle:
        """`callback(*args)` at `when` on `now()`'s scale (at once if past); it may come up
        to about a millisecond early (see the module's docstring)."""
        delay = when - time.monotonic()
        return asyncio.get_running_loop().call_later(
            delay if delay > 0.0 else 0.0, callback, *args, context=TIMER_CONTEXT
        )

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Handle:
        return asyncio.get_running_loop().call_later(delay, callback, *args, context=TIMER_CONTEXT)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# Real time for a part built outside the app (a test's Saver, a bench's Room): the real clock
# holds no state, so all of them may share it and share the beats they save on.
REAL_TIME = Clock()


class ManualHandle:
    """A callback waiting on a ManualClock."""

    __slots__ = ("_args", "_callback", "_cancelled", "_when")

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]):
        self._when, self._callback, self._args = when, callback, args
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True

    def cancelled(self) -> bool:
        return self._cancelled

    def when(self) -> float:
        return self._when

    def run(self) -> None:
        TIMER_CONTEXT.run(self._callback, *self._args)


class ManualClock(Clock):
    """Time that moves only when a test says so (`advance`)."""

    def __init__(self, start: float = 10_000.0) -> None:
        # Not 0: a monotonic clock is well past its epoch, and code may take 0 for "never".
        super().__init__()
        self._now = start
        self._queue: list[tuple[float, int, ManualHandle]] = []
        self._order = itertools.count()  # callbacks due at the same time run in call order
        self.now = self._read

    def _read(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Handle:
        handle = ManualHandle(when, callback, args)
        heapq.heappush(self._queue, (when, next(self._order), handle))
        return handle

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Handle:
        return self.call_at(self._now + delay, callback, *args)

    async def sleep(self, seconds: float) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        handle = self.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            handle.cancel()

    def next_due(self) -> float | None:
        """When the earliest callback still waiting is due; None when none waits."""
        while self._queue and self._queue[0][2].cancelled():
            heapq.heappop(self._queue)
        return self._queue[0][0] if self._queue else None

    async def advance(self, seconds: float) -> None:
        """Moves time on by `seconds`: every callback due by then runs at its own time, in
        time order (a callback scheduled by another, due within the span, runs too), and
        the tasks each one starts run before the next is called."""
        if seconds < 0:
            raise ValueError("time does not go back")
        await self.advance_to(self._now + seconds)

    async def advance_to(self, when: float) -> None:
        """`advance` to the moment `when` (no move if it is past)."""
        await settle()
        while (due := self.next_due()) is not None and due <= when:
            _, _, handle = heapq.heappop(self._queue)
            self._now = max(self._now, due)
            handle.run()
            await settle()
        self._now = max(self._now, when)
        await settle()


async def settle(turns: int = SETTLE_TURNS) -> None:
    """Lets the loop run what is ready, `turns` times over (no real time passes)."""
    for _ in range(turns):
        await asyncio.sleep(0)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
