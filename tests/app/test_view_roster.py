"""A table's roster in its views (spectators, players needed, places, match score, heat) is
kept from one change to the next only when that change was a single move of the game, and
made again after anything else (app/tables/views.py `ViewParts.roster`). The suite runs
with `ViewParts.check` on (tests/conftest.py), so a roster reused in any test is compared
with one made afresh; here, that the check is what catches a change no commit numbered."""

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


async def a_game_of_four() -> tuple[Room, list[str], Recorder, ManualClock]:
    clock, recorder = ManualClock(), Recorder()
    rooms = Rooms(Settings(store="memory"), recorder, clock=clock)
    room = rooms.create()
    sids = [f"s{i}" for i in range(4)]
    for sid in sids:
        await room.join(sid, f"Player {sid}", None)
    await act(room, sids[0], "start")
    return room, sids, recorder, clock


async def act(room: Room, sid: str, event: str, *payload: Any) -> dict[str, Any]:
    return await room.act(sid, event, protocol.parse(event, payload), room.clock.now())


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
        answer = await act(room, sid, "slap", {"pile_id": game.pile_id})
    else:
        answer = await act(room, sid, "flip")
    assert answer["ok"], answer
    assert isinstance(room.clock, ManualClock)
    await room.clock.advance(2.0)


def roster(room: Room) -> Roster:
    kept = room._view_parts._roster
    assert kept is not None
    return kept[3]


def last_state(recorder: Recorder) -> dict[str, Any]:
    text = next(m.text for _, m in reversed(recorder.sent) if m.event == protocol.STATE)
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


async def test_a_change_no_commit_numbered_is_caught_by_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A name changed in place with no change committed (never done by the server) stays
    out of the views until a change other than a move: the check fails the move."""
    room, sids, recorder, _clock = await a_game_of_four()
    await move(room, sids)
    somebody = next(iter(room.table.people.values()))
    somebody.name = "Renamed quietly"
    monkeypatch.setattr(ViewParts, "check", False)
    await move(room, sids)
    names = [p["name"] for p in last_state(recorder)["match"]]
    assert "Renamed quietly" not in names  # what the check is for
    monkeypatch.setattr(ViewParts, "check", True)
    with pytest.raises(AssertionError, match="roster went stale"):
        await move(room, sids)
