"""Saves made cheap (issue 16) store exactly what they stored before: the snapshots built by
hand and encoded by orjson are compared, at every step of many played games, with the code
they replaced (kept below as the reference: `dataclasses.asdict`, `str(card)`, a deep copy,
the stdlib's `json.dumps`), and they restore to the same table."""

from __future__ import annotations

import copy
import enum
import json
import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from app.stores import SnapshotText, decode_snapshot, encode_snapshot, vouched
from app.tables.table import _GAME_TIMES as GAME_TIMES
from app.tables.table import Table, times_are_finite
from app.wire.errors import ProtocolError
from engine import Game, IllegalAction, Rules
from engine.cards import Card
from engine.rules import TRIGGERS


@dataclass
class Shape:
    x: int
    y: int


class Seat(enum.IntEnum):
    NORTH = 0
    EAST = 1


# ---- the reference: the snapshot code as it was before issue 16 -----------------------


def reference_rules(rules: Rules) -> dict[str, Any]:
    data = {f.name: getattr(rules, f.name) for f in fields(rules)}
    data["triggers"] = sorted(rules.triggers)
    return data


def reference_game(game: Game) -> dict[str, Any]:
    race = None
    if game._race is not None:
        race = asdict(game._race)
        race["behind"] = [list(pair) for pair in game._race.behind]
    return {
        "version": 1,
        "rules": reference_rules(game.rules),
        "hands": [[str(c) for c in hand] for hand in game._hands],
        "pile": [str(c) for c in game._pile],
        "pile_id": game._pile_id,
        "burned": game._burned,  # added after the code this copies: how many burned under the pile
        "out": list(game._out),
        "frozen_until": list(game._frozen),
        "next": game._next,
        "winner": game._winner,
        "win_reason": game._win_reason,
        "last_flipper": game._last_flipper,
        "now": game._now,
        "deadline": game._deadline,
        "trigger_since": game._trigger_since,
        "trigger_lapsed": game._lapsed,
        "collect_until": game._collect_until,
        "race": race,
        "shuffle_seed": game._shuffle_seed,
        "stats": [asdict(s) for s in game._stats],
    }


def reference_game_snapshot(game: Game, now: float) -> dict[str, Any]:
    data = copy.deepcopy(reference_game(game))
    data["frozen_until"] = [max(when, game.now) for when in data["frozen_until"]]
    data["collect_until"] = max(data["collect_until"], game.now)
    offset = -now
    for key in ("now", "deadline", "trigger_since", "collect_until"):
        if data.get(key) is not None:
            data[key] = data[key] + offset
    data["frozen_until"] = [when + offset for when in data["frozen_until"]]
    race = data.get("race")
    if race is not None:
        for key in ("at", "shown_at"):
            if race[key] is not None:
                race[key] = race[key] + offset
    return data


def reference_table(table: Table, now: float) -> dict[str, Any]:
    """Table.to_dict's own fields did not change; its rules and game are the reference's."""
    data = table.to_dict(now)
    data["rules"] = reference_rules(table.rules)
    data["game"] = None if table.game is None else reference_game_snapshot(table.game, now)
    return data


def reference_encode(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, separators=(",", ":"), allow_nan=False)


# ---- many games, played at random ------------------------------------------------------


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
        after_take=rng.choice(["winner", "left_of_winner"]),
        tie_window_ms=rng.choice([0, 0, 30]),
    )


def played_tables(games: int, seed: int = 16) -> Any:
    """Yields (table, now) at every step of `games` games of 2 to 8 people and bots, each
    under random house rules: flips, slaps won, late slaps in photo finishes, false slaps,
    lapses and time limits, people leaving, and the lobby before and the end after."""
    rng = random.Random(seed)
    for number in range(games):
        table = Table(f"EQ{number:04d}", random_rules(rng))
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


# ---- the tests -------------------------------------------------------------------------


def test_snapshots_and_their_json_are_what_the_replaced_code_wrote() -> None:
    steps = 0
    for table, now in played_tables(60):
        steps += 1
        snapshot = table.to_dict(now)
        assert snapshot == reference_table(table, now)
        if table.game is not None:
            assert table.game.to_dict() == reference_game(table.game)
        text, schema = encode_snapshot(table.code, snapshot)
        assert schema == 1
        assert json.loads(text) == json.loads(reference_encode(snapshot)) == snapshot
        # What a room hands its store: the same text, encoded once without the read-back.
        assert times_are_finite(snapshot)
        assert vouched(table.code, snapshot) == SnapshotText(text, 1, table.version)
    assert steps > 3000  # many games, many states each


def test_every_snapshot_restores_and_an_old_json_text_restores_the_same_table() -> None:
    for table, now in played_tables(25, seed=99):
        snapshot = table.to_dict(now)
        text, _ = encode_snapshot(table.code, snapshot)
        for stored in (text, reference_encode(snapshot)):  # written now, or by the old code
            loaded = decode_snapshot(table.code, stored, 1)
            assert loaded is not None
            # At 0.0 the relative times come back exactly: 0 - (0 - t) is t.
            restored = Table.from_dict(loaded, 0.0)
            assert restored.to_dict(0.0) == Table.from_dict(snapshot, 0.0).to_dict(0.0)
            restored_at_now = Table.from_dict(loaded, now)
            again = restored_at_now.to_dict(now)
            assert again.keys() == snapshot.keys()
            assert _close(again, snapshot)
        if table.game is not None:
            game = table.game
            assert Game.from_dict(game.to_dict()).to_dict() == game.to_dict()


