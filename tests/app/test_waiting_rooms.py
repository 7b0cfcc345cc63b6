"""Rooms waiting for players, as a cluster keeps them in Redis (app/stores/redis.py
`open_waiting`, `waited`, `close_unopened`), against a real redis-server: what counts
against an address, what closes a table nobody opened, and what never does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis

from app.stores.redis import LIVE_LEASE_SECONDS, RedisStore, TooManyRooms
from deploy.redis import RedisServer

pytestmark = pytest.mark.redis

ADDRESS = "203.0.113.9"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[RedisStore]:
    with RedisServer(tmp_path / "redis") as server:
        redis = RedisStore(server.url)
        await redis.open()
        yield redis
        await redis.close()


async def new_table(store: RedisStore, code: str, unused_seconds: float = 60.0) -> bool:
    """What ClusterNode.open_table does: the code's lease, the waiting entry, the table."""
    lease = await store.take_lease(code, "node-1")
    try:
        if not await store.open_waiting(code, ADDRESS, 2, unused_seconds):
            return False
        await store.save_fenced(
            code, "node-1", lease.token, {"schema": 1, "code": code, "version": 1}
        )
        return True
    finally:
        await store.release_lease(code, "node-1", lease.token)


async def test_rooms_count_against_their_opener_until_they_close_used_or_not(
    store: RedisStore,
) -> None:
    assert await new_table(store, "AAAAAA") and await new_table(store, "BBBBBB")
    assert not await new_table(store, "CCCCCC")  # two open: the third is refused
    assert await store.waiting_opener("AAAAAA") == ADDRESS
    await store.waited("AAAAAA")  # two people came: it waits for players no more...
    assert await store.waiting_opener("AAAAAA") is None
    assert not await new_table(store, "CCCCCC")  # ...and still counts: it is open
    # Closed by its owner: the fenced delete takes its entries with the table.
    lease = await store.take_lease("BBBBBB", "node-2")
    await store.delete_fenced("BBBBBB", "node-2", lease.token)
    assert await store.waiting_opener("BBBBBB") is None
    assert await new_table(store, "CCCCCC")
    assert not await new_table(store, "DDDDDD")


async def test_the_cluster_opens_at_most_so_many_rooms(store: RedisStore) -> None:
    for code in ("AAAAAA", "BBBBBB"):
        lease = await store.take_lease(code, "node-1")
        assert await store.open_waiting(code, None, 2, 60.0, most_rooms=2)
        await store.release_lease(code, "node-1", lease.token)
    with pytest.raises(TooManyRooms):  # counted from the moment each was recorded
        await store.open_waiting("CCCCCC", "198.51.100.7", 2, 60.0, most_rooms=2)
    # A table nobody was at for the room expiry counts no more.
    with redis.Redis.from_url(store.url) as raw:
        raw.zadd("slapjack:tables", {"AAAAAA": 1.0})
    assert await store.open_waiting("CCCCCC", "198.51.100.7", 2, 60.0, most_rooms=2)


async def test_a_table_nobody_serves_closes_and_a_served_one_is_left_to_its_owner(
    store: RedisStore,
) -> None:
    for code in ("AAAAAA", "BBBBBB"):
        assert await new_table(store, code, unused_seconds=0)  # due at once
    await store.take_lease("BBBBBB", "node-2")  # a process serves this one
    assert await store.close_unopened(0) == ["AAAAAA"]  # BBBBBB: looked at again at once
    assert not await store.exists("AAAAAA") and await store.waiting_opener("AAAAAA") is None
    assert "AAAAAA" not in await store.codes()
    assert await store.exists("BBBBBB") and await store.waiting_opener("BBBBBB") == ADDRESS
    assert await store.close_unopened(0) == []  # still served
    # Its process is gone (its lease not renewed for LIVE_LEASE_SECONDS): closed.
    with redis.Redis.from_url(store.url) as raw:
        now = int(raw.time()[0])
        raw.hset("slapjack:lease:BBBBBB", "at", now - LIVE_LEASE_SECONDS - 1)
    assert await store.close_unopened(60.0) == ["BBBBBB"]
    assert await store.lease("BBBBBB") is None


async def test_a_used_table_is_never_closed_for_waiting(store: RedisStore) -> None:
    assert await new_table(store, "AAAAAA", unused_seconds=0)
    await store.waited("AAAAAA")
    assert await store.close_unopened(60.0) == []
    assert await store.exists("AAAAAA")
