"""A person's view is its golden copy (tests/fixtures/views.json) at every step of many
games under each case of house rules (played.py RULE_SETS), with people gone, bots, wins and
measured lag, with the lag-fair rule switched and events carried, and fits the wire's shape
(schemas.py); each person's message, made with the stats and rules a ViewParts kept from
earlier changes, is their state encoded whole.

After a deliberate change to what a view holds: `make golden`, and review the diff."""

from __future__ import annotations

import random

from golden import VIEWS, event_games, matching, seat_games
from played import played_tables
from schemas import check_state

from app.tables.views import ViewParts, Views, _seats, _seen_from
from app.wire.encoded import to_json
from engine.views import seat_rows


def test_seats_and_match_score_are_their_golden_copies() -> None:
    steps = with_lag = with_wins = 0
    for step in matching(VIEWS, "seats", seat_games()):
        steps += 1
        table = step.table
        game = table.game
        rows = seat_rows(game) if game is not None else None
        seats = range(game.players) if game is not None else range(len(table.seats))
        seen = _seen_from(table, [])
        assert seen["seats"] == _seats(table, rows, seats)
        for person in table.people.values():
            you = {"player": person.id, "seat": table.seat_of(person.id), "host": False}
            check_state({**seen, "you": you})
        with_lag += any(s is not None and s["lag_ms"] is not None for s in seen["seats"])
        with_wins += bool(table.wins)
    assert steps > 2000 and with_lag > 100 and with_wins > 100


def test_each_persons_message_is_their_state_encoded_whole_at_every_step() -> None:
    """A `state` is the shared JSON with the person's `you` text spliced in (that text kept
    per person, seat and hosting): for everyone, at every step, with the host moved now and
    then, it is their state encoded whole. The spectators and the seated count, each made in
    one pass, are what the people and the seats say."""
    rng = random.Random(3)
    steps = spectators = dropped = 0
    for table, now in played_tables(25, seed=5):
        steps += 1
        if table.phase == "playing" and rng.random() < 0.05:  # someone comes to watch
            table.join(f"Sé{steps}", None, now, new_id=f"s{steps}", new_token=f"t{steps}")
        watchers = [i for i in table.people if i.startswith("s") and table.people[i].connected]
        if watchers and rng.random() < 0.03:  # and one of them loses the connection
            table.drop(rng.choice(watchers), now, left=False)
            dropped += 1
        seat_of = {o: s for s, o in enumerate(table.seats) if o is not None}
        host = table.host
        for someone in (host, rng.choice(list(table.people))):  # and now and then another
            table.host = someone
            views = Views(table)
            for person in table.people.values():
                seat = seat_of.get(person.id)
                text = views.message(person, seat).text
                assert text == f'42["state",{to_json(views.state(person, seat))}]'
                riding = views.message(person, seat, ping="9f2c01ab").text  # a lag ping on it
                state = {**views.state(person, seat), "ping": "9f2c01ab"}
                assert riding == f'42["state",{to_json(state)}]'
                check_state(state)
        table.host = host
        watching = [p for p in table.people.values() if p.connected and p.id not in seat_of]
        assert table.spectators() == watching
        assert table.seated() == len(seat_of)
        spectators += bool(watching)
    assert steps > 1000 and spectators > 100 and dropped > 5


def test_the_view_read_part_by_part_is_its_golden_copy_and_parts_kept_are_current() -> None:
    """At every step of many games, with one ViewParts per table kept from step to step (as
    a Room keeps it) and the lag-fair rule switched now and then: the view is its golden
    copy, field for field and in its order, and every person's message is that view with
    their `you`. The stats and rules kept are made again whenever they change: some steps
    change them, most reuse them."""
    parts: dict[str, ViewParts] = {}
    steps = stats_changed = rules_changed = 0
    last: dict[str, tuple[str, str]] = {}
    for step in matching(VIEWS, "events", event_games()):
        steps += 1
        table = step.table
        seen = _seen_from(table, step.events)
        views = Views(table, step.events, parts.setdefault(table.code, ViewParts()))
        for person in table.people.values():
            seat = table.seat_of(person.id)
            you = {"player": person.id, "seat": seat, "host": person.id == table.host}
            check_state({**seen, "you": you})
            text = views.message(person, seat).text
            assert text == f'42["state",{step.text[:-1]},"you":{to_json(you)}}}]'
        shown = (to_json(seen["stats"]), to_json(seen["rules"]))
        before = last.get(table.code, shown)
        stats_changed += shown[0] != before[0]
        rules_changed += shown[1] != before[1]
        last[table.code] = shown
    assert steps > 1000 and stats_changed > 100 and rules_changed > 10


def test_view_parts_are_kept_while_their_objects_are_the_same_and_made_again_when_not() -> None:
    table, _now = next(t for t in played_tables(3, seed=2) if t[0].game is not None)
    game = table.game
    assert game is not None
    parts = ViewParts()
    figures = game.stats_figures()
    stats = parts.stats(figures)
    assert parts.stats(game.stats_figures()) is stats  # nothing changed: the same JSON
    game._stats[0].record_false_slap()  # what a false slap records
    changed = parts.stats(game.stats_figures())
    assert changed is not stats
    assert to_json(changed) == to_json(game.stats_by_seat())
    rules = parts.rules(game.rules, (False, True))
    assert parts.rules(game.rules, (False, True)) is rules
    assert to_json(parts.rules(game.rules, (True, True))) == to_json(
        {**game.rules.to_dict(), "lag_fair": True, "false_starts": True}
    )
    assert to_json(parts.rules(game.rules, (False, False))) == to_json(
        {**game.rules.to_dict(), "lag_fair": False, "false_starts": False}
    )
