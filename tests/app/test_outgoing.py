"""A change is built and encoded once, whoever receives it, and the wire stays what
python-socketio's emit sends (app/views.py, app/outgoing.py)."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from socketio import packet as sio_packet

import app.views
from app import protocol
from app.__main__ import settle_the_heap
from app.config import Settings
from app.outgoing import Encoded
from app.rooms import Rooms
from app.views import build_state


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Encoded]] = []

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None:
        pass

    async def enter_room(self, sid: str, room: str) -> None:
        pass

    async def send(self, message: Encoded, to: str) -> None:
        self.sent.append((to, message))


def emitted(event: str, data: Any) -> Any:
    """What python-socketio's emit puts on the wire for `event` (its Engine.IO message)."""
    text = sio_packet.Packet(sio_packet.EVENT, data=[event, data]).encode()
    return "4" + text


def on_the_wire(message: Encoded) -> str:
    text = message.packet.encode()
    assert isinstance(text, str)
    return text


async def seated_four_and_a_spectator() -> tuple[Rooms, Recorder, Any]:
    recorder = Recorder()
    rooms = Rooms(Settings(allowed_origins=["http://127.0.0.1"]), recorder)
    room = rooms.create()
    for i in range(5):
        await room.join(f"sid-{i}", f"Pé {i}", None)  # a name beyond ASCII
    for i in range(4):
        assert (await room.act(f"sid-{i}", "sit", protocol.Sit(seat=i), 0.0))["ok"]
    return rooms, recorder, room


async def test_every_message_is_what_emit_would_send_and_its_data() -> None:
    rooms, recorder, room = await seated_four_and_a_spectator()
    recorder.sent.clear()
    assert (await room.act("sid-0", "start", protocol.Start(), 0.0))["ok"]
    states = [(to, m) for to, m in recorder.sent if m.event == protocol.STATE]
    events = [(to, m) for to, m in recorder.sent if m.event == protocol.EVENT]
    assert sorted(to for to, _ in states) == [f"sid-{i}" for i in range(5)]
    assert events and all(to == room.code for to, _ in events)
    seat_of = room.table.seat_by_id()
    for to, message in states:
        person = room.table.people[room._people_by_sid[to]]
        state = build_state(room.table, person, seat_of.get(person.id))
        assert message.data == state
        wire = on_the_wire(message)
        assert wire[:10] == emitted(protocol.STATE, state)[:10] == '42["state"'
        assert json.loads(wire[2:]) == json.loads(emitted(protocol.STATE, state)[2:])
    for _, message in events:
        wire = on_the_wire(message)
        assert json.loads(wire[2:]) == [protocol.EVENT, message.data]
        assert wire[:2] == "42"
    rooms.close_all()


async def test_a_change_builds_the_table_once_for_every_recipient(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rooms, recorder, room = await seated_four_and_a_spectator()
    built = []
    seen_from = app.views._seen_from
    monkeypatch.setattr(app.views, "_seen_from", lambda *a: built.append(a) or seen_from(*a))
    encoded = []
    to_json = app.views.to_json
    monkeypatch.setattr(app.views, "to_json", lambda d: encoded.append(d) or to_json(d))
    recorder.sent.clear()
    assert (await room.act("sid-0", "start", protocol.Start(), 0.0))["ok"]
    assert len(built) == 1  # four seats and a spectator: one view of the table
    shared = [d for d in encoded if isinstance(d, dict) and "seats" in d]
    assert len(shared) == 1  # and its JSON once; each person's own part is `you` alone
    assert len(encoded) == 1 + 5
    rooms.close_all()


def test_start_up_is_frozen_out_of_the_collector_and_the_thresholds_are_set() -> None:
    before = gc.get_threshold()
    try:
        settle_the_heap((20_000, 10, 10))
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (20_000, 10, 10)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
