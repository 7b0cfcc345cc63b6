"""A table's snapshot (what a store keeps) is its golden copy (tests/fixtures/snapshots.json)
at every step of many games played under each case of house rules (played.py RULE_SETS),
fits the snapshot's schema (schemas.py), and restores to the same table, also from a text
stored earlier. Snapshots are built by hand and encoded by orjson; what JSON has no place
for is refused, never written as null.

After a deliberate change to what a snapshot holds: `make golden`, and review the diff."""

from __future__ import annotations

import copy
import enum
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
import played
import pytest
from golden import SNAPSHOTS, features, matching, recorded, sampled, snapshot_games
from played import RULE_SETS, played_tables
from schemas import check_snapshot

from app.stores import SnapshotText, decode_snapshot, encode_snapshot, vouched
from app.tables.notation import _GAME_TIMES as GAME_TIMES
from app.tables.notation import times_are_finite
from app.tables.table import Table
from engine import Game, Rules
from engine.cards import Card
from engine.rules import RULES_SCHEMA


@dataclass
class Shape:
    x: int
    y: int


class Seat(enum.IntEnum):
    NORTH = 0
    EAST = 1


# ---- the tests -------------------------------------------------------------------------


# What the samples of the golden copy must show between them.
SAMPLED = {
    "phase:lobby", "phase:playing", "phase:over", "photo finish", "late slaps", "frozen",
    "burned", "lapsed", "collecting", "time limit", "someone out", "someone gone", "two decks",
    "penalty:burn", "penalty:give", "empty_deck:out", "empty_deck:last_chance",
}  # fmt: skip


def test_every_snapshot_is_its_golden_copy_and_fits_the_schema() -> None:
    steps = 0
    for step in matching(SNAPSHOTS, "snapshots", snapshot_games()):
        steps += 1
        table, now = step.table, step.now
        snapshot = table.to_dict(now)
        check_snapshot(snapshot)
        text, schema = encode_snapshot(table.code, snapshot)
        assert schema == 1 and text == step.text
        assert json.loads(text) == snapshot
        # What a room hands its store: the same text, encoded once without the read-back.
        assert times_are_finite(snapshot)
        assert vouched(table.code, snapshot) == SnapshotText(text, 1, table.version)
    assert steps > 3000  # many games, many states each


def test_the_golden_samples_show_every_part_of_a_game_and_fit_the_schema() -> None:
    shown: set[str] = set()
    for step, text in sampled(SNAPSHOTS, "snapshots", snapshot_games()):
        shown |= features(step.table, step.now)
        check_snapshot(json.loads(text))
    assert shown >= SAMPLED, SAMPLED - shown
    assert any(f.startswith("won:") for f in shown), "no finished game sampled"


def test_every_value_of_every_house_rule_is_played_in_a_golden_case() -> None:
    """A new trigger, choice or rule needs a case of its own in RULE_SETS (then `make
    golden`): its games are recorded, no other's."""
    missing = []
    for spec in RULES_SCHEMA:
        played = [rules.to_dict()[spec.name] for rules in RULE_SETS.values()]
        if spec.kind == "set":
            wanted = [c for c in spec.choices if not any(c in value for value in played)]
        elif spec.kind == "choice":
            wanted = [c for c in spec.choices if c not in played]
        elif spec.kind == "flag":
            wanted = [v for v in (False, True) if v not in played]
        else:  # a number: the default and another value (null too, if it may be)
            wanted = [] if any(v != spec.default for v in played) else ["not the default"]
            wanted += [None] if spec.nullable and None not in played else []
        missing += [f"{spec.name}: {value!r}" for value in wanted]
    assert not missing, f"no case in tests/app/played.py RULE_SETS plays {missing}"


def test_a_new_case_changes_no_other_games_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each game is seeded by its own name: a case put first changes no other game's steps
    nor which of them are sampled."""
    before = {name: (d, [i for i, _ in s]) for name, (d, s) in recorded(snapshot_games()).items()}
    new = Rules(triggers=frozenset({"jack", "face", "double"}), freeze_seconds=0.0)
    monkeypatch.setattr(played, "RULE_SETS", {"a new case": new, **RULE_SETS})
    after = {name: (d, [i for i, _ in s]) for name, (d, s) in recorded(snapshot_games()).items()}
    assert set(after) - set(before) == {f"a new case #{n}" for n in range(1, 8)}
    assert {name: after[name] for name in before} == before


def test_every_snapshot_restores_and_a_text_stored_earlier_restores_the_same_table() -> None:
    for table, now in played_tables(25, seed=99):
        snapshot = table.to_dict(now)
        text, _ = encode_snapshot(table.code, snapshot)
        loaded = decode_snapshot(table.code, text, 1)
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
    # Texts written by the code of the day the golden copy was made.
    for step, stored in sampled(SNAPSHOTS, "snapshots", snapshot_games()):
        loaded = decode_snapshot(step.table.code, stored, 1)
        assert loaded is not None
        live = step.table.to_dict(step.now)
        assert Table.from_dict(loaded, 0.0).to_dict(0.0) == Table.from_dict(live, 0.0).to_dict(0.0)


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
    assert text == json.dumps(snapshot, separators=(",", ":"), allow_nan=False)
    assert text.endswith(',"extra":{"pair":[1,2],"big":1180591620717411303424,"7":"int key"}}')
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
