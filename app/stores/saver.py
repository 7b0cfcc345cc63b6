"""Saver: keeps one room's latest snapshot flowing to its store, off the game's hot path.

    saver = Saver(store, room.code, room.snapshot_now, delay=settings.save_seconds)
    ...
    saver.changed(urgent=phase_changed)   # after every change, once it is judged and sent

A burst of changes costs one write: the first change is written on the room's next beat (a
multiple of `delay`, SLAPJACK_SAVE_SECONDS, on the monotonic clock, plus the room's `phase`)
and the write takes the snapshot as it is *then*, so the latest state wins and at most
`delay` of play is unsaved. app/rooms.py gives each room one of SAVE_SLOTS phases spread
over the beat: the rooms of a slot are written together (one SQLite transaction), and a busy
server's snapshots come in twenty small batches a beat, not one burst that holds up every
flip and slap behind it (1,000 tables: 50 ms of snapshots at once, every half second).
An urgent change (a phase change) is written at once. A write that fails (Redis
restarting, a full disk) is logged and retried with backoff while the game goes on from
memory; the next write carries whatever is latest by then. A fenced write refused because
another process owns the table stops the saver and tells `on_lease_lost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.logs import log_event
from app.stores import LeaseLost, Snapshot
from app.timers import TIMER_CONTEXT

FIRST_RETRY_SECONDS = 0.2
LAST_RETRY_SECONDS = 5.0  # backoff doubles up to this while a store stays down
# The loop may wake a timer a hair before its time: that close, a beat has come (so every
# room on it is written in the same batch, not some on the next loop turn).
EARLY_SECONDS = 0.002


class SavingStore(Protocol):
    async def save(self, code: str, snapshot: Snapshot, seen_at: float | None = None) -> Any: ...

    async def delete(self, code: str) -> Any: ...


class Saver:
    def __init__(
        self,
        store: SavingStore,
        code: str,
        snapshot: Callable[[], Snapshot],
        *,
        delay: float = 0.5,
        phase: float = 0.0,
        seen_at: Callable[[], float | None] | None = None,
        on_lease_lost: Callable[[], Awaitable[None] | None] | None = None,
        first_retry: float = FIRST_RETRY_SECONDS,
        last_retry: float = LAST_RETRY_SECONDS,
    ) -> None:
        """`snapshot` returns the room's current snapshot (called on the loop, at write time);
        `seen_at` the wall-clock time someone was last connected (None: someone is now)."""
        self.store, self.code, self.snapshot = store, code, snapshot
        if not 0 <= phase < delay:
            raise ValueError(f"a save's phase is within its beat: 0 <= {phase} < {delay}")
        self.delay, self.phase = delay, phase
        self.seen_at, self.on_lease_lost = seen_at, on_lease_lost
        self.first_retry, self.last_retry = first_retry, last_retry
        self.saves = 0  # writes that landed
        self.failures = 0  # writes that failed (each retried)
        self._due: float | None = None  # monotonic time the pending change must be written by
        # What the writer awaits until the write is due: resolved by its timer, or sooner by
        # a change that must be written sooner (a future and a timer per wait: no Event, and
        # no timeout raising into the task, which cost more than the rest of a write).
        self._waiter: asyncio.Future[None] | None = None
        self._saved = asyncio.Event()  # set while nothing is pending
        self._saved.set()
        # While no write is under way a pending change waits as this timer, which starts
        # the writer when it is due: a writer waiting out the beat is a task, its
        # coroutine, a future, a timer and contexts per room, that every young collection
        # walks. (A change that comes during a write is waited for by that writer: ending
        # it after each write instead showed no gain.)
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    @property
    def pending(self) -> bool:
        """A change not yet written (or being written)."""
        return not self._saved.is_set()

    def changed(self, *, urgent: bool = False) -> None:
        """The room changed: write it within `delay`, or at once if `urgent`. Never waits."""
        if self._stopped:
            return
        now = time.monotonic()
        due = now if urgent else next_beat(now, self.delay, self.phase)
        self._saved.clear()
        sooner = self._due is None or due < self._due
        if sooner:
            self._due = due
        if self._task is not None and not self._task.done():
            if sooner:
                # Only a sooner write wakes the writer: a flip during a pending write
                # changes nothing it waits for, and a wake-up per flip would cost more
                # than the write.
                _wake(self._waiter)
        elif sooner or self._timer is None:
            self._start_when_due(now)

    def _start_when_due(self, now: float) -> None:
        """No writer runs: one starts when the pending change is due (at once if it is)."""
        assert self._due is not None
        self._forget_timer()
        wait = self._due - now
        if wait <= EARLY_SECONDS:
            self._start()
        else:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(wait, self._start, context=TIMER_CONTEXT)

    def _start(self) -> None:
        self._timer = None
        if self._stopped or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"saver:{self.code}")

    async def flush(self) -> None:
        """Writes any pending change now and returns once it has landed (a shutdown bounds
        this with a timeout: while the store is down it keeps retrying)."""
        if self.pending:
            self.changed(urgent=True)
            await self._saved.wait()

    async def close(self) -> None:
        """Stops saving (the room is handed over or the process is leaving): pending
        changes are dropped; `flush` first to keep them."""
        self._stopped = True
        self._forget_timer()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._saved.set()

    def stop(self) -> None:
        """`close` for a caller that cannot wait: a write in flight is cancelled (a SQLite
        write already handed to its thread still lands whole, or not at all)."""
        self._stopped = True
        self._forget_timer()
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._saved.set()

    def _forget_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def discard(self) -> None:
        """The room is closed for good: stop saving and delete its stored table (a pending
        write must not bring it back after the delete)."""
        await self.close()
        await self.store.delete(self.code)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = self.first_retry
        not_before = 0.0  # after a failure: no write before the backoff is over
        while self._due is not None:
            wait = max(self._due, not_before) - time.monotonic()
            if wait > EARLY_SECONDS:  # a change while writing, or a retry's backoff
                waiter = self._waiter = loop.create_future()
                timer = loop.call_later(wait, _wake, waiter)
                try:
                    await waiter  # a sooner (urgent) change resolves it before the timer
                finally:
                    timer.cancel()
                    self._waiter = None
                continue
            self._due = None
            try:
                if self.seen_at is None:
                    await self.store.save(self.code, self.snapshot())
                else:
                    await self.store.save(self.code, self.snapshot(), self.seen_at())
            except LeaseLost as lost:
                log_event(
                    "save_fenced_off", level=logging.WARNING, room=self.code, reason=str(lost)
                )
                self._stopped = True
                self._due = None
                self._saved.set()
                if self.on_lease_lost is not None:
                    outcome = self.on_lease_lost()
                    if outcome is not None:
                        await outcome
                return
            except Exception as error:
                self.failures += 1
                log_event(
                    "save_failed",
                    level=logging.WARNING,
                    room=self.code,
                    retry_in=round(backoff, 2),
                    reason=str(error)[:200],
                )
                # Retry with whatever is latest then; an urgent change does not cut the
                # backoff short (a store that is down would only be hammered).
                not_before = time.monotonic() + backoff
                if self._due is None:
                    self._due = not_before
                backoff = min(backoff * 2, self.last_retry)
                continue
            self.saves += 1
            if backoff != self.first_retry:
                log_event("save_recovered", room=self.code)
            backoff = self.first_retry
            if self._due is None:
                self._saved.set()


def next_beat(now: float, delay: float, phase: float) -> float:
    """The first moment after `now` that is a multiple of `delay` plus `phase`: at most
    `delay` away, and the same for every room of the same phase whose change fell in the
    same beat (so they are written in one batch)."""
    return (math.floor((now - phase) / delay) + 1) * delay + phase


def _wake(waiter: asyncio.Future[None] | None) -> None:
    """Lets a waiting writer go (its timer came, or a sooner write is due)."""
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
