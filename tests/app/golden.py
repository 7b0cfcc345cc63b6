"""Golden copies of what a table writes down: its snapshot (what a store keeps) and its view
(what a person is sent), at every step of games played under a fixed list of house rules
(`played.py` RULE_SETS), each game named by its case and number and seeded by its name.

Each fixture in tests/fixtures/ holds, game by game, a short SHA-256 of every step's exact
text (the snapshot as `encode_snapshot` writes it, the view as `to_json` writes it), and the
whole text of a sample of steps chosen, case by case, to cover what a game goes through (the
lobby, flips, photo finishes with late slaps, freezes, burns, lapses, collect pauses, time
limits, people gone, every way to win), so a difference is found at its step and can be read.
A new case adds its games to the fixtures and changes no other game's entries.

Written again after a deliberate change to a snapshot or a view, or a new case (review
`git diff tests/fixtures`, then commit it):

    make golden          # PYTHONPATH=.:tests/app .venv/bin/python -m golden
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from played import golden_games

from app.stores import encode_snapshot
from app.tables.events import EventDict
from app.tables.table import Table
from app.tables.views import _seen_from
from app.wire.encoded import to_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots.json"
VIEWS = FIXTURES / "views.json"
EACH_FEATURE = 1  # samples kept per feature and case: enough to read, few enough to review
DIGESTS_A_LINE = 8
# What a golden failure tells to do.
REGENERATE = (
    "if the change is meant, run `make golden` and review `git diff tests/fixtures` before"
    " committing it (docs/development.md#golden-copies)"
)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Step:
    """One step of a game: the table, the clock, and the exact text to compare."""

    table: Table
    now: float
    text: str
    events: list[EventDict] = field(default_factory=list)


Games = Iterator[tuple[str, Iterator[Step]]]  # each game's name and steps
Recorded = tuple[list[str], list[tuple[int, Step]]]  # a game's digests and samples


# ---- the sequences: each a game at a time, by name ----------------------------------------


def snapshot_games() -> Games:
    """7 games of each case: each step's snapshot as a store is handed it."""
    for name, steps in golden_games("snapshots", 7):
        yield name, (Step(t, now, encode_snapshot(t.code, t.to_dict(now))[0]) for t, now in steps)


def seat_games() -> Games:
    """5 games of each case, with measured round trips and wins from earlier games (a person,
    a bot, someone gone): each step's view, its seats and match score the point."""
    for name, steps in golden_games("seats", 5):
        yield name, _seat_steps(steps, random.Random(f"seats' lag: {name}"))


def _seat_steps(steps: Iterator[tuple[Table, float]], rng: random.Random) -> Iterator[Step]:
    for table, now in steps:
        for person in list(table.people.values())[:2]:  # a measured round trip or two
            if rng.random() < 0.2:
                ping = table.lag.ping(person.id, now)
                table.lag.pong(person.id, ping, now + rng.uniform(0.001, 0.4))
        if rng.random() < 0.05:  # a win from an earlier game: a person, a bot, one gone
            table.wins[rng.choice([*table.people, *table.bots, "gone"])] = rng.randint(1, 3)
        yield Step(table, now, to_json(_seen_from(table, [])))


def event_games() -> Games:
    """4 games of each case, the lag-fair rule switched now and then and each change
    carrying events: each step's whole view, rules and stats included."""
    for name, steps in golden_games("events", 4):
        yield name, _event_steps(steps, random.Random(f"events' lag-fair: {name}"))


def _event_steps(steps: Iterator[tuple[Table, float]], rng: random.Random) -> Iterator[Step]:
    for table, now in steps:
        if rng.random() < 0.02:
            table.lag_fair = not table.lag_fair  # the room's own rule, shown with the rules
        events: list[EventDict] = [{"kind": "flip", "version": table.version}] * rng.randint(0, 2)
        yield Step(table, now, to_json(_seen_from(table, events)), events)


SEQUENCES: dict[str, Callable[[], Games]] = {"seats": seat_games, "events": event_games}


