"""docs/protocol.md stays true: every event, error code and event kind the server uses is in it."""

import re
from pathlib import Path

import engine
from app.ops.config import Settings
from app.tables import events
from app.tables.registry import Rooms
from app.tables.table import Person
from app.tables.views import build_state
from app.wire import protocol
from app.wire.encoded import Encoded
from app.wire.protocol import SeatStats
from engine.game import SeatStats as EngineStats
from tools import docs_tables

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "protocol.md").read_text()
DOCUMENTED = set(re.findall(r"`([a-z_]+)`", DOC))


def test_every_client_event_the_server_handles_is_documented() -> None:
    assert set(protocol.CLIENT_EVENTS) - DOCUMENTED == set()


def test_every_server_event_is_documented() -> None:
    names = (protocol.WELCOME, protocol.STATE, protocol.EVENT, protocol.PING)
    assert set(names) - DOCUMENTED == set()
    for name in names:
        assert f"### `{name}`" in DOC or f"emits `{name}" in DOC


def test_every_error_code_is_documented() -> None:
    assert {code.value for code in protocol.ErrorCode} - DOCUMENTED == set()


def test_every_event_kind_is_documented() -> None:
    engine_kinds = {cls.kind for cls in engine.Event.__subclasses__()}
    room_kinds = {cls.kind for cls in events.RoomEvent.__subclasses__()}
    assert len(room_kinds) >= 13
    assert (engine_kinds | room_kinds) - DOCUMENTED == set()
    table = DOC.split("### `event`")[1].split("## ")[0]
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.MULTILINE))
    assert rows == engine_kinds | room_kinds  # and the table lists no kind the server lacks


# How docs/protocol.md's "who, when" column says each of the registry's declarations.
WHO_WORDS = {"anyone": "anyone", "seated": "seat", "host": "host"}
PHASE_WORDS = {
    frozenset({"lobby", "over"}): "lobby",
    frozenset({"lobby"}): "lobby",
    frozenset({"over"}): "after a game",
    frozenset({"playing"}): "playing",
    frozenset({"lobby", "playing", "over"}): "anyone",
}


def test_who_may_send_each_event_and_when_is_documented_as_the_registry_declares() -> None:
    events = DOC.split("## Client events")[1]  # an `auth` field may share an event's name
    for name, command in protocol.COMMANDS.items():
        row = re.search(rf"^\| `{name}` \|.*$", events, re.MULTILINE)
        assert row is not None, name
        who_when = re.split(r"(?<!\\)\|", row.group(0))[3]  # cells split on unescaped bars
        assert WHO_WORDS[command.who] in who_when, (name, command.who, who_when)
        assert PHASE_WORDS[command.phases] in who_when, (name, command.phases, who_when)


class Silent:
    async def emit(self, event: str, data: object = None, to: str | None = None) -> None:
        pass

    async def enter_room(self, sid: str, room: str) -> None:
        pass

    def send(self, message: Encoded, to: str) -> None:
        pass


async def test_every_state_field_is_documented() -> None:
    rooms = Rooms(Settings(allowed_origins=["http://127.0.0.1"]), Silent())
    room = rooms.create()
    await room.join("sid-1", "Ann", None)
    await room.act("sid-1", "sit", protocol.Sit(seat=0), 0.0)
    await room.act("sid-1", "add_bot", protocol.AddBot(level="easy"), 0.0)
    await room.act("sid-1", "start", protocol.Empty(), 0.0)
    person = room.table.occupant(0)
    assert isinstance(person, Person)
    state = build_state(room.table, person, 0)
    names = set(state) | set(state["you"]) | set(state["seats"][0]) | set(state["pile"])
    names |= set(state["stats"][0]) | set(state["rules"])
    assert names - DOCUMENTED == set()
    rooms.close_all()


def test_the_wire_stats_are_the_engines_and_their_table_is_the_built_one() -> None:
    """A seat's stats: the wire's model has every figure the engine gives, in its order, and
    docs/protocol.md's table of them is built from the model."""
    assert list(SeatStats.model_fields) == ["seat", *EngineStats().summary()]
    assert docs_tables.stats_table() in DOC, "run `python -m tools.docs_tables`"
    assert "winning" in (SeatStats.model_fields["best_ms"].description or "")
