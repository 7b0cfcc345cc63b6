"""Room timers: a job runs under the room's lock, and a replaced job never runs late."""

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator

from app.ops.timers import Timers


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


async def test_a_job_replaced_while_waiting_for_the_lock_does_not_run() -> None:
    lock = asyncio.Lock()
    timers = Timers(lock)
    ran: list[str] = []

    async def job(name: str, now: float) -> None:
        ran.append(name)

    async with lock:  # the room is busy when the first job fires
        timers.at("autopilot", time.monotonic(), lambda now: job("stale", now))
        await asyncio.sleep(0.05)  # it fires and queues for the lock
        timers.at("autopilot", time.monotonic(), lambda now: job("fresh", now))
    await asyncio.sleep(0.1)
    assert ran == ["fresh"]


async def test_a_cancelled_job_that_already_fired_does_not_run() -> None:
    lock = asyncio.Lock()
    timers = Timers(lock)
    ran: list[float] = []

    async def job(now: float) -> None:
        ran.append(now)

    async with lock:
        timers.at("tick", time.monotonic(), job)
        await asyncio.sleep(0.05)
        timers.cancel("tick")
    await asyncio.sleep(0.05)
    assert ran == []


async def test_a_job_is_told_when_it_fired_and_runs_holding_the_lock() -> None:
    lock = asyncio.Lock()
    timers = Timers(lock)
    seen: list[tuple[float, bool]] = []

    async def job(now: float) -> None:
        seen.append((now, lock.locked()))

    before = time.monotonic()
    timers.at("expiry", before, job)
    await asyncio.sleep(0.05)
    [(fired, locked)] = seen
    assert before <= fired <= time.monotonic()
    assert locked


async def test_a_job_never_runs_before_its_time() -> None:
    """uvloop (the tests' loop, as production's) fires call_later up to ~1 ms early; a job
    re-checking "has the time come?" then did nothing, for good (the host never handed
    over). Many short timers at odd fractions of a millisecond: none may run early."""
    assert "uvloop" in type(asyncio.get_running_loop()).__module__
    timers = Timers(asyncio.Lock())
    early: list[float] = []
    done = asyncio.Event()
    count = 300

    async def job(due: float, now: float) -> None:
        if now < due or time.monotonic() < due:
            early.append(due - now)
        if len(ran) == count - 1:
            done.set()
        ran.append(now)

    ran: list[float] = []
    for i in range(count):
        due = time.monotonic() + 0.0005 + (i % 37) * 0.00031
        timers.at(f"t{i}", due, lambda now, due=due: job(due, now))
    await asyncio.wait_for(done.wait(), 20)
    assert early == []


async def test_a_lock_held_too_long_is_logged_and_measured() -> None:
    from app.ops.metrics import Metrics
    from app.ops.timers import WatchedLock

    metrics = Metrics()
    lock = WatchedLock("ROOM42", metrics, limit=0.05)
    with logged() as seen:
        async with lock:
            await asyncio.sleep(0.01)
        assert not held_long(seen)
        async with lock:
            while not held_long(seen):  # told while still held
                await asyncio.sleep(0.01)
    assert metrics.longest_hold >= 0.05
    assert b"slapjack_room_lock_held_max_seconds" in metrics.render()


async def test_a_job_moved_later_runs_at_the_later_time_and_one_moved_sooner_sooner() -> None:
    """A timer moved later keeps its loop timer, wakes at the first time and sleeps the
    rest: the job still runs once, never before its latest time, with the latest job."""
    timers = Timers(asyncio.Lock())
    ran: list[tuple[str, float, float]] = []

    async def job(label: str, due: float, now: float) -> None:
        ran.append((label, due, now))

    start = time.monotonic()
    for i, delay in enumerate((0.02, 0.05, 0.08)):  # later and later: one loop timer
        due = start + delay
        timers.at("autopilot", due, lambda now, i=i, due=due: job(f"later{i}", due, now))
    await asyncio.sleep(0.04)
    assert ran == [] and timers.pending("autopilot")  # woke at 0.02 and slept on
    await asyncio.sleep(0.08)
    [(label, due, fired)] = ran
    assert label == "later2" and fired >= due
    assert not timers.pending("autopilot")

    ran.clear()
    start = time.monotonic()
    timers.at("tick", start + 0.2, lambda now: job("first", start + 0.2, now))
    timers.at("tick", start + 0.02, lambda now: job("sooner", start + 0.02, now))
    await asyncio.sleep(0.1)
    [(label, due, fired)] = ran
    assert label == "sooner" and due <= fired < start + 0.2
    await asyncio.sleep(0.15)
    assert len(ran) == 1  # the replaced time never runs


