"""The host's door, as the Table keeps it (app/tables/door.py): who is let in (a kicked
token or address never again, nobody new while locked but with the invite), who holds the
host's role (the table's own host, back whenever they return; else who came first), what
a person is called (never like anyone else here; a new name at most once a minute, never in
a game); and a slap sooner than a person can react (app/tables/reflexes.py: a false start
takes nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from app.tables import events
from app.tables.table import RENAME_SECONDS, Policy, Table
from app.tables.views import build_state
from app.wire.errors import ErrorCode, ProtocolError
from engine import Game, Rules

GRACE = 10.0
HOME = "198.51.100.7"  # a client address, as the sockets hand it over


def new_table(**policy: Any) -> Table:
    return Table("ROOM01", Rules(), Policy(**{"handover_seconds": GRACE, **policy}))


def arrive(table: Table, name: str, now: float = 0.0, address: str | None = None) -> str:
    joined = table.join(name, None, now, address=address, new_id=f"p-{name}", new_token=f"t-{name}")
    return joined.person.id


def back(table: Table, name: str, now: float, *, as_name: str | None = None) -> Any:
    return table.join(as_name or name, f"t-{name}", now)


def refused_join(table: Table, code: str, name: str, **kwargs: Any) -> None:
    before = table.to_dict(0.0)
    with pytest.raises(ProtocolError) as caught:
        table.join(name, kwargs.pop("token", None), kwargs.pop("now", 0.0), **kwargs)
    assert caught.value.code == code
    assert table.to_dict(0.0) == before


# ---- kick ---------------------------------------------------------------------------------


def test_a_kicked_person_is_gone_for_good_with_their_token_and_address() -> None:
    table = new_table()
    ann = arrive(table, "Ann")
    eve = arrive(table, "Eve", address=HOME)
    seat = table.seat_of(eve)
    done = table.kick(ann, eve, 1.0)
    assert done.events == [events.Kick(eve, seat)]
    assert eve not in table.people and table.seat_of(eve) is None
    # Her token is refused, and anyone new from her address: she never sits again.
    refused_join(table, ErrorCode.KICKED, "Eve", token="t-Eve", now=2.0)
    refused_join(table, ErrorCode.KICKED, "Mallory", address=HOME, now=2.0)
    # The host's invite lets someone new in from that address (a household shares one),
    # never her own token.
    invite = table.invite(ann, 2.5).reply["invite"]
    assert table.join("Dan", None, 2.6, address=HOME, invite=invite).person.name == "Dan"
    refused_join(table, ErrorCode.KICKED, "Eve", token="t-Eve", invite=invite, now=2.7)
    # Another address is welcome; the kick survives a snapshot.
    assert arrive(table, "Bob", 3.0, address="203.0.113.5")
    restored = Table.from_dict(table.to_dict(4.0), 9.0, table.policy)
    refused_join(restored, ErrorCode.KICKED, "Eve", token="t-Eve", now=10.0)
    refused_join(restored, ErrorCode.KICKED, "Mallory", address=HOME, now=10.0)


def test_a_kicked_player_is_never_dealt_in() -> None:
    """The host removes her and starts at once: she cannot have sat again meanwhile."""
    table = new_table()
    ann, bob, eve = arrive(table, "Ann"), arrive(table, "Bob"), arrive(table, "Eve")
    table.kick(ann, eve, 1.0)
    with pytest.raises(ProtocolError):
        table.join("Eve", "t-Eve", 1.0001)
    table.start(ann, 1.3, seed=1)
    assert table.game is not None and table.game.players == 2
    assert eve not in [table.seats[s] for s in range(table.game.players)]
    del bob


def test_who_may_be_kicked_and_when() -> None:
    table = new_table()
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    cy = arrive(table, "Cy")
    table.stand(cy, 0.0)
    with pytest.raises(ProtocolError) as caught:
        table.kick(bob, cy, 1.0)
    assert caught.value.code == ErrorCode.NOT_HOST
    for target in (ann, "p-nobody"):
        with pytest.raises(ProtocolError) as caught:
            table.kick(ann, target, 1.0)
        assert caught.value.code == ErrorCode.BAD_REQUEST
    table.start(ann, 1.0, seed=2)
    with pytest.raises(ProtocolError) as caught:
        table.kick(ann, bob, 2.0)  # a dealt seat: between games
    assert caught.value.code == ErrorCode.WRONG_PHASE
    assert table.kick(ann, cy, 2.0).events == [events.Kick(cy, None)]  # a watcher: any time


def test_nobody_can_kick_the_tables_own_host() -> None:
    table = new_table()
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    table.drop(ann, 1.0, left=True)  # the role passes to Bob
    assert table.host == bob
    with pytest.raises(ProtocolError) as caught:
        table.kick(bob, ann, 2.0)
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert back(table, "Ann", 3.0).person.id == ann and table.host == ann


# ---- lock and invite ----------------------------------------------------------------------


def test_a_locked_table_lets_nobody_new_in_but_with_the_newest_invite() -> None:
    table = new_table()
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    assert table.lock(ann, True, 1.0).events == [events.Lock(True)] and table.locked
    refused_join(table, ErrorCode.ROOM_LOCKED, "Eve", now=2.0)
    table.drop(bob, 2.0, left=False)
    assert back(table, "Bob", 3.0).returning  # people who were here come back
    first = table.invite(ann, 4.0).reply["invite"]
    assert table.join("Cy", None, 5.0, invite=first).person.name == "Cy"
    fresh = table.invite(ann, 6.0).reply["invite"]
    refused_join(table, ErrorCode.ROOM_LOCKED, "Dot", invite=first, now=7.0)  # replaced
    assert table.join("Dot", None, 8.0, invite=fresh).person.name == "Dot"
    snapshot = table.to_dict(9.0)
    assert first not in str(snapshot) and fresh not in str(snapshot)  # only a hash kept
    restored = Table.from_dict(snapshot, 9.0, table.policy)
    assert restored.locked and restored.join("Fay", None, 10.0, invite=fresh).person.name == "Fay"
    assert table.lock(ann, False, 11.0).events == [events.Lock(False)]
    assert table.join("Gus", None, 12.0).person.name == "Gus"
    with pytest.raises(ProtocolError) as caught:
        table.lock(bob, True, 13.0)
    assert caught.value.code == ErrorCode.NOT_HOST


# ---- the host's role ----------------------------------------------------------------------


def test_the_tables_own_host_takes_the_role_back_whenever_they_return() -> None:
    """A stranger who joined second was host while the host's phone was away: no more."""
    table = new_table()
    ann, eve = arrive(table, "Ann"), arrive(table, "Eve")
    table.drop(ann, 1.0, left=False)
    assert table.hand_over_if_gone(1.0 + GRACE) == [events.Host(eve)]
    returned = back(table, "Ann", 1.0 + GRACE + 1.0)
    assert events.Host(ann) in returned.events and table.host == ann
    restored = Table.from_dict(table.to_dict(20.0), 0.0, table.policy)
    assert restored.owner == ann


