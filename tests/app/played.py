"""Tables played at random, deterministically: every step of a game, for the tests that compare
snapshots and views with their golden copies (`golden_games`: named house rules, each game
seeded by its own name) and for the tests that only need many games (`played_tables`)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from typing import Any

from app.tables.table import Policy, Table
from app.wire.errors import ProtocolError
from engine import IllegalAction, Rules
from engine.rules import RULES_SCHEMA

# The golden copies' round trips were measured against a 150 ms cap: kept, so that the
# default cap (SLAPJACK_LAG_CAP_MS) can change without a new copy.
GOLDEN_POLICY = Policy(lag_cap_seconds=0.15)

# The house rules the golden games are played under, each a named case. A new rule or
# trigger gets a case of its own here (tests/app/test_snapshot_golden.py fails until every
# value of the rules schema is in one); `make golden` then adds that case's games to the
# fixtures and leaves every other case's as it was. A case's name seeds its games: never
# rename one, or its games are played again differently.
RULE_SETS: dict[str, Rules] = {
    "defaults": Rules(),
    "faces, give": Rules(triggers=frozenset({"jack", "face"}), penalty="give"),
    "doubles, last chance": Rules(
        triggers=frozenset({"jack", "double"}), empty_deck="last_chance", freeze_seconds=0.7
    ),
    "sandwiches, slow collect, quick lapse": Rules(
        triggers=frozenset({"jack", "sandwich"}), collect_seconds=2.5, trigger_timeout=2.0
    ),
    "doubles alone, last card jack, no pauses": Rules(
        triggers=frozenset({"double"}),
        last_card_jack=True,
        freeze_seconds=0.0,
        collect_seconds=0.0,
    ),
    "every trigger, two decks, time limit": Rules(
        triggers=frozenset({"jack", "face", "double", "sandwich"}),
        decks=2,
        time_limit=40.0,
        trigger_timeout=0.0,
    ),
    "two decks shuffled, give, odd time limit": Rules(
        decks=2, shuffle_taken=True, penalty="give", time_limit=123.456, empty_deck="last_chance"
    ),
    "faces, left of winner": Rules(
        triggers=frozenset({"face"}), after_take="left_of_winner", freeze_seconds=0.7
    ),
    "tie window": Rules(triggers=frozenset({"jack", "double"}), tie_window_ms=20, penalty="give"),
}


def golden_games(
    sequence: str, games_each: int
) -> Iterator[tuple[str, Iterator[tuple[Table, float]]]]:
    """Each golden game of a sequence, named by its case and number ("defaults #1"), with its
    steps: `games_each` games of every case in RULE_SETS, each seeded by the sequence's and
    its own name, so no game depends on another case or on how many there are."""
    for case, rules in RULE_SETS.items():
        for number in range(1, games_each + 1):
            name = f"{case} #{number}"
            rng = random.Random(f"{sequence}: {name}")
            code = "EQ" + hashlib.sha256(name.encode()).hexdigest()[:4].upper()
            yield name, played_game(Table(code, rules, GOLDEN_POLICY), rng)


def random_rules(rng: random.Random) -> Rules:
    """Rules drawn from the rules schema, every rule varied: a set's non-empty subset, a
    choice or a flag at random, a number at its default, either bound or between them."""
    values: dict[str, Any] = {}
    for spec in RULES_SCHEMA:
        if spec.kind == "set":
            values[spec.name] = rng.sample(spec.choices, rng.randint(1, len(spec.choices)))
        elif spec.kind == "choice":
            values[spec.name] = rng.choice(spec.choices)
        elif spec.kind == "flag":
            values[spec.name] = rng.random() < 0.3
        else:
            assert spec.minimum is not None and spec.maximum is not None
            middle = (spec.minimum + spec.maximum) / 2
            number = rng.choice([spec.default, spec.default, spec.minimum, middle, spec.maximum])
            if number is not None:
                number = round(number) if spec.integer else float(number)
            values[spec.name] = None if spec.nullable and rng.random() < 0.5 else number
    return Rules.from_dict(values)


def played_tables(games: int, seed: int = 16) -> Iterator[tuple[Table, float]]:
    """Every step of `games` games, each under random house rules (`played_game`)."""
    rng = random.Random(seed)
    for number in range(games):
        table = Table(f"EQ{number:04d}", random_rules(rng), GOLDEN_POLICY)
        yield from played_game(table, rng)


def played_game(table: Table, rng: random.Random) -> Iterator[tuple[Table, float]]:
    """Yields (table, now) at every step of a game of 2 to 8 people and bots: flips, slaps
    won, late slaps in photo finishes, false slaps, lapses and time limits, people leaving,
    and the lobby before and the end after."""
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
