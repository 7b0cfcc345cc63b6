"""Room timers: a job runs under the room's lock, and a replaced job never runs late.

Time is a ManualClock the tests turn; one test runs on the real clock, under uvloop, for
what only a real loop does (fire a timer early).
"""

import asyncio
import contextlib
import logging
from collections.abc import Iterator

import pytest

from app.ops.clock import Clock, ManualClock
from app.ops.metrics import Metrics
from app.ops.timers import LOCK_WATCH_SECONDS, LockWatch, Timers, WatchedLock


@contextlib.contextmanager
def logged() -> Iterator[list[tuple[str, str | None]]]:
    """What the app logs meanwhile: (event, room) for each line."""
    from app.ops.logs import logger

    seen: list[tuple[str, str | None]] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append((record.getMessage(), getattr(record, "fields", {}).get("room")))

    handler = Catch()
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def held_long(seen: list[tuple[str, str | None]]) -> list[str | None]:
    """The rooms told as holding their lock too long, in order."""
    return [room for event, room in seen if event == "room_lock_held_long"]


def watched(room: str, clock: Clock, metrics: Metrics, limit: float = 1.0) -> WatchedLock:
    return WatchedLock(room, metrics, LockWatch(clock), limit=limit)


async def test_a_job_replaced_while_waiting_for_the_lock_does_not_run() -> None:
    clock, lock = ManualClock(), asyncio.Lock()
    timers = Timers(lock, clock)
    ran: list[str] = []

    async def job(name: str, now: float) -> None:
        ran.append(name)

    async with lock:  # the room is busy when the first job fires
        timers.at("autopilot", clock.now() + 1, lambda now: job("stale", now))
        await clock.advance(1)  # it fires and queues for the lock
        timers.at("autopilot", clock.now(), lambda now: job("fresh", now))
    await clock.advance(1)
    assert ran == ["fresh"]


async def test_a_cancelled_job_that_already_fired_does_not_run() -> None:
    clock, lock = ManualClock(), asyncio.Lock()
    timers = Timers(lock, clock)
    ran: list[float] = []

    async def job(now: float) -> None:
        ran.append(now)

    async with lock:
        timers.at("tick", clock.now() + 1, job)
        await clock.advance(1)
        timers.cancel("tick")
    await clock.advance(1)
    assert ran == []


async def test_a_job_is_told_when_it_fired_and_runs_holding_the_lock() -> None:
    clock, lock = ManualClock(), asyncio.Lock()
    timers = Timers(lock, clock)
    seen: list[tuple[float, bool]] = []

    async def job(now: float) -> None:
        seen.append((now, lock.locked()))

    due = clock.now() + 2.5
    timers.at("expiry", due, job)
    await clock.advance(2.4)
    assert seen == []
    await clock.advance(10)
    assert seen == [(due, True)]


@pytest.mark.realtime
async def test_a_job_never_runs_before_its_time() -> None:
    """uvloop (the tests' loop, as production's) fires call_later up to ~1 ms early; a job
    re-checking "has the time come?" then did nothing, for good (the host never handed
    over). Many short timers at odd fractions of a millisecond: none may run early."""
    assert "uvloop" in type(asyncio.get_running_loop()).__module__
    clock = Clock()
    timers = Timers(asyncio.Lock(), clock)
    early: list[float] = []
    done = asyncio.Event()
    count = 300

    async def job(due: float, now: float) -> None:
        if now < due or clock.now() < due:
            early.append(due - now)
        if len(ran) == count - 1:
            done.set()
        ran.append(now)

    ran: list[float] = []
    for i in range(count):
        due = clock.now() + 0.0005 + (i % 37) * 0.00031
        timers.at(f"t{i}", due, lambda now, due=due: job(due, now))
    await asyncio.wait_for(done.wait(), 20)
    assert early == []


async def test_a_lock_held_too_long_is_logged_and_measured() -> None:
    clock, metrics = ManualClock(), Metrics()
    lock = watched("ROOM42", clock, metrics, limit=0.5)
    with logged() as seen:
        async with lock:
            await clock.advance(0.4)
        assert not held_long(seen)
        async with lock:
            await clock.advance(0.55)
            assert held_long(seen) == ["ROOM42"]  # told while still held
    assert metrics.longest_hold == pytest.approx(0.55)
    assert b"slapjack_room_lock_held_max_seconds" in metrics.render()


