"""Times the saving of the app it runs in: how many tables each beat writes, and when each
beat's write starts and lands, against the beat's own time (app/stores/saver.py).

Installed by bench/serve.py, outside app/: the app itself is not changed for the
benchmark. What a kill -9 can lose at a load is `SLAPJACK_SAVE_SECONDS` plus how late a
beat's write lands, so the load generator prints that for each step (bench/gcwatch.py
carries the report, on the same SIGUSR1 as the collector's pauses).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.stores import saver


class Beats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.tables = 0  # rooms on the beats whose writes landed (left ones included)
        self.started: list[float] = []  # seconds from each beat's time to its write's start
        self.landed: list[float] = []  # and to its landing

    def report(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "started_s": [round(t, 6) for t in self.started],
            "landed_s": [round(t, 6) for t in self.landed],
        }


def install() -> Callable[[], dict[str, Any]]:
    """Wraps the Saver's beat writes; returns what the beats did since it was last called
    (and starts counting again)."""
    beats = Beats()
    write = saver._write

    async def timed(beat: Any, savers: list[Any]) -> None:
        *_, spacing, index = beat.key  # (clock, loop, the beats' spacing, which beat)
        due = index * spacing
        began = time.monotonic()
        try:
            await write(beat, savers)
        finally:
            beats.tables += len(savers)
            beats.started.append(began - due)
            beats.landed.append(time.monotonic() - due)

    saver._write = timed  # `_Beat._come` looks it up when the beat comes

    def report() -> dict[str, Any]:
        done = beats.report()
        beats.reset()
        return done

    return report