def _close(a: Any, b: Any) -> bool:
    """Equal, floats to a nanosecond: a time restored at `now` is now - (now - t)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def a_table_in_play() -> tuple[Table, float]:
    for table, now in played_tables(1, seed=3):
        game = table.game
        if game is not None and game._race is not None and any(s.reactions_ms for s in game._stats):
            return table, now
    raise AssertionError("no photo finish in the game")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_time_that_is_no_number_is_refused_not_written_as_null(bad: float) -> None:
    table, now = a_table_in_play()
    for where in ("turn_started_ago", "frozen_until", "race"):
        snapshot = table.to_dict(now)
        if where == "turn_started_ago":
            snapshot[where] = bad
        elif where == "frozen_until":
            snapshot["game"]["frozen_until"][-1] = bad
        else:
            snapshot["game"]["race"]["at"] = bad
        assert b"null" in orjson.dumps(snapshot)  # orjson alone would write it silently
        assert not times_are_finite(snapshot)  # so a room does not vouch for it
        with pytest.raises(ValueError):
            encode_snapshot(table.code, snapshot)


def test_what_orjson_will_not_write_is_written_as_the_stdlib_wrote_it() -> None:
    table, now = a_table_in_play()
    snapshot = table.to_dict(now)
    snapshot["extra"] = {"pair": (1, 2), "big": 2**70, 7: "int key"}
    text, _ = encode_snapshot(table.code, snapshot)
    assert text == reference_encode(snapshot)
    assert vouched(table.code, snapshot).text == text  # vouched for, and still checked
    snapshot["extra"] = {"kept": {1, 2}}  # no JSON at all: refused, as before
    with pytest.raises(TypeError):
        encode_snapshot(table.code, snapshot)
    with pytest.raises(TypeError):
        vouched(table.code, snapshot)


@pytest.mark.parametrize(
    "odd",
    [
        Shape(1, 2),  # a dataclass: orjson would write it as an object
        datetime(2026, 12, 1, tzinfo=UTC),  # orjson would write it as a text
        Seat.EAST,  # an IntEnum: orjson would write it as 1, and it would come back an int
    ],
)
def test_a_vouched_snapshot_still_refuses_what_json_has_no_place_for(odd: object) -> None:
    """Only JSON's own types go straight to orjson: the rest take the checked way, which
    refuses a dataclass or a datetime and writes an IntEnum as `encode_snapshot` does."""
    table, now = a_table_in_play()
    snapshot = table.to_dict(now)
    snapshot["extra"] = [odd]
    if isinstance(odd, Seat):
        assert vouched(table.code, snapshot).text == encode_snapshot(table.code, snapshot)[0]
    else:
        with pytest.raises(TypeError):
            vouched(table.code, snapshot)


def test_every_time_in_a_snapshot_is_checked_finite() -> None:
    """Each place a table snapshot holds a time: a NaN or an infinity there is seen."""
    table, now = a_table_in_play()
    places: list[Callable[[dict[str, Any], float], None]] = [
        lambda s, bad: s.__setitem__("turn_started_ago", bad),
        lambda s, bad: s["people"][0].__setitem__("connected_for", bad),
        lambda s, bad: s["people"][0].__setitem__("gone_for", bad),
        lambda s, bad: s["game"]["frozen_until"].__setitem__(0, bad),
        lambda s, bad: s["game"]["race"].__setitem__("at", bad),
        lambda s, bad: s["game"]["race"].__setitem__("shown_at", bad),
        *[lambda s, bad, key=key: s["game"].__setitem__(key, bad) for key in GAME_TIMES],
    ]
    assert times_are_finite(table.to_dict(now))
    for place in places:
        for bad in (math.nan, math.inf, -math.inf):
            snapshot = table.to_dict(now)
            place(snapshot, bad)
            assert not times_are_finite(snapshot)


def test_a_restored_game_shares_nothing_with_the_snapshot_it_came_from() -> None:
    table, now = a_table_in_play()
    snapshot = table.to_dict(now)
    kept = copy.deepcopy(snapshot)
    restored = Table.from_dict(snapshot, now)
    before = restored.to_dict(now)
    game = snapshot["game"]
    for stats in game["stats"]:
        stats["reactions_ms"].append(1)
    game["race"]["behind"].append([0, 1])
    game["race"]["at"] = 0.0
    game["frozen_until"][0] = 1e9
    game["rules"]["triggers"].append("face")
    assert restored.to_dict(now) == before
    assert Table.from_dict(kept, now).to_dict(now) == before
    # And a snapshot shares nothing with the game: changing it changes no later snapshot.
    again = restored.to_dict(now)
    again["game"]["stats"][0]["reactions_ms"].append(5)
    again["game"]["hands"][0].clear()
    again["rules"]["triggers"].clear()
    assert restored.to_dict(now) == before


def test_a_card_carries_its_text() -> None:
    for text in ("AS", "10H", "JD", "KC"):
        assert Card.parse(text).text == str(Card.parse(text)) == text
    card = Card("10", "H")  # built, not parsed: the same text and the same card
    assert card.text == "10H" and card == Card.parse("th") and hash(card) == hash(Card.parse("th"))
    assert repr(card) == "Card.parse('10H')"
