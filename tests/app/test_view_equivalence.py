"""The view's seats and match score, built in one pass, are what the code they replaced
built, at every step of many games (with people gone, bots, wins and measured lag); the
view read from the engine part by part is what its whole `table_view` gives; and each
person's message, made with the stats and rules a ViewParts kept from earlier changes, is
their state encoded whole."""

from __future__ import annotations

import random
from typing import Any

from test_snapshot_equivalence import played_tables

from app.realtime.outgoing import to_json
from app.tables.events import EventDict
from app.tables.table import Person, Table, TableBot
from app.tables.views import ViewParts, Views, _seats, _seen_from
from app.wire.protocol import MatchScore, Pile, Seen, Spectator
from engine.views import seat_rows, table_view


def reference_seat(table: Table, seat: int, hand: dict[str, Any] | None) -> dict[str, Any] | None:
    occupant = table.occupant(seat)
    if occupant is None:
        return None
    lag = table.lag.estimate(occupant.id) if isinstance(occupant, Person) else None
    bot = occupant if isinstance(occupant, TableBot) else None
    person = occupant if isinstance(occupant, Person) else None
    return {
        "seat": seat,
        "player": person.id if person is not None else None,
        "name": occupant.name,
        "avatar": person.avatar if person is not None else None,
        "bot": bot.level if bot is not None else None,
        "connected": person.connected if person is not None else True,
        "cards": hand["cards"] if hand is not None else 0,
        "out": hand["out"] if hand is not None else False,
        "frozen_ms": hand["frozen_ms"] if hand is not None else 0,
        "lag_ms": None if lag is None else round(lag * 1000),
    }


def reference_match_score(table: Table) -> list[tuple[str, str, int]]:
    known: dict[str, str] = {p.id: p.name for p in table.people.values()}
    known |= {b.id: b.name for b in table.bots.values()}
    ids = [o for o in table.seats if o is not None]
    ids += [i for i in table.wins if i not in ids and i in known]
    scores = [(i, known[i], table.wins.get(i, 0)) for i in ids if i in known]
    return sorted(scores, key=lambda score: -score[2])


def test_seats_and_match_score_are_what_the_replaced_code_built() -> None:
    rng = random.Random(7)
    steps = with_lag = with_wins = 0
    for table, now in played_tables(40, seed=21):
        steps += 1
        for person in list(table.people.values())[:2]:  # a measured round trip or two
            if rng.random() < 0.2:
                ping = table.lag.ping(person.id, now)
                table.lag.pong(person.id, ping, now + rng.uniform(0.001, 0.4))
        if rng.random() < 0.05:  # a win from an earlier game: a person, a bot, one gone
            table.wins[rng.choice([*table.people, *table.bots, "gone"])] = rng.randint(1, 3)
        game = table.game
        view = table_view(game) if game is not None else None
        hands = view["seats"] if view is not None else None
        rows = seat_rows(game) if game is not None else None
        seats = range(game.players) if game is not None else range(len(table.seats))
        assert _seats(table, rows, seats) == [
            reference_seat(table, i, hands and hands[i]) for i in seats
        ]
        assert table.match_score() == reference_match_score(table)
        assert _seen_from(table, [])["seats"] == _seats(table, rows, seats)
        with_lag += any(
            s is not None and s["lag_ms"] is not None for s in _seats(table, rows, seats)
        )
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
        table.host = host
        watching = [p for p in table.people.values() if p.connected and p.id not in seat_of]
        assert table.spectators() == watching
        assert table.seated() == len(seat_of)
        spectators += bool(watching)
    assert steps > 1000 and spectators > 100 and dropped > 5


def reference_seen(table: Table, events: list[EventDict]) -> Seen:
    """The view as it was built from the engine's whole `table_view` (before it was read
    part by part): the reference for `_seen_from` and for every message's text."""
    game = table.game
    view = table_view(game) if game is not None else None
    hands = view["seats"] if view is not None else None
    seats = range(game.players) if game is not None else range(len(table.seats))
    return {
        "room": table.code,
        "version": table.version,
        "phase": table.phase,
        "game": table.games,
        "first": table.first,
        "host": table.host,
        "seats": [reference_seat(table, i, hands and hands[i]) for i in seats],  # type: ignore[misc]
        "spectators": [
            Spectator(player=p.id, name=p.name, connected=True) for p in table.spectators()
        ],
        "pile": view["pile"] if view is not None else Pile(id=0, count=0, top=[], burned=0),
        "next": view["next"] if view is not None else None,
        "slap_open": view["slap_open"] if view is not None else False,
        "trigger": view["trigger"] if view is not None else None,
        "trigger_lapsed": view["trigger_lapsed"] if view is not None else False,
        "lapse_ms": view["lapse_ms"] if view is not None else None,
        "collect_ms": view["collect_ms"] if view is not None else 0,
        "race": view["race"] if view is not None else None,
        "winner": view["winner"] if view is not None else None,
        "win_reason": view["win_reason"] if view is not None else None,
        "stats": view["stats"] if view is not None else [],
        "rules": {
            **(view["rules"] if view is not None else table.rules.to_dict()),
            "lag_fair": table.lag_fair,
        },
        "players_needed": table.players_needed(),
        "places": table.places(),
        "match": [
            MatchScore(player=i if i in table.people else None, name=name, wins=wins)
            for i, name, wins in table.match_score()
        ],
        "events": events,
    }


def test_the_view_read_part_by_part_is_the_whole_table_view_and_parts_kept_are_current() -> None:
    """At every step of many games, with one ViewParts per table kept from step to step (as
    a Room keeps it) and the lag-fair rule switched now and then: the view is the reference
    built from the engine's whole `table_view`, field for field and in its order, and every
    person's message is that reference encoded. The stats and rules kept are made again
    whenever they change: some steps change them, most reuse them."""
    rng = random.Random(11)
    parts: dict[str, ViewParts] = {}
    steps = stats_changed = rules_changed = 0
    last: dict[str, tuple[str, str]] = {}
    for table, _now in played_tables(30, seed=8):
        steps += 1
        if rng.random() < 0.02:
            table.lag_fair = not table.lag_fair  # the room's own rule, shown with the rules
        events: list[EventDict] = [{"kind": "flip", "version": table.version}] * rng.randint(0, 2)
        reference = reference_seen(table, events)
        seen = _seen_from(table, events)
        assert seen == reference
        assert list(seen) == list(reference)
        views = Views(table, events, parts.setdefault(table.code, ViewParts()))
        for person in table.people.values():
            seat = table.seat_of(person.id)
            you = {"player": person.id, "seat": seat, "host": person.id == table.host}
            text = views.message(person, seat).text
            assert text == f'42["state",{to_json({**reference, "you": you})}]'
        shown = (to_json(reference["stats"]), to_json(reference["rules"]))
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
    rules = parts.rules(game.rules, False)
    assert parts.rules(game.rules, False) is rules
    assert to_json(parts.rules(game.rules, True)) == to_json(
        {**game.rules.to_dict(), "lag_fair": True}
    )
