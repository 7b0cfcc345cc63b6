"""An event as a value, with no server or table: joining (organiser, players, guests), the
organiser's commands, the deal of every round from the bracket, heats decided into the next
round and the final's podium, removals, pauses, and the record it is kept as. A refusal
changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.tournaments.tournament import ROUND_PAUSE_SECONDS, Tournament
from app.wire.errors import ErrorCode, ProtocolError
from engine import Rules


def new_event(**options: Any) -> Tournament:
    return Tournament.opened("EVT001", "Class 2B", "Ms Lee", "organiser-token", **options)


def organiser(event: Tournament) -> str:
    assert event.organiser is not None
    return event.organiser.id


def with_players(n: int, **options: Any) -> Tournament:
    event = new_event(**options)
    for i in range(n):
        event.join(f"Player {i}", None, 0.0, new_id=f"p{i}", new_token=f"token{i}")
    return event


def refused(event: Tournament, code: str, command: Any, *args: Any) -> None:
    before = event.to_dict(0.0)
    with pytest.raises(ProtocolError) as caught:
        command(*args)
    assert caught.value.code == code
    assert event.to_dict(0.0) == before


def codes(n: int, round_number: int) -> list[str]:
    return [f"R{round_number}T{i:02d}" for i in range(n)]


def win(event: Tournament, code: str, winner: str, now: float) -> list[dict[str, Any]]:
    """The table `code` says `winner` won its games (first to N), the others in seat order."""
    heat = event.heat(code)
    assert heat is not None
    places = [winner, *(p for p in heat.players if p != winner)]
    totals = {
        p: {"takes": 3 if p == winner else 1, "false_slaps": 0, "best_ms": 300}
        for p in heat.players
    }
    return event.heat_decided(code, {winner: event.first_to}, places, totals, now).events


def test_the_organiser_comes_back_with_their_token_and_players_join_the_lobby() -> None:
    event = new_event()
    back = event.join("Ms Lee", "organiser-token", 0.0)
    assert back.role == "organiser" and back.who == organiser(event)
    ann = event.join("Ann", None, 0.0, avatar="🦊")
    assert ann.role == "player" and ann.token and ann.events[0]["kind"] == "join"
    again = event.join("Ann", ann.token, 1.0)
    assert again.returning and again.who == ann.who and len(event.entrants) == 1
    screen = event.join("TV", None, 1.0, watch=True)
    assert screen.role == "guest" and screen.who is None and len(event.entrants) == 1


def test_a_name_that_reads_like_another_players_is_taken() -> None:
    event = with_players(1)
    refused(event, ErrorCode.NAME_TAKEN, event.join, "PLAYER 0", None, 0.0)
    refused(event, ErrorCode.NAME_TAKEN, event.join, "Pl\u0430yer 0", None, 0.0)  # Cyrillic a
    refused(event, ErrorCode.NAME_TAKEN, event.join, "MS LEE", None, 0.0)  # the organiser's
    event.add_bot(organiser(event), "easy", 0.0)
    bot = next(e.name for e in event.entrants.values() if e.bot is not None)
    refused(event, ErrorCode.NAME_TAKEN, event.join, bot.upper(), None, 0.0)


def test_only_the_organiser_starts_and_with_two_players_at_least() -> None:
    event = with_players(1)
    refused(event, ErrorCode.NOT_HOST, event.start, "p0", 0.0, codes(1, 1), 1)
    refused(event, ErrorCode.TOO_FEW_PLAYERS, event.start, organiser(event), 0.0, [], 1)


def test_start_deals_everyone_into_even_tables_and_latecomers_follow_as_guests() -> None:
    event = with_players(9)
    assert event.heats_needed() == 3
    done = event.start(organiser(event), 5.0, codes(3, 1), 7)
    assert [len(d.people) for d in done.dealt] == [3, 3, 3]
    assert {p.id for d in done.dealt for p in d.people} == {f"p{i}" for i in range(9)}
    first = done.dealt[0]
    assert first.heat.event == "EVT001" and first.heat.round == 1 and not first.heat.final
    assert all(not p.connected and p.token_hash for p in first.people)
    assert event.status("p0") == "playing" and event.table_of("p0") in codes(3, 1)
    late = event.join("Late", None, 6.0)
    assert late.role == "guest" and len(event.entrants) == 9


def test_bots_fill_the_tables_only_when_allowed_and_play_as_players() -> None:
    event = with_players(5, bots=True)
    done = event.start(organiser(event), 0.0, codes(2, 1), 1)
    assert [len(d.people) + len(d.bots) for d in done.dealt] == [4, 4]
    bots = [b for d in done.dealt for b in d.bots]
    assert len(bots) == 3 and all(event.entrants[b.id].bot == "normal" for b in bots)
    assert len({b.name for b in bots}) == 3


def test_winners_go_on_round_after_round_to_a_final_and_its_podium() -> None:
    event = with_players(9)
    event.start(organiser(event), 0.0, codes(3, 1), 3)
    heats = event.current()
    winners = [h.players[0] for h in heats]
    win(event, heats[0].code, winners[0], 10.0)
    assert event.status(winners[0]) == "through" and event.round_due() is None
    loser = heats[0].players[1]
    assert event.status(loser) == "out" and event.entrants[loser].out_in == 1
    win(event, heats[1].code, winners[1], 11.0)
    happened = win(event, heats[2].code, winners[2], 12.0)
    assert happened[-1]["kind"] == "round_over"
    assert event.round_due() == 12.0 + ROUND_PAUSE_SECONDS
    assert event.advance(13.0, codes(1, 2), 4).dealt == []  # not yet
    final = event.advance(12.0 + ROUND_PAUSE_SECONDS, codes(1, 2), 4)
    (table,) = final.dealt
    assert table.heat.final and sorted(p.id for p in table.people) == sorted(winners)
    champion = winners[1]
    win(event, "R2T00", champion, 30.0)
    assert event.stage == "over" and event.podium[0] == champion
    assert len(event.podium) == 3 and event.status(champion) == "champion"
    assert event.totals[champion]["takes"] == 6  # three a heat, over two heats


def test_a_final_of_two_takes_third_place_from_the_round_before() -> None:
    event = with_players(8)
    event.start(organiser(event), 0.0, codes(2, 1), 3)
    for number, heat in enumerate(event.current()):
        win(event, heat.code, heat.players[0], 10.0 + number)
    event.advance(11.0 + ROUND_PAUSE_SECONDS, codes(1, 2), 1)
    (final,) = event.current()
    win(event, final.code, final.players[1], 40.0)
    assert event.podium[:2] == [final.players[1], final.players[0]]
    assert event.podium[2] in {h.standing[1] for h in event.rounds[0]}


def test_a_removed_player_never_goes_through() -> None:
    event = with_players(4)
    event.start(organiser(event), 0.0, codes(1, 1), 1)
    (heat,) = event.current()
    cheat = heat.players[0]
    event.remove(organiser(event), cheat, 1.0)
    win(event, heat.code, cheat, 5.0)
    assert event.podium[0] != cheat and cheat not in event.podium
    assert event.status(cheat) == "removed"


def test_a_player_removed_in_the_lobby_cannot_join_again_with_that_phone() -> None:
    event = with_players(2)
    event.remove(organiser(event), "p1", 0.0)
    assert "p1" not in event.entrants
    refused(event, ErrorCode.KICKED, event.join, "Again", "token1", 1.0)
    refused(event, ErrorCode.KICKED, lambda: event.join("Again", "token1", 1.0, watch=True))


def test_a_removed_players_address_needs_the_invite_and_others_join_from_theirs() -> None:
    event = new_event()
    event.join("Ann", None, 0.0, address="10.0.0.7", new_id="p0", new_token="t0")
    event.join("Ben", None, 0.0, address="10.0.0.8", new_id="p1", new_token="t1")
    event.remove(organiser(event), "p0", 1.0)
    refused(event, ErrorCode.KICKED, lambda: event.join("Cat", None, 2.0, address="10.0.0.7"))
    assert event.join("Cat", None, 2.0, address="10.0.0.9").role == "player"
    invite = event.invite(organiser(event), 3.0, secret="come-in").reply["invite"]
    assert invite == "come-in"
    joined = event.join("Dan", None, 4.0, address="10.0.0.7", invite="come-in")
    assert joined.role == "player"
    assert event.join("Ben again", "t1", 5.0, address="10.0.0.7").who == "p1"  # here already


def test_a_locked_event_takes_new_players_only_with_the_invite_and_keeps_its_door() -> None:
    event = with_players(1)
    refused(event, ErrorCode.NOT_HOST, event.lock, "p0", True, 0.0)
    done = event.lock(organiser(event), True, 0.0)
    assert done.events == [{"kind": "lock", "locked": True}]
    refused(event, ErrorCode.ROOM_LOCKED, event.join, "Eve", None, 1.0)
    assert event.join("Screen", None, 1.0, watch=True).role == "guest"  # a stage watches
    assert event.join("Player 0", "token0", 1.0).who == "p0"  # a player comes back
    refused(event, ErrorCode.NOT_HOST, event.invite, "p0", 1.0)
    event.invite(organiser(event), 1.0, secret="door")
    refused(event, ErrorCode.ROOM_LOCKED, lambda: event.join("Eve", None, 2.0, invite="nope"))
    assert event.join("Eve", None, 2.0, invite="door").role == "player"
    event.remove(organiser(event), "p0", 2.0)
    kept = Tournament.from_dict(json.loads(json.dumps(event.to_dict(3.0))), 3.0)
    assert kept.locked and kept.to_dict(3.0) == event.to_dict(3.0)
    refused(kept, ErrorCode.ROOM_LOCKED, kept.join, "Fay", None, 4.0)
    refused(kept, ErrorCode.KICKED, kept.join, "Again", "token0", 4.0)
    assert kept.join("Fay", None, 4.0, invite="door").role == "player"
    kept.lock(organiser(kept), False, 5.0)
    kept.start(organiser(kept), 6.0, codes(kept.heats_needed(), 1), 1)
    refused(kept, ErrorCode.WRONG_PHASE, kept.lock, organiser(kept), True, 7.0)


def test_a_pause_holds_the_next_round_and_end_stops_the_event() -> None:
    event = with_players(8)
    event.start(organiser(event), 0.0, codes(2, 1), 3)
    refused(event, ErrorCode.NOT_HOST, event.pause, "p0", True, 1.0)
    event.pause(organiser(event), True, 1.0)
    for heat in event.current():
        win(event, heat.code, heat.players[0], 10.0)
    assert event.round_due() is None
    event.pause(organiser(event), False, 100.0)
    due = event.round_due()
    assert due is not None and due >= 100.0
    event.end(organiser(event), 101.0)
    assert event.stage == "over" and event.ended and event.round_due() is None
    refused(event, ErrorCode.WRONG_PHASE, event.end, organiser(event), 102.0)


def test_the_record_comes_back_whole_under_another_clock() -> None:
    event = with_players(9, first_to=2, rules=Rules(freeze_seconds=0.5), lag_fair=True)
    event.add_bot(organiser(event), "hard", 0.0)
    event.start(organiser(event), 0.0, codes(3, 1), 3)
    for heat in event.current():
        win(event, heat.code, heat.players[0], 10.0)
    saved = json.loads(json.dumps(event.to_dict(12.0)))
    back = Tournament.from_dict(saved, 1000.0)
    assert back.to_dict(1000.0) == saved
    assert back.round_due() == pytest.approx(998.0 + ROUND_PAUSE_SECONDS)
    assert back.join("x", "token3", 1000.0).who == "p3"
    assert back.join("x", "organiser-token", 1000.0).role == "organiser"
    with pytest.raises(ValueError):
        Tournament.from_dict({**saved, "kind": None}, 0.0)
