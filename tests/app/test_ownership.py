"""Table ownership in a cluster (app/cluster/ownership.py) and the shared per-address limits
(app/ops/limits.py), against a real redis-server: leases taken, renewed, lost and handed over
between two `Ownership`s standing for two processes."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from app.cluster.leasing import POLL_SECONDS, QUIET_SECONDS, claim_wait
from app.cluster.ownership import Ownership
from app.ops.clock import ManualClock, settle
from app.ops.limits import SharedPerAddress
from app.ops.metrics import Metrics
from app.stores import LeaseLost, StoreError
from app.stores.redis import Lease, NodeCounts, RedisStore
from deploy.redis import RedisServer

pytestmark = pytest.mark.redis

WAIT_SECONDS = 30.0  # generous: the machine is shared; waits end as soon as the condition holds


@pytest.fixture
async def redis_url(tmp_path: Path) -> AsyncIterator[str]:
    with RedisServer(tmp_path / "redis") as server:
        yield server.url


def snapshot(version: int) -> dict[str, object]:
    return {"schema": 1, "code": "ABCD", "version": version}


class Node:
    """One process's view: its store, its Ownership, and a record of what it was told."""

    def __init__(self, url: str, name: str, lease_seconds: float = 3.0, **kwargs: float) -> None:
        self.store = RedisStore(url)
        self.metrics = Metrics()
        self.ownership = Ownership(self.store, name, lease_seconds, self.metrics, **kwargs)
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


async def test_a_free_table_is_taken_at_once_and_kept_by_renewals(redis_url: str) -> None:
    async with Node(redis_url, "node-1", lease_seconds=1.5, renew_seconds=0.3) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        assert one.ownership.holds("ABCD")
        assert await one.store.lease_holder("ABCD") == "node-1"
        await asyncio.sleep(2.5)  # well past one lease: only renewals keep it
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


async def handed_over_and_free(owner: Node) -> None:
    """Until `owner` has handed the table over and released its lease, which nobody has
    taken yet."""
    async with asyncio.timeout(WAIT_SECONDS):
        while not owner.handed or await owner.store.lease("ABCD") is not None:
            await asyncio.sleep(0.01)


async def test_an_owner_whose_people_come_back_leaves_the_lease_to_the_asker(
    redis_url: str,
) -> None:
    """node-1 hands the table to node-2, and node-1's people, sent away, come straight back
    to node-1 (the router sends them there) before node-2, slow, has taken the free lease:
    node-1 leaves it for node-2, then asks for it back. Once each way, not a tug of war."""
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        take_lease = two.store.take_lease
        asked = 0

        async def slow_take(
            code: str, node: str, over: Lease | None = None, still: tuple[str, int] | None = None
        ) -> Lease:
            nonlocal asked
            asked += 1
            if asked > 1:  # node-2 hears `released` and is slow to take the lease
                await asyncio.sleep(0.5)
            return await take_lease(code, node, over, still)

        two.store.take_lease = slow_take  # type: ignore[method-assign]
        moving = asyncio.create_task(two.ownership.claim("ABCD", wait_seconds=10))
        await handed_over_and_free(one)
        coming_back = asyncio.create_task(one.ownership.claim("ABCD", wait_seconds=10))
        assert await moving
        assert await coming_back
        assert await one.store.lease_holder("ABCD") == "node-1"
        assert (one.handed, two.handed) == (["ABCD"], ["ABCD"])
        assert one.count("slapjack_hand_overs_total") == 1
        assert two.count("slapjack_hand_overs_total") == 1


async def hand_over_to_an_asker_that_never_takes_it(one: Node, two: Node) -> None:
    """node-2 asks for the table and goes quiet before taking it (killed, or its claim gave
    up): node-1 has handed it over and the lease lies free."""
    take_lease = two.store.take_lease
    asked = asyncio.Event()

    async def silent(
        code: str, node: str, over: Lease | None = None, still: tuple[str, int] | None = None
    ) -> Lease:
        if asked.is_set():
            await asyncio.sleep(WAIT_SECONDS)  # gone: never takes it (till cancelled)
        asked.set()
        return await take_lease(code, node, over, still)

    two.store.take_lease = silent  # type: ignore[method-assign]
    asking = asyncio.create_task(two.ownership.claim("ABCD", wait_seconds=30))
    await handed_over_and_free(one)
    asking.cancel()
    async with asyncio.timeout(WAIT_SECONDS):
        with contextlib.suppress(asyncio.CancelledError):
            await asking


