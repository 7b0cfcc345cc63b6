"""The Table alone, with no server: every command's happy path and refusal (a refusal changes
nothing), host hand-over, the lobby/playing/over transitions, rematch rotation, snapshots."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.ops.config import Settings
from app.tables import events
from app.tables.commands import HANDLERS
from app.tables.events import GameEvent
from app.tables.table import Policy, Table, TableBot, token_hash
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import clean_avatar
from app.wire.protocol import (
    COMMANDS,
    AddBot,
    Empty,
    Invite,
    Kick,
    Lock,
    Pong,
    Remove,
    RulesUpdate,
    Sit,
    Slap,
)
from engine import IllegalAction, Rules
from engine.views import player_view

GRACE = 10.0


def new_table(**policy: Any) -> Table:
    return Table(
        "ROOM01", Rules(freeze_seconds=1.0), Policy(**{"handover_seconds": GRACE, **policy})
    )


def join(table: Table, name: str, now: float = 0.0) -> str:
    """A newcomer who watches: the lobby seats a newcomer at once, so they stand up."""
    joined = table.join(name, None, now, new_id=f"p-{name}", new_token=f"token-{name}")
    if table.seat_of(joined.person.id) is not None:
        table.stand(joined.person.id, now)
    return joined.person.id


def kinds(happened: list[Any]) -> list[str]:
    return [e.kind for e in happened]


def refused(table: Table, code: str, command: Any, *args: Any, **kwargs: Any) -> None:
    """`command` is refused with `code` and the table is exactly as before."""
    before = table.to_dict(0.0)
    with pytest.raises((ProtocolError, IllegalAction)) as caught:
        command(*args, **kwargs)
    assert caught.value.code == code
    assert table.to_dict(0.0) == before


def lobby_of_two() -> tuple[Table, str, str]:
    table = new_table()
    ann, bob = join(table, "Ann"), join(table, "Bob")
    table.sit(ann, None, 0.0)
    table.sit(bob, None, 0.0)
    return table, ann, bob


def play_to_the_end(table: Table, now: float = 1.0) -> float:
    """Plays the game on: the seat to flip flips, the next seat slaps every trigger."""
    game = table.game
    assert game is not None
    for _ in range(100_000):
        if game.over:
            return now
        now += 2.0  # past any freeze
        if game.slap_open:
            seat = next(s for s in range(game.players) if not game.is_out(s))
            table.play(seat, "slap", game.pile_id, now)
        elif game.next_to_play is not None:
            table.play(game.next_to_play, "flip", None, now)
    raise AssertionError("the game never ended")


# ---- people ----------------------------------------------------------------------------


def test_the_first_person_in_is_host_and_a_token_brings_the_same_person_back() -> None:
    table = new_table()
    joined = table.join("Ann", None, 0.0, new_id="p1", new_token="secret")
    assert kinds(joined.events) == ["join", "sit"] and table.host == "p1" and not joined.returning
    table.sit("p1", 3, 0.0)
    table.drop("p1", 1.0, left=False)
    back = table.join("Annie", "secret", 2.0)
    assert back.person.id == "p1" and back.returning and back.token == "secret"
    assert back.events == [events.Reconnect("p1", 3)]
    assert table.people["p1"].name == "Annie" and table.people["p1"].connected


def test_an_unknown_token_is_a_new_person_and_a_full_room_refuses_more() -> None:
    table = new_table(max_people=2)
    join(table, "Ann")
    stranger = table.join("Eve", "forged", 0.0)
    assert not stranger.returning and stranger.token != "forged"
    refused(table, ErrorCode.ROOM_FULL, table.join, "Cy", None, 0.0)


def test_leaving_the_lobby_frees_the_seat_and_a_gone_spectator_is_forgotten() -> None:
    table, _ann, bob = lobby_of_two()
    cy = join(table, "Cy")
    assert kinds(table.drop(bob, 1.0, left=True)) == ["stand", "leave"]
    assert table.seat_of(bob) is None and bob not in table.people
    assert kinds(table.drop(cy, 1.0, left=False)) == ["disconnect"]
    assert cy not in table.people  # a spectator leaves no trace
    refused(table, ErrorCode.NO_ROOM, table.drop, cy, 2.0, left=False)


def test_leaving_mid_game_keeps_the_seat() -> None:
    table, ann, bob = lobby_of_two()
    table.start(ann, 0.0, seed=1)
    assert table.drop(bob, 1.0, left=True) == [events.Leave(bob, 1)]
    assert table.seats[1] == bob and table.phase == "playing"


# ---- host hand-over --------------------------------------------------------------------


def test_a_disconnected_host_hands_over_after_the_grace_to_the_longest_present() -> None:
    table = new_table()
    ann, bob, cy = join(table, "Ann", 0.0), join(table, "Bob", 1.0), join(table, "Cy", 2.0)
    assert kinds(table.drop(ann, 5.0, left=False)) == ["disconnect"]
    assert table.host == ann and table.host_hand_over_at() == 5.0 + GRACE
    assert table.hand_over_if_gone(5.0 + GRACE - 1.0) == []
    # A timer that fires a hair early still hands over.
    early = 5.0 + GRACE - 0.001  # a millisecond early, as the loop's timers can be
    assert table.hand_over_if_gone(early) == [events.Host(bob)]
    # Ann, the table's own host, is remembered to hand the role back to; Cy came later.
    assert table.host == bob and ann in table.people
    del cy


def test_a_host_who_leaves_hands_over_at_once_and_an_empty_room_waits_for_the_next() -> None:
    table = new_table()
    ann, bob = join(table, "Ann", 0.0), join(table, "Bob", 1.0)
    assert kinds(table.drop(ann, 2.0, left=True)) == ["leave", "host"] and table.host == bob
    assert kinds(table.drop(bob, 3.0, left=True)) == ["leave"] and table.host is None
    cy = join(table, "Cy", 4.0)
    assert table.host == cy


def test_a_late_join_hands_over_from_a_host_gone_past_the_grace() -> None:
    table = new_table()
    ann = join(table, "Ann", 0.0)
    table.sit(ann, 0, 0.0)
    table.drop(ann, 1.0, left=False)
    joined = table.join("Bob", None, 1.0 + GRACE + 1.0, new_id="p-Bob", new_token="t")
    assert kinds(joined.events) == ["join", "sit", "host"] and table.host == "p-Bob"
    assert ann in table.people  # seated: kept for when she comes back


def test_with_no_grace_a_disconnected_host_hands_over_at_once() -> None:
    table = new_table(handover_seconds=0.0)
    ann, bob = join(table, "Ann"), join(table, "Bob", 1.0)
    assert kinds(table.drop(ann, 2.0, left=False)) == ["disconnect", "host"]
    assert table.host == bob


# ---- between games ---------------------------------------------------------------------


def test_sit_moves_a_seated_person_and_refuses_a_taken_seat() -> None:
    table, ann, bob = lobby_of_two()
    assert table.sit(ann, 5, 0.0).events == [events.Stand(ann, 0), events.Sit(ann, 5, "Ann")]
    assert table.sit(ann, 5, 0.0).events == []  # already there: nothing to tell
    assert table.sit(ann, None, 0.0).reply == {"seat": 5}
    refused(table, ErrorCode.SEAT_TAKEN, table.sit, bob, 5, 0.0)


def test_sit_refuses_when_every_seat_is_taken_and_during_a_game() -> None:
    table = new_table()
    host = join(table, "Ann")
    for _ in range(8):
        table.add_bot(host, "easy", 0.0)
    refused(table, ErrorCode.NO_FREE_SEAT, table.sit, host, None, 0.0)
    refused(table, ErrorCode.NO_FREE_SEAT, table.add_bot, host, "hard", 0.0)
    table, ann, _bob = lobby_of_two()
    table.start(ann, 0.0, seed=1)
    refused(table, ErrorCode.WRONG_PHASE, table.sit, join(table, "Cy"), None, 0.0)


def test_stand_frees_the_seat_and_refuses_a_spectator() -> None:
    table, _ann, bob = lobby_of_two()
    assert table.stand(bob, 0.0).events == [events.Stand(bob, 1)]
    refused(table, ErrorCode.NOT_SEATED, table.stand, bob, 0.0)


def test_the_host_adds_and_removes_bots_and_people() -> None:
    table, ann, bob = lobby_of_two()
    added = table.add_bot(ann, "hard", 0.0)
    assert added.events == [events.BotAdded(2, "hard", "Sprocket")] and added.reply == {"seat": 2}
    bot = table.occupant(2)
    assert isinstance(bot, TableBot) and bot.level == "hard"
    assert table.remove(ann, 2, 0.0).events == [events.Remove(2, None)]
    assert bot.id not in table.bots
    assert table.remove(ann, 1, 0.0).events == [events.Remove(1, bob)]
    assert bob in table.people and table.seat_of(bob) is None  # connected: a spectator now
    refused(table, ErrorCode.NOT_SEATED, table.remove, ann, 1, 0.0)
    refused(table, ErrorCode.NOT_HOST, table.add_bot, bob, "easy", 0.0)
    refused(table, ErrorCode.NOT_HOST, table.remove, bob, 0, 0.0)


def test_a_policy_takes_the_settings_defaults_and_values() -> None:
    """One source for a table's policy: the settings (SLAPJACK_LAG_CAP_MS and the others),
    their defaults when a table is made without one."""
    defaults = Settings.model_construct()
    assert Policy().lag_cap_seconds == defaults.lag_cap_ms / 1000 == 0.05
    assert Policy() == Policy.of(defaults)
    assert Table("ROOM01").lag.cap == Policy().lag_cap_seconds
    given = Settings.model_construct(lag_cap_ms=80, max_people_per_room=6)
    assert Policy.of(given) == Policy(6, defaults.host_handover_seconds, 0.08)
    assert Table("ROOM01", policy=Policy.of(given)).lag.cap == 0.08


def test_lag_fair_turned_on_again_measures_everyone_afresh() -> None:
    table, ann, bob = lobby_of_two()
    table.set_rules(ann, {"lag_fair": True}, 0.0)
    for person, trip in ((ann, 0.02), (bob, 0.04)):
        ping = table.lag.ping(person, 1.0)
        table.pong(person, ping, 1.0 + trip)
    assert table.compensation(0) == pytest.approx(0.02)
    assert table.compensation(1) == pytest.approx(0.04)
    table.set_rules(ann, {"lag_fair": False}, 2.0)
    table.set_rules(ann, {"penalty": "give"}, 3.0)  # off and left off: nothing to measure
    table.set_rules(ann, {"lag_fair": True}, 3600.0)  # an hour later, maybe another network
    assert table.compensation(0) == 0.0 and table.compensation(1) == 0.0
    assert table.lag.samples(ann) == 0 and table.lag.samples(bob) == 0
    ping = table.lag.ping(bob, 3601.0)
    assert table.pong(bob, ping, 3601.2).refresh  # the new estimate is shown at once
    table.set_rules(ann, {"lag_fair": True}, 3602.0)  # on while on: kept
    assert table.compensation(1) == pytest.approx(0.05)  # 0.2 s, capped at 50 ms


def test_the_host_changes_the_rules_and_bad_ones_change_nothing() -> None:
    table, ann, bob = lobby_of_two()
    done = table.set_rules(ann, {"penalty": "give", "time_limit": None}, 0.0)
    # The room's own rules beside them.
    shown = {**table.rules.to_dict(), "lag_fair": False, "false_starts": True}
    assert table.rules.penalty == "give" and done.reply == {"rules": shown}
    assert kinds(done.events) == ["rules"]
    done = table.set_rules(ann, {"lag_fair": True}, 0.0)
    assert table.lag_fair and done.reply["rules"]["lag_fair"] is True
    assert table.rules.penalty == "give"  # the engine's rules as they were
    refused(table, ErrorCode.BAD_REQUEST, table.set_rules, ann, {"lag_fair": None}, 0.0)
    assert table.lag_fair
    assert Table.from_dict(table.to_dict(1.0), 5.0).lag_fair  # kept in a snapshot
    refused(table, ErrorCode.BAD_RULES, table.set_rules, ann, {"triggers": []}, 0.0)
    refused(table, ErrorCode.BAD_REQUEST, table.set_rules, ann, {"penalty": None}, 0.0)
    refused(table, ErrorCode.NOT_HOST, table.set_rules, bob, {"decks": 2}, 0.0)


# ---- lobby, playing, over --------------------------------------------------------------


def test_start_needs_two_seated_compacts_the_seats_and_locks_the_lobby() -> None:
    table = new_table()
    ann, bob = join(table, "Ann"), join(table, "Bob")
    table.sit(ann, 4, 0.0)
    refused(table, ErrorCode.TOO_FEW_PLAYERS, table.start, ann, 0.0, seed=1)
    table.sit(bob, 6, 0.0)
    refused(table, ErrorCode.NOT_HOST, table.start, bob, 0.0, seed=1)
    done = table.start(ann, 3.0, seed=1)
    assert done.events == [events.Start(1, 0, False)] and done.reply == {"game": 1}
    assert table.phase == "playing" and table.seats[:3] == [ann, bob, None]
    assert table.game is not None and table.game.players == 2 and table.turn_started_at == 3.0
    refused(table, ErrorCode.WRONG_PHASE, table.start, ann, 0.0, seed=1)
    refused(table, ErrorCode.WRONG_PHASE, table.rematch, ann, 0.0, seed=1)
    refused(table, ErrorCode.WRONG_PHASE, table.add_bot, ann, "easy", 0.0)
    refused(table, ErrorCode.WRONG_PHASE, table.stand, bob, 0.0)


def test_a_game_ends_over_then_any_lobby_change_reopens_the_lobby() -> None:
    table, ann, _bob = lobby_of_two()
    table.start(ann, 0.0, seed=7)
    play_to_the_end(table)
    assert table.phase == "over" and table.game is not None and table.game.winner is not None
    refused(table, ErrorCode.WRONG_PHASE, table.start, ann, 0.0, seed=1)
    table.add_bot(ann, "easy", 0.0)
    assert table.phase == "lobby" and table.game is None


def test_rematch_deals_the_same_seats_with_the_first_flipper_moved_on() -> None:
    table = new_table()
    ann = join(table, "Ann")
    table.sit(ann, None, 0.0)
    table.add_bot(ann, "easy", 0.0)
    table.add_bot(ann, "hard", 0.0)
    refused(table, ErrorCode.WRONG_PHASE, table.rematch, ann, 0.0, seed=1)
    table.start(ann, 0.0, seed=1)
    firsts = [table.first]
    for game in (2, 3, 4):
        play_to_the_end(table)
        done = table.rematch(ann, 0.0, seed=game)
        assert done.events == [events.Start(game, table.first, True)]
        firsts.append(table.first)
    assert firsts == [0, 1, 2, 0] and table.games == 4


def test_only_the_present_are_dealt_in_and_a_returning_player_is_told_what_happened() -> None:
    table = new_table()
    ann = join(table, "Ann")
    table.sit(ann, None, 0.0)
    bob, cy = join(table, "Bob"), join(table, "Cy")
    table.sit(bob, None, 0.0)
    table.sit(cy, None, 0.0)
    table.drop(bob, 1.0, left=False)  # closed the tab in the lobby
    done = table.start(ann, 2.0, seed=2)
    assert kinds(done.events) == ["stand", "start"]
    assert table.seats[:3] == [ann, cy, None] and table.game is not None
    assert table.game.players == 2
    back = table.join("Bob", "token-Bob", 3.0)
    assert back.events[0] == events.Reconnect(bob, None, 0, True)
    assert table.seat_of(bob) is None  # watching this game
    # Away during a game: the autopilot's flips for the seat are counted and told once.
    table.drop(cy, 4.0, left=False)
    turn = table.game.next_to_play
    assert turn is not None
    if table.seats[turn] != cy:
        table.play(turn, "flip", None, 4.5)
    flipped = table.play(1, "flip", None, 5.0, auto=True)
    assert kinds(flipped) == ["flip"]
    again = table.join("Cy", "token-Cy", 6.0)
    assert again.events[0] == events.Reconnect(cy, 1, 1, False)
    assert table.join("Cy", "token-Cy", 7.0).events[0] == events.Reconnect(cy, 1, 0, False)


def test_a_deal_with_too_few_present_is_refused_and_changes_nothing() -> None:
    table, ann, bob = lobby_of_two()
    table.drop(bob, 1.0, left=False)
    before = table.to_dict(2.0)
    refused(table, ErrorCode.TOO_FEW_PLAYERS, table.start, ann, 2.0, seed=1)
    assert table.to_dict(2.0) == before and table.seat_of(bob) == 1


def test_playing_refuses_spectators_future_piles_and_the_wrong_turn() -> None:
    table, ann, bob = lobby_of_two()
    refused(table, ErrorCode.WRONG_PHASE, table.play_as, ann, "flip", None, 0.0)
    table.start(ann, 0.0, seed=3)
    cy = join(table, "Cy")
    refused(table, ErrorCode.NOT_SEATED, table.play_as, cy, "flip", None, 1.0)
    refused(table, ErrorCode.BAD_REQUEST, table.play_as, ann, "slap", 5, 1.0)
    refused(table, ErrorCode.NOT_YOUR_TURN, table.play_as, bob, "flip", None, 1.0)
    done = table.play_as(ann, "flip", None, 1.0)
    [flip] = done.events
    assert isinstance(flip, GameEvent) and flip.kind == "flip" and table.turn_started_at == 1.0
    assert flip.to_dict()["auto"] is False


def test_a_game_nobody_can_play_is_abandoned_but_not_one_with_a_bot() -> None:
    table, ann, bob = lobby_of_two()
    table.start(ann, 0.0, seed=1)
    table.drop(ann, 1.0, left=True)
    assert table.abandon(2.0) == []  # Bob can still play
    table.drop(bob, 2.0, left=True)
    assert table.abandon(3.0) == [events.Abandon(1)]
    assert table.phase == "lobby" and table.game is None
    table = new_table()
    ann = join(table, "Ann")
    table.sit(ann, None, 0.0)
    table.add_bot(ann, "easy", 0.0)
    table.start(ann, 0.0, seed=1)
    table.drop(ann, 1.0, left=False)
    assert table.abandon(2.0) == [] and table.phase == "playing"


# ---- the registry says what the Table judges -------------------------------------------

PAYLOADS = {
    "sit": Sit(seat=None),
    "stand": Empty(),
    "add_bot": AddBot(level="easy"),
    "remove": Remove(seat=1),
    "rules": RulesUpdate(freeze_seconds=1),
    "start": Empty(),
    "rematch": Empty(),
    "flip": Empty(),
    "slap": Slap(pile_id=0),
    "pong": Pong(id="0a1b2c3d"),
    "leave": Empty(),
    "kick": Kick(player="p-Cy"),
    "lock": Lock(locked=True),
    "invite": Invite(),
}


def in_phase(phase: str) -> tuple[Table, str, str, str]:
    """A table in `phase` with host Ann (seat 0), Bob (seat 1) and Cy watching."""
    table, ann, bob = lobby_of_two()
    cy = join(table, "Cy")
    if phase != "lobby":
        table.start(ann, 0.0, seed=7)
    if phase == "over":
        play_to_the_end(table)
    return table, ann, bob, cy


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("phase", ["lobby", "playing", "over"])
def test_the_registry_says_who_may_send_each_event_and_when_as_the_table_judges(
    name: str, phase: str
) -> None:
    command = COMMANDS[name]
    payload = PAYLOADS[name]
    table, ann, bob, cy = in_phase(phase)
    if phase not in command.phases:
        # After a game the engine itself says why nobody plays: the game is over.
        over = name in ("flip", "slap") and phase == "over"
        code = ErrorCode.GAME_OVER if over else ErrorCode.WRONG_PHASE
        refused(table, code, HANDLERS[name], table, ann, payload, 50_000.0)
        return
    if command.who == "host":
        refused(table, ErrorCode.NOT_HOST, HANDLERS[name], table, bob, payload, 0.0)
    if command.who == "seated":
        refused(table, ErrorCode.NOT_SEATED, HANDLERS[name], table, cy, payload, 0.0)
    if command.who == "anyone":
        HANDLERS[name](table, cy, payload, 0.0)  # a spectator may


# ---- snapshots -------------------------------------------------------------------------


def through_json(snapshot: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(snapshot, allow_nan=False))
    return data


def test_a_snapshot_holds_no_token_and_a_token_still_works_after_a_restore() -> None:
    table = new_table()
    table.join("Ann", None, 0.0, new_id="p1", new_token="the-secret-token")
    table.sit("p1", 0, 0.0)
    table.drop("p1", 1.0, left=False)
    snapshot = table.to_dict(2.0)
    assert "the-secret-token" not in json.dumps(snapshot)
    assert snapshot["people"][0]["token_sha256"] == token_hash("the-secret-token")
    restored = Table.from_dict(through_json(snapshot), 900.0, table.policy)
    back = restored.join("Ann", "the-secret-token", 901.0)
    assert back.returning and back.person.id == "p1" and restored.seat_of("p1") == 0


def test_a_restore_under_another_clock_continues_freezes_hand_overs_and_the_turn() -> None:
    table, ann, _bob = lobby_of_two()
    table.add_bot(ann, "normal", 0.0)
    table.start(ann, 100.0, seed=5)
    game = table.game
    assert game is not None
    slapper = next(s for s in range(3) if s != game.next_to_play and not game.slap_open)
    table.play(slapper, "slap", game.pile_id, 100.0)  # a false slap: frozen for 1 s
    table.drop(ann, 100.0, left=False)
    snapshot = through_json(table.to_dict(100.25))
    restored = Table.from_dict(snapshot, 5000.0, table.policy)
    assert restored.to_dict(5000.0) == snapshot
    restored_game = restored.game
    assert restored_game is not None
    assert restored_game.frozen_until(slapper) == pytest.approx(5000.75)
    assert restored.turn_started_at == pytest.approx(4999.75)
    assert restored.host_hand_over_at() == pytest.approx(5000.0 - 0.25 + GRACE)
    bot = next(b for b in restored.bots.values())
    assert (bot.level, bot.name) == ("normal", "Sprocket")
    with pytest.raises(IllegalAction) as frozen:
        restored.play(slapper, "slap", restored_game.pile_id, 5000.5)
    assert frozen.value.code == "frozen"
    restored.play(slapper, "slap", restored_game.pile_id, 5000.8)  # thawed


def test_a_snapshot_of_another_schema_or_inconsistent_data_is_refused() -> None:
    table, _ann, _bob = lobby_of_two()
    snapshot = table.to_dict(0.0)
    with pytest.raises(ValueError, match="schema"):
        Table.from_dict({**snapshot, "schema": 99}, 0.0)
    with pytest.raises(ValueError, match="seat"):
        Table.from_dict({**snapshot, "seats": ["nobody"] + [None] * 7}, 0.0)
    with pytest.raises(ValueError, match="game"):
        Table.from_dict({**snapshot, "phase": "playing"}, 0.0)


# ---- joining in seconds, the podium and the match ---------------------------------------


def test_the_creator_and_an_invitee_are_seated_at_once_while_a_seat_is_free() -> None:
    table = new_table()
    ann = table.join("Ann", None, 0.0, new_id="p-Ann", new_token="a")
    assert ann.events == [events.Join("p-Ann", "Ann"), events.Sit("p-Ann", 0, "Ann")]
    bob = table.join("Bob", None, 0.0, new_id="p-Bob", new_token="b")
    assert table.seat_of(bob.person.id) == 1 and kinds(bob.events) == ["join", "sit"]
    table.stand("p-Bob", 0.0)  # anyone can stand up to watch; another tab does not re-seat
    assert table.seat_of(table.join("Bob", "b", 2.0).person.id) is None
    for _ in range(7):
        table.add_bot("p-Ann", "easy", 0.0)
    full = table.join("Cy", None, 3.0, new_id="p-Cy", new_token="c")
    assert kinds(full.events) == ["join"] and table.seat_of("p-Cy") is None  # no seat: watches


def test_a_shared_screen_asks_to_watch_and_is_not_seated_nor_made_host() -> None:
    table = new_table()
    joined = table.join("Big screen", None, 0.0, watch=True, new_id="p-tv", new_token="tv")
    assert kinds(joined.events) == ["join"] and table.seated() == 0
    assert table.host is None  # a screen first in does not take the host's buttons
    ann = join(table, "Ann", 1.0)
    bob = join(table, "Bob", 2.0)
    assert table.host == ann
    table.drop(ann, 3.0, left=True)
    assert table.host == bob  # not the screen, though it has been here longest
    restored = Table.from_dict(table.to_dict(4.0), 4.0)
    assert restored.people["p-tv"].screen and not restored.people[bob].screen


def test_a_shared_screen_can_never_sit() -> None:
    table = new_table()
    table.join("Big screen", None, 0.0, watch=True, new_id="p-tv", new_token="tv")
    join(table, "Ann", 1.0)
    before = table.to_dict(2.0)
    for seat in (None, 3):
        with pytest.raises(ProtocolError) as refused:
            table.sit("p-tv", seat, 2.0)
        assert refused.value.code == ErrorCode.BAD_REQUEST
    assert table.to_dict(2.0) == before and table.seat_of("p-tv") is None
    # Back with its token (another visit of the TV page): still only watching.
    table.join("Big screen", "tv", 3.0, watch=True)
    with pytest.raises(ProtocolError):
        table.sit("p-tv", None, 3.0)


def test_a_newcomer_during_or_after_a_game_watches() -> None:
    table, ann, _bob = lobby_of_two()
    table.start(ann, 0.0, seed=1)
    assert kinds(table.join("Cy", None, 1.0, new_id="p-Cy", new_token="c").events) == ["join"]
    play_to_the_end(table)
    assert kinds(table.join("Di", None, 1.0, new_id="p-Di", new_token="d").events) == ["join"]
    assert table.phase == "over"  # nobody's arrival wipes the finished table


def test_bots_get_distinct_friendly_names() -> None:
    table = new_table()
    ann = join(table, "Ann")
    names = [table.add_bot(ann, "hard", 0.0).events[0].name for _ in range(8)]  # type: ignore[attr-defined]
    assert len(set(names)) == 8 and not any("bot" in name.lower() for name in names)
    table.remove(ann, 3, 0.0)
    again = table.add_bot(ann, "hard", 0.0).events[0]
    assert again.name == names[3]  # type: ignore[attr-defined]


def test_players_needed_says_why_a_game_cannot_start_yet() -> None:
    table = new_table()
    assert table.players_needed() == 2
    ann = table.join("Ann", None, 0.0, new_id="p-Ann", new_token="a").person.id
    assert table.players_needed() == 1
    table.add_bot(ann, "easy", 0.0)
    assert table.players_needed() == 0


def test_the_podium_ranks_the_winner_then_who_went_out_last_and_the_match_counts_wins() -> None:
    table = new_table()
    ann = table.join("Ann", None, 0.0, new_id="p-Ann", new_token="a").person.id
    for _ in range(3):
        table.add_bot(ann, "easy", 0.0)
    table.start(ann, 0.0, seed=11)
    assert table.places() == []
    play_to_the_end(table)
    game = table.game
    assert game is not None and game.winner is not None
    places = table.places()
    assert places[0] == game.winner and sorted(places) == [0, 1, 2, 3]
    assert places[1:] == list(reversed(table.out_order))  # the last one out comes second
    winner = table.seats[game.winner]
    assert winner is not None
    score = {i: wins for i, _name, wins in table.match_score()}
    assert score[winner] == 1 and sum(score.values()) == 1
    table.rematch(ann, 0.0, seed=12)
    assert table.out_order == []
    play_to_the_end(table)
    assert sum(wins for _i, _n, wins in table.match_score()) == 2
    restored = Table.from_dict(json.loads(json.dumps(table.to_dict(5.0))), 5.0)
    assert restored.match_score() == table.match_score() and restored.places() == table.places()


def test_a_time_limit_win_ranks_the_rest_by_cards_held() -> None:
    table = Table("ROOM01", Rules(time_limit=10))
    ann = table.join("Ann", None, 0.0, new_id="p-Ann", new_token="a").person.id
    table.add_bot(ann, "easy", 0.0)
    table.add_bot(ann, "easy", 0.0)
    table.start(ann, 0.0, seed=5)
    game = table.game
    assert game is not None
    for step in range(20):  # flips until one seat holds more than every other at the limit
        table.tick(11.0 + step)
        if table.phase == "over":
            break
        if game.slap_open:
            table.play(game.next_to_play or 0, "slap", game.pile_id, 11.0 + step)
        else:
            assert game.next_to_play is not None
            table.play(game.next_to_play, "flip", None, 11.0 + step)
    assert table.phase == "over" and game.win_reason == "time"
    cards = [player_view(game, None)["seats"][seat]["cards"] for seat in table.places()]
    assert cards == sorted(cards, reverse=True) and table.places()[0] == game.winner


@pytest.mark.parametrize(
    ("avatar", "kept"),
    [
        ("🦊", "🦊"),
        (" 🐙 ", "🐙"),
        ("👍🏽", "👍🏽"),
        ("🧑‍🚀", "🧑‍🚀"),
        ("👨‍👩‍👧‍👦", "👨‍👩‍👧‍👦"),
        ("🇲🇾", "🇲🇾"),
        ("❤️", "❤️"),
        ("1️⃣", "1️⃣"),
        ("🦊🦊", None),
        ("A", None),
        ("🦊x", None),
        ("<b>", None),
        ("", None),
        ("🇲", None),
        ("\u200d", None),
        (7, None),
    ],
)
def test_an_avatar_is_one_emoji_or_none(avatar: Any, kept: str | None) -> None:
    table = new_table()
    joined = table.join("Ann", None, 0.0, avatar=clean_avatar(avatar))
    assert joined.person.avatar == kept
    restored = Table.from_dict(table.to_dict(0.0), 0.0)
    assert restored.people[joined.person.id].avatar == kept
