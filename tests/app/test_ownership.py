"""Table ownership in a cluster (app/cluster/ownership.py) and the shared per-address limits
(app/realtime/limits.py), against a real redis-server: leases taken, renewed, lost and handed over
between two `Ownership`s standing for two processes.

A lease's local end and its renewals are on the app's clock: a ManualClock turned past a
lease stands for a paused process, at once. Redis's own expiry runs on Redis's clock, real
time: the tests that wait for it are marked realtime.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from app_harness import until
from redis_server import RedisServer

from app.cluster.ownership import Ownership
from app.ops.clock import Clock, ManualClock
from app.ops.metrics import Metrics
from app.realtime.limits import SharedPerAddress
from app.stores.redis import RedisStore

WAIT_SECONDS = 30.0  # generous: the machine is shared; waits end as soon as the condition holds


@pytest.fixture
async def redis_url(tmp_path: Path) -> AsyncIterator[str]:
    with RedisServer(tmp_path / "redis") as server:
        yield server.url


def snapshot(version: int) -> dict[str, object]:
    return {"schema": 1, "code": "ABCD", "version": version}


class Node:
    """One process's view: its store, its Ownership, and a record of what it was told."""

    def __init__(
        self,
        url: str,
        name: str,
        lease_seconds: float = 3.0,
        *,
        renew_seconds: float = 1.0,
        clock: Clock | None = None,
    ) -> None:
        self.store = RedisStore(url)
        self.metrics = Metrics()
        self.clock = clock or Clock()
        self.ownership = Ownership(
            self.store,
            name,
            lease_seconds,
            self.metrics,
            renew_seconds=renew_seconds,
            clock=self.clock,
        )
        self.lost: list[str] = []
        self.handed: list[str] = []
        self.lease_during_hand_over: list[str | None] = []

        async def on_lost(code: str) -> None:
            self.lost.append(code)

        async def on_hand_over(code: str) -> None:
            # The owner still holds the lease while it saves the table.
            self.lease_during_hand_over.append(await self.store.lease_holder(code))
            self.handed.append(code)

        self.ownership.on_lost = on_lost
        self.ownership.on_hand_over = on_hand_over

    async def __aenter__(self) -> Node:
        await self.store.open()
        await self.ownership.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ownership.stop()
        await self.store.close()

    def count(self, name: str) -> float:
        value = self.metrics.registry.get_sample_value(name)
        return 0.0 if value is None else value

    async def renewal_round(self, clock: ManualClock) -> None:
        """Turns the clock to the next renewal round and waits for its answer from Redis."""
        before = (dict(self.ownership._valid_until), self.ownership._unreachable_at)
        await clock.advance(self.ownership.renew_seconds)
        await until(
            lambda: (dict(self.ownership._valid_until), self.ownership._unreachable_at) != before,
            "a renewal round's answer",
            WAIT_SECONDS,
        )


async def lease_ms_left(url: str, code: str) -> int:
    """How long Redis itself keeps the lease, by its own clock."""
    client = aioredis.Redis.from_url(url)
    try:
        return int(await client.pttl(f"slapjack:lease:{code}"))
    finally:
        await client.aclose()


async def test_a_free_table_is_taken_at_once_and_kept_by_renewals(redis_url: str) -> None:
    clock = ManualClock()
    async with Node(redis_url, "node-1", lease_seconds=1.5, renew_seconds=0.3, clock=clock) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        assert one.ownership.holds("ABCD")
        assert await one.store.lease_holder("ABCD") == "node-1"
        for _ in range(9):  # 2.7 s of the clock, well past one lease: only renewals keep it
            await one.renewal_round(clock)
            assert 0 < await lease_ms_left(redis_url, "ABCD") <= 1500
        assert one.ownership._valid_until["ABCD"] == clock.now() + 1.5
        assert one.ownership.holds("ABCD")
        assert await one.store.lease_holder("ABCD") == "node-1"
        assert one.count("slapjack_leases_taken_total") == 1
        assert one.count("slapjack_tables_owned") == 1
        assert one.lost == []