def case_of(game: str) -> str:
    """The case a game was played under: "defaults #3" -> "defaults"."""
    return game.rpartition(" #")[0]


# ---- what a step shows, for choosing samples ----------------------------------------------


def features(table: Table, now: float) -> set[str]:
    """What is going on at this step, in words: a sample is kept for each, EACH_FEATURE times."""
    shown = {f"phase:{table.phase}", f"penalty:{table.rules.penalty}"}
    shown.add(f"empty_deck:{table.rules.empty_deck}")
    shown |= {"two decks"} if table.rules.decks == 2 else set()
    shown |= {"someone gone"} if any(not p.connected for p in table.people.values()) else set()
    shown |= {"lag measured"} if any(table.lag.estimate(p) for p in table.people) else set()
    shown |= {"wins"} if table.wins else set()
    shown |= {"lag_fair"} if table.lag_fair else set()
    game = table.game
    if game is None:
        return shown
    data = game.to_dict()
    race = data["race"]
    shown |= {"photo finish"} if race is not None else set()
    shown |= {"late slaps"} if race is not None and race["behind"] else set()
    shown |= {"frozen"} if any(when > game.now for when in data["frozen_until"]) else set()
    shown |= {"burned"} if data["burned"] else set()
    shown |= {"lapsed"} if data["trigger_lapsed"] else set()
    shown |= {"collecting"} if data["collect_until"] > game.now else set()
    shown |= {"time limit"} if data["deadline"] is not None else set()
    shown |= {"someone out"} if any(data["out"]) else set()
    shown |= {f"won:{data['win_reason']}"} if data["winner"] is not None else set()
    return shown


def chosen(steps: Iterator[Step], kept: Counter[str]) -> Recorded:
    """A game's digests, every step's, and its samples: each step showing something its case
    (whose samples so far `kept` counts) has shown fewer than EACH_FEATURE times."""
    digests: list[str] = []
    samples: list[tuple[int, Step]] = []
    for index, step in enumerate(steps):
        digests.append(digest(step.text))
        shown = features(step.table, step.now)
        if any(kept[f] < EACH_FEATURE for f in shown):
            kept.update(shown)
            samples.append((index, step))
    return digests, samples


def recorded(games: Games) -> dict[str, Recorded]:
    """Each game's digests and samples, the samples chosen case by case: a case's samples
    depend on its own games alone."""
    kept: dict[str, Counter[str]] = {}
    return {name: chosen(steps, kept.setdefault(case_of(name), Counter())) for name, steps in games}


# ---- the fixtures --------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _written(about: str, sequences: dict[str, dict[str, Recorded]]) -> str:
    """One fixture: JSON with a line per game's name, its digests eight a line, and each
    sample's text on a line of its own, verbatim, so a change reads as a diff of the games
    and steps that changed."""
    lines = ["{", f'"about": {json.dumps(about)},', '"sequences": {']
    for n, (sequence, games) in enumerate(sequences.items()):
        lines.append(f"{json.dumps(sequence)}: {{")
        for g, (name, (digests, samples)) in enumerate(games.items()):
            comma = "," if g else ""  # before, not after: a game added changes no line
            lines.append(f'{comma}{json.dumps(name)}: {{"digests": [')
            rows = [digests[i : i + DIGESTS_A_LINE] for i in range(0, len(digests), DIGESTS_A_LINE)]
            lines += [
                json.dumps(row)[1:-1] + ("," if r < len(rows) - 1 else "")
                for r, row in enumerate(rows)
            ]
            lines.append('], "samples": [')
            for i, (index, step) in enumerate(samples):
                comma = "," if i < len(samples) - 1 else ""
                lines.append(
                    f'{{"step": {index}, "now": {step.now!r}, "text": {step.text}}}{comma}'
                )
            lines.append("]}")
        lines.append("}" + ("," if n < len(sequences) - 1 else ""))
    lines += ["}", "}", ""]
    return "\n".join(lines)


Samples = dict[str, dict[int, tuple[float, str]]]


