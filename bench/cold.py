"""What a change's work costs when the caches are cold, as they are in a busy server.

    .venv/bin/python -m bench.cold                   # or: --tables 400 --calls 4000

Inside the running server at 400 tables (1,600 connections), the engine's `table_view`
took about 29 µs a call and `Table.to_dict` about 31 µs (timed with `time.thread_time`
around each call), where a loop of the same calls takes 7 and 9 µs. Between two changes of
one table the server visits hundreds of other tables and connections, so each change finds
its own data, and much of the interpreter's, gone from the CPU's caches.

This replays that on mid-game tables of four (bench/snapshot.py's): one call at a time,
each on the next of `--tables` tables, after writing one byte in every 64 of a buffer of
0 KB (caches warm), 1 MB, 4 MB (about the L2 cache of this machine's cores) and 32 MB (its
L3). It prints µs per call, the buffer's own writing not counted (the median of `--repeats`
runs). A script that prints figures, never a test: compare runs on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from app.tables.table import Table
from app.tables.views import Views
from bench.snapshot import mid_game_table
from engine.views import table_view

SIZES_KB = (0, 1024, 4096, 32768)
LINE = 64  # bytes: a cache line


def per_call_us(
    calls: list[Callable[[], Any]], buffer: bytearray, count: int, repeats: int
) -> float:
    """Median over `repeats` of the µs one call takes after `buffer` was walked."""
    lines = len(buffer) // LINE
    ones = b"\x01" * lines
    clock = time.thread_time
    medians = []
    for _ in range(repeats):
        took = 0.0
        for i in range(count):
            if lines:
                buffer[::LINE] = ones  # one write in every cache line of the buffer
            began = clock()
            calls[i % len(calls)]()
            took += clock() - began
        medians.append(took / count * 1e6)
    return statistics.median(medians)


def shared_view(table: Table) -> Any:
    return Views(table).seen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=400)
    parser.add_argument("--calls", type=int, default=2000, help="calls per run")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tables = [mid_game_table(seed=seed) for seed in range(args.tables)]
    work: dict[str, list[Callable[[], Any]]] = {
        "engine table_view": [partial(table_view, t.game) for t in tables if t.game is not None],
        "a change's view (shared part)": [partial(shared_view, t) for t in tables],
        "Table.to_dict": [partial(t.to_dict, 0.0) for t in tables],
    }
    print(f"{args.tables} tables, one call at a time; µs per call (median of {args.repeats})")
    print(f"{'':32}" + "".join(f"{f'{kb // 1024} MB' if kb else 'warm':>10}" for kb in SIZES_KB))
    for name, calls in work.items():
        cells = [
            per_call_us(calls, bytearray(kb * 1024), args.calls, args.repeats) for kb in SIZES_KB
        ]
        print(f"{name:32}" + "".join(f"{us:>10.1f}" for us in cells))


if __name__ == "__main__":
    main()
