"""The collector's schedule (app/ops/collector.py): a young collection on a clock frees the
cycles made since the last one, freezes what survives (no collection walks it again), and
a full collection frees cycles among the frozen, once it is due."""

from __future__ import annotations

import gc
import sys
import time
import weakref
from collections.abc import Iterator

import pytest

from app.ops.clock import ManualClock
from app.ops.collector import STRETCH, Collector, next_interval


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
    clock = ManualClock()
    collector = Collector(0.02, clock=clock)
    collector.start()
    try:
        assert not gc.isenabled()  # the clock collects, not allocations
        node = Node()
        gone = weakref.ref(node)
        del node
        assert gone() is not None  # no automatic collection meanwhile
        await clock.advance(0.019)
        assert gone() is not None and collector.young == 0
        await clock.advance(0.001)  # the tick
        assert gone() is None and collector.young == 1
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
    with pytest.raises(ValueError):
        Collector(0.025, stretch=0.5)


def test_the_interval_halves_after_a_long_pause_and_grows_a_quarter_after_short_ones() -> None:
    target = 0.001
    assert next_interval(0.1, 0.0012, 0.025, 0.2, target) == 0.05  # over the target
    assert next_interval(0.04, 0.005, 0.025, 0.2, target) == 0.025  # never below the shortest
    assert next_interval(0.1, 0.0004, 0.025, 0.2, target) == 0.125  # under half of it
    assert next_interval(0.18, 0.0001, 0.025, 0.2, target) == 0.2  # never past the longest
    assert next_interval(0.1, 0.0007, 0.025, 0.2, target) == 0.1  # in between: kept
    assert next_interval(0.1, target, 0.025, 0.2, target) == 0.1
    assert next_interval(0.1, target / 2, 0.025, 0.2, target) == 0.1


class CPUClock:
    """A thread CPU clock whose every collection takes the next of `pauses`."""

    def __init__(self, pauses: list[float]) -> None:
        self.pauses, self.now, self.calls = pauses, 0.0, 0

    def __call__(self) -> float:
        if self.calls % 2:  # the end of a collection
            self.now += self.pauses.pop(0)
        self.calls += 1
        return self.now


async def test_the_interval_follows_what_each_young_collection_costs() -> None:
    clock = CPUClock([0.0001] * 20 + [0.003, 0.003, 0.0007])
    collector = Collector(0.025, pause_target=0.001, cpu_clock=clock)
    assert collector.interval == 0.025 and collector.longest == 0.025 * STRETCH
    collector.start()
    try:
        seen = []
        for _ in range(20):  # cheap collections: a quarter longer each, up to the longest
            collector.collect()
            seen.append(collector.interval)
        assert seen[0] == pytest.approx(0.025 * 1.25)
        assert seen == sorted(seen) and seen[-1] == pytest.approx(0.025 * STRETCH)
        collector.collect()  # over the target: halved at once
        assert collector.interval == pytest.approx(0.025 * STRETCH / 2)
        collector.collect()
        assert collector.interval == pytest.approx(0.025 * STRETCH / 4)
        collector.collect()  # between half the target and the target: kept
        assert collector.interval == pytest.approx(0.025 * STRETCH / 4)
        assert clock.pauses == [] and collector.young == 23
    finally:
        collector.stop()


async def test_the_next_tick_comes_at_the_interval_the_collection_left() -> None:
    clock = ManualClock()
    collector = Collector(0.02, cpu_clock=CPUClock([0.0001] * 3), clock=clock)
    collector.start()
    try:
        assert collector._timer is not None
        assert collector._timer.when() - clock.now() == pytest.approx(0.02)
        await clock.advance(0.02)  # a cheap collection: the next one a quarter later
        assert collector.young == 1
        assert collector._timer.when() - clock.now() == pytest.approx(0.025)
    finally:
        collector.stop()


def test_a_young_collection_measures_the_collectors_own_cpu_time_by_default() -> None:
    assert Collector(0.025)._cpu_clock is time.thread_time  # not a wall clock: a shared core


async def test_the_heap_is_looked_at_about_once_a_second_not_every_tick() -> None:
    clock = ManualClock()
    collector = Collector(3600, full_seconds=0, full_growth=0, longest_seconds=0, clock=clock)
    collector.start()
    try:
        collector.collect()  # due, but the first look is a second after the start
        await clock.advance(0.99)
        collector.collect()
        assert collector.fulls == 0
        await clock.advance(0.01)
        collector.collect()
        assert collector.fulls == 1
        await clock.advance(0.99)
        collector.collect()  # the next look is a second later
        assert collector.fulls == 1
        await clock.advance(0.01)
        collector.collect()
        assert collector.fulls == 2
    finally:
        collector.stop()
