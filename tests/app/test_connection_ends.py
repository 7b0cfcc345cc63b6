"""Every connection ends, whatever its client does (app/realtime/transport.py's own websocket path):
a client that stops reading and keeps sending, one that never reads again, and pings that
keep their rhythm when the wall clock steps. Each case is a way that path could hang or
leak a connection."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest
from app_harness import QUICK_POLLS, WAIT, Client, close_all, join, serving
from raw_client import RawClient

from app.realtime import transport
from app.realtime.queues import Outbox
from app.realtime.transport import GameEngineIO, GameSocket


class PausedWire:
    """A websocket whose client stopped reading: nothing can be written now."""

    def __init__(self) -> None:
        self.cut = 0

    def send_now(self, text: str) -> bool:
        return False

    def abort_if_stuck(self) -> None:
        self.cut += 1


def stuck_socket(limit: int) -> tuple[GameEngineIO, GameSocket, PausedWire]:
    """A connection whose writer took 3 packets and waits in a send that never returns."""
    server = GameEngineIO(async_mode="asgi")
    server.send_queue_limit = limit
    socket = GameSocket(server, "sid")
    server.sockets["sid"] = socket
    wire = PausedWire()
    outbox: Outbox = socket.queue
    outbox.wire = wire
    outbox.unsent = 3
    socket.last_ping = None  # its pong came: no ping pending
    return server, socket, wire


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_frames_from_a_dropped_connection_cannot_drain_its_end() -> None:
    """UPGRADE frames are answered NOOP, outside the frame budget. Flooded by a client that
    stopped reading, they filled its queue and it was dropped (its writer's None queued);
    more of them after the drop were still answered, a second drop drained the queue, the
    None with it, and the writer waited for ever: a connection slot held for good."""
    server, socket, wire = stuck_socket(limit=50)
    for _ in range(60):
        socket._on_text_frame("5")
    await settle()
    assert socket.closed and "sid" not in server.sockets
    assert wire.cut == 1  # its writer is stuck in a send: the connection is cut
    queued = list(socket.queue._items)
    assert None in queued
    for _ in range(60):
        socket._on_text_frame("5")  # a dropped connection's frames change nothing
    await settle()
    assert list(socket.queue._items) == queued


async def test_a_second_drop_queues_the_writers_end_again() -> None:
    """Whatever drains a dropped connection's queue puts the writer's end back."""
    server, socket, _ = stuck_socket(limit=50)
    await server._drop(socket, "server disconnect", "slow_consumer")
    await server._drop(socket, "server disconnect", "slow_consumer")  # drains, then ends
    assert socket.queue._items[-1:] == [None]


async def test_a_client_that_never_reads_again_is_cut_off_after_its_drop() -> None:
    """Dropped as a slow consumer, it never reads again: its writer's send waits for the
    socket to drain, for ever. The server now cuts the TCP connection itself."""
    async with serving(send_queue_limit=20) as server:
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


async def test_pings_keep_their_rhythm_when_the_wall_clock_steps_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sweep's lines are in due order; on the wall clock a step back (NTP, a VM
    resumed) held every ping behind the first, and every client gave up on the server."""
    server = GameEngineIO(async_mode="asgi", ping_interval=10, ping_timeout=5)
    socket = GameSocket(server, "sid")
    server.sockets["sid"] = socket
    socket.schedule_ping()  # its pong came: the next ping in 10 s
    wall = time.time()
    monkeypatch.setattr(transport.time, "time", lambda: wall - 3600)  # an hour back
    server.sweep(time.monotonic() + 10)
    assert [p.packet_type for p in socket.queue._items] == [2]  # the PING, on time
    assert socket.last_ping == wall - 3600  # python-engineio's wall time, as it reads it


async def test_the_pong_check_is_kept_when_a_ping_cannot_be_delivered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One connection's failure in the sweep cost that connection its ping cycle: it was
    never dropped however silent it stayed."""
    server = GameEngineIO(async_mode="asgi", ping_interval=10, ping_timeout=5)
    socket = GameSocket(server, "sid")
    server.sockets["sid"] = socket
    socket.schedule_ping()

    def broken(*args: Any) -> None:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(server, "_deliver", broken)
    now = time.monotonic()
    server.sweep(now + 10)  # the ping fails: logged, the sweep goes on
    dropped: list[str] = []
    monkeypatch.setattr(server, "_drop_later", lambda s, reason, why: dropped.append(why))
    server.sweep(now + 16)
    assert dropped == ["ping_timeout"]


@pytest.mark.transports("lean", "stock")
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


@pytest.mark.transports("lean", "stock")
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
