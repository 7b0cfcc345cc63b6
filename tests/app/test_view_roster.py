"""A table's roster in its views (spectators, players needed, places, match score, heat) is
kept from one change to the next only when that change was a single move of the game, and
made again after anything else (app/tables/views.py `ViewParts.roster`).

The suite compares every roster kept with one made afresh (tests/conftest.py), and sends
the fresh one; these tests switch that off where they look at what is sent, as a server
runs, and check that the check catches a change no commit numbered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from app_harness import Recorder

from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.tables.registry import Rooms
from app.tables.room import Room
from app.tables.views import Roster, ViewParts
from app.wire import protocol
from engine import Game


async def a_room() -> tuple[Room, Recorder, ManualClock]:
    clock, recorder = ManualClock(), Recorder()
    rooms = Rooms(Settings(store="memory"), recorder, clock=clock)
    return rooms.create(), recorder, clock


async def a_game_of_four() -> tuple[Room, list[str], Recorder, ManualClock]:
    room, recorder, clock = await a_room()
    sids = [f"s{i}" for i in range(4)]
    for sid in sids:
        await room.join(sid, f"Player {sid}", None)
    await act(room, sids[0], "start")
    return room, sids, recorder, clock


async def act(room: Room, sid: str, event: str, *payload: Any) -> dict[str, Any]:
    answer = await room.act(sid, event, protocol.parse(event, payload), room.clock.now())
    assert answer["ok"], answer
    return answer


async def move(room: Room, sids: list[str]) -> None:
    """One move and nothing else: the seat to play flips, or a Jack showing is slapped (by
    the first seat still in); then every freeze and collect pause runs out (its ticks are
    moves too)."""
    game = room.table.game
    assert game is not None
    slap = game.slap_open and not game.trigger_lapsed
    seat = next(s for s in range(game.players) if not game.is_out(s)) if slap else game.next_to_play
    assert seat is not None
    sid = next(s for s in sids if room.connections.person_on(s) == room.table.seats[seat])
    if slap:
        await act(room, sid, "slap", {"pile_id": game.pile_id})
    else:
        await act(room, sid, "flip")
    assert isinstance(room.clock, ManualClock)
    await room.clock.advance(2.0)


def roster(room: Room) -> Roster:
    kept = room._view_parts._roster
    assert kept is not None
    return kept[3]


def last_state(recorder: Recorder, to: str | None = None) -> dict[str, Any]:
    text = next(
        m.text
        for sid, m in reversed(recorder.sent)
        if m.event == protocol.STATE and to in (None, sid)
    )
    return json.loads(text[text.index("[") :])[1]  # type: ignore[no-any-return]


async def test_a_move_keeps_the_roster_and_anything_else_makes_it_again() -> None:
    room, sids, recorder, _clock = await a_game_of_four()
    await move(room, sids)
    kept = roster(room)
    for _ in range(3):
        await move(room, sids)
        assert roster(room) is kept  # moves: the same JSON, not made again
    await room.join("w", "Watcher", None)  # someone comes to watch: no move
    assert roster(room) is not kept
    assert [p["name"] for p in last_state(recorder)["spectators"]] == ["Watcher"]
    watched = roster(room)
    await move(room, sids)
    assert roster(room) is watched
    await room.drop("w", left=True)
    assert roster(room) is not watched
    assert last_state(recorder)["spectators"] == []


async def test_the_move_that_ends_the_game_makes_places_and_the_match_score_again() -> None:
    room, sids, recorder, _clock = await a_game_of_four()
    game = room.table.game
    assert game is not None
    while room.table.phase == "playing":
        await move(room, sids)
    state = last_state(recorder)
    assert state["phase"] == "over"
    assert state["places"][0] == game.winner
    assert sorted(p["wins"] for p in state["match"]) == [0, 0, 0, 1]


async def test_changes_nobody_saw_make_the_roster_again_though_one_move_came_since(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A view is built only for someone connected. Everyone leaves (the last to go sees no
    view of it), the autopilot flips once for the absent, and someone new comes: one move
    since the roster was made, but more changes than one."""
    monkeypatch.setattr(ViewParts, "stale", None)  # as a server runs
    room, sids, recorder, clock = await a_game_of_four()
    await room.join("w", "Watcher", None)
    hands = [[f"{rank}C", f"{rank}D", f"{rank}H"] for rank in range(2, 6)]  # no trigger
    room.table.game = Game.from_hands(hands, rules=room.rules, now=clock.now())
    await move(room, sids)
    for sid in [*sids, "w"]:
        await room.drop(sid, left=False)
    assert room.table.connected() == []
    made = room.table.moves_made
    while room.table.moves_made == made:  # the autopilot flips for the seat to play
        await clock.advance(0.1)
    assert room.table.moves_made == made + 1 and room.table.phase == "playing"
    await room.join("z", "Newcomer", None)
    spectators = [p["name"] for p in last_state(recorder, to="z")["spectators"]]
    assert spectators == ["Newcomer"]


