"""Saver: keeps one room's latest snapshot flowing to its store, off the game's hot path.

    saver = Saver(store, room.code, room.snapshot_now, delay=settings.save_seconds, beat=...)
    ...
    saver.changed(urgent=phase_changed)   # after every change, once it is judged and sent

A burst of changes costs one write: the first change not yet written is written on the
last beat no later than `delay` after it (SLAPJACK_SAVE_SECONDS; beats are the multiples of
`beat` on the app's clock, app/ops/clock.py, shared by every room), and the write takes the
snapshot as it is *then*, so the latest state wins and at most `delay` of play is unsaved. A room's
write comes as late as that promise allows, so the most changes share it: a busy table of
four writes about 1.3 times a second, not the 1.8 of a write on the first beat after its
change (bench/load.py at 1,000 tables). app/tables/room.py sets `beat` to a quarter of `delay`:
the rooms due on a beat are written together (one SQLite commit), rooms' changes spread
them over the beats, and a beat's snapshots are taken SNAPSHOTS_AT_ONCE at a time with the
loop let go between, so a busy server's saving never holds up every flip and slap behind it
(at 1,000 busy tables a beat takes about 160 snapshots, which in one go would hold the
loop for 7 ms).

A beat is one timer and one task for all its rooms (`_Beat`): their snapshots are taken
one after another and handed to the store in one call (`save_many`: one SQLite
transaction), not a timer, a task, a coroutine and a future per room, which cost more than
the snapshots and were, at 1,000 tables, a fifth of what every young collection walked.
An urgent change (a phase change) is written at once by the room's own writer task. A
write that fails (Redis restarting, a full disk) is logged and retried by that writer with
backoff while the game goes on from memory; the next write carries whatever is latest by
then. A fenced write refused because another process owns the table stops the saver and
tells `on_lease_lost`.

What is not written yet shows: `unsaved_since` is when the oldest change that no landed
write holds was made (a change goes into the snapshot a write takes; it counts as saved when
that write lands), `failing` is true from a failed write until one lands, and `on_failed` is
told of each failure (app/tables/registry.py counts them in /metrics and /healthz).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.ops.clock import REAL_TIME, Clock
from app.ops.logs import log_event
from app.stores.base import LeaseLost, Savable, StoreError

FIRST_RETRY_SECONDS = 0.2
LAST_RETRY_SECONDS = 5.0  # backoff doubles up to this while a store stays down
# The loop may wake a timer a hair before its time: that close, a beat has come (so every
# room on it is written in the same batch, not some on the next loop turn).
EARLY_SECONDS = 0.002
# A beat's snapshots are taken this many at a time, the loop let go between (each is tens
# of µs on a busy server: a beat of 250 tables would hold every flip for 10 ms at once).
SNAPSHOTS_AT_ONCE = 25


class SavingStore(Protocol):
    """What a Saver writes through. A store may also have `save_many(items)`, taking
    (code, snapshot, seen_at) triples and returning what each came to (None: saved, else
    the exception), for a beat's rooms in one write; without it they are saved one by one."""

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> Any: ...

    async def delete(self, code: str) -> Any: ...


