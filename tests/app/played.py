"""Tables played at random, deterministically: every step of many games under random house
rules, for the tests that compare snapshots and views with their golden copies."""

from __future__ import annotations

import random
from collections.abc import Iterator

from app.tables.table import Policy, Table
from app.wire.errors import ProtocolError
from engine import IllegalAction, Rules
from engine.rules import TRIGGERS

# The golden copies' round trips were measured against a 150 ms cap: kept, so that the
# default cap (SLAPJACK_LAG_CAP_MS) can change without a new copy.
GOLDEN_POLICY = Policy(lag_cap_seconds=0.15)


def random_rules(rng: random.Random) -> Rules:
    return Rules(
        freeze_seconds=rng.choice([0.0, 0.7, 1.5]),
        penalty=rng.choice(["burn", "give"]),
        empty_deck=rng.choice(["out", "last_chance"]),
        triggers=frozenset(rng.sample(TRIGGERS, rng.randint(1, len(TRIGGERS)))),
        decks=rng.choice([1, 1, 2]),
        last_card_jack=rng.random() < 0.3,
        time_limit=rng.choice([None, None, 40.0, 123.456]),
        collect_seconds=rng.choice([0.0, 1.0, 2.5]),
        trigger_timeout=rng.choice([0.0, 2.0, 8.0]),
        shuffle_taken=rng.random() < 0.3,
    )


def played_tables(games: int, seed: int = 16) -> Iterator[tuple[Table, float]]:
    """Yields (table, now) at every step of `games` games of 2 to 8 people and bots, each
    under random house rules: flips, slaps won, late slaps in photo finishes, false slaps,
    lapses and time limits, people leaving, and the lobby before and the end after."""
    rng = random.Random(seed)
    for number in range(games):
        table = Table(f"EQ{number:04d}", random_rules(rng), GOLDEN_POLICY)
        now = rng.uniform(0.0, 1e5)  # any monotonic clock
        people = rng.randint(2, 8)
        for i in range(people):
            name = rng.choice(["Ann", "Bé", "Chloë 🃏", 'Dan "D"', "Eve\\"]) + str(i)
            table.join(name, rng.choice([None, "🐸"]), now, new_id=f"p{i}", new_token=f"t{i}")
        host = table.host
        assert host is not None
        yield table, now  # the lobby: no game
        table.start(host, now, seed=rng.getrandbits(64))
        game = table.game
        assert game is not None
        for _ in range(rng.randint(5, 400)):
            if game.over:
                break
            now += rng.choice([0.05, 0.3, 0.6, 1.7, 9.0])
            seat = rng.randrange(game.players)
            move = rng.random()
            try:
                if move < 0.5 and game.next_to_play is not None:
                    table.play(game.next_to_play, "flip", None, now)
                elif move < 0.85:
                    aimed = game.pile_id - (rng.random() < 0.3)  # some aim at the pile gone
                    table.play(seat, "slap", max(aimed, 0), now)
                elif move < 0.97:
                    table.tick(now)
                else:
                    table.drop(f"p{seat}", now, left=False)  # the time they went is stored
            except (IllegalAction, ProtocolError):
                pass
            yield table, now + rng.choice([0.0, 0.01, 3.5])
        yield table, now + 1.0
