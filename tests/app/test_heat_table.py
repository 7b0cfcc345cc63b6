"""A table of an event (a heat), alone, with no server: its seats dealt by the event, no host,
its first game dealt once everyone is here (or at the gathering's end, the absent dealt in
for the autopilot), its next games until one player has won `first_to`, its totals across
games for the event's recap, and all of it in its snapshot."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.tables.table import Heat, Person, Policy, Table, TableBot, token_hash
from app.tables.values import HEAT_NEXT_GAME_SECONDS
from app.tables.views import build_state
from app.wire.errors import ErrorCode, ProtocolError
from engine import Rules

GATHER = 20.0


def heat_table(first_to: int = 1, *, bots: int = 0, people: int = 3) -> Table:
    heat = Heat("EVENT1", "Class 2B", 1, False, first_to, gather_until=GATHER)
    dealt = [
        Person(f"p{i}", f"Player {i}", token_hash(f"token{i}"), 0.0, disconnected_at=0.0)
        for i in range(people)
    ]
    robots = [TableBot(f"b{i}", "hard", f"Robo {i}") for i in range(bots)]
    return Table.for_heat("HEAT01", Rules(), Policy(), heat, dealt, robots)


def kinds(happened: list[Any]) -> list[str]:
    return [e.kind for e in happened]


def play_to_the_end(table: Table, now: float) -> float:
    """The game played out by its seats: the seat to flip flips, the first seat still in
    slaps every trigger; returns when it ended."""
    game = table.game
    assert game is not None
    while not game.over:
        now += 2.0  # past any freeze or collect pause
        if game.slap_open:
            table.play(
                next(s for s in range(game.players) if not game.is_out(s)),
                "slap",
                game.pile_id,
                now,
            )
        elif game.next_to_play is not None:
            table.play(game.next_to_play, "flip", None, now)
    return now


def arrive(table: Table, i: int, now: float = 1.0) -> None:
    joined = table.join(f"Player {i}", f"token{i}", now)
    assert joined.returning and joined.person.id == f"p{i}"


def through_json(data: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


def test_the_event_deals_the_seats_and_nobody_is_host() -> None:
    table = heat_table(bots=1)
    assert table.seats[:4] == ["p0", "p1", "p2", "b0"] and table.host is None
    arrive(table, 0)
    assert table.host is None
    with pytest.raises(ProtocolError) as caught:
        table.stand("p0", 1.0)
    assert caught.value.code == ErrorCode.WRONG_PHASE
    with pytest.raises(ProtocolError) as caught:
        table.start("p0", 1.0)
    assert caught.value.code == ErrorCode.NOT_HOST


def test_a_stranger_with_the_link_watches_and_a_goodbye_keeps_the_seat() -> None:
    table = heat_table()
    stranger = table.join("Eve", None, 1.0)
    assert table.seat_of(stranger.person.id) is None and table.host is None
    arrive(table, 0)
    table.drop("p0", 2.0, left=True)
    assert table.seat_of("p0") == 0


def test_a_player_keeps_the_events_name_at_its_table() -> None:
    table = heat_table()
    joined = table.join("Somebody Else", "token0", 1.0)  # the phone's name changed since
    assert joined.returning and joined.person.name == "Player 0"


def test_a_player_the_event_removed_is_refused_and_the_autopilot_keeps_their_seat() -> None:
    table = heat_table()
    arrive(table, 0)
    happened = table.bar_from_heat("p0", 2.0)
    assert kinds(happened) == ["disconnect"] and not table.people["p0"].connected
    assert table.seat_of("p0") == 0  # the heat's result still counts their seat
    with pytest.raises(ProtocolError) as caught:
        table.join("Player 0", "token0", 3.0)
    assert caught.value.code == ErrorCode.KICKED
    assert table.bar_from_heat("p0", 4.0) == []  # once
    arrive(table, 1)  # nobody else is touched
    kept = Table.from_dict(through_json(table.to_dict(5.0)), 5.0)
    with pytest.raises(ProtocolError):
        kept.join("Player 0", "token0", 6.0)
    ordinary = Table("ROOM01", Rules(), Policy())
    ordinary.join("Ann", "t", 1.0, new_id="a")
    assert ordinary.bar_from_heat("a", 2.0) == [] and ordinary.people["a"].connected


def test_the_first_game_is_dealt_once_everyone_is_here() -> None:
    table = heat_table()
    arrive(table, 0)
    arrive(table, 1)
    assert table.heat_due() == GATHER
    assert kinds(table.deal_heat(2.0).events) == []
    arrive(table, 2)
    assert table.heat_due() is not None and table.heat_due() <= 2.0  # type: ignore[operator]
    assert kinds(table.deal_heat(2.0).events) == ["start"]
    assert table.phase == "playing" and table.game is not None and table.game.players == 3


def test_at_the_gatherings_end_the_absent_are_dealt_in_for_the_autopilot() -> None:
    table = heat_table()
    arrive(table, 0)
    done = table.deal_heat(GATHER)
    assert kinds(done.events) == ["start"]
    assert table.seats[:3] == ["p0", "p1", "p2"]  # nobody stood up


def test_a_game_nobody_can_play_is_never_abandoned_at_a_heat() -> None:
    table = heat_table()
    table.deal_heat(GATHER)
    assert not table.anyone_can_play()
    assert table.abandon(GATHER + 100) == [] and table.phase == "playing"
    assert table.keeps_open()


def test_games_follow_until_one_player_has_won_first_to() -> None:
    table = heat_table(first_to=2, bots=1, people=1)
    arrive(table, 0)
    table.deal_heat(1.0)
    games = 0
    now = 1.0
    while table.heat_winner() is None:
        now = play_to_the_end(table, now)
        games += 1
        assert table.phase == "over"
        heat = table.heat
        assert heat is not None and heat.over_at == now
        if table.heat_winner() is None:
            due = table.heat_due()
            assert due == now + HEAT_NEXT_GAME_SECONDS
            assert table.deal_heat(due - 0.5).events == []
            assert kinds(table.deal_heat(due).events) == ["start"]
            now = due
    assert max(table.wins.values()) == 2 and games >= 2
    assert table.heat_due() is None and not table.keeps_open()
    heat = table.heat
    assert heat is not None
    assert set(heat.totals) == {"p0", "b0"}
    assert sum(t["takes"] or 0 for t in heat.totals.values()) > 0
    assert heat.places[0] in ("p0", "b0")
    state = build_state(table, table.people["p0"], 0)
    winner = table.heat_winner()
    assert winner is not None
    assert state["heat"] == {
        "event": "EVENT1",
        "name": "Class 2B",
        "round": 1,
        "final": False,
        "first_to": 2,
        "winner": table.seat_of(winner),
    }


def test_a_heat_comes_back_whole_from_its_snapshot() -> None:
    table = heat_table(first_to=2, bots=1, people=1)
    arrive(table, 0)
    table.deal_heat(1.0)
    now = play_to_the_end(table, 1.0)
    saved = through_json(table.to_dict(now))
    back = Table.from_dict(saved, 500.0, Policy())
    assert back.heat is not None and table.heat is not None
    assert back.heat.totals == table.heat.totals and back.heat.places == table.heat.places
    assert back.heat_due() == pytest.approx(500.0 + HEAT_NEXT_GAME_SECONDS)
    assert back.to_dict(500.0) == through_json(table.to_dict(now))
    assert "heat" not in Table("PLAIN1").to_dict(0.0)
    assert "heat" not in build_state(Table("PLAIN1"), None, None)