class Saver:
    def __init__(
        self,
        store: SavingStore,
        code: str,
        snapshot: Callable[[], Savable],
        *,
        delay: float = 0.5,
        beat: float | None = None,
        seen_at: Callable[[], float | None] | None = None,
        on_lease_lost: Callable[[], Awaitable[None] | None] | None = None,
        on_failed: Callable[[], None] | None = None,
        first_retry: float = FIRST_RETRY_SECONDS,
        last_retry: float = LAST_RETRY_SECONDS,
        clock: Clock | None = None,
    ) -> None:
        """`snapshot` returns the room's current snapshot (called on the loop, at write time);
        `beat` the spacing of the beats rooms are written on (at most `delay`, which it is
        by default); `seen_at` the wall-clock time someone was last connected (None:
        someone is now); `clock` the one the rooms' timers run on (the registry's)."""
        self.store, self.code, self.snapshot = store, code, snapshot
        self.clock = clock if clock is not None else REAL_TIME
        beat = delay if beat is None else beat
        if not 0 < beat <= delay:
            raise ValueError(f"a save's beats come within its delay: 0 < {beat} <= {delay}")
        self.delay, self.beat = delay, beat
        self.seen_at, self.on_lease_lost, self.on_failed = seen_at, on_lease_lost, on_failed
        self.first_retry, self.last_retry = first_retry, last_retry
        self.saves = 0  # writes that landed
        self.failures = 0  # writes that failed (each retried)
        # When (the clock's time) the oldest change that no write has taken yet was made,
        # and the oldest one that the writes taken so far hold but none has landed with.
        self._changed_at: float | None = None
        self._writing_since: float | None = None
        # The pending change, held by exactly one of: the beat it waits for (`_beat`), a
        # beat's write under way (`_in_batch`: it looks at `_due` when it lands), or the
        # room's own writer (`_task`: urgent writes and retries).
        self._due: float | None = None  # the clock's time the pending change must be written by
        self._beat: _Beat | None = None
        self._in_batch = False
        self._retrying = False  # a write failed: the writer retries until one lands
        self._backoff = first_retry  # its next wait after a failure
        self._not_before = 0.0  # after a failure: no write before its backoff is over
        # What the writer awaits until the write is due: resolved by its timer, or sooner by
        # a change that must be written sooner (a future and a timer per wait: no Event, and
        # no timeout raising into the task, which cost more than the rest of a write).
        self._waiter: asyncio.Future[None] | None = None
        self._saved = asyncio.Event()  # set while nothing is pending
        self._saved.set()
        self._task: asyncio.Task[None] | None = None
        self._landing: asyncio.Future[None] | None = None  # `discard` waits for its beat's write
        self._stopped = False

    @property
    def pending(self) -> bool:
        """A change not yet written (or being written)."""
        return not self._saved.is_set()

    @property
    def unsaved_since(self) -> float | None:
        """When the oldest change no landed write holds was made (the clock's time); None
        when everything is written."""
        times = [t for t in (self._changed_at, self._writing_since) if t is not None]
        return min(times, default=None)

    @property
    def failing(self) -> bool:
        """A write failed and none has landed since (the writer is retrying)."""
        return self._retrying

    def changed(self, *, urgent: bool = False) -> None:
        """The room changed: write it within `delay`, or at once if `urgent`. Never waits."""
        if self._stopped:
            return
        if self._changed_at is None:
            self._changed_at = self.clock.now()
        if self._beat is not None and not urgent:
            # Already waiting for its beat, which a later change's due cannot come before
            # (beats only move on with the clock): most changes of a busy table, each free.
            return
        now = self.clock.now()
        due = now if urgent else beat_due(now, self.delay, self.beat)
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
        elif self._in_batch:
            pass  # the beat's write under way sees `_due` when it lands
        elif urgent:
            self._leave_beat()
            self._start()
        else:  # not waiting for a beat yet (that returned above)
            self._join_beat()

    def _join_beat(self) -> None:
        """The pending change waits for its beat: the one due at `_due` (the last one by
        then, should `_due` fall between two)."""
        assert self._due is not None
        clock, loop = self.clock, asyncio.get_running_loop()
        index = beat_at_or_before(self._due, self.beat)
        key = (id(clock), id(loop), self.beat, index)
        beat = _BEATS.get(key)
        if beat is None or beat.clock is not clock or beat.loop is not loop:
            beat = _BEATS[key] = _Beat(key, clock, loop, index * self.beat)
        beat.savers[self] = None
        self._beat = beat

    def _leave_beat(self) -> None:
        if self._beat is not None:
            self._beat.savers.pop(self, None)
            self._beat = None

    def _start(self) -> None:
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
        self._leave_beat()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._let_go_of_changes()

    def stop(self) -> None:
        """`close` for a caller that cannot wait: its own write in flight is cancelled (a
        SQLite write already handed to its thread still lands whole, or not at all); one in
        its beat's write, shared with other rooms, may still land."""
        self._stopped = True
        self._leave_beat()
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._let_go_of_changes()

    async def discard(self) -> None:
        """The room is closed for good: stop saving and delete its stored table (a pending
        write must not bring it back after the delete: one under way in its beat's write
        lands first)."""
        await self.close()
        if self._in_batch:
            self._landing = asyncio.get_running_loop().create_future()
            await self._landing
        await self.store.delete(self.code)

    def _taken(self) -> tuple[Savable, float | None]:
        """A beat's write takes the pending change: the snapshot as it is now."""
        self._beat = None
        self._due = None
        self._in_batch = True
        return self._now()

    def _now(self) -> tuple[Savable, float | None]:
        """The room's snapshot and when someone was last connected, as they are now: the
        changes made so far go into this write."""
        taken = self.snapshot(), (None if self.seen_at is None else self.seen_at())
        if self._changed_at is not None:
            if self._writing_since is None or self._changed_at < self._writing_since:
                self._writing_since = self._changed_at
            self._changed_at = None
        return taken

    def _written(self) -> None:
        """A write landed: every change it took is saved."""
        self.saves += 1
        self._writing_since = None

    def _let_go_of_changes(self) -> None:
        """Saving stops here (closed, stopped, fenced off): nothing counts as unsaved."""
        self._changed_at = self._writing_since = None
        self._retrying = False
        self._saved.set()

    def _save(self, snapshot: Savable, seen_at: float | None) -> Awaitable[Any]:
        """The store's `save` of this room (`seen_at` passed only by a room that tells it)."""
        if self.seen_at is None:
            return self.store.save(self.code, snapshot)
        return self.store.save(self.code, snapshot, seen_at)

    def _landed(self, outcome: BaseException | None) -> None:
        """A beat's write of this room came to `outcome` (None: saved)."""
        self._in_batch = False
        _wake(self._landing)
        self._landing = None
        if self._stopped:
            return
        if outcome is None:
            self._written()
            if self._due is None:
                self._saved.set()
            elif self._due - self.clock.now() <= EARLY_SECONDS:
                self._start()  # an urgent change came during the write
            else:
                self._join_beat()
        elif isinstance(outcome, LeaseLost):
            held = self._fenced_off(outcome)
            if held is not None:
                task = asyncio.ensure_future(held)
                _HELD.add(task)
                task.add_done_callback(_HELD.discard)
        elif isinstance(outcome, Exception):
            self._failed(outcome)
            self._start()  # the writer retries, with backoff
        else:  # cancelled with the beat's task: the process is ending
            log_event("save_dropped", level=logging.WARNING, room=self.code)
            self._due = None
            self._let_go_of_changes()

    def _fenced_off(self, lost: LeaseLost) -> Awaitable[None] | None:
        log_event("save_fenced_off", level=logging.WARNING, room=self.code, reason=str(lost))
        self._stopped = True
        self._due = None
        self._let_go_of_changes()
        return None if self.on_lease_lost is None else self.on_lease_lost()

    def _failed(self, error: Exception) -> None:
        self.failures += 1
        self._retrying = True
        if self.on_failed is not None:
            self.on_failed()
        log_event(
            "save_failed",
            level=logging.WARNING,
            room=self.code,
            retry_in=round(self._backoff, 2),
            reason=str(error)[:200],
        )
        # Retry with whatever is latest then; an urgent change does not cut the backoff
        # short (a store that is down would only be hammered).
        self._not_before = self.clock.now() + self._backoff
        if self._due is None:
            self._due = self._not_before
        self._backoff = min(self._backoff * 2, self.last_retry)

    async def _run(self) -> None:
        """The room's own writer: an urgent change, or retries after a failure. It ends
        once nothing is pending, or hands a change that can wait to its beat."""
        loop, clock = asyncio.get_running_loop(), self.clock
        while self._due is not None:
            if not self._retrying and self._due - clock.now() > EARLY_SECONDS:
                self._join_beat()  # it can wait for its beat like any other
                return
            wait = max(self._due, self._not_before) - clock.now()
            if wait > EARLY_SECONDS:  # a retry's backoff
                waiter = self._waiter = loop.create_future()
                timer = clock.call_later(wait, _wake, waiter)
                try:
                    await waiter  # a sooner (urgent) change resolves it before the timer
                finally:
                    timer.cancel()
                    self._waiter = None
                continue
            self._due = None
            try:
                await self._save(*self._now())
            except LeaseLost as lost:
                held = self._fenced_off(lost)
                if held is not None:
                    await held
                return
            except Exception as error:
                self._failed(error)
                continue
            self._written()
            if self._retrying:
                log_event("save_recovered", room=self.code)
                self._retrying = False
            self._backoff = self.first_retry
            if self._due is None:
                self._saved.set()


