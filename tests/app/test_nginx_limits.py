"""The per-address limits behind nginx (deploy/nginx.conf.template, as deploy/cluster.py
runs it): nginx caps the connections one client address holds (`limit_conn`, the apps'
SLAPJACK_CONNECTIONS_PER_ADDRESS, which an app cannot apply to the proxy in front of it),
and the app's own limits count the address nginx saw (X-Forwarded-For from a trusted
proxy), never nginx's, nor one a client wrote into the header itself.

Two client addresses on one machine: 127.0.0.1 and 127.0.0.2 (all of 127/8 is loopback).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from cluster_harness import SETTINGS
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from deploy.cluster import Cluster

pytestmark = pytest.mark.cluster

CAP = 3  # SLAPJACK_CONNECTIONS_PER_ADDRESS here, and so nginx's limit_conn
HELD = 2  # SLAPJACK_OPEN_ROOMS_PER_ADDRESS


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    env = {
        **SETTINGS,
        "SLAPJACK_CONNECTIONS_PER_ADDRESS": str(CAP),
        "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": str(HELD),
    }
    with Cluster(processes=1, env=env, workdir=tmp_path) as running:
        yield running


def http_from(cluster: Cluster, address: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=cluster.url, transport=transport)


@contextlib.asynccontextmanager
async def websocket_from(cluster: Cluster, address: str) -> AsyncIterator[ClientConnection]:
    url = f"ws://127.0.0.1:{cluster.port}/socket.io/?EIO=4&transport=websocket&room=ABCDEF"
    async with connect(url, local_addr=(address, 0)) as websocket:
        assert (await websocket.recv()).startswith("0{")  # the Engine.IO open packet
        yield websocket


async def status_from(cluster: Cluster, address: str) -> int:
    async with http_from(cluster, address) as http:
        return (await http.get("/healthz")).status_code


async def test_an_address_past_its_connections_gets_429_from_nginx(cluster: Cluster) -> None:
    async with contextlib.AsyncExitStack() as held:
        sockets = [
            await held.enter_async_context(websocket_from(cluster, "127.0.0.1")) for _ in range(CAP)
        ]
        assert await status_from(cluster, "127.0.0.1") == 429
        with pytest.raises(InvalidStatus) as refused:
            await held.enter_async_context(websocket_from(cluster, "127.0.0.1"))
        assert refused.value.response.status_code == 429
        # Another address is not held back by this one.
        assert await status_from(cluster, "127.0.0.2") == 200
        async with websocket_from(cluster, "127.0.0.2"):
            pass
        # One connection closed, and the address has room for one more.
        await sockets[0].close()
        for _ in range(100):
            if await status_from(cluster, "127.0.0.1") == 200:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the closed connection's place was not given back")


async def test_the_apps_limits_count_the_address_nginx_saw(cluster: Cluster) -> None:
    forged = {"X-Forwarded-For": "203.0.113.50"}  # nginx adds the address it saw after it
    async with http_from(cluster, "127.0.0.1") as one, http_from(cluster, "127.0.0.2") as two:
        for _ in range(HELD):
            assert (await one.post("/api/rooms")).status_code == 201
            assert (await two.post("/api/rooms", headers=forged)).status_code == 201
        full = await one.post("/api/rooms")
        assert full.status_code == 429 and full.json()["error"]["code"] == "rate_limited"
        # A new name in the header is no new address: the app believes nginx alone.
        again = await two.post("/api/rooms", headers={"X-Forwarded-For": "203.0.113.51"})
        assert again.status_code == 429 and again.json()["error"]["code"] == "rate_limited"
