"""Every connection ends, whatever its client does (app/realtime/websocket.py's own path): a
client that stops reading and keeps sending, one that never reads again, twenty that vanish
and come back at once. Each case is a way that path could hang or leak a connection."""

from __future__ import annotations

import asyncio
import socket

import pytest
from app_harness import QUICK_POLLS, WAIT, Client, close_all, join, serving
from engineio import async_socket
from raw_client import RawClient

from app.realtime.transport import GameEngineIO
from app.realtime.websocket import NOOP


async def test_frames_from_a_dropped_connection_cannot_drain_its_end() -> None:
    """UPGRADE frames are answered NOOP. Flooded by a client that stopped reading, they
    filled its queue and it was dropped (its writer's end queued); more of them after the
    drop were still answered, a second drop drained the queue, the end with it, and the
    writer waited for ever: a connection slot held for good."""
    server = GameEngineIO(async_mode="asgi")
    server.send_queue_limit = 50
    socket = async_socket.AsyncSocket(server, "sid")
    server.sockets["sid"] = socket
    for _ in range(60):  # what the reader does with an UPGRADE frame
        server.queue_packet("sid", NOOP)
    await asyncio.wait_for(asyncio.gather(*server._drops), WAIT)
    assert socket.closed and "sid" not in server.sockets
    queued = list(socket.queue._items)
    assert queued and set(queued) == {None}  # what it never read freed, its writer's end queued
    for _ in range(60):
        server.queue_packet("sid", NOOP)  # a dropped connection's frames change nothing
    assert list(socket.queue._items) == queued and not server._drops


async def test_a_second_drop_queues_the_writers_end_again() -> None:
    """Whatever drains a dropped connection's queue puts the writer's end back."""
    server = GameEngineIO(async_mode="asgi")
    socket = async_socket.AsyncSocket(server, "sid")
    server.sockets["sid"] = socket
    await server._drop(socket, "server disconnect", "slow_consumer")
    await server._drop(socket, "server disconnect", "slow_consumer")  # drains, then ends
    assert socket.queue._items[-1:] == [None]


async def test_a_client_that_never_reads_again_is_cut_off_after_its_drop() -> None:
    """Dropped as a slow consumer, it never reads again: its writer's send waits for the
    socket to drain, for ever. The server cuts the TCP connection itself once its writes
    have waited a ping interval and timeout (app/realtime/doors.py)."""
    async with serving(send_queue_limit=20, **QUICK_POLLS) as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        # Small kernel buffers at both ends (the server's inherited from its listening
        # socket): a few dozen rounds fill them, where the defaults take a few MB.
        server.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        stuck = await RawClient.open(server, small_buffer=True)
        await stuck.join(code, "Stuck")
        connections = server.server.server_state.connections
        before = len(connections)
        pinger = stuck.pong_blindly()
        try:
            async with asyncio.timeout(WAIT * 4):
                count = 0
                while len(connections) >= before:
                    await ann.ok("sit", {"seat": 6 + count % 2})
                    await ann.ok("stand")
                    count += 1
        finally:
            pinger.cancel()
        # Gone from the server without the client closing anything: its slot is free.
        assert len(connections) == before - 1
        await ann.ok("sit", {"seat": 5})
        await ann.close()
        stuck.ws.transport.abort()


@pytest.mark.parametrize("transports", [["polling"], ["polling", "websocket"]])
async def test_a_long_polling_client_is_never_taken_for_a_slow_one(transports: list[str]) -> None:
    """Long-polling (and a websocket upgraded from it) keeps python-engineio's writer, which
    does not count what it wrote: the slow-consumer cap must count what is queued there,
    or every such client was dropped after its first send_queue_limit messages."""
    async with serving(send_queue_limit=20, **QUICK_POLLS) as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        bob = await Client(server, code, "Bob").connect(transports=transports)
        for count in range(30):  # 60 states to Bob, each read as it comes
            await ann.ok("sit", {"seat": 6 + count % 2})
            await ann.ok("stand")
            await bob.wait_for(lambda: bob.state["version"] == ann.state["version"])
        assert bob.sio.connected
        await bob.ok("sit", {"seat": 1})
        await close_all([ann, bob])


async def test_a_reconnect_storm_leaves_no_connection_behind() -> None:
    """Twenty phones lose their network at once (no goodbye: the TCP connections just end)
    and all come back at once with their tokens, three times over: every old connection
    ends, with nothing left of it on the server, and the room has everyone back."""
    async with serving() as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        phones = [await RawClient.open(server) for _ in range(20)]
        tokens = [(await p.join(code, f"P{n}"))["token"] for n, p in enumerate(phones)]
        sockets = server.app.engineio_server.eio.sockets
        connections = server.server.server_state.connections
        settled = (len(sockets), len(connections))
        for _ in range(3):
            for phone in phones:
                phone.ws.transport.abort()
            phones = await asyncio.gather(*(RawClient.open(server) for _ in tokens))
            names = [f"P{n}" for n in range(len(tokens))]
            await asyncio.gather(*map(RawClient.join, phones, [code] * 20, names, tokens))
        async with asyncio.timeout(WAIT):
            while (len(sockets), len(connections)) != settled:
                await asyncio.sleep(0.05)
        await ann.wait_for(lambda: len(server.room(code).connected()) == 21)
        await ann.ok("start")  # the room goes on: the host starts the returned phones' game
        for phone in phones:
            phone.ws.transport.abort()
        await ann.close()
