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


# How the events' table says when each event command may be sent.
EVENT_PHASE_WORDS = {
    frozenset({"lobby"}): "lobby",
    frozenset({"playing"}): "playing",
    frozenset({"lobby", "playing"}): "lobby or playing",
    frozenset({"lobby", "playing", "over"}): "anyone",
}


def test_every_event_command_is_documented_with_who_and_when() -> None:
    events_part = DOC.split("## Events: more than eight")[1].split("\n## ")[0]
    for name, command in protocol.EVENT_COMMANDS.items():
        row = re.search(rf"^\| `{name}` \|.*$", events_part, re.MULTILINE)
        assert row is not None, name
        who_when = re.split(r"(?<!\\)\|", row.group(0))[3]
        assert WHO_WORDS[command.who] in who_when, (name, who_when)
        assert EVENT_PHASE_WORDS[command.phases] in who_when, (name, who_when)
    assert "### `event_state`" in DOC


def test_every_event_state_field_and_kind_is_documented() -> None:
    """An event played to its podium: every field of its `event_state` (its players', its
    tables' progress, its recap's, `you`'s) and every kind of its events is in the docs, as
    is every field of a table's `heat`."""
    from app.tables.table import Heat, Policy, Table
    from app.tables.views import build_state
    from app.tournaments.heats import read_heat
    from app.tournaments.tournament import Tournament
    from app.tournaments.views import event_view, you

    event = Tournament.opened("EVT001", "Class", "Lee", "secret", size=3)
    kinds: set[str] = set()
    for i in range(4):
        kinds |= {e["kind"] for e in event.join(f"P{i}", None, 0.0).events}
    organiser = event.organiser.id if event.organiser else None
    kinds |= {e["kind"] for e in event.add_bot(organiser, "easy", 0.0).events}
    kinds |= {e["kind"] for e in event.remove(organiser, "b1", 0.0).events}
    done = event.start(organiser, 0.0, ["T1", "T2"], 1)
    kinds |= {e["kind"] for e in done.events}
    kinds |= {e["kind"] for e in event.pause(organiser, True, 0.0).events}
    kinds |= {e["kind"] for e in event.pause(organiser, False, 0.0).events}
    progress = {}
    for dealt in done.dealt:
        table = Table.for_heat(dealt.code, event.rules, Policy(), dealt.heat, dealt.people, [])
        progress[dealt.code] = read_heat(table)
        winner = dealt.people[0].id
        kinds |= {
            e["kind"]
            for e in event.heat_decided(
                dealt.code, {winner: 1}, [winner], {winner: {"takes": 1, "best_ms": 9}}, 1.0
            ).events
        }
    again = event.advance(99.0, ["T3"], 2)
    kinds |= {e["kind"] for e in again.events}
    (final,) = again.dealt
    champion = final.people[0].id
    kinds |= {e["kind"] for e in event.heat_decided("T3", {champion: 1}, [champion], {}, 99).events}
    view = event_view(event, progress, [], None)
    names = set(view) | set(view["players"][0]) | set(view["rounds"][0][0])
    names |= set(view["rounds"][0][0]["progress"]) | set(
        view["rounds"][0][0]["progress"]["seats"][0]
    )
    names |= set(view["recap"]) | set(view["recap"]["fastest"]) | set(view["recap"]["most_piles"])
    names |= set(you(event, champion, "player"))
    kinds.add("end")
    events_part = DOC.split("## Events: more than eight")[1].split("\n## ")[0]
    assert names - set(re.findall(r"`([a-z_]+)`", events_part)) == set()
    kinds_row = next(line for line in events_part.splitlines() if line.startswith("| `events`"))
    assert kinds - set(re.findall(r"`([a-z_]+)`", kinds_row)) == set()
    heat = Heat("EVT001", "Class", 1, True, 1, 0.0)
    table = Table.for_heat("T9", event.rules, Policy(), heat, final.people, [])
    heat_fields = set(build_state(table, None, 0)["heat"])
    assert heat_fields - set(re.findall(r"`([a-z_]+)`", events_part)) == set()