class HeldElsewhere:
    """A lease store (no Redis) where node-1 holds every table and never lets go."""

    url = "redis://127.0.0.1:1/0"  # never reached: nothing here talks to Redis

    async def take_lease(
        self, code: str, node: str, over: Lease | None = None, still: object = None
    ) -> Lease:
        return Lease("node-1", 1, 0)

    async def lease(self, code: str) -> Lease | None:
        return Lease("node-1", 1, 0)

    async def fence(self, code: str) -> int:
        return 1


async def test_a_claim_stops_when_cancelled_as_its_released_note_arrives() -> None:
    """The caller of a claim goes away (its connection closed) at the moment the holder's
    `released` note wakes the claim: the claim ends there, and does not go on asking Redis
    for a table nobody waits for any more."""
    ownership = Ownership(HeldElsewhere(), "node-2", 3.0, Metrics())  # type: ignore[arg-type]

    async def published(node: str, note: object) -> None:
        return None

    ownership._publish = published  # type: ignore[method-assign]
    claiming = asyncio.create_task(ownership.claim("ABCD", wait_seconds=2))
    async with asyncio.timeout(WAIT_SECONDS):
        while "ABCD" not in ownership._released:
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # now waiting for the note
        ownership._released["ABCD"].set()  # the note, and in the same turn the cancel
        claiming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await claiming
    await ownership._redis.aclose()


def test_a_claim_on_a_silent_holder_asks_again_just_as_its_lease_is_over() -> None:
    """A claim polls a live holder every POLL_SECONDS; for one that renews nothing it waits
    until the lease is over and asks at once then, even with less than a poll left (a
    killed process's tables are taken a lease after its last renewal, not up to half a
    second later)."""
    lease = 5.0
    assert claim_wait(None, lease) == POLL_SECONDS
    assert claim_wait(QUIET_SECONDS / 2, lease) == POLL_SECONDS
    for left in (3.0, 0.4, 0.1, 0.01):
        wait = claim_wait(lease - left, lease)
        assert left < wait <= left + 0.05, (left, wait)
    assert 0 < claim_wait(lease + 1, lease) <= 0.05  # over already: again almost at once


async def test_a_table_handed_to_an_asker_that_never_takes_it_comes_back_a_lease_later(
    redis_url: str,
) -> None:
    lease = 1.5
    async with (
        Node(redis_url, "node-1", lease_seconds=lease) as one,
        Node(redis_url, "node-2", lease_seconds=lease) as two,
    ):
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        handed_at = time.monotonic()
        await hand_over_to_an_asker_that_never_takes_it(one, two)
        assert await one.ownership.claim("ABCD", wait_seconds=10)
        assert time.monotonic() - handed_at >= lease - 0.1  # left to the asker that long
        assert await one.store.lease_holder("ABCD") == "node-1"


async def test_a_table_the_asker_took_and_let_go_is_free_for_its_old_owner_at_once(
    redis_url: str,
) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        await two.ownership.release("ABCD")  # say node-2 is shutting down
        started = time.monotonic()
        assert await one.ownership.claim("ABCD", wait_seconds=10)
        assert time.monotonic() - started < 2.0  # not held back for the 3 s lease
        assert one.count("slapjack_hand_overs_total") == 1