def test_everyone_sees_who_the_tables_own_host_is_while_another_stands_in() -> None:
    """The stand-in host's page offers to remove everyone but the table's own host (whom
    no host may remove): the state says who that is."""
    table = new_table()
    ann, eve = arrive(table, "Ann"), arrive(table, "Eve")
    table.drop(ann, 1.0, left=False)
    table.hand_over_if_gone(1.0 + GRACE)
    seen = build_state(table, table.people[eve], table.seat_of(eve))
    assert (seen["host"], seen["owner"]) == (eve, ann)
    with pytest.raises(ProtocolError) as caught:
        table.kick(eve, ann, 2.0 + GRACE)
    assert caught.value.code == ErrorCode.BAD_REQUEST


def test_a_hand_over_goes_to_who_came_first_not_to_the_newest_connection() -> None:
    table = new_table()
    ann, bob, cy = arrive(table, "Ann"), arrive(table, "Bob", 1.0), arrive(table, "Cy", 2.0)
    table.drop(bob, 3.0, left=False)  # a blip: Bob's connection is now newer than Cy's
    back(table, "Bob", 3.5)
    table.drop(ann, 4.0, left=False)
    assert table.hand_over_if_gone(4.0 + GRACE) == [events.Host(bob)]
    del cy


def test_a_seated_player_takes_the_role_before_someone_watching() -> None:
    table = new_table()
    ann, cy, bob = arrive(table, "Ann"), arrive(table, "Cy", 1.0), arrive(table, "Bob", 2.0)
    table.stand(cy, 2.0)
    table.drop(ann, 3.0, left=True)
    assert table.host == bob
    del cy


# ---- names --------------------------------------------------------------------------------


@pytest.mark.parametrize("impostor", ["Ann", "ANN", "\u0410nn", "Ann.", "ann"])
def test_a_name_that_reads_like_anyone_elses_here_is_taken(impostor: str) -> None:
    table = new_table()
    arrive(table, "Ann")
    refused_join(table, ErrorCode.NAME_TAKEN, impostor)


def test_names_are_compared_with_people_away_watching_and_bots() -> None:
    table = new_table()
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    table.drop(bob, 1.0, left=False)  # away, seated
    table.add_bot(ann, "easy", 1.0)
    bot = next(iter(table.bots.values())).name
    for name in ("BOB", bot.upper()):
        refused_join(table, ErrorCode.NAME_TAKEN, name, now=2.0)
    # Shared screens may share their name; nobody else may take it.
    for n in range(2):
        table.join("Big screen", None, 3.0, watch=True, new_id=f"tv{n}", new_token=f"tv{n}")
    refused_join(table, ErrorCode.NAME_TAKEN, "big screen", now=4.0)


