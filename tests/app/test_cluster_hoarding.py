"""Rooms cannot be hoarded in a cluster either (deploy/cluster.py: Redis, two processes,
nginx): the rooms an address holds are counted in Redis until they close, used or not, so
the processes share one count, and they close as soon as on one process: a link nobody
opened, and a lobby where nobody acts, are gone SLAPJACK_UNUSED_ROOM_SECONDS later."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis as sync_redis
from app_harness import until
from cluster_harness import SETTINGS, Player, close_all

from deploy.cluster import Cluster

pytestmark = pytest.mark.cluster

HELD = 2  # SLAPJACK_OPEN_ROOMS_PER_ADDRESS here
# Long enough that the rooms opened first are still there while a loaded machine checks the
# refusals (2 s ran out at a load average of 40, and a refused room was opened), and two
# players come to one.
UNUSED_SECONDS = 8.0
HOARDER = {"X-Forwarded-For": "203.0.113.9"}  # each process trusts loopback as its proxy
OTHER = {"X-Forwarded-For": "198.51.100.7"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    env = {
        **SETTINGS,
        "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": str(HELD),
        "SLAPJACK_UNUSED_ROOM_SECONDS": str(UNUSED_SECONDS),
    }
    with Cluster(processes=2, env=env, workdir=tmp_path) as running:
        yield running


def stored(cluster: Cluster, code: str) -> bool:
    with sync_redis.Redis(port=cluster.redis_port) as redis:
        return bool(redis.exists(f"slapjack:table:{code}"))


async def open_at(cluster: Cluster, index: int, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=cluster.app_url(index)) as http:
        return await http.post("/api/rooms", headers=headers)


async def test_an_address_holds_a_few_rooms_across_the_processes_until_they_close(
    cluster: Cluster,
) -> None:
    first, second = [await open_at(cluster, index, HOARDER) for index in (0, 1)]
    assert first.status_code == second.status_code == 201
    # Either process refuses the next one: the count is one, in Redis.
    for index in (0, 1):
        refused = await open_at(cluster, index, HOARDER)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited"
        assert "open rooms" in refused.json()["error"]["message"]
    assert (await open_at(cluster, 1, OTHER)).status_code == 201  # another address opens

    # Two people at the first room, one leaves, one idle socket stays: it still counts.
    used = first.json()["code"]
    pair = [await Player(cluster.url, used, name).connect() for name in ("Ann", "Bob")]
    await pair[1].close()
    assert (await open_at(cluster, 0, HOARDER)).status_code == 429

    # The second room's link was never opened: closed, its table gone from Redis; the used
    # one, where nobody acts and no game was dealt, closes too, its socket and all.
    unopened = second.json()["code"]
    await until(lambda: not stored(cluster, unopened), "the unopened table closed", 60)
    await until(lambda: not stored(cluster, used), "the idle lobby closed", 60)
    await until(lambda: pair[0].disconnected.is_set(), "the idle socket closed", 60)
    # Both gone, the address opens again.
    assert (await open_at(cluster, 1, HOARDER)).status_code == 201
    await close_all(pair)


async def test_processes_opening_rooms_for_one_address_at_once_never_pass_the_limit(
    cluster: Cluster,
) -> None:
    answers = await asyncio.gather(*(open_at(cluster, n % 2, HOARDER) for n in range(12)))
    codes = sorted(answer.status_code for answer in answers)
    assert codes == [201] * HELD + [429] * (12 - HELD), codes
