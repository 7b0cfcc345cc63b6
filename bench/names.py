"""What checking a name costs on join (`clean_name` in app/wire/names.py: its UTS #39
skeletons against the bots' names), and what reading the table of prototypes costs at import.
Prints figures, asserts nothing.

    .venv/bin/python bench/names.py
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
import timeit
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NAMES = [
    "Ann",
    "Siti Nurhaliza",
    "Nguy\u1ec5n V\u0103n An",
    "\u0410\u0445\u043c\u0435\u0434",
    "Hard b\u043et",
]
CALLS = 20_000


def main() -> None:
    started = time.perf_counter()
    names = importlib.import_module("app.wire.names")
    loaded = time.perf_counter() - started
    print(
        f"app.wire.names: {len(names.PROTOTYPES)} prototypes (Unicode "
        f"{names.UNICODE_VERSION}), imported in {loaded * 1e3:.1f} ms"
    )
    from app.tables.values import BOT_NAMES
    from app.wire.errors import ProtocolError
    from app.wire.names import clean_name

    def check(name: str) -> None:
        with contextlib.suppress(ProtocolError):
            clean_name(name, BOT_NAMES)

    for name in NAMES:
        seconds = min(timeit.repeat(partial(check, name), number=CALLS, repeat=3)) / CALLS
        print(f"clean_name({name!r}): {seconds * 1e6:.1f} us a call")


if __name__ == "__main__":
    main()