async def test_a_live_owner_hands_the_table_over_when_asked(redis_url: str) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        started = time.monotonic()
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        took = time.monotonic() - started
        assert one.handed == ["ABCD"]
        assert one.lease_during_hand_over == ["node-1"]  # saved while still the owner
        assert not one.ownership.holds("ABCD") and two.ownership.holds("ABCD")
        assert await two.store.lease_holder("ABCD") == "node-2"
        assert one.count("slapjack_hand_overs_total") == 1
        assert one.count("slapjack_tables_owned") == 0
        assert two.count("slapjack_tables_owned") == 1
        assert one.lost == []  # handed over, not lost
        # Far below the 3 s lease: the owner answered, nobody waited for an expiry.
        assert took < 2.5, took


@pytest.mark.realtime
async def test_a_dead_owners_table_is_taken_once_its_lease_expires(redis_url: str) -> None:
    """Redis expires the dead owner's lease on its own clock: real time."""
    async with Node(redis_url, "node-2") as two:
        # A process that took the table and died: nobody answers on its channel.
        assert await two.store.acquire_lease("ABCD", "node-1", 1500)
        assert not await two.ownership.claim("ABCD", wait_seconds=0.3)  # still within the lease
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        assert await two.store.lease_holder("ABCD") == "node-2"


async def test_a_lease_taken_by_another_process_is_lost_and_reported(redis_url: str) -> None:
    async with Node(redis_url, "node-1", renew_seconds=60) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        # Its lease expired unseen (a pause) and another process took the table.
        assert await one.store.release_lease("ABCD", "node-1")
        assert await one.store.acquire_lease("ABCD", "node-2", 5000)
        await one.ownership.renew_all()
        assert one.lost == ["ABCD"]
        assert not one.ownership.holds("ABCD")
        assert one.count("slapjack_leases_lost_total") == 1
        assert await one.store.lease_holder("ABCD") == "node-2"  # never taken back


async def test_a_paused_owner_stops_judging_before_redis_says_so(redis_url: str) -> None:
    # No renewal runs (as if the process were stopped): the local clock alone says the
    # lease may be gone, no later than Redis expires it (the same lease, counted from
    # before the request was sent).
    clock = ManualClock()
    async with Node(redis_url, "node-1", lease_seconds=1.5, renew_seconds=60, clock=clock) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        assert 0 < await lease_ms_left(redis_url, "ABCD") <= 1500
        await one.store.save_fenced("ABCD", "node-1", snapshot(7))
        one.ownership.saved("ABCD", 7)
        await clock.advance(1.49)
        assert one.ownership.holds("ABCD")
        await clock.advance(0.01)  # the pause reaches the lease's end
        assert not one.ownership.holds("ABCD")
        # Redis expires it on its own clock (here at once: the pause outlasted it).
        assert await one.store.release_lease("ABCD", "node-1")
        # Nobody took the table meanwhile and its last save is ours: the lease comes back.
        await one.ownership.renew_all()
        assert one.lost == [] and one.ownership.holds("ABCD")
        assert await one.store.lease_holder("ABCD") == "node-1"


async def test_a_lapsed_lease_is_not_taken_back_once_another_process_wrote_the_table(
    redis_url: str,
) -> None:
    clock = ManualClock()
    async with Node(redis_url, "node-1", lease_seconds=1.5, renew_seconds=60, clock=clock) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        await one.store.save_fenced("ABCD", "node-1", snapshot(7))
        one.ownership.saved("ABCD", 7)
        await clock.advance(1.5)  # paused past the lease
        assert not one.ownership.holds("ABCD")
        assert await one.store.release_lease("ABCD", "node-1")  # Redis expired it
        # While node-1 was stopped, node-2 took the table, played on, saved and let go.
        assert await one.store.acquire_lease("ABCD", "node-2", 5000)
        await one.store.save_fenced("ABCD", "node-2", snapshot(9))
        assert await one.store.release_lease("ABCD", "node-2")
        await one.ownership.renew_all()
        assert one.lost == ["ABCD"] and not one.ownership.holds("ABCD")
        assert await one.store.lease_holder("ABCD") is None


