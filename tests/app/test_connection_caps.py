"""One client address must never take the server's connections: caps per address counted
from the transport's open, a reserve of connections for HTTP that websockets cannot take,
and a deadline on joining. Attackers are raw sockets from addresses of their own on
loopback; the server runs under uvicorn with uvloop. Sizes are scaled down from the
defaults (4,000 connections, 400 reserved, 500 and 300 per address) so that a test holds
a few hundred sockets at most."""

from __future__ import annotations

import asyncio

from app_harness import serving
from hostile import BareWebSocket, hold_bare_websockets, http_success, trickle, until
from raw_client import RawClient

ATTACKERS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]


async def test_idle_websockets_never_starve_http() -> None:
    """Bare websockets that never join and answer every ping, from three addresses, as many
    as each is allowed: pages, the API and /healthz keep answering."""
    caps = {
        "max_connections": 120,
        "http_reserve": 30,
        "connections_per_address": 60,
        "websockets_per_address": 50,
        "connect_deadline_seconds": 60.0,  # held for the whole test: the reserve is the point
    }
    async with serving(**caps) as server:
        held: list[BareWebSocket] = []
        attack = asyncio.create_task(hold_bare_websockets(server.port, ATTACKERS, 60, held))
        try:
            # Websockets take what they may: 90 of the 120, the rest is HTTP's.
            await until(lambda: len(held) >= 90, 20)
            await asyncio.sleep(0.5)  # the attack keeps trying
            good, tried = await http_success(server.url, 20)
            assert good == tried, f"{good} of {tried} HTTP requests answered"
            assert len(held) == 90
            assert (await http_success(server.url, 3, path="/"))[0] == 3
        finally:
            attack.cancel()
            for websocket in held:
                websocket.close()


async def test_websockets_per_address_are_counted_from_their_open() -> None:
    """Not one of them sends a Socket.IO CONNECT: they are counted all the same."""
    async with serving(websockets_per_address=25, connect_deadline_seconds=60.0) as server:
        opened = await asyncio.gather(
            *(BareWebSocket.open(server.port, ATTACKERS[0]) for _ in range(40))
        )
        held = [w for w in opened if w is not None]
        try:
            assert len(held) == 25
            other = await BareWebSocket.open(server.port, ATTACKERS[1])  # its own share
            assert other is not None
            other.close()
        finally:
            for websocket in held:
                websocket.close()


async def test_a_connection_that_never_joins_is_closed() -> None:
    async with serving(connect_deadline_seconds=1.0) as server:
        code = await server.new_room()
        idle = await BareWebSocket.open(server.port, ATTACKERS[0])
        assert idle is not None
        player = await RawClient.open(server)
        await player.join(code, "Ann")
        try:
            await asyncio.wait_for(idle.closed.wait(), 10)
            # The one that joined stays.
            await player.send('421["sit",{"seat":0}]')
            assert (await player.ack(1))["ok"]
        finally:
            idle.close()
            await player.close()


async def test_trickled_requests_from_one_address_never_take_every_connection() -> None:
    """Slowloris re-opened as fast as the server cuts it, from one address: the others'
    requests are answered."""
    caps = {"max_connections": 100, "connections_per_address": 20, "request_timeout_seconds": 2}
    async with serving(**caps) as server:
        attack = [asyncio.create_task(trickle(server.port, ATTACKERS[0])) for _ in range(150)]
        try:
            await asyncio.sleep(1.0)
            good, tried = await http_success(server.url, 20)
            assert good == tried, f"{good} of {tried} HTTP requests answered"
        finally:
            for task in attack:
                task.cancel()
            await asyncio.gather(*attack, return_exceptions=True)


async def test_engineio_opens_per_address_are_counted() -> None:
    """Bare sessions opened and dropped in a loop, none joining: counted all the same."""
    async with serving(opens_per_minute=5) as server:
        taken = 0
        for _ in range(8):
            websocket = await BareWebSocket.open(server.port, ATTACKERS[2])
            if websocket is not None:
                taken += await websocket.answered()
                websocket.close()
        assert taken == 5
        other = await BareWebSocket.open(server.port, ATTACKERS[0])  # its own share
        assert other is not None
        other.close()