async def test_a_job_moved_later_and_then_cancelled_never_runs() -> None:
    timers = Timers(asyncio.Lock())
    ran: list[float] = []

    async def job(now: float) -> None:
        ran.append(now)

    now = time.monotonic()
    timers.at("host", now + 0.01, job)
    timers.at("host", now + 0.05, job)
    await asyncio.sleep(0.02)  # woke, slept on
    timers.cancel("host")
    await asyncio.sleep(0.06)
    assert ran == [] and not timers.pending("host")


async def test_each_long_hold_of_a_lock_is_told_once_and_a_short_one_never() -> None:
    from app.ops.metrics import Metrics
    from app.ops.timers import WatchedLock

    metrics = Metrics()
    slow, quick = WatchedLock("SLOW42", metrics, limit=0.05), WatchedLock("QUICK4", metrics)
    with logged() as seen:
        for _ in range(2):
            async with slow, quick:
                await asyncio.sleep(0.3)  # three looks at the held locks
        await asyncio.sleep(0.15)  # a look with nothing held: the watch stops
    assert held_long(seen) == ["SLOW42"] * 2
    assert metrics.lock_held_long._value.get() == 2


async def test_a_long_hold_that_ends_between_two_looks_is_told_at_its_release() -> None:
    from app.ops.metrics import Metrics
    from app.ops.timers import LOCK_WATCH_SECONDS, WatchedLock

    metrics = Metrics()
    lock = WatchedLock("BRIEF4", metrics, limit=LOCK_WATCH_SECONDS * 0.2)
    with logged() as seen:
        async with lock:  # past the limit, released before the watch first looks
            await asyncio.sleep(LOCK_WATCH_SECONDS * 0.5)
        assert held_long(seen) == ["BRIEF4"]
        await asyncio.sleep(LOCK_WATCH_SECONDS * 1.5)  # the watch's look: nothing held
    assert seen == [("room_lock_held_long", "BRIEF4")]
    assert metrics.lock_held_long._value.get() == 1


async def test_a_free_lock_is_taken_at_once_and_a_busy_one_keeps_its_line() -> None:
    """`take` is `acquire` without a wait, for a free lock only: never past a holder, and
    never past anyone already waiting (asyncio.Lock's order, whose state it reads)."""
    from app.ops.metrics import Metrics
    from app.ops.timers import WatchedLock

    metrics = Metrics()
    lock = WatchedLock("TAKE42", metrics, limit=0.05)
    with logged() as seen:
        assert lock.take() and lock.locked()
        assert not lock.take()  # held
        order: list[str] = []

        async def waiter(name: str) -> None:
            async with lock:
                order.append(name)

        first = asyncio.create_task(waiter("first"))
        await asyncio.sleep(0)  # it waits in the lock's line
        await asyncio.sleep(0.06)  # past the limit: a hold taken by `take` is watched too
        lock.release()  # the lock passes to `first`, which has not run yet
        assert not lock.take()  # nobody jumps the line between the release and its turn
        second = asyncio.create_task(waiter("second"))
        await asyncio.gather(first, second)
        assert order == ["first", "second"]
        assert not lock.locked() and lock.take()
        lock.release()
    assert held_long(seen) == ["TAKE42"]
    assert metrics.longest_hold >= 0.05
