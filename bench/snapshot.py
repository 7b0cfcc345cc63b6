"""What one save of a durable table costs: the snapshot, its JSON, and the Saver's bookkeeping.

    .venv/bin/python -m bench.snapshot                 # or: --repeats 30 --number 2000

A table of four is dealt and played to mid-game (flips, slaps won and lost, a false slap,
a photo finish with late slaps), then each step of a save is timed on it many times over:

- `Table.to_dict(now)`: the snapshot (app/tables/notation.py, the engine's `Game.to_dict` inside),
- `encode_snapshot`: its JSON, checked by reading it back, as a store writes any snapshot
  (app/stores/__init__.py),
- `times_are_finite` + `vouched`: its JSON as a room hands it to its store (its times seen
  to be finite, then encoded once, without the read-back),
- a save: the snapshot, the check and `vouched`, what the Saver pays per write before the
  store's own I/O (`Room.snapshot_now`), and the same with `encode_snapshot` for comparison,
- `decode_snapshot` + `Table.from_dict`: a restore, for comparison (paid once per start),
- a journal's save (what most of a busy room's saves are: its whole snapshot's text kept,
  two new moves encoded, the text put together) and its
  restore (the whole snapshot, then the moves played again),
- `Saver.changed()` while a write is pending: what every change of a busy table pays,
- the Saver's own cost per write (its task, timer and wake-ups; a store that does nothing),
  with 200 rooms changing on every beat, on uvloop as `python -m app` runs.

It prints microseconds per call: the best and the median of `--repeats` runs of `--number`
calls each (the best is the least disturbed by other processes on a shared machine). A script
that prints figures, never a test: compare runs on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import uvloop

from app.stores import NEWEST_SCHEMA, Savable, decode_snapshot, encode_snapshot, vouched
from app.stores.saver import Saver
from app.tables.notation import encode_move, journal, times_are_finite
from app.tables.table import Table
from engine import Rules

PLAYERS = 4
ACTIONS = 40  # into the game: every seat holds cards, three piles won, a false slap
SEED = 1


def mid_game_table(players: int = PLAYERS, actions: int = ACTIONS, seed: int = SEED) -> Table:
    """A table of `players` people with a game `actions` moves in (the same every run)."""
    table = Table("BENCH1", Rules())
    host = ""
    for i in range(players):
        joined = table.join(f"P{i}", None, 0.0, new_id=f"p{i}", new_token=f"t{i}")
        host = host or joined.person.id
    table.start(host, 0.0, seed=seed)
    game = table.game
    assert game is not None
    rng = random.Random(seed)
    now = 1.0
    for _ in range(actions):
        if game.over:
            break
        now += 2.0  # past any freeze or collect pause
        live = [s for s in range(players) if not game.is_out(s)]
        if game.slap_open:
            winner, *others = rng.sample(live, len(live))
            aimed = game.pile_id
            table.play(winner, "slap", aimed, now)
            for late in others[:2]:  # two losers a photo finish behind, aimed at the same pile
                now += rng.uniform(0.02, 0.3)
                if not game.over and not game.is_out(late):
                    table.play(late, "slap", aimed, now)
        elif rng.random() < 0.03:
            table.play(rng.choice(live), "slap", game.pile_id, now)  # a false slap
        elif game.next_to_play is not None:
            table.play(game.next_to_play, "flip", None, now)
    return table


def per_call_us(call: Callable[[], Any], repeats: int, number: int) -> tuple[float, float]:
    """The best and the median of `repeats` runs, in µs per call."""
    runs = []
    for _ in range(repeats):
        began = time.perf_counter_ns()
        for _ in range(number):
            call()
        runs.append((time.perf_counter_ns() - began) / number / 1000)
    return min(runs), statistics.median(runs)


class _NoStore:
    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        return None

    async def delete(self, code: str) -> None:
        return None


async def _changed_us(table: Table, repeats: int, number: int) -> tuple[float, float]:
    """`Saver.changed()` per change while a write is pending (a long delay keeps it so)."""
    saver = Saver(_NoStore(), table.code, lambda: table.to_dict(0.0), delay=3600.0)
    saver.changed()
    await asyncio.sleep(0)  # the writer is waiting for its beat
    figures = per_call_us(saver.changed, repeats, number)
    await saver.close()
    return figures


async def _write_cycle_us(rooms: int, beats: int, delay: float) -> float:
    """The Saver's own cost per write (its task, timer and wake-ups, no snapshot, a store
    that does nothing): `rooms` savers each changed once per beat, for `beats` beats. CPU
    time (process_time), so the waits between beats do not count."""
    savers = [Saver(_NoStore(), f"R{i}", dict, delay=delay) for i in range(rooms)]
    began = time.process_time()
    for _ in range(beats):
        for saver in savers:
            saver.changed()
        while any(saver.pending for saver in savers):
            await asyncio.sleep(delay / 4)
    spent = time.process_time() - began
    writes = sum(saver.saves for saver in savers)
    for saver in savers:
        await saver.close()
    return spent / writes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--number", type=int, default=1000)
    args = parser.parse_args()

    table = mid_game_table()
    game = table.game
    assert game is not None
    now = game.now + 0.25
    snapshot = table.to_dict(now)
    text, _schema = encode_snapshot(table.code, snapshot)
    print(
        f"table of {PLAYERS}, {ACTIONS} actions in: hands {list(game.hand_sizes)}, "
        f"pile {len(game.pile)}, snapshot {len(text)} bytes of JSON"
    )

    def save() -> None:  # Room.snapshot_now's work
        taken = table.to_dict(now)
        if times_are_finite(taken):
            vouched(table.code, taken)

    def checked_save() -> None:
        encode_snapshot(table.code, table.to_dict(now))

    def restore() -> None:
        stored = decode_snapshot(table.code, text, 1)
        assert stored is not None
        Table.from_dict(stored, now)

    # A journal (app/tables/notation.py `journal`): the whole snapshot taken some moves back,
    # and the moves since, about half of JOURNAL_MOVES (the table above is the one 12 actions
    # on).
    before = mid_game_table(actions=ACTIONS - 12)
    assert before.game is not None
    clock = before.game.now  # the game's clock in the whole snapshot
    base_at = clock + 0.25
    base_text = vouched(before.code, before.to_dict(base_at)).text
    moves = table.moves[len(before.moves) :]
    encoded = [encode_move(move, clock) or "" for move in moves]
    version = before.version + len(moves)
    journal_text = journal(table.code, version, base_text, encoded, base_at, now)
    replayed = Table.from_dict(json.loads(journal_text), now).to_dict(now)
    assert replayed["game"]["hands"] == snapshot["game"]["hands"], "the journal is the table"
    print(f"a journal of {len(moves)} moves: {len(journal_text)} bytes of JSON")

    def journal_save() -> None:  # a journal's write: two new moves encoded, and the text
        fresh = [encode_move(move, clock) or "" for move in moves[-2:]]
        journal(table.code, version, base_text, encoded[:-2] + fresh, base_at, now)

    def journal_restore() -> None:
        stored = decode_snapshot(table.code, journal_text, NEWEST_SCHEMA)
        assert stored is not None
        Table.from_dict(stored, now)

    steps: list[tuple[str, Callable[[], Any]]] = [
        ("Table.to_dict", lambda: table.to_dict(now)),
        ("encode_snapshot", lambda: encode_snapshot(table.code, snapshot)),
        (
            "times_are_finite + vouched",
            lambda: times_are_finite(snapshot) and vouched(table.code, snapshot),
        ),
        ("a save (snapshot, vouched)", save),
        ("snapshot + encode_snapshot", checked_save),
        ("decode + Table.from_dict", restore),
        ("a journal save (2 new moves)", journal_save),
        ("a journal's restore", journal_restore),
    ]
    print(f"µs per call, best / median of {args.repeats} runs of {args.number}:")
    for name, call in steps:
        best, median = per_call_us(call, args.repeats, args.number)
        print(f"  {name:<28} {best:8.1f} / {median:8.1f}")
    best, median = uvloop.run(_changed_us(table, args.repeats, args.number * 10))
    print(f"  {'Saver.changed (pending)':<28} {best:8.2f} / {median:8.2f}")
    cycles = [uvloop.run(_write_cycle_us(200, 10, 0.02)) for _ in range(args.repeats // 4 or 1)]
    best, median = min(cycles), statistics.median(cycles)
    print(f"  {'Saver write, no-op store':<28} {best:8.1f} / {median:8.1f}")


if __name__ == "__main__":
    main()