def test_a_new_name_at_most_once_a_minute_and_never_in_a_game() -> None:
    table = new_table()
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    assert back(table, "Bob", 1.0, as_name="Bobby").person.name == "Bobby"
    assert back(table, "Bob", 2.0, as_name="Rob").person.name == "Bobby"  # too soon
    assert back(table, "Bob", 1.0 + RENAME_SECONDS, as_name="Rob").person.name == "Rob"
    assert back(table, "Bob", 200.0, as_name="ann").person.name == "Rob"  # Ann's: kept his
    table.start(ann, 300.0, seed=3)
    assert back(table, "Bob", 400.0, as_name="Robert").person.name == "Rob"  # in a game
    snapshot = Table.from_dict(table.to_dict(401.0), 0.0, table.policy)
    assert snapshot.people[bob].renamed_at == pytest.approx(1.0 + RENAME_SECONDS - 401.0)


def test_thirty_renames_in_a_row_make_one() -> None:
    table = new_table()
    arrive(table, "Ann")
    bob = arrive(table, "Bob")
    for n in range(30):
        back(table, "Bob", 1.0 + n * 0.01, as_name=f"Bob {n}")
    assert table.people[bob].name == "Bob 0"


# ---- false starts -------------------------------------------------------------------------


HANDS = [["2C", "2D"], ["3C", "3D"]]  # no trigger among them


def at_a_jack(floor: float = 0.1) -> tuple[Table, str, str, float]:
    """Ann (seat 0) and Bob (seat 1) in a game with a Jack just shown at 10.0."""
    table = new_table(false_start_seconds=floor)
    ann, bob = arrive(table, "Ann"), arrive(table, "Bob")
    table.start(ann, 0.0, seed=1)
    table.game = Game.from_hands(HANDS, rules=table.rules, pile=["JS"], now=10.0)
    assert table.game.slap_open and table.game.trigger_since == 10.0
    return table, ann, bob, 10.0


def test_a_slap_sooner_than_a_person_can_react_takes_nothing() -> None:
    table, ann, bob, shown = at_a_jack()
    game = table.game
    assert game is not None
    pile, cards = game.pile_id, list(game.hand_sizes)
    done = table.play_as(ann, "slap", pile, shown + 0.001)
    assert done.events == [events.FalseStart(0, pile, 1)]
    assert game.slap_open and list(game.hand_sizes) == cards  # nothing taken, nothing paid
    # Her seat cannot take this pile; Bob, a person's 250 ms later, does.
    with pytest.raises(ProtocolError) as caught:
        table.play_as(ann, "slap", pile, shown + 0.3)
    assert caught.value.code == ErrorCode.FALSE_START
    [take] = [e for e in table.play_as(bob, "slap", pile, shown + 0.25).events if e.kind == "take"]
    assert take.event.seat == 1
    # The next pile is a new race for her.
    assert table.false_start_ms(ann, game.pile_id, shown + 5.0) is None


def test_a_reaction_is_counted_from_the_trigger_reaching_the_slapper() -> None:
    """Arrival less the trigger's time less the smallest recent round trip: a far player's
    honest 150 ms over a 200 ms round trip arrives 350 ms after the trigger, and counts as
    150 ms; a script 1 ms after its copy arrived counts as about 1 ms, wherever it is."""
    table, ann, bob, shown = at_a_jack()
    for rtt in (0.25, 0.2, 0.3):  # Bob's round trips: the smallest is 200 ms
        sent = shown - 5.0
        ping = table.lag.ping(bob, sent)
        table.lag.pong(bob, ping, sent + rtt)
    assert table.reaction(bob, shown + 0.35) == pytest.approx(0.15)
    assert table.false_start_ms(bob, None, shown + 0.35) is None
    assert table.false_start_ms(bob, None, shown + 0.201) == 1  # 1 ms after it arrived
    del ann


def test_the_floor_is_off_for_a_table_of_scripts_or_a_server_that_says_so() -> None:
    table, ann, _bob, shown = at_a_jack()
    table.false_starts = False  # the house rule, off
    assert table.false_start_ms(ann, None, shown + 0.001) is None
    table, ann, _bob, shown = at_a_jack(floor=0.0)  # SLAPJACK_FALSE_START_MS=0
    assert table.false_start_ms(ann, None, shown + 0.001) is None


def test_bots_are_never_judged_for_reflexes() -> None:
    table = new_table()
    ann = arrive(table, "Ann")
    table.add_bot(ann, "hard", 0.0)
    table.start(ann, 0.0, seed=1)
    table.game = Game.from_hands(HANDS, rules=table.rules, pile=["JS"], now=10.0)
    assert next(e.kind for e in table.play(1, "slap", 0, 10.001)) == "take"
