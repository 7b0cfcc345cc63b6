"""Tables go home after a deploy (deploy/cluster.py: Redis, two processes, nginx): a process
stopped and started again gets back the tables the router gives it, which the other process
served meanwhile, and the other process's own tables are never disturbed."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from app_harness import until
from cluster_harness import SETTINGS, Player, close_all, lease_holder

from deploy.cluster import Cluster

pytestmark = pytest.mark.cluster

TABLES = 12
HOME_SECONDS = 60.0  # a restart, then the tables' way home: well within a minute


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    env = {**SETTINGS, "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "100"}
    with Cluster(processes=2, env=env, workdir=tmp_path) as running:
        yield running


def placement(cluster: Cluster, codes: list[str]) -> dict[str, str | None]:
    return {code: lease_holder(cluster, code) for code in codes}


async def restart(cluster: Cluster, index: int) -> None:
    """A deploy of one process: SIGTERM (it saves its tables and lets them go), then start."""
    await asyncio.to_thread(cluster.kill, index, signal.SIGTERM)
    await asyncio.to_thread(cluster.start_app, index)


async def test_after_a_rolling_restart_every_table_is_back_where_the_router_sends_it(
    cluster: Cluster,
) -> None:
    async with httpx.AsyncClient(base_url=cluster.url) as http:
        codes = [(await http.post("/api/rooms")).json()["code"] for _ in range(TABLES)]
    players = [await Player(cluster.url, code, "Ann").connect() for code in codes]
    await until(lambda: None not in placement(cluster, codes).values(), "every table served")
    home = placement(cluster, codes)  # where the router sends each table's people
    assert set(home.values()) == {"node-1", "node-2"}, home
    for index, node in enumerate(("node-1", "node-2")):
        staying = [p for p, code in zip(players, codes, strict=True) if home[code] != node]
        drops = [p.drops for p in staying]
        await restart(cluster, index)
        await until(
            lambda: placement(cluster, codes) == home, f"{node}'s tables back", HOME_SECONDS
        )
        # The other process's own tables were never sent anywhere.
        assert [p.drops for p in staying] == drops
    await close_all(players)