def samples(path: Path) -> dict[str, Samples]:
    """A fixture's samples by sequence, game and step: (now, the exact text, read off its
    line)."""
    found: dict[str, Samples] = {}
    sequence: Samples = {}
    game: dict[int, tuple[float, str]] = {}
    for line in path.read_text().splitlines():
        if line.endswith('{"digests": ['):
            game = sequence.setdefault(json.loads(line.lstrip(",").partition(": {")[0]), {})
        elif line.endswith(": {"):
            sequence = found.setdefault(json.loads(line.removesuffix(": {")), {})
        elif line.startswith('{"step": '):
            head, _, text = line.removesuffix(",").removesuffix("}").partition(', "text": ')
            place = json.loads(head + "}")
            game[place["step"]] = (place["now"], text)
    return found


def sampled(path: Path, sequence: str, games: Games) -> Iterator[tuple[Step, str]]:
    """Each step of `games` that the fixture samples, with the text it keeps."""
    kept = samples(path)[sequence]
    for name, steps in games:
        texts = kept.get(name, {})
        for index, step in enumerate(steps):
            if index in texts:
                yield step, texts[index][1]


def matching(path: Path, sequence: str, games: Games) -> Iterator[Step]:
    """Each step of every game of `games`, once its text is found to be its golden copy's
    (the digest of every step; the whole text of a sampled one); AssertionError at the first
    that is not, saying what to do."""
    golden: dict[str, dict[str, Any]] = load(path)["sequences"][sequence]
    texts = samples(path)[sequence]
    played = []
    for name, steps in games:
        played.append(name)
        assert name in golden, f"{path.name} {sequence}: no golden copy of {name!r}; {REGENERATE}"
        digests: list[str] = golden[name]["digests"]
        count = 0
        for index, step in enumerate(steps):
            where = f"{path.name} {sequence} {name!r} step {index}"
            if index in texts[name]:
                now, text = texts[name][index]
                assert step.now == now, (
                    f"{where}: the game played differs (now {step.now} != {now}); {REGENERATE}"
                )
                assert step.text == text, (
                    f"{where}: {first_difference(json.loads(step.text), json.loads(text))};"
                    f" {REGENERATE}"
                )
            assert index < len(digests), f"{where}: more steps than its golden copy; {REGENERATE}"
            assert digest(step.text) == digests[index], (
                f"{where} differs from its golden copy (a step not sampled); {REGENERATE}"
            )
            count += 1
            yield step
        assert count == len(digests), (
            f"{path.name} {sequence} {name!r}: {count} steps, golden {len(digests)}; {REGENERATE}"
        )
    gone = sorted(set(golden) - set(played))
    assert not gone, (
        f"{path.name} {sequence}: golden copies of games not played {gone}; {REGENERATE}"
    )


def first_difference(now: Any, then: Any, where: str = "") -> str:
    """Where two JSON values first differ, and how, for a readable failure."""
    if isinstance(now, dict) and isinstance(then, dict):
        if list(now) != list(then):
            return f"{where or 'top'}: keys {list(now)} != golden {list(then)}"
        for key in now:
            if now[key] != then[key] or type(now[key]) is not type(then[key]):
                return first_difference(now[key], then[key], f"{where}.{key}")
    if isinstance(now, list) and isinstance(then, list) and len(now) == len(then):
        for i, (a, b) in enumerate(zip(now, then, strict=True)):
            if a != b or type(a) is not type(b):
                return first_difference(a, b, f"{where}[{i}]")
    return f"{where or 'top'}: {now!r} != golden {then!r}"


def write() -> None:
    FIXTURES.mkdir(exist_ok=True)
    SNAPSHOTS.write_text(
        _written(
            "Table snapshots as encode_snapshot writes them (tests/app/golden.py).",
            {"snapshots": recorded(snapshot_games())},
        )
    )
    views = {name: recorded(games()) for name, games in SEQUENCES.items()}
    VIEWS.write_text(_written("Views as to_json writes them (tests/app/golden.py).", views))
    for path in (SNAPSHOTS, VIEWS):
        print(f"{path.relative_to(Path.cwd())}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    write()
