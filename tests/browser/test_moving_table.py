"""A table that moves between the processes of a cluster (deploy/cluster.py: Redis, two
processes, nginx routing each room to one of them), seen from a phone in each engine: when
someone reaches the other process, the table goes there and its pages are sent away; each
page comes back by itself through nginx, and the table follows it home. And when the process
judging it is killed: each page is back at the other process once the lease is over, and
home again once the process starts again; the same through a deploy (SIGTERM, start).

The browser's Socket.IO client reads Engine.IO's CLOSE only on long-polling: a page on a
websocket comes back at once only if the server closes the connection itself. Told only
CLOSE, it would wait for its ping timeout: 20 to 45 s here (pings every 25 s, 20 s to
answer), so a page back within BACK_SECONDS was closed by the server."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from crowd import open_room
from engines import ENGINES, EnginePage, OpenPage, lan_url
from reconnect import CONNECTED, DROPPED

from bench.wire import open_wire
from deploy.cluster import SCRIPTED, Cluster

UPGRADED = "() => document.getElementById('conn').dataset.transport === 'websocket'"
BACK_SECONDS = 10.0  # sent away to back at the table, on a busy machine: half a ping timeout
FAILOVER_SECONDS = 15.0  # the lease (3 s), then the takeover, on a busy machine
HOME_SECONDS = 30.0  # a start, then the tables sent home ten a second from 2 s after it
# The browsers' lines about a process that went away: expected here, and nothing else.
AWAY = ("WebSocket connection", "Failed to load resource", "/socket.io/", "ERR_CONNECTION")
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
    env = {
        **SCRIPTED,
        "SLAPJACK_LEASE_SECONDS": "3",
        "SLAPJACK_PING_INTERVAL_SECONDS": "25",
        "SLAPJACK_PING_TIMEOUT_SECONDS": "20",
        "SLAPJACK_LOG_LEVEL": "warning",
    }
    with Cluster(processes=2, env=env, workdir=tmp_path) as running:
        yield running


async def seated(open_page: OpenPage, engine: str, cluster: Cluster) -> tuple[str, EnginePage]:
    """A page in `engine` at a table of its own, through nginx on the LAN name, seated."""
    code = await open_room(cluster.url)
    page = await open_page(engine, 390, 844)
    await page.goto(lan_url(f"{cluster.url}/r/{code}"))
    await page.type("#name-input", "Ann")
    await page.click("#name-form button[type=submit]")
    await page.wait_for("() => document.querySelector('.seat--you') !== null")
    await page.wait_for(CONNECTED)
    return code, page


@pytest.mark.timeout(300)
async def test_a_page_whose_table_moves_comes_back_at_once(
    cluster: Cluster, open_page: OpenPage
) -> None:
    for engine in ENGINES:
        code, page = await seated(open_page, engine, cluster)
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


@pytest.mark.timeout(300)
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "deploy"])
async def test_pages_follow_their_tables_away_and_back_home(
    cluster: Cluster, open_page: OpenPage, stop: signal.Signals
) -> None:
    """The process judging a table killed (kill -9: its page in each engine is back at the
    table at the other process once the lease, 3 s, is over) or stopped by a deploy (SIGTERM:
    it saves and lets its tables go, and tells its pages it restarts), each page by itself;
    started again, the process gets its tables back, and each page follows."""
    tables = [await seated(open_page, engine, cluster) for engine in ENGINES]
    homes = [await asyncio.to_thread(holder, cluster, code) for code, _ in tables]
    victim = homes[0]
    moved = [
        (code, page) for (code, page), home in zip(tables, homes, strict=True) if home == victim
    ]
    for _, page in moved:
        await page.evaluate(WATCH_THE_DROP)

    stopped = time.monotonic()
    await asyncio.to_thread(cluster.kill, victim, stop)
    for code, page in moved:
        await page.wait_for("() => window.dropped")
        await page.wait_for(CONNECTED, timeout_ms=FAILOVER_SECONDS * 1000)
        print(f"{page.engine}: back {time.monotonic() - stopped:.2f} s after {stop.name}")
        assert await asyncio.to_thread(holder, cluster, code) == 1 - victim
        assert await page.evaluate("() => document.querySelector('.seat--you') !== null")

    for _, page in moved:  # back by long-polling first: the way home is from a websocket
        await page.wait_for(UPGRADED)
        await page.evaluate(WATCH_THE_DROP)
    await asyncio.to_thread(cluster.start_app, victim)
    started = time.monotonic()
    for code, page in moved:
        await page.wait_for("() => window.dropped", timeout_ms=HOME_SECONDS * 1000)
        await page.wait_for(CONNECTED, timeout_ms=HOME_SECONDS * 1000)
        await page.wait_for(
            "() => document.querySelector('.seat--you') !== null", timeout_ms=BACK_SECONDS * 1000
        )
        assert await asyncio.to_thread(holder, cluster, code) == victim
        print(f"{page.engine}: home {time.monotonic() - started:.2f} s after the start")
    for _, page in tables:
        errors = [e for e in await page.errors() if not any(n in e for n in AWAY)]
        assert errors == [], f"{page.engine}: {errors}"
