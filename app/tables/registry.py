"""Every open room of this process, by code: opening, restoring and closing them, and the store
that keeps them across restarts (`Rooms.start` brings every saved table back when the process
starts, `Rooms.drain` freezes and writes every table when it stops)."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from typing import Protocol

from app.ops.clock import REAL_TIME, Clock
from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.ops.timers import LockWatch
from app.stores import (
    Snapshot,
    Store,
    StoreError,
    restore_all,
)
from app.stores.memory import MemoryStore
from app.stores.saver import Saver
from app.tables.events import Restart
from app.tables.room import Room
from app.tables.table import Table
from app.wire.encoded import Transport
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.protocol import EVENT
from engine import Rules

# POST /api/rooms answers once the new table is written: a shared link must survive a crash a
# moment later. A store that fails or takes longer than this refuses the room (503).
FIRST_SAVE_SECONDS = 2.0
# /healthz says the store is behind while a change this old is not written (a store that
# hangs rather than fails: every save is due within SLAPJACK_SAVE_SECONDS).
UNSAVED_DEGRADED_SECONDS = 10.0
NOT_WRITTEN = "the server cannot save new tables right now: try again in a minute"
# The beats rooms are saved on, per SLAPJACK_SAVE_SECONDS (app/stores/saver.py): the tables
# due on a beat go in one store batch, so SAVE_BEATS batches per delay (SQLite: that many
# commits). Few: a commit costs about as much as ten rows, and 40 commits a second cost 200
# busy tables 8% more CPU than 8 do (bench/load.py, side by side); a beat's snapshots are taken
# a few dozen at a time (saver.py), so a big beat never holds the loop long.
SAVE_BEATS = 4

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6
# SLAPJACK_OPEN_ROOMS_PER_ADDRESS reached (here, or across a cluster: app/cluster/node.py).
HOARDING = "your address holds as many open rooms as it may: play in one, or wait for one to close"
# A stored record with this key is not a table's (an event's: app/tournaments/): `Rooms.start`
# sets it aside for the registry of its kind.
KIND_KEY = "kind"


class Companion(Protocol):
    """A registry beside the rooms on the same store and clock (the events'): it holds codes
    of its own, and drains and shuts down with the rooms, before the store closes."""

    def holds(self, code: str) -> bool: ...

    async def drain(self) -> None: ...

    async def shutdown(self, flush_seconds: float) -> None: ...


class Rooms:
    """Every open room, by code, and the store that keeps them across restarts."""

    def __init__(
        self,
        settings: Settings,
        transport: Transport,
        metrics: Metrics | None = None,
        store: Store | None = None,
        clock: Clock = REAL_TIME,
    ) -> None:
        self.settings = settings
        # Every room's time and timers, and its saver's beats, come from this clock.
        self.clock = clock
        self.lock_watch = LockWatch(clock)  # one look at every held room lock for them all
        self.transport = transport
        self.metrics = metrics or Metrics()
        self.store: Store = store if store is not None else MemoryStore()
        self.draining = False  # the server is shutting down: no new rooms or people
        self._rooms: dict[str, Room] = {}
        # The rooms each client address opened (POST /api/rooms), oldest first, while open.
        self._opened: dict[str, dict[str, None]] = {}
        self._opener: dict[str, str] = {}  # room code: the address that opened it
        self._deleting: set[asyncio.Task[None]] = set()  # held until done: tasks are weak
        # Records of another kind found at start (`KIND_KEY`), by code, for their registry.
        self.set_aside: dict[str, Snapshot] = {}
        self.companions: list[Companion] = []
        # Closes a connection at the transport, for a room (app/web/sockets.py sets it).
        self.hang_up: Callable[[str], None] = lambda sid: None
        self.metrics.watch(rooms=lambda: len(self._rooms), connected=self.connected_count)
        self.metrics.watch_saving(failing=self.saves_failing, unsaved=self.unsaved_seconds)

    # ---- the process starts and stops ---------------------------------------------------

    async def start(self) -> None:
        """Opens the store and brings back every table saved in it (before the first
        connection): tables nobody was connected to for SLAPJACK_ROOM_EXPIRY_SECONDS are
        purged, an unreadable one is logged and skipped. StoreError if the store cannot be
        reached: better not to start than to start without the tables."""
        await self.store.open()
        snapshots = await restore_all(self.store, self.settings.room_expiry_seconds)
        now = self.clock.now()
        for code, snapshot in snapshots.items():
            if KIND_KEY in snapshot:  # not a table: its own registry opens it
                self.set_aside[code] = snapshot
                continue
            try:
                if snapshot.get("code") != code:
                    raise ValueError(f"the snapshot saved as {code} is of another room")
                self._open_restored(snapshot, now)
            except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
                # Readable JSON but not a table this code can play on: kept in the store
                # (a newer release may read it), and its code is never given out again.
                log_event(
                    "snapshot_unreadable", level=logging.ERROR, room=code, reason=repr(error)[:200]
                )
        log_event("tables_restored", rooms=len(self._rooms), store=len(snapshots))

    async def drain(self) -> None:
        """Shutting down: no new rooms or people; every table stops where it is and is
        written; everyone is told the server is restarting and to come back."""
        self.draining = True
        rooms = list(self._rooms.values())
        log_event("draining", rooms=len(rooms), connected=self.connected_count())
        await asyncio.gather(*(room.suspend() for room in rooms))
        notice = Restart("The server is restarting: back in a moment.")
        await self.transport.emit(EVENT, notice.to_dict())  # no `to`: every connection
        await asyncio.gather(self.flush(rooms), *(c.drain() for c in self.companions))

    async def flush(self, rooms: list[Room] | None = None) -> None:
        """Writes every table as it is now and returns when all have landed (a store that
        is down keeps this waiting: the caller bounds it)."""
        savers = [room.saver for room in rooms or self._rooms.values() if room.saver]
        for saver in savers:
            saver.changed(urgent=True)  # the times left (freezes, turns) as of this moment
        await asyncio.gather(*(saver.flush() for saver in savers))
        log_event("tables_saved", rooms=len(savers))

    async def shutdown(self, flush_seconds: float) -> None:
        """The process ends: a last write of every table (bounded), then the store closes.
        Stored tables are kept: the next process restores them."""
        for room in self._rooms.values():
            room.hold()
        try:
            await asyncio.wait_for(self.flush(), flush_seconds)
        except TimeoutError:
            log_event("tables_not_saved", level=logging.ERROR, rooms=len(self._rooms))
        for companion in self.companions:  # their last writes, before the store closes
            await companion.shutdown(flush_seconds)
        self.close_all()
        if self._deleting:
            await asyncio.wait(self._deleting, timeout=flush_seconds)
        await self.store.close()

    # ---- rooms open and close -----------------------------------------------------------

    def create(
        self,
        rules: Rules | None = None,
        *,
        lag_fair: bool = False,
        false_starts: bool = True,
        code: str | None = None,
    ) -> Room:
        """A new room (a code not open here; `open_room` also checks the store's)."""
        self._check_room_for_one_more()
        while code is None or code in self._rooms:
            code = new_code()
        rules = rules or Rules()
        room = Room(
            code,
            rules,
            self.settings,
            self.transport,
            self._closed,
            self.metrics,
            clock=self.clock,
            lock_watch=self.lock_watch,
        )
        room.table.lag_fair, room.table.false_starts = lag_fair, false_starts
        self._add(room)
        log_event("room_opened", room=code, rules=room.table.rules_shown())
        return room

    async def open_room(
        self,
        rules: Rules | None = None,
        *,
        lag_fair: bool = False,
        false_starts: bool = True,
        opener: str | None = None,
    ) -> Room:
        """POST /api/rooms: a new room under a code no stored table has, written to the
        store before its link is given out. `opener`: who asks, as the per-address limits
        count them (an IPv6 client by its /64; see `_make_room_for`)."""
        key = opener
        self._make_room_for(key)  # refused before asking the store anything
        code = await self._unused_code()
        room = self.create(rules, lag_fair=lag_fair, false_starts=false_starts, code=code)
        if key is not None:
            self._opened.setdefault(key, {})[code] = None
            self._opener[code] = key
        try:
            async with asyncio.timeout(FIRST_SAVE_SECONDS):
                await self.store.save(code, room.snapshot_now(), room.seen_at())
        except (StoreError, TimeoutError) as error:
            # Never a link to a table that a crash would lose: the room goes (its delete is
            # tried too, should the write land late), and the caller is told to try later.
            log_event("room_not_written", level=logging.ERROR, room=code, reason=repr(error)[:200])
            self.metrics.saves_failed.inc()
            room.close()
            raise ProtocolError(ErrorCode.STORE_UNAVAILABLE, NOT_WRITTEN) from None
        return room

    def _make_room_for(self, opener: str | None) -> None:
        """Rooms cannot be hoarded: an address holds at most SLAPJACK_OPEN_ROOMS_PER_ADDRESS
        rooms it opened until they close, used or not (rate_limited beyond), and when every
        room is taken, an address holding fewer rooms than another gets one of that one's
        rooms nobody is in (the least used first) rather than a 503."""
        held = len(self._opened.get(opener, ())) if opener is not None else 0
        if held >= self.settings.open_rooms_per_address:
            raise ProtocolError(ErrorCode.RATE_LIMITED, HOARDING)
        if opener is not None and len(self._rooms) >= self.settings.max_rooms:
            self._give_up_one_for(opener)
        self._check_room_for_one_more()

    def _in_use(self, code: str) -> bool:
        """Whether two people have been in the room (its opener alone is no use)."""
        room = self._rooms.get(code)
        return room is not None and room.used

    def _give_up_one_for(self, opener: str) -> None:
        """Closes one room nobody is in, of the address that opened the most (more than
        `opener` did): one never used first, then the oldest."""
        mine = len(self._opened.get(opener, ()))
        holders = sorted(self._opened.items(), key=lambda item: len(item[1]), reverse=True)
        for holder, codes in holders:
            if holder == opener or len(codes) <= mine:
                break
            empty = [
                code
                for code in codes
                if (room := self._rooms.get(code)) is not None and not room.table.connected()
            ]
            if not empty:
                continue
            unused = [code for code in empty if not self._in_use(code)]
            victim = self._rooms[(unused or empty)[0]]
            log_event("room_given_up", room=victim.code, holder=holder, held=len(codes))
            victim.close()
            return

    def _check_room_for_one_more(self) -> None:
        if self.draining:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
        if len(self._rooms) >= self.settings.max_rooms:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "too many rooms are open: try later")

    async def unused_code(self) -> str:
        """A code no open room, no companion's and no stored record has."""
        return await self._unused_code()

    def open_table(self, table: Table) -> Room:
        """A room for a table made elsewhere (an event's heat, `Table.for_heat`), under a
        code `unused_code` gave; its Saver writes it as soon as asked."""
        self._check_room_for_one_more()
        if table.code in self._rooms:
            raise ValueError(f"room {table.code} is open already")
        room = Room(
            table.code,
            table.rules,
            self.settings,
            self.transport,
            self._closed,
            self.metrics,
            table=table,
            clock=self.clock,
            lock_watch=self.lock_watch,
        )
        self._add(room)
        room.set_timers()
        log_event("room_opened", room=table.code, rules=table.rules_shown())
        return room

    async def _unused_code(self) -> str:
        while True:
            code = new_code()
            if code in self._rooms or any(c.holds(code) for c in self.companions):
                continue
            try:
                if await self.store.exists(code):
                    continue
            except StoreError as error:
                # A clash is one in 887 million; a store outage must not stop new tables.
                log_event("store_unreachable", level=logging.WARNING, reason=str(error)[:200])
            if code not in self._rooms:  # taken while we asked
                return code

    async def save(self, room: Room) -> None:
        """Writes the room's table to the store now (its state once the lock is free)."""
        async with room.lock:
            snapshot = room.snapshot(self.clock.now())
        await self.store.save(room.code, snapshot, room.seen_at())

    async def restore(self, code: str) -> Room | None:
        """The room saved under `code`, open again in this process (the open one if it is
        already here); None when the store has none."""
        room = self._rooms.get(code)
        if room is not None:
            return room
        return self.restore_loaded(code, await self.store.load(code))

    def restore_loaded(self, code: str, snapshot: Snapshot | None) -> Room | None:
        """`restore` with the table already read from the store (None: it has none)."""
        if snapshot is None or code in self._rooms:
            return self._rooms.get(code)
        if snapshot.get("code") != code:
            raise ValueError(f"the snapshot saved as {code} is of room {snapshot.get('code')}")
        return self._open_restored(snapshot, self.clock.now())

    def _open_restored(self, snapshot: Snapshot, now: float) -> Room:
        room = Room.from_snapshot(
            snapshot,
            self.settings,
            self.transport,
            self._closed,
            self.metrics,
            now,
            clock=self.clock,
            lock_watch=self.lock_watch,
        )
        self._add(room)
        assert room.saver is not None
        room.saver.changed()  # everyone's connection dropped: a change of its own
        log_event("room_restored", room=room.code, version=room.version, phase=room.phase)
        return room

    def _add(self, room: Room) -> None:
        room.connections.hang_up = lambda sid: self.hang_up(sid)
        delay = self.settings.save_seconds
        room.saver = Saver(
            self.store,
            room.code,
            room.snapshot_now,
            delay=delay,
            beat=delay / SAVE_BEATS,
            seen_at=room.seen_at,
            on_failed=self.metrics.saves_failed.inc,
            clock=self.clock,
        )
        self._rooms[room.code] = room

    def saves_failing(self) -> int:
        """Rooms whose last write to the store failed, none having landed since."""
        return sum(1 for room in self._rooms.values() if room.saver and room.saver.failing)

    def unsaved_seconds(self) -> float:
        """How long ago the oldest change the store does not hold yet was made (0: none)."""
        since = [
            room.saver.unsaved_since
            for room in self._rooms.values()
            if room.saver is not None and room.saver.unsaved_since is not None
        ]
        return max(0.0, self.clock.now() - min(since)) if since else 0.0

    def health(self) -> dict[str, object]:
        """What /healthz says: `ok`, or `degraded` while writes to the store fail (or a
        change waits longer than UNSAVED_DEGRADED_SECONDS): games go on from memory, but a
        crash now would lose them back to the last write."""
        failing, unsaved = self.saves_failing(), self.unsaved_seconds()
        if failing or unsaved > UNSAVED_DEGRADED_SECONDS:
            return {
                "status": "degraded",
                "store": "saves failing" if failing else "saves late",
                "tables_failing": failing,
                "unsaved_seconds": round(unsaved, 1),
            }
        return {"status": "ok"}

    def get(self, code: object) -> Room | None:
        """The open room with this code, in any case; None when there is none."""
        if not isinstance(code, str):
            return None
        return self._rooms.get(code.strip().upper())

    def __len__(self) -> int:
        return len(self._rooms)

    def connected_count(self) -> int:
        return sum(len(room.connected()) for room in self._rooms.values())

    def close_all(self) -> None:
        """Stops every room here (timers, bots, saves) and forgets it; the stored tables
        stay for the next process (`Room.close` is the one that deletes)."""
        for room in list(self._rooms.values()):
            room.stop()
        self._rooms.clear()

    def let_go(self, code: str) -> Room | None:
        """The room moves to another process of a cluster (app/cluster/node.py): stopped and
        forgotten here (no timer, no change), its stored table kept for the process that
        takes it."""
        room = self._rooms.pop(code, None)
        self._forget_opener(code)
        if room is not None:
            room.stop()  # timers and its Saver stop; the stored table stays
            room.judge.answer_held(ErrorCode.NO_ROOM)
        return room

    def _forget_opener(self, code: str) -> None:
        opener = self._opener.pop(code, None)
        if opener is not None:
            codes = self._opened.get(opener, {})
            codes.pop(code, None)
            if not codes:
                self._opened.pop(opener, None)

    def _closed(self, code: str) -> None:
        """A room closed for good (expired): gone from here and from the store."""
        room = self._rooms.pop(code, None)
        self._forget_opener(code)
        log_event("room_closed", room=code)
        if room is not None and room.saver is not None:
            task = asyncio.get_running_loop().create_task(self._delete(room.saver))
            self._deleting.add(task)
            task.add_done_callback(self._deleting.discard)
            # The saver holds the room's methods: without this the two would be a cycle,
            # left for a full collection (app/ops/collector.py) once the delete is done.
            room.saver = None

    async def _delete(self, saver: Saver) -> None:
        try:
            await saver.discard()
        except StoreError as error:
            # Left in the store: purged at the next start, when it will have expired.
            log_event("delete_failed", level=logging.WARNING, room=saver.code, reason=str(error))


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
