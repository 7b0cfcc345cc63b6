"""A production Redis: a password, TLS (`rediss://`) and Redis Sentinel (`redis+sentinel://`,
redis-py's own support), against Debian's redis-server and redis-sentinel: tables saved and
leases taken through each, and a cluster that follows a Sentinel failover mid-game."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis as sync_redis
from app_harness import cards_held, play, play_to_the_end, settled, until
from cluster_harness import SETTINGS, a_game_through_nginx, close_all, versions_only_grow

from app.cluster.ownership import Ownership
from app.ops.metrics import Metrics
from app.ops.store_url import parse_store_url
from app.stores import StoreError
from app.stores.redis import RedisStore
from app.tables.table import Table
from deploy.cluster import Cluster
from deploy.redis import RedisServer, SentinelServer, certificates

pytestmark = pytest.mark.redis

PASSWORD = "s3cret-Pa55"


def snapshot(version: int) -> dict[str, object]:
    return {"schema": 1, "code": "ABCD", "version": version}


async def a_table_saved_and_leased_through(url: str) -> None:
    store = RedisStore(url)
    await store.open()
    ownership = Ownership(store, "node-1", 3.0, Metrics())
    try:
        await ownership.start()
        assert await ownership.claim("ABCD", wait_seconds=2)
        token = ownership.token("ABCD")
        assert token is not None
        await store.save_fenced("ABCD", "node-1", token, snapshot(3))
        assert await store.load("ABCD") == snapshot(3)
        assert await ownership.keep("ABCD")
    finally:
        await ownership.stop()
        await store.close()


async def test_a_password_is_given_and_never_shown(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "redis", password=PASSWORD) as server:
        await a_table_saved_and_leased_through(server.url)
        wrong = RedisStore(server.url.replace(PASSWORD, "wrong"))
        with pytest.raises(StoreError) as refused:
            await wrong.open()
        await wrong.close()
        assert "wrong" not in str(refused.value) and PASSWORD not in str(refused.value)
        nothing = RedisStore(f"redis://127.0.0.1:{server.port}/0")
        with pytest.raises(StoreError):
            await nothing.open()
        await nothing.close()


async def test_tls_with_a_password(tmp_path: Path) -> None:
    tls = certificates(tmp_path / "tls")
    with RedisServer(tmp_path / "redis", password=PASSWORD, tls=tls) as server:
        assert server.url.startswith("rediss://")
        await a_table_saved_and_leased_through(server.url)
        # A client that does not trust the server's certificate is refused.
        untrusting = RedisStore(server.url.split("?")[0])
        with pytest.raises(StoreError):
            await untrusting.open()
        await untrusting.close()


def test_sentinel_urls_are_read() -> None:
    where = parse_store_url(f"redis+sentinel://:{PASSWORD}@10.0.0.5:26380,10.0.0.6/mymaster/2")
    assert where.kind == "redis"
    assert where.sentinels == (("10.0.0.5", 26380), ("10.0.0.6", 26379))
    assert (where.service, where.db, where.password) == ("mymaster", 2, PASSWORD)
    for bad in ("redis+sentinel://", "redis+sentinel://h:1", "redis+sentinel://h:x/m/0",
                "redis+sentinel://h:1/m/zero"):  # fmt: skip
        with pytest.raises(ValueError):
            parse_store_url(bad)


class Replicated:
    """A primary, a replica and a sentinel, all with a password."""

    def __init__(self, workdir: Path) -> None:
        self.primary = RedisServer(workdir / "primary", password=PASSWORD, append_only=True)
        self.replica = RedisServer(
            workdir / "replica", password=PASSWORD, append_only=True, replica_of=self.primary.port
        )
        self.sentinel = SentinelServer(workdir / "sentinel", self.primary.port, password=PASSWORD)

    def __enter__(self) -> Replicated:
        self.primary.start()
        self.replica.start()
        self.sentinel.start()
        return self

    def replica_version(self, code: str) -> int:
        """The version of the table the replica holds for `code` (-1: none yet)."""
        with sync_redis.Redis(port=self.replica.port, password=PASSWORD) as redis:
            text = redis.hget(f"slapjack:table:{code}", "snapshot")
        return -1 if text is None else int(Table.from_dict(json.loads(text), 0.0).version)

    def __exit__(self, *exc: object) -> None:
        self.sentinel.stop()
        self.replica.stop()
        self.primary.stop()


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[Replicated]:
    with Replicated(tmp_path) as servers:
        yield servers


async def test_sentinel_names_the_primary(replicated: Replicated) -> None:
    await a_table_saved_and_leased_through(replicated.sentinel.url())


@pytest.mark.cluster
async def test_a_cluster_follows_a_sentinel_failover_mid_game(
    replicated: Replicated, tmp_path: Path
) -> None:
    url = replicated.sentinel.url()
    (tmp_path / "cluster").mkdir()
    with Cluster(processes=2, env=SETTINGS, workdir=tmp_path / "cluster", store_url=url) as cluster:
        # The default pause after a take: with a short one, play sometimes stalled after
        # the failover (a flip refused while the table was still paused, and no new state
        # to try again on), which this test does not set out to show.
        code, players = await a_game_through_nginx(cluster, rules={})
        await play(players, 8)
        before = await settled(players)
        await until(lambda: replicated.replica_version(code) >= before["version"], "replicated")
        killed_at = time.monotonic()
        replicated.primary.kill()  # mid-game, without a word
        # The sentinel promotes the replica; the processes find it through the sentinel.
        await until(lambda: replicated.sentinel.primary() == replicated.replica.port, "failover")
        failover = time.monotonic() - killed_at
        # The table may have paused meanwhile (its lease unconfirmed): it goes on once a
        # renewal reaches the new primary, judged by the same process.
        deadline = time.monotonic() + 30
        while (await settled(players))["version"] == before["version"]:
            assert time.monotonic() < deadline, "play never went on after the failover"
            await play(players, 1)
            await asyncio.sleep(0.1)
        going_on = time.monotonic() - killed_at
        await play(players, 8)
        after = await settled(players)
        assert after["version"] > before["version"]
        assert cards_held(after) == 52
        assert all(player.drops == 0 for player in players), [p.drops for p in players]
        for player in players:
            versions_only_grow(player)
        await play_to_the_end(players, 180)
        await close_all(players)
        print(f"failover in {failover:.1f} s, play went on {going_on:.1f} s after the kill")
