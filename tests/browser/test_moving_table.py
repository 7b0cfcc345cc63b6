"""A table that moves between the processes of a cluster (deploy/cluster.py: Redis, two
processes, nginx routing each room to one of them), seen from a phone in each engine: when
someone reaches the other process, the table goes there and its pages are sent away; each
page comes back by itself through nginx, and the table follows it home.

The browser's Socket.IO client reads Engine.IO's CLOSE only on long-polling: a page on a
websocket comes back at once only if the server closes the connection itself. Told only
CLOSE, it would wait for its ping timeout (10 + 5 s here, as by default)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from crowd import open_room
from engines import ENGINES, OpenPage, lan_url
from reconnect import CONNECTED, DROPPED

from bench.wire import open_wire
from deploy.cluster import SCRIPTED, Cluster

BACK_SECONDS = 5.0  # sent away to back at the table: well under a ping timeout
WATCH_THE_DROP = """() => {
  window.dropped = false;
  const conn = document.getElementById('conn');
  new MutationObserver(() => {
    if (conn.dataset.status !== 'connected') window.dropped = true;
  }).observe(conn, {attributes: true, attributeFilter: ['data-status']});
  return true;
}"""


def holder(cluster: Cluster, code: str) -> int:
    """Which process (0 or 1) holds the table's lease."""
    with redis.Redis(port=cluster.redis_port, decode_responses=True) as store:
        node = store.hget(f"slapjack:lease:{code}", "node")
    return int(str(node).removeprefix("node-")) - 1


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    env = {**SCRIPTED, "SLAPJACK_LEASE_SECONDS": "3", "SLAPJACK_LOG_LEVEL": "warning"}
    with Cluster(processes=2, env=env, workdir=tmp_path) as running:
        yield running


@pytest.mark.timeout(300)
async def test_a_page_whose_table_moves_comes_back_at_once(
    cluster: Cluster, open_page: OpenPage
) -> None:
    for engine in ENGINES:
        code = await open_room(cluster.url)
        page = await open_page(engine, 390, 844)
        await page.goto(lan_url(f"{cluster.url}/r/{code}"))
        await page.type("#name-input", "Ann")
        await page.click("#name-form button[type=submit]")
        await page.wait_for("() => document.querySelector('.seat--you') !== null")
        await page.wait_for(CONNECTED)
        await page.evaluate(WATCH_THE_DROP)

        # Someone reaches the process that does not judge the table: it moves there.
        other = 1 - await asyncio.to_thread(holder, cluster, code)
        elsewhere = await open_wire(
            "127.0.0.1", cluster.app_ports[other], {"room": code, "name": "Eve"}
        )
        sent_away = time.monotonic()
        await page.wait_for("() => window.dropped", timeout_ms=BACK_SECONDS * 1000)
        await page.wait_for(CONNECTED, timeout_ms=BACK_SECONDS * 1000)
        back = time.monotonic() - sent_away
        print(f"{engine}: back at the table {back:.2f} s after it moved")
        assert await page.evaluate("() => document.querySelector('.seat--you') !== null")
        assert not await page.evaluate(DROPPED)
        elsewhere.close()
        await page.close()