async def test_a_dead_owners_table_is_taken_once_its_lease_stood_still(redis_url: str) -> None:
    async with Node(redis_url, "node-2", lease_seconds=1.5) as two:
        # A process that took the table and died: nobody answers on its channel, nobody
        # renews its lease.
        dead = await two.store.take_lease("ABCD", "node-1")
        assert dead.node == "node-1"
        started = time.monotonic()
        assert not await two.ownership.claim("ABCD", wait_seconds=0.3)  # watched too briefly
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        assert time.monotonic() - started >= 1.5  # a whole lease watched by its own clock
        taken = await two.store.lease("ABCD")
        assert taken is not None and taken.node == "node-2"
        assert taken.token > dead.token  # fencing tokens only grow


async def test_a_lease_taken_by_another_process_is_lost_and_reported(redis_url: str) -> None:
    async with Node(redis_url, "node-1", renew_seconds=60) as one:
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        # It stood still unseen (a pause) and another process took the table over.
        seen = await one.store.lease("ABCD")
        assert (await one.store.take_lease("ABCD", "node-2", over=seen)).node == "node-2"
        await one.ownership.renew_all()
        assert one.lost == ["ABCD"]
        assert not one.ownership.holds("ABCD")
        assert one.count("slapjack_leases_lost_total") == 1
        assert await one.store.lease_holder("ABCD") == "node-2"  # never taken back


async def test_an_owner_that_cannot_renew_stops_judging_before_anyone_takes_over(
    redis_url: str,
) -> None:
    # node-1 renews nothing and answers nothing (as if stopped); node-2 wants the table
    # from the first moment.
    async with (
        Node(redis_url, "node-1", lease_seconds=1.5, renew_seconds=60) as one,
        Node(redis_url, "node-2", lease_seconds=1.5) as two,
    ):
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        for task in one.ownership._tasks:  # deaf and silent, as a stopped process is
            task.cancel()
        stopped_judging: list[float] = []

        async def watch_one() -> None:
            while one.ownership.holds("ABCD"):
                await asyncio.sleep(0.005)
            stopped_judging.append(time.monotonic())

        watching = asyncio.create_task(watch_one())
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        taken_at = time.monotonic()
        await watching
        # The old holder stopped judging well before the new one could judge: by the margin.
        assert stopped_judging[0] <= taken_at - 0.4, (stopped_judging, taken_at)
        assert two.ownership.holds("ABCD") and not one.ownership.holds("ABCD")
        old, new = one.ownership.token("ABCD"), two.ownership.token("ABCD")
        assert old is not None and new is not None and new > old
        # Its save, with the old token, is refused inside Redis.
        with pytest.raises(LeaseLost):
            await one.store.save_fenced("ABCD", "node-1", old, snapshot(7))
        await one.ownership.renew_all()
        assert one.lost == ["ABCD"]


async def test_a_lease_redis_lost_is_taken_back_unless_another_process_wrote_the_table(
    redis_url: str,
) -> None:
    async with Node(redis_url, "node-1", renew_seconds=60) as one:
        for code in ("KEPT", "GONE"):
            assert await one.ownership.claim(code, wait_seconds=1)
            await one.store.save_fenced(code, "node-1", one.ownership.token(code), snapshot(7))
        raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            # Redis lost both leases (an append-only file's last second); meanwhile another
            # process took GONE, wrote it and let it go.
            await raw.delete("slapjack:lease:KEPT", "slapjack:lease:GONE")
            other = await one.store.take_lease("GONE", "node-2")
            await one.store.save_fenced("GONE", "node-2", other.token, snapshot(9))
            assert await one.store.release_lease("GONE", "node-2", other.token)
        finally:
            await raw.aclose()
        await one.ownership.renew_all()
        assert one.lost == ["GONE"]
        assert await one.store.lease_holder("KEPT") == "node-1"
        assert await one.store.lease_holder("GONE") is None


