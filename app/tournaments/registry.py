"""Every event this process holds, by code, beside the rooms (app/tables/registry.py `Rooms`),
on the same store and clock: opening an event, bringing saved ones back when the process
starts, and writing them when it stops.

An event's record is kept in the store under its code, as a table's is (`Tournament.to_dict`,
its `kind` telling it from a table's), so the codes of tables and events never meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from app.ops.logs import log_event
from app.stores import Snapshot, StoreError
from app.stores.saver import Saver
from app.tables.registry import FIRST_SAVE_SECONDS, SAVE_BEATS, Rooms
from app.tournaments.heats import HeatTables, LocalHeats
from app.tournaments.room import TournamentRoom
from app.tournaments.tournament import KIND, Tournament
from app.wire.errors import ErrorCode, ProtocolError
from engine import Rules


class Tournaments:
    """The events of this process; a companion of its rooms (`Rooms.companions`)."""

    def __init__(self, rooms: Rooms, heats: HeatTables | None = None) -> None:
        self.rooms = rooms
        self.heats: HeatTables = heats if heats is not None else LocalHeats(rooms)
        self.settings, self.clock, self.store = rooms.settings, rooms.clock, rooms.store
        self._events: dict[str, TournamentRoom] = {}
        self._deleting: set[asyncio.Task[None]] = set()
        # In a cluster (app/tournaments/cluster.py): an event's lease taken for a new code,
        # whether this process may run an event now, and what a refused fenced write tells.
        self.claim: Callable[[str], Awaitable[bool]] | None = None
        self.gate: Callable[[str], bool] | None = None
        self.on_lease_lost: Callable[[str], Awaitable[None]] | None = None
        rooms.companions.append(self)

    # ---- reading ------------------------------------------------------------------------

    def get(self, code: object) -> TournamentRoom | None:
        if not isinstance(code, str):
            return None
        return self._events.get(code.strip().upper())

    def holds(self, code: str) -> bool:
        return code in self._events

    async def summary(self, code: str) -> dict[str, Any] | None:
        """GET /api/events/CODE and the event's pages: from the event open here, else (a
        cluster's other process runs it) from its stored record; None if there is none."""
        room = self.get(code)
        if room is not None:
            return room.summary()
        if self.claim is None:  # one process holds every event: none is stored elsewhere
            return None
        try:
            record = await self.store.load(code.strip().upper())
        except StoreError:
            raise ProtocolError(
                ErrorCode.SHUTTING_DOWN, "the server cannot reach its store"
            ) from None
        if record is None or record.get("kind") != KIND:
            return None
        return summary_of(record)

    def __len__(self) -> int:
        return len(self._events)

    # ---- opening --------------------------------------------------------------------------

    async def open_event(
        self,
        name: str,
        organiser: str,
        *,
        size: int,
        first_to: int,
        bots: bool,
        rules: Rules,
        lag_fair: bool = False,
        false_starts: bool = True,
    ) -> tuple[TournamentRoom, str]:
        """A new event, written before its link is given out; returns it and the organiser's
        token (their key to the event: only its hash is kept)."""
        if self.rooms.draining:
            raise ProtocolError(ErrorCode.SHUTTING_DOWN, "the server is restarting: try again")
        if len(self.rooms) + len(self._events) >= self.settings.max_rooms:
            raise ProtocolError(ErrorCode.TOO_MANY_ROOMS, "too many rooms are open: try later")
        code = await self.rooms.unused_code()
        while self.claim is not None and not await self.claim(code):
            code = await self.rooms.unused_code()  # taken meanwhile by another process
        token = secrets.token_urlsafe(16)
        event = Tournament.opened(
            code,
            name,
            organiser,
            token,
            size=size,
            first_to=first_to,
            bots=bots,
            rules=rules,
            lag_fair=lag_fair,
            false_starts=false_starts,
        )
        room = self._add(event)
        log_event("event_opened", code=code, size=size, first_to=first_to, bots=bots)
        assert room.saver is not None
        room.saver.changed(urgent=True)
        with contextlib.suppress(TimeoutError):  # the store down: the Saver keeps trying
            await asyncio.wait_for(room.saver.flush(), FIRST_SAVE_SECONDS)
        async with room.lock:
            room.set_timers(self.clock.now())
        return room, token

    def _add(self, event: Tournament) -> TournamentRoom:
        room = TournamentRoom(
            event,
            self.settings,
            self.rooms.transport,
            self.heats,
            self.rooms.unused_code,
            self._closed,
            self.rooms.metrics,
            clock=self.clock,
            lock_watch=self.rooms.lock_watch,
        )
        delay = self.settings.save_seconds
        room.saver = Saver(
            self.store,
            event.code,
            room.snapshot_now,
            delay=delay,
            beat=delay / SAVE_BEATS,
            seen_at=room.seen_at,
            clock=self.clock,
        )
        code, gate, lost = event.code, self.gate, self.on_lease_lost
        if gate is not None:
            room.judge_gate = lambda: gate(code)
        if lost is not None:
            room.saver.on_lease_lost = lambda: lost(code)
        self._events[event.code] = room
        return room

    # ---- the process starts and stops -------------------------------------------------------

    async def start(self) -> None:
        """Brings back every event the rooms' start set aside (after the tables: an event
        reads its tables at once)."""
        records = {c: s for c, s in self.rooms.set_aside.items() if s.get("kind") == KIND}
        for code, record in records.items():
            self.restore_record(code, record)
        for room in list(self._events.values()):
            await room.resume_heats()
        log_event("events_restored", events=len(self._events))

    def restore_record(self, code: str, record: Snapshot) -> TournamentRoom | None:
        try:
            if record.get("code") != code:
                raise ValueError(f"the record saved as {code} is of another event")
            event = Tournament.from_dict(record, self.clock.now())
        except (ValueError, TypeError, KeyError) as error:
            log_event(
                "snapshot_unreadable", level=logging.ERROR, room=code, reason=repr(error)[:200]
            )
            return None
        room = self._add(event)
        log_event("event_restored", code=code, stage=event.stage, round=event.round)
        return room

    # ---- in a cluster: a record held by lease beside the tables (app/cluster/node.py) ----

    def opens(self, record: Snapshot) -> bool:
        return record.get("kind") == KIND

    async def take(self, code: str, record: Snapshot) -> bool:
        """Opens the event here, its lease just taken, and reads its tables at once."""
        if code in self._events:
            return True
        room = self.restore_record(code, record)
        if room is None:
            return False
        await room.resume_heats()
        return True

    async def give(self, code: str) -> None:
        """Another process takes the event: it stops here and is written (fenced) first."""
        room = self._events.get(code)
        if room is None:
            return
        await room.suspend()
        if room.saver is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(room.saver.flush(), FIRST_SAVE_SECONDS)
        self.drop(code)

    def drop(self, code: str) -> None:
        """The event is another process's now: forgotten here, its record kept."""
        room = self._events.pop(code, None)
        if room is not None:
            room.stop()

    async def drain(self) -> None:
        events = list(self._events.values())
        await asyncio.gather(*(room.suspend() for room in events))
        await self.flush()

    async def flush(self) -> None:
        savers = [room.saver for room in self._events.values() if room.saver is not None]
        for saver in savers:
            saver.changed(urgent=True)
        await asyncio.gather(*(saver.flush() for saver in savers))

    async def shutdown(self, flush_seconds: float) -> None:
        for room in self._events.values():
            room.hold()
        try:
            await asyncio.wait_for(self.flush(), flush_seconds)
        except TimeoutError:
            log_event("events_not_saved", level=logging.ERROR, events=len(self._events))
        for room in list(self._events.values()):
            room.stop()
        self._events.clear()
        if self._deleting:
            await asyncio.wait(self._deleting, timeout=flush_seconds)

    def _closed(self, code: str) -> None:
        room = self._events.pop(code, None)
        if room is not None and room.saver is not None:
            saver, room.saver = room.saver, None
            task = asyncio.get_running_loop().create_task(self._delete(saver))
            self._deleting.add(task)
            task.add_done_callback(self._deleting.discard)

    async def _delete(self, saver: Saver) -> None:
        try:
            await saver.discard()
        except StoreError as error:
            log_event("delete_failed", level=logging.WARNING, room=saver.code, reason=str(error))


def summary_of(record: dict[str, Any]) -> dict[str, Any]:
    """GET /api/events/CODE from a stored record (a cluster's other process holds it)."""
    return {
        "code": record["code"],
        "name": record["name"],
        "stage": record["stage"],
        "players": sum(1 for e in record["entrants"] if not e["removed"]),
        "round": len(record["rounds"]),
    }
