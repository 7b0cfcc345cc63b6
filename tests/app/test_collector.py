"""The collector's schedule (app/collector.py): a young collection on a clock frees the
cycles made since the last one, freezes what survives (no collection walks it again), and
a full collection frees cycles among the frozen, once it is due."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from app.collector import Collector


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only a collection frees it


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


async def test_a_cycle_made_between_ticks_is_freed_by_the_next_one() -> None:
    collector = Collector(0.02)
    collector.start()
    try:
        assert not gc.isenabled()  # the clock collects, not allocations
        node = Node()
        gone = weakref.ref(node)
        del node
        assert gone() is not None  # no automatic collection meanwhile
        await asyncio.sleep(0.1)
        assert gone() is None and collector.young >= 2
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0  # handed back, the frozen too


async def test_what_survives_a_young_collection_is_frozen_until_a_full_one() -> None:
    collector = Collector(3600)  # no tick: collections by hand
    collector.start()
    try:
        frozen = gc.get_freeze_count()
        node = Node()
        gone = weakref.ref(node)
        collector.collect()
        assert gc.get_freeze_count() > frozen  # it survived: frozen, walked no more
        assert gc.get_count()[0] == 0
        del node  # now garbage, but frozen
        collector.collect()
        gc.collect()  # even a full collection of CPython's own leaves the frozen alone
        assert gone() is not None
        collector.full()
        assert gone() is None and collector.fulls == 1
    finally:
        collector.stop()


async def test_a_full_collection_waits_for_growth_and_for_its_interval() -> None:
    collector = Collector(3600, full_growth=0.25, full_seconds=60, longest_seconds=1000)
    collector.start()
    try:
        start = collector._last_full
        assert not collector.full_due(start + 61)  # the heap has not grown
        grown = [[] for _ in range(sys.getallocatedblocks() // 2)]
        assert not collector.full_due(start + 1)  # grown, but too soon
        assert collector.full_due(start + 61)
        collector.full()
        assert not collector.full_due(collector._last_full + 61)  # the new heap is the mark
        # And at the latest this (a hair past it: `last + 1000 - last` may come out a float
        # ulp short of 1000, and did once, with the monotonic clock near 8,000 s).
        assert collector.full_due(collector._last_full + 1000.001)
        del grown
    finally:
        collector.stop()


def test_an_interval_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Collector(0)
