"""Room timers: a job runs under the room's lock, and a replaced job never runs late."""

import asyncio
import time

from app.timers import Timers


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