@pytest.mark.parametrize("outage", ["stopped", "hung"])
async def test_a_table_held_through_a_redis_outage_stays_its_owners(
    tmp_path: Path, outage: str
) -> None:
    server = RedisServer(tmp_path / "redis", append_only=True)
    server.start()
    try:
        async with (
            Node(server.url, "node-1", lease_seconds=1.5, renew_seconds=0.2) as one,
            Node(server.url, "node-2", lease_seconds=1.5, renew_seconds=0.2) as two,
        ):
            assert await one.ownership.claim("ABCD", wait_seconds=1)
            token = one.ownership.token("ABCD")
            if outage == "stopped":
                server.stop()
            else:
                server.hang()
            await asyncio.sleep(4.0)  # more than two leases with Redis away
            assert not one.ownership.holds("ABCD")  # paused: nobody can confirm it
            assert one.ownership.token("ABCD") == token and one.lost == []  # but kept
            if outage == "stopped":
                server.start()  # the same address, its append-only file read back
            else:
                server.wake()
            back = time.monotonic()
            judging_again: list[float] = []

            async def watch_one() -> None:
                while not one.ownership.holds("ABCD"):
                    await asyncio.sleep(0.01)
                judging_again.append(time.monotonic() - back)

            watching = asyncio.create_task(watch_one())
            # The other process, trying to take the table from the moment Redis answers
            # (without asking its holder), never does: the holder's renewals show it alive,
            # however long Redis was away and whatever its clock did meanwhile.
            taken = False
            while time.monotonic() - back < 3.0:  # two leases
                with contextlib.suppress(StoreError):
                    taken = taken or await two.ownership.take_if_free("ABCD")
                await asyncio.sleep(0.05)
            assert not taken
            await asyncio.wait_for(watching, WAIT_SECONDS)
            assert judging_again[0] < 2.0, judging_again
            assert one.ownership.token("ABCD") == token and one.lost == []
    finally:
        server.stop()


async def test_a_restarted_process_lets_go_of_a_lease_it_no_longer_serves(redis_url: str) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        # node-1 crashed holding the table and came back under the same id, without it.
        assert (await one.store.take_lease("ABCD", "node-1")).node == "node-1"
        started = time.monotonic()
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        assert time.monotonic() - started < 2.0  # not a whole lease watched
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
            assert await one.ownership.take_if_free(code)
        for code in codes[:10]:  # Redis lost them, nobody wrote the tables since
            assert await one.store.release_lease(code, "node-1", one.ownership.token(code))
        await one.ownership.renew_all()
        assert one.lost == [] and all(one.ownership.holds(code) for code in codes)
        assert all([await one.store.lease_holder(code) == "node-1" for code in codes])
        pool = one.ownership._redis.connection_pool
        assert len(pool._available_connections) + len(pool._in_use_connections) <= 3


# ---- failover by the process: its renewal counter, watched all the time ----------------------


class Watcher:
    """An Ownership on a ManualClock, never started: the test reads the counters
    (`watch_nodes`) and turns the clock itself."""

    def __init__(self, url: str, name: str, lease_seconds: float = 3.0) -> None:
        self.clock = ManualClock()
        self.store = RedisStore(url)
        self.ownership = Ownership(self.store, name, lease_seconds, Metrics(), clock=self.clock)
        self.back: list[tuple[str, float]] = []

        async def on_node_back(node: str, away_since: float) -> None:
            self.back.append((node, away_since))

        self.ownership.on_node_back = on_node_back

    async def watch_for(self, seconds: float, step: float = 0.5) -> None:
        """Reads the counters every `step` of its clock for `seconds`."""
        await self.ownership.watch_nodes()
        for _ in range(round(seconds / step)):
            await self.clock.advance(step)
            await self.ownership.watch_nodes()

    async def close(self) -> None:
        await self.ownership._redis.aclose()
        await self.store.close()


@pytest.fixture
async def watched(redis_url: str) -> AsyncIterator[tuple[Watcher, Watcher]]:
    """node-1, holding ABCD, then silent (killed: nothing renews it); node-2 watching."""
    one, two = Watcher(redis_url, "node-1"), Watcher(redis_url, "node-2")
    await one.store.node_started("node-1")
    await two.store.node_started("node-2")
    assert await one.ownership.take_if_free("ABCD")
    await one.ownership.renew_all()
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


