"""The RoomStore seam: a room written to a store comes back in another Rooms (as in another
process) and carries on: its people return with their tokens, its timers run again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.stores import NEWEST_SCHEMA, SCHEMA_KEY, RoomStore
from app.stores.memory import MemoryStore
from app.tables.notation import JOURNAL_SCHEMA, SCHEMA_VERSION, journal
from app.tables.notation import NEWEST_SCHEMA as table_reads
from app.tables.registry import Rooms
from app.tables.table import Table
from app.wire import protocol
from app.wire.encoded import Encoded

WAIT = 10.0  # seconds: generous, the machine is shared


class Recorder:
    """A transport that keeps what each connection was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any, str | None]] = []

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None:
        self.sent.append((event, data, to))

    async def enter_room(self, sid: str, room: str) -> None:
        pass

    def send(self, message: Encoded, to: str) -> None:
        self.sent.append((message.event, message.data, to))

    def welcome(self, sid: str) -> dict[str, Any]:
        return next(d for e, d, to in reversed(self.sent) if e == "welcome" and to == sid)


def settings(**overrides: Any) -> Settings:
    return Settings(allowed_origins=["http://127.0.0.1"], **overrides)


async def test_the_memory_store_keeps_copies_of_json_only() -> None:
    store: RoomStore = MemoryStore()
    await store.save("ABCDEF", {"schema": 1, "a": [1, 2]})
    loaded = await store.load("ABCDEF")
    assert loaded == {"schema": 1, "a": [1, 2]}
    loaded["a"].append(3)
    assert await store.load("ABCDEF") == {"schema": 1, "a": [1, 2]}  # a copy, as a database
    assert await store.codes() == ["ABCDEF"] and await store.load("ZZZZZZ") is None
    with pytest.raises(ValueError):
        await store.save("NANNAN", {"schema": 1, "x": float("nan")})
    await store.delete("ABCDEF")
    assert await store.codes() == [] and await store.load("ABCDEF") is None


def test_the_stores_read_the_schemas_the_table_writes() -> None:
    snapshot = Table("ABCDEF").to_dict(0.0)
    assert snapshot[SCHEMA_KEY] == SCHEMA_VERSION < JOURNAL_SCHEMA == NEWEST_SCHEMA
    written = journal("ABCDEF", 0, json.dumps(snapshot), [], 0.0, 0.5)
    assert json.loads(written)[SCHEMA_KEY] == JOURNAL_SCHEMA == table_reads


async def a_game_saved(store: MemoryStore, **options: Any) -> tuple[str, str, int]:
    """Ann (seat 0, host) and an easy bot play; the room is saved and its process ends.
    Returns the room code, Ann's token and the saved version."""
    rooms = Rooms(settings(**options), Recorder(), store=store)
    room = rooms.create()
    transport = rooms.transport
    assert isinstance(transport, Recorder)
    await room.join("sid-ann", "Ann", None)
    token = transport.welcome("sid-ann")["token"]
    assert (await room.act("sid-ann", "sit", protocol.Sit(seat=0), 0.0))["ok"]
    assert (await room.act("sid-ann", "add_bot", protocol.AddBot(level="easy"), 0.0))["ok"]
    assert (await room.act("sid-ann", "start", protocol.Start(), room.clock.now()))["ok"]
    await rooms.save(room)
    version = room.version
    rooms.close_all()
    return room.code, token, version


async def test_a_restored_room_keeps_its_game_and_takes_its_people_back_by_token() -> None:
    store = MemoryStore()
    code, token, version = await a_game_saved(store)
    snapshot = await store.load(code)
    assert snapshot is not None and token not in json.dumps(snapshot)
    transport = Recorder()
    rooms = Rooms(settings(), transport, store=store)
    room = await rooms.restore(code)
    assert room is not None and rooms.get(code.lower()) is room
    assert room.phase == "playing" and room.games == 1
    assert room.version == version + 1  # everyone's connection dropped: a change of its own
    assert room.connected() == [] and room.seats[0] is not None
    person, replaced = await room.join("sid-new", "Ann", token)
    assert replaced is None and room.seats[0] is person and person.connected
    assert transport.welcome("sid-new")["token"] == token
    assert await rooms.restore(code) is room  # already open here
    assert await rooms.restore("ZZZZZZ") is None
    rooms.close_all()


async def test_a_restored_room_rebuilds_its_timers_from_the_state() -> None:
    store = MemoryStore()
    fast = {"disconnected_autoflip_seconds": 0.05, "bot_time_scale": 0.02}
    code, _, version = await a_game_saved(store, **fast)
    clock = ManualClock()
    rooms = Rooms(settings(**fast), Recorder(), store=store, clock=clock)
    room = await rooms.restore(code)
    assert room is not None
    restored = room.version
    await clock.advance(0.04)  # before any timer the state asks for
    assert room.version == restored
    # Nobody is connected and nobody acts: the autopilot flips for Ann, the bot plays on.
    for _ in range(1000):
        if room.version > version + 5:
            break
        await clock.advance(0.05)
    assert room.version > version + 5
    rooms.close_all()


async def test_a_host_whose_connection_a_restore_cost_hands_over_after_the_grace() -> None:
    store = MemoryStore()
    code, _, _ = await a_game_saved(store)
    clock = ManualClock()
    rooms = Rooms(settings(host_handover_seconds=1.0), Recorder(), store=store, clock=clock)
    room = await rooms.restore(code)
    assert room is not None
    bob, _ = await room.join("sid-bob", "Bob", None)  # watches
    ann = room.host
    assert ann is not None and ann is not bob and not ann.connected
    await clock.advance(0.99)
    assert room.host is ann
    await clock.advance(0.01)  # the grace, counted from the restore that cost the connection
    assert room.host is bob
    rooms.close_all()


async def test_a_snapshot_of_another_room_is_refused() -> None:
    store = MemoryStore()
    code, _, _ = await a_game_saved(store)
    await store.save("OTHER1", await store.load(code) or {})
    rooms = Rooms(settings(), Recorder(), store=store)
    with pytest.raises(ValueError, match="OTHER1"):
        await rooms.restore("OTHER1")
    assert rooms.get("OTHER1") is None and len(rooms) == 0