async def test_a_table_goes_on_while_redis_is_away_and_is_kept_when_it_is_back(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    clock = ManualClock()
    node = Node(server.url, "node-1", lease_seconds=1.5, renew_seconds=0.2, clock=clock)
    async with node as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        server.stop()
        for _ in range(15):  # twice the lease: only renewals that found Redis away
            await one.renewal_round(clock)
            assert one.ownership._unreachable_at == clock.now()
        assert one.ownership.holds("ABCD") and one.lost == []
        server.start()  # the same address, empty: the lease comes back with the next round
        await one.renewal_round(clock)
        assert one.ownership._unreachable_at is None
        assert one.count("slapjack_tables_owned") == 1 and not one.lost
        assert await one.store.lease_holder("ABCD") == "node-1"
        assert one.lost == []
    server.stop()


async def test_a_restarted_process_lets_go_of_a_lease_it_no_longer_serves(redis_url: str) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        # node-1 crashed holding the table and came back under the same id, without it.
        assert await one.store.acquire_lease("ABCD", "node-1", 60_000)
        started = time.monotonic()
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        assert time.monotonic() - started < 30  # not the minute the lease had left
        assert one.handed == []  # nothing to save: it served no such table


async def test_releasing_lets_another_process_take_the_table_at_once(redis_url: str) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        await one.ownership.release("ABCD")
        assert not one.ownership.holds("ABCD")
        assert await two.ownership.claim("ABCD", wait_seconds=0.05)


async def test_per_address_limits_count_across_processes(redis_url: str) -> None:
    first = aioredis.Redis.from_url(redis_url, decode_responses=True)
    second = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        process_a = SharedPerAddress(first, "connects", 4)
        process_b = SharedPerAddress(second, "connects", 4)
        now = time.monotonic()
        admitted = [
            await limit.admit("10.0.0.7", now)
            for limit in (process_a, process_b, process_a, process_b, process_a, process_b)
        ]
        assert admitted == [True, True, True, True, False, False]  # 4 in all, not 4 each
        assert await process_b.admit("10.0.0.8", now)  # another address counts apart
        keys = await first.keys("slapjack:limit:connects:10.0.0.7:*")
        assert keys
        for key in keys:
            assert 0 < await first.ttl(key) <= 120  # they expire by themselves
    finally:
        await first.aclose()
        await second.aclose()


async def test_per_address_limits_fall_back_to_the_process_while_redis_is_down(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path / "redis")
    client = aioredis.Redis.from_url(server.url, socket_connect_timeout=1)
    try:
        limit = SharedPerAddress(client, "rooms", 2)
        admitted = [await limit.admit("10.0.0.7", time.monotonic() + 0.01) for _ in range(3)]
        assert admitted == [True, True, False]
    finally:
        await client.aclose()


async def test_hundreds_of_leases_are_renewed_in_one_round(redis_url: str) -> None:
    # More tables than a connection pool holds (redis-py's default: 100): renewing each on
    # its own connection at once failed with "Too many connections" under bench.cluster's
    # load; one pipelined round needs one connection (the hand-over channel holds another).
    async with Node(redis_url, "node-1", renew_seconds=60) as one:
        codes = [f"T{index:05d}" for index in range(1000)]
        for code in codes:
            assert await one.ownership.take(code)
        for code in codes[:10]:
            assert await one.store.release_lease(code, "node-1")  # lapsed, nobody wrote since
        await one.ownership.renew_all()
        assert one.lost == [] and one.ownership._unreachable_at is None
        assert all([await one.store.lease_holder(code) == "node-1" for code in codes])
        pool = one.ownership._redis.connection_pool
        assert len(pool._available_connections) + len(pool._in_use_connections) <= 3