async def test_a_silent_process_loses_its_tables_at_the_first_ask_after_a_lease(
    watched: tuple[Watcher, Watcher],
) -> None:
    """node-2 watched node-1's counter stand still for a whole lease before any of node-1's
    tables was asked for: the first ask takes the table (no lease watched from the ask)."""
    one, two = watched
    await two.watch_for(3.0)
    assert await two.ownership.take_if_free("ABCD")
    taken = await two.store.lease("ABCD")
    assert taken is not None and taken.node == "node-2"
    assert two.ownership.came_from("ABCD") == ("node-1", two.clock.now())
    # node-1's save with its old token is refused inside Redis.
    with pytest.raises(LeaseLost):
        await one.store.save_fenced("ABCD", "node-1", one.ownership.token("ABCD"), snapshot(3))


async def test_a_table_whose_silent_holder_was_asked_first_still_goes_home_later(
    watched: tuple[Watcher, Watcher],
) -> None:
    """Its people reached node-2 a moment after node-1 fell silent: node-2 asked node-1 for
    the table (no answer) and took it once node-1 stood still a lease: it is node-1's to
    have back."""
    _, two = watched
    await two.watch_for(1.0)
    claiming = asyncio.create_task(two.ownership.claim("ABCD", wait_seconds=60))
    async with asyncio.timeout(WAIT_SECONDS):
        await two.watch_for(2.5, step=0.25)
        assert await claiming
    origin = two.ownership.came_from("ABCD")
    assert origin is not None and origin[0] == "node-1"


async def test_a_process_that_renews_anything_keeps_its_tables(
    watched: tuple[Watcher, Watcher],
) -> None:
    one, two = watched
    await two.watch_for(2.0)
    assert await one.ownership.keep("ABCD")  # one renewal of one table lands: alive
    await two.watch_for(1.5)  # a lease since it was first watched, not since it moved
    assert not await two.ownership.take_if_free("ABCD")
    assert await two.store.lease_holder("ABCD") == "node-1"


async def test_a_watch_with_a_gap_starts_again(watched: tuple[Watcher, Watcher]) -> None:
    """node-2 stopped reading the counters for a while (paused, its loop stalled): what it
    did not watch counts against nobody."""
    _, two = watched
    await two.watch_for(1.0)
    await two.clock.advance(2.5)  # no read for 2.5 s
    await two.watch_for(1.0)
    assert not await two.ownership.take_if_free("ABCD")
    await two.watch_for(2.0)  # a whole lease watched without a gap since
    assert await two.ownership.take_if_free("ABCD")


async def test_a_process_that_starts_again_gets_its_tables_back(
    watched: tuple[Watcher, Watcher],
) -> None:
    one, two = watched
    await two.watch_for(3.0)
    assert await two.ownership.take_if_free("ABCD")
    away_since = two.ownership._nodes["node-1"].since
    await one.store.node_started("node-1")  # node-1 is back
    await two.watch_for(0.5)
    await settle()
    assert two.back == [("node-1", away_since)]
    # A table a process just started holds is not asked for: its people go there.
    assert await one.ownership.take_if_free("WXYZ")
    await two.watch_for(0.5)
    async with asyncio.timeout(WAIT_SECONDS):
        assert not await two.ownership.claim("WXYZ", wait_seconds=60)
    assert await two.store.lease_holder("WXYZ") == "node-1"


@pytest.mark.parametrize("leaving", [True, False])
async def test_a_table_handed_over_by_a_stopping_process_goes_back_to_it(
    redis_url: str, leaving: bool
) -> None:
    async with Node(redis_url, "node-1") as one, Node(redis_url, "node-2") as two:
        one.ownership.leaving = lambda: leaving
        assert await one.ownership.claim("ABCD", wait_seconds=1)
        assert await two.ownership.claim("ABCD", wait_seconds=10)
        origin = two.ownership.came_from("ABCD")
        assert (origin is not None and origin[0] == "node-1") is leaving