async def test_a_host_forgotten_with_nobody_to_take_over_leaves_the_match_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's role passes to nobody (only a shared screen is here): the host, gone and
    seatless, is forgotten with no change committed, and the bots' next moves show the
    match score without them."""
    monkeypatch.setattr(ViewParts, "stale", None)  # as a server runs
    room, recorder, clock = await a_room()
    await room.join("o", "Owner", None)
    await room.join("h", "Harry", None)
    await act(room, "o", "rules", {"false_starts": False})  # Harry slaps at once
    await act(room, "o", "stand")
    await act(room, "o", "add_bot", {"level": "easy"})  # Harry in seat 1, a bot in seat 0
    await act(room, "o", "start")
    harry = room.connections.person_on("h")
    assert harry is not None
    while room.table.phase == "playing":  # Harry slaps every Jack first and wins
        game = room.table.game
        assert game is not None
        if game.slap_open and not game.trigger_lapsed:
            await act(room, "h", "slap", {"pile_id": game.pile_id})
        elif game.next_to_play == room.table.seat_of(harry):  # (refused while collecting)
            await room.act("h", "flip", protocol.parse("flip", ()), clock.now())
        await clock.advance(0.2)
    assert room.table.wins == {harry: 1}
    await room.drop("o", left=True)
    assert room.table.host == harry
    await act(room, "h", "stand")
    await act(room, "h", "add_bot", {"level": "easy"})
    await act(room, "h", "start")  # two bots play on
    await room.join("tv", "Screen", None, watch=True)
    await room.drop("h", left=False)
    await clock.advance(room.settings.host_handover_seconds + 1)
    assert harry not in room.table.people and room.table.phase == "playing"
    moves = room.table.moves_made
    while room.table.moves_made < moves + 3 and room.table.phase == "playing":
        await clock.advance(0.2)  # the bots' moves, each shown to the screen
    assert harry not in [p["player"] for p in last_state(recorder, to="tv")["match"]]


async def test_a_change_no_commit_numbered_is_caught_by_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A name changed in place with no change committed stays out of the views until a
    change other than a move; the suite's check finds it at the first move."""
    room, sids, recorder, _clock = await a_game_of_four()
    await move(room, sids)
    somebody = next(iter(room.table.people.values()))
    somebody.name = "Renamed quietly"
    monkeypatch.setattr(ViewParts, "stale", None)  # as a server runs
    await move(room, sids)
    names = [p["name"] for p in last_state(recorder)["match"]]
    assert "Renamed quietly" not in names  # what the check is for
    found: list[str] = []
    monkeypatch.setattr(ViewParts, "stale", found)
    await move(room, sids)
    assert len(found) == 1 and "Renamed quietly" in found[0]
    names = [p["name"] for p in last_state(recorder)["match"]]
    assert "Renamed quietly" in names  # the fresh roster is what went out


async def test_a_join_that_fails_half_way_leaves_nothing_built_on_the_table_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table took the newcomer in, then the transport failed them (a connection gone in
    a cluster while it waited): no change was committed, so neither the next save nor the
    next view may build on what was committed before."""
    room, sids, recorder, _clock = await a_game_of_four()
    await move(room, sids)
    assert room._view_parts._roster is not None

    async def gone(sid: str, code: str) -> None:
        raise ValueError("sid is not connected")

    monkeypatch.setattr(recorder, "enter_room", gone)
    with pytest.raises(ValueError):
        await room.join("w", "Watcher", None)
    assert room._view_parts._roster is None and room._saves.kept is None
