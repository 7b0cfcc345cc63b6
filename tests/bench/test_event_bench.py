"""The event benchmark's run against the app served in this process: every phone goes from
the event to its table and the heats' flips are measured, so a protocol change cannot
silently break `python -m bench.tournament`."""

from __future__ import annotations

from argparse import Namespace
from types import SimpleNamespace

from app_harness import serving

from bench.tournament import EventRun


async def test_every_phone_is_sent_to_its_table_and_the_heats_are_measured() -> None:
    async with serving() as server:
        args = Namespace(players=8, size=4, warmup=0.5, seconds=3.0)
        target = SimpleNamespace(port=server.port, cpu_seconds=lambda: 0.0)
        figures = await EventRun(args, target).play()
    assert figures["tables"] == 2
    assert 0 < figures["told_last_ms"] <= figures["shown_last_ms"]
    assert figures["flips"] > 0 and figures["fanout"][2] >= figures["fanout"][0]