async def test_every_processs_counter_is_read_at_least_ten_times_a_second(redis_url: str) -> None:
    """A counter is seen to stand still from the first read after its last move: read every
    NODE_WATCH_SECONDS, a silent process's tables are taken at most that long past a lease
    after its last renewal (read every quarter second, some were taken 0.25 s later)."""
    clock = ManualClock()
    store = RedisStore(redis_url)
    ownership = Ownership(store, "node-2", 5.0, Metrics(), clock=clock)
    reads: list[float] = []
    reading = 0  # reads under way: Redis answers in real time, the clock waits for it
    read = store.node_counts

    async def counted() -> NodeCounts:
        nonlocal reading
        reads.append(clock.now())
        reading += 1
        try:
            return await read()
        finally:
            reading -= 1

    store.node_counts = counted  # type: ignore[method-assign]
    await store.node_started("node-1")
    await ownership.start()
    try:
        for _ in range(100):  # a second, in steps of 10 ms
            await clock.advance(0.01)
            async with asyncio.timeout(WAIT_SECONDS):  # a read begun at this step answered
                while reading:
                    await asyncio.sleep(0.001)
        gaps = [later - earlier for earlier, later in itertools.pairwise(reads)]
        assert len(reads) >= 9 and max(gaps) <= 0.1 + 1e-6, gaps
    finally:
        await ownership.stop()
        await store.close()


async def test_a_takeovers_takes_and_loads_asked_at_once_go_in_one_round_trip_each(
    redis_url: str,
) -> None:
    """The claims of a takeover wake together: their takes, then their tables' reads, go to
    Redis in one pipeline each (one connection), not in waves the size of the pool; a
    command refused inside Redis fails only its own caller."""
    store = RedisStore(redis_url, connections=32)
    await store.open()
    try:
        codes = [f"T{index:05d}" for index in range(300)]
        for code in codes[:5]:
            await store.save(code, snapshot(7) | {"code": code})
        await store._redis.set("slapjack:table:T00005", "not a table")
        leases = await asyncio.gather(*(store.take_lease(code, "node-1") for code in codes))
        assert {lease.node for lease in leases} == {"node-1"}
        assert len({lease.token for lease in leases}) == 1  # each table's first token
        loaded = await asyncio.gather(*(store.load(code) for code in codes))
        assert [snap["version"] for snap in loaded[:5] if snap] == [7] * 5
        assert loaded[5:] == [None] * 295  # one unreadable, the rest never written
        pool = store._redis.connection_pool
        assert len(pool._available_connections) + len(pool._in_use_connections) == 1
    finally:
        await store.close()


async def test_a_process_that_stops_wakes_the_claims_waiting_for_its_tables(
    redis_url: str,
) -> None:
    """node-1 stops without answering node-2's ask (busy closing): node-2, which has watched
    node-1 renew nothing for a while, would wait for node-1's lease to be over; node-1's
    stop lets its tables go in one round and says so, and node-2 takes the table then."""
    one = Watcher(redis_url, "node-1", lease_seconds=60.0)
    two = Watcher(redis_url, "node-2", lease_seconds=60.0)
    await one.store.node_started("node-1")
    assert await one.ownership.take_if_free("ABCD")
    codes = [f"T{index:05d}" for index in range(200)]
    for code in codes:
        assert await one.ownership.take_if_free(code)
    await one.ownership.renew_all()
    await two.ownership.start()
    try:
        await two.watch_for(3.0)  # node-1 silent for 3 s: a claim now waits 57 s
        claiming = asyncio.create_task(two.ownership.claim("ABCD", wait_seconds=600))
        async with asyncio.timeout(WAIT_SECONDS):
            while "ABCD" not in two.ownership._watched:
                await asyncio.sleep(0.001)
        await one.ownership.stop()
        async with asyncio.timeout(WAIT_SECONDS):
            assert await claiming
        assert two.ownership.came_from("ABCD") == ("node-1", two.clock.now())
        assert [await one.store.lease(code) for code in codes] == [None] * len(codes)
        pool = one.store._redis.connection_pool
        assert len(pool._available_connections) + len(pool._in_use_connections) <= 2
    finally:
        await two.ownership.stop()
        await one.store.close()
        await two.store.close()