async def test_a_job_moved_later_runs_at_the_later_time_and_one_moved_sooner_sooner() -> None:
    """A timer moved later keeps its loop timer, wakes at the first time and sleeps the
    rest: the job still runs once, never before its latest time, with the latest job."""
    clock = ManualClock()
    timers = Timers(asyncio.Lock(), clock)
    ran: list[tuple[str, float, float]] = []

    async def job(label: str, due: float, now: float) -> None:
        ran.append((label, due, now))

    start = clock.now()
    for i, delay in enumerate((2, 5, 8)):  # later and later: one loop timer
        due = start + delay
        timers.at("autopilot", due, lambda now, i=i, due=due: job(f"later{i}", due, now))
    assert clock.next_due() == start + 2
    await clock.advance(4)
    assert ran == [] and timers.pending("autopilot")  # woke at 2 and slept on
    assert clock.next_due() == start + 8
    await clock.advance(8)
    assert ran == [("later2", start + 8, start + 8)]
    assert not timers.pending("autopilot")

    ran.clear()
    start = clock.now()
    timers.at("tick", start + 20, lambda now: job("first", start + 20, now))
    timers.at("tick", start + 2, lambda now: job("sooner", start + 2, now))
    await clock.advance(10)
    assert ran == [("sooner", start + 2, start + 2)]
    await clock.advance(15)
    assert len(ran) == 1  # the replaced time never runs


async def test_a_job_moved_later_and_then_cancelled_never_runs() -> None:
    clock = ManualClock()
    timers = Timers(asyncio.Lock(), clock)
    ran: list[float] = []

    async def job(now: float) -> None:
        ran.append(now)

    now = clock.now()
    timers.at("host", now + 1, job)
    timers.at("host", now + 5, job)
    await clock.advance(2)  # woke, slept on
    timers.cancel("host")
    await clock.advance(6)
    assert ran == [] and not timers.pending("host")


async def test_each_long_hold_of_a_lock_is_told_once_and_a_short_one_never() -> None:
    clock, metrics = ManualClock(), Metrics()
    watch = LockWatch(clock)
    slow = WatchedLock("SLOW42", metrics, watch, limit=0.05)
    quick = WatchedLock("QUICK4", metrics, watch)
    with logged() as seen:
        for _ in range(2):
            async with slow, quick:
                await clock.advance(0.3)  # three looks at the held locks
        await clock.advance(0.15)  # a look with nothing held: the watch stops
    assert held_long(seen) == ["SLOW42"] * 2
    assert metrics.lock_held_long._value.get() == 2
    assert not watch.armed and clock.next_due() is None


async def test_a_long_hold_that_ends_between_two_looks_is_told_at_its_release() -> None:
    clock, metrics = ManualClock(), Metrics()
    lock = watched("BRIEF4", clock, metrics, limit=LOCK_WATCH_SECONDS * 0.2)
    with logged() as seen:
        async with lock:  # past the limit, released before the watch first looks
            await clock.advance(LOCK_WATCH_SECONDS * 0.5)
        assert held_long(seen) == ["BRIEF4"]
        await clock.advance(LOCK_WATCH_SECONDS * 1.5)  # the watch's look: nothing held
    assert seen == [("room_lock_held_long", "BRIEF4")]
    assert metrics.lock_held_long._value.get() == 1


async def test_a_free_lock_is_taken_at_once_and_a_busy_one_keeps_its_line() -> None:
    """`take` is `acquire` without a wait, for a free lock only: never past a holder, and
    never past anyone already waiting (asyncio.Lock's order, whose state it reads)."""
    clock, metrics = ManualClock(), Metrics()
    lock = watched("TAKE42", clock, metrics, limit=0.05)
    with logged() as seen:
        assert lock.acquire_now() and lock.locked()
        assert not lock.acquire_now()  # held
        order: list[str] = []

        async def waiter(name: str) -> None:
            async with lock:
                order.append(name)

        first = asyncio.create_task(waiter("first"))
        await asyncio.sleep(0)  # it waits in the lock's line
        await clock.advance(0.06)  # past the limit: a hold taken by `take` is watched too
        lock.release()  # the lock passes to `first`, which has not run yet
        assert not lock.acquire_now()  # nobody jumps the line between the release and its turn
        second = asyncio.create_task(waiter("second"))
        await asyncio.gather(first, second)
        assert order == ["first", "second"]
        assert not lock.locked() and lock.acquire_now()
        lock.release()
    assert held_long(seen) == ["TAKE42"]
    assert metrics.longest_hold == pytest.approx(0.06)