class _Beat:
    """The rooms whose changes wait for the same beat: one timer, then one
    task that takes their snapshots and writes them together."""

    __slots__ = ("__weakref__", "clock", "key", "loop", "savers")

    def __init__(
        self,
        key: tuple[int, int, float, int],
        clock: Clock,
        loop: asyncio.AbstractEventLoop,
        when: float,
    ):
        self.key, self.clock, self.loop = key, clock, loop
        self.savers: dict[Saver, None] = {}  # in the order they changed
        clock.call_at(when, self._come)

    def _come(self) -> None:
        if _BEATS.get(self.key) is self:
            del _BEATS[self.key]  # changes from now on wait for the next beat
        if self.savers:
            task = self.loop.create_task(_write(self, list(self.savers)))
            _HELD.add(task)
            task.add_done_callback(_HELD.discard)


async def _write(beat: _Beat, savers: list[Saver]) -> None:
    """One beat's rooms: each one's snapshot as it is now (SNAPSHOTS_AT_ONCE at a time, the
    loop let go between), then one write per store. Every room taken is told how its write
    went, whatever happens to the others."""
    by_store: dict[int, list[tuple[Saver, Savable, float | None]]] = {}
    try:
        for index, saver in enumerate(savers):
            if index and not index % SNAPSHOTS_AT_ONCE:
                await asyncio.sleep(0)  # flips and slaps waiting go first
            if saver._beat is not beat or saver._stopped:
                continue  # it left the beat (urgent, closed) after it joined
            try:
                snapshot, seen_at = saver._taken()
            except Exception as error:  # a snapshot that cannot be taken: retried, logged
                _land(saver, error)
                continue
            by_store.setdefault(id(saver.store), []).append((saver, snapshot, seen_at))
        for batch in by_store.values():
            try:
                outcomes = await _save_all(batch)
                if len(outcomes) != len(batch):
                    raise StoreError(f"{len(outcomes)} outcomes for {len(batch)} saves")
            except Exception as error:
                outcomes = [error] * len(batch)
            for (saver, _, _), outcome in zip(batch, outcomes, strict=True):
                _land(saver, outcome)
    finally:  # cancelled (the process is ending): the rooms not yet told are let go
        for batch in by_store.values():
            for saver, _, _ in batch:
                if saver._in_batch:
                    _land(saver, asyncio.CancelledError())
        for saver in savers:  # and those whose snapshot was not taken yet (cancelled
            if saver._beat is beat:  # between two chunks): else they wait for a beat gone
                saver._leave_beat()
                _land(saver, asyncio.CancelledError())


