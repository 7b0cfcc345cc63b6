"""Golden copies of what a table writes down: its snapshot (what a store keeps) and its view
(what a person is sent), at every step of many games played at random (`played.py`).

Each fixture in tests/fixtures/ holds, for every step, a short SHA-256 of the exact text
(the snapshot as `encode_snapshot` writes it, the view as `to_json` writes it), and the whole
text of a sample of steps chosen to cover what a game goes through (the lobby, flips, photo
finishes with late slaps, freezes, burns, lapses, collect pauses, time limits, people gone,
every way to win), so a difference is found at its step and can be read.

Regenerate after a deliberate change to a snapshot or a view, and read the diff:

    make golden          # PYTHONPATH=.:tests/app .venv/bin/python -m golden
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from played import played_tables

from app.stores import encode_snapshot
from app.tables.events import EventDict
from app.tables.table import Table
from app.tables.views import _seen_from
from app.wire.encoded import to_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots.json"
VIEWS = FIXTURES / "views.json"
EACH_FEATURE = 2  # samples kept per feature: enough to read, few enough to review
DIGESTS_A_LINE = 8


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Step:
    """One step of a sequence: the table, the clock, and the exact text to compare."""

    table: Table
    now: float
    text: str
    events: list[EventDict] = field(default_factory=list)


# ---- the sequences ---------------------------------------------------------------------


def snapshot_steps() -> Iterator[Step]:
    """60 games (seed 16): each step's snapshot as a store is handed it."""
    for table, now in played_tables(60, seed=16):
        text, _ = encode_snapshot(table.code, table.to_dict(now))
        yield Step(table, now, text)


def seat_steps() -> Iterator[Step]:
    """40 games (seed 21), with measured round trips and wins from earlier games (a person,
    a bot, someone gone): each step's view, its seats and match score the point."""
    rng = random.Random(7)
    for table, now in played_tables(40, seed=21):
        for person in list(table.people.values())[:2]:  # a measured round trip or two
            if rng.random() < 0.2:
                ping = table.lag.ping(person.id, now)
                table.lag.pong(person.id, ping, now + rng.uniform(0.001, 0.4))
        if rng.random() < 0.05:  # a win from an earlier game: a person, a bot, one gone
            table.wins[rng.choice([*table.people, *table.bots, "gone"])] = rng.randint(1, 3)
        yield Step(table, now, to_json(_seen_from(table, [])))


def event_steps() -> Iterator[Step]:
    """30 games (seed 8), the lag-fair rule switched now and then and each change carrying
    events: each step's whole view, rules and stats included."""
    rng = random.Random(11)
    for table, now in played_tables(30, seed=8):
        if rng.random() < 0.02:
            table.lag_fair = not table.lag_fair  # the room's own rule, shown with the rules
        events: list[EventDict] = [{"kind": "flip", "version": table.version}] * rng.randint(0, 2)
        yield Step(table, now, to_json(_seen_from(table, events)), events)


SEQUENCES = {"seats": seat_steps, "events": event_steps}


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


def chosen(steps: Iterator[Step]) -> tuple[list[str], list[tuple[int, Step]], Counter[str]]:
    """Every step's digest; the samples (a step showing something seen fewer than
    EACH_FEATURE times so far); how often each feature showed."""
    digests: list[str] = []
    samples: list[tuple[int, Step]] = []
    seen: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for index, step in enumerate(steps):
        digests.append(digest(step.text))
        shown = features(step.table, step.now)
        seen.update(shown)
        if any(kept[f] < EACH_FEATURE for f in shown):
            kept.update(shown)
            samples.append((index, step))
    return digests, samples, seen


# ---- the fixtures --------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _written(about: str, sequences: dict[str, tuple[list[str], list[tuple[int, Step]]]]) -> str:
    """One fixture: JSON with each sample's text on a line of its own, verbatim, so a
    change reads as a diff of the steps that changed."""
    lines = ["{", f'"about": {json.dumps(about)},', '"sequences": {']
    for n, (name, (digests, samples)) in enumerate(sequences.items()):
        lines.append(f'{json.dumps(name)}: {{"digests": [')
        rows = [digests[i : i + DIGESTS_A_LINE] for i in range(0, len(digests), DIGESTS_A_LINE)]
        lines += [
            json.dumps(row)[1:-1] + ("," if r < len(rows) - 1 else "") for r, row in enumerate(rows)
        ]
        lines.append('], "samples": [')
        for i, (index, step) in enumerate(samples):
            comma = "," if i < len(samples) - 1 else ""
            lines.append(f'{{"step": {index}, "now": {step.now!r}, "text": {step.text}}}{comma}')
        lines.append("]}" + ("," if n < len(sequences) - 1 else ""))
    lines += ["}", "}", ""]
    return "\n".join(lines)


def samples(path: Path) -> dict[str, dict[int, tuple[float, str]]]:
    """A fixture's samples by sequence and step: (now, the exact text, read off its line)."""
    found: dict[str, dict[int, tuple[float, str]]] = {}
    current: dict[int, tuple[float, str]] = {}
    for line in path.read_text().splitlines():
        if line.endswith('{"digests": ['):
            current = found.setdefault(json.loads(line.partition(":")[0]), {})
        elif line.startswith('{"step": '):
            head, _, text = line.removesuffix(",").removesuffix("}").partition(', "text": ')
            place = json.loads(head + "}")
            current[place["step"]] = (place["now"], text)
    return found


def matching(path: Path, sequence: str, steps: Iterator[Step]) -> Iterator[Step]:
    """Each step of `steps`, once its text is found to be its golden copy's (the digest of
    every step; the whole text of a sampled one); AssertionError at the first that is not."""
    digests: list[str] = load(path)["sequences"][sequence]["digests"]
    texts = samples(path)[sequence]
    count = 0
    for index, step in enumerate(steps):
        where = f"{path.name} {sequence} step {index}"
        if index in texts:
            now, text = texts[index]
            assert step.now == now, f"{where}: the games played differ (now {step.now} != {now})"
            assert step.text == text, (
                f"{where}: {first_difference(json.loads(step.text), json.loads(text))}"
            )
        assert index < len(digests), f"{where}: more steps than the golden copy has"
        assert digest(step.text) == digests[index], (
            f"{where} differs from its golden copy (a step not sampled: `make golden` and"
            " `git diff` show it); if the change is meant, keep the regenerated fixture"
        )
        count += 1
        yield step
    assert count == len(digests), f"{path.name} {sequence}: {count} steps, golden {len(digests)}"


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
    digests, samples, _ = chosen(snapshot_steps())
    SNAPSHOTS.write_text(
        _written(
            "Table snapshots as encode_snapshot writes them (tests/app/golden.py).",
            {"snapshots": (digests, samples)},
        )
    )
    views = {}
    for name, steps in SEQUENCES.items():
        digests, samples, _ = chosen(steps())
        views[name] = (digests, samples)
    VIEWS.write_text(_written("Views as to_json writes them (tests/app/golden.py).", views))
    for path in (SNAPSHOTS, VIEWS):
        print(f"{path.relative_to(Path.cwd())}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    write()
