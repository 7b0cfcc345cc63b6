"""The view's seats and match score, built in one pass, are what the code they replaced
built, at every step of many games (with people gone, bots, wins and measured lag)."""

from __future__ import annotations

import random
from typing import Any

from test_snapshot_equivalence import played_tables

from app.outgoing import to_json
from app.table import Person, Table, TableBot
from app.views import Views, _seats, _seen_from


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
        view = game.table_view() if game is not None else None
        hands = view["seats"] if view is not None else None
        seats = range(game.players) if game is not None else range(len(table.seats))
        assert _seats(table, hands, seats) == [
            reference_seat(table, i, hands and hands[i]) for i in seats
        ]
        assert table.match_score() == reference_match_score(table)
        assert _seen_from(table, [])["seats"] == _seats(table, hands, seats)
        with_lag += any(
            s is not None and s["lag_ms"] is not None for s in _seats(table, hands, seats)
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