def _land(saver: Saver, outcome: BaseException | None) -> None:
    try:
        saver._landed(outcome)
    except Exception:  # its lease-lost call failed: logged, the other rooms go on
        log_event("save_landing_failed", level=logging.ERROR, room=saver.code, exc_info=True)


async def _save_all(
    batch: list[tuple[Saver, Savable, float | None]],
) -> list[BaseException | None]:
    store = batch[0][0].store
    save_many = getattr(store, "save_many", None)
    if save_many is not None:
        return list(await save_many([(s.code, snapshot, seen) for s, snapshot, seen in batch]))
    outcomes = await asyncio.gather(
        *(s._save(snapshot, seen) for s, snapshot, seen in batch), return_exceptions=True
    )
    return [o if isinstance(o, BaseException) else None for o in outcomes]


# The beats waiting, by (clock, loop, beat spacing, which beat); a beat leaves when it comes
# (or goes with its loop, if that closes first).
_BEATS: weakref.WeakValueDictionary[tuple[int, int, float, int], _Beat] = (
    weakref.WeakValueDictionary()
)
_HELD: set[asyncio.Future[Any]] = set()  # beats' writes and lease-lost calls under way


def beat_due(now: float, delay: float, beat: float) -> float:
    """The last beat (a multiple of `beat`) no later than `delay` after `now`: after `now`
    (as `beat` <= `delay`), as late as the promise of at most `delay` allows, and the same
    for every room whose change fell between the same two beats (so they are written in
    one batch)."""
    return beat_at_or_before(now + delay, beat) * beat


def beat_at_or_before(at: float, beat: float) -> int:
    """The number of the last beat at or before `at`: the largest k with k * beat <= at, as
    floats compare. A division alone can round across a beat (more often the bigger the
    clock, which counts from boot), which would put a write one beat early, or one beat past
    its promise; and a beat's own time, k * beat, gives k back, so a room joining the beat
    it is due on finds that beat."""
    index = math.floor(at / beat)
    if (index + 1) * beat <= at:
        return index + 1
    if index * beat > at:
        return index - 1
    return index


def _wake(waiter: asyncio.Future[None] | None) -> None:
    """Lets a waiting writer go (its timer came, or a sooner write is due)."""
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
