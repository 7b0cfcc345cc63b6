"""A change is built and encoded once, whoever receives it, and the wire stays what
python-socketio's emit sends (app/tables/views.py, app/realtime/outgoing.py)."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest
from app_harness import Recorder
from engineio import packet as eio_packet
from socketio import packet as sio_packet

import app.tables.views
from app.__main__ import settle_the_heap
from app.ops.config import Settings
from app.tables.registry import Rooms
from app.tables.views import ViewParts, build_state
from app.wire import protocol
from app.wire.encoded import ENGINEIO_MESSAGE, EVENT_PACKET, Encoded


def emitted(event: str, data: Any) -> Any:
    """What python-socketio's emit puts on the wire for `event` (its Engine.IO message)."""
    text = sio_packet.Packet(sio_packet.EVENT, data=[event, data]).encode()
    return "4" + text


def on_the_wire(message: Encoded) -> str:
    return message.text


async def seated_four_and_a_spectator() -> tuple[Rooms, Recorder, Any]:
    recorder = Recorder()
    rooms = Rooms(Settings(allowed_origins=["http://127.0.0.1"]), recorder)
    room = rooms.create()
    for i in range(5):
        await room.join(f"sid-{i}", f"Pé {i}", None)  # a name beyond ASCII
    for i in range(4):
        assert (await room.act(f"sid-{i}", "sit", protocol.Sit(seat=i), 0.0))["ok"]
    return rooms, recorder, room


def test_the_head_of_every_event_is_the_libraries_own_packet_types() -> None:
    """app/wire/encoded.py names Engine.IO's and Socket.IO's packet types without importing
    the transport's libraries: they must be the libraries' own."""
    assert str(eio_packet.MESSAGE) == ENGINEIO_MESSAGE
    assert str(sio_packet.EVENT) == EVENT_PACKET


async def test_every_message_is_what_emit_would_send_and_its_data() -> None:
    rooms, recorder, room = await seated_four_and_a_spectator()
    recorder.sent.clear()
    assert (await room.act("sid-0", "start", protocol.Start(), 0.0))["ok"]
    # One message per person: their state, with the change's events in it; nothing else.
    assert sorted(to for to, _ in recorder.sent) == [f"sid-{i}" for i in range(5)]
    assert {m.event for _, m in recorder.sent} == {protocol.STATE}
    seat_of = room.table.seat_by_id()
    events = recorder.sent[0][1].data["events"]
    assert [e["kind"] for e in events] == ["start"]
    assert all(e["version"] == room.version for e in events)
    for to, message in recorder.sent:
        person = room.table.people[room.connections.person_on(to) or ""]
        state = build_state(room.table, person, seat_of.get(person.id), events)
        assert message.data == state
        wire = on_the_wire(message)
        assert wire[:10] == emitted(protocol.STATE, state)[:10] == '42["state"'
        assert json.loads(wire[2:]) == json.loads(emitted(protocol.STATE, state)[2:])
    rooms.close_all()


async def test_a_flip_is_one_message_to_each_person_its_events_in_the_state() -> None:
    rooms, recorder, room = await seated_four_and_a_spectator()
    assert (await room.act("sid-0", "start", protocol.Start(), 0.0))["ok"]
    flipper = next(f"sid-{i}" for i in range(4) if i == room.game.next_to_play)
    recorder.sent.clear()
    answer = await room.act(flipper, "flip", protocol.Empty(), 0.0)
    assert answer["ok"] and [e["kind"] for e in answer["events"]] == ["flip"]
    assert sorted(to for to, _ in recorder.sent) == [f"sid-{i}" for i in range(5)]
    for _, message in recorder.sent:
        assert message.event == protocol.STATE
        assert message.data["version"] == room.version
        assert message.data["events"] == answer["events"]  # the ack's events, as sent
        assert json.loads(on_the_wire(message)[2:])[1]["events"] == answer["events"]
    rooms.close_all()


async def test_a_change_with_no_events_says_so() -> None:
    rooms, recorder, room = await seated_four_and_a_spectator()
    recorder.sent.clear()
    async with room.lock:
        room._apply([], 0.0)  # a tick: a fresh state and nothing that happened
    assert len(recorder.sent) == 5
    assert all(m.data["events"] == [] for _, m in recorder.sent)
    rooms.close_all()


async def test_a_change_builds_the_table_once_for_every_recipient(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app.tables.views._you_text.cache_clear()  # each person's `you` made as they sit, below
    monkeypatch.setattr(ViewParts, "stale", None)  # (the check encodes every roster kept again)
    rooms, recorder, room = await seated_four_and_a_spectator()
    built = []
    compose = app.tables.views._compose  # what both the encoded view and `seen` are made by
    monkeypatch.setattr(app.tables.views, "_compose", lambda *a: built.append(a) or compose(*a))
    encoded = []
    to_json = app.tables.views.to_json
    monkeypatch.setattr(app.tables.views, "to_json", lambda d: encoded.append(d) or to_json(d))
    recorder.sent.clear()
    assert (await room.act("sid-0", "start", protocol.Start(), 0.0))["ok"]
    assert len(built) == 1  # four seats and a spectator: one view of the table
    shared = [d for d in encoded if isinstance(d, dict) and "seats" in d]
    assert len(shared) == 1  # and its JSON once; each person's own part is `you` alone,
    # its text made when they sat down and the same since (the same person, seat and host);
    # the parts kept from change to change made anew are the new game's stats (a list) and,
    # the deal being no move, the roster: spectators, players needed, places and match
    assert [type(d) for d in encoded if d is not shared[0]] == [list, list, int, list, list]
    # The next change too: its shared JSON, and each person's `you` text as it was.
    flipper = next(f"sid-{i}" for i in range(4) if i == room.game.next_to_play)
    encoded.clear()
    recorder.sent.clear()
    assert (await room.act(flipper, "flip", protocol.Empty(), 0.0))["ok"]
    # Nothing kept is made again for a flip (the stats and rules did not change, and a move
    # leaves the roster as it was).
    assert len(encoded) == 1 and "seats" in encoded[0] and len(recorder.sent) == 5
    assert len(built) == 2  # one more view: the flip's
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
