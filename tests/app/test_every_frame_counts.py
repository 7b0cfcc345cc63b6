"""Every frame a client sends is charged to its connection's budget, whatever it is:
websocket pings and pongs, Engine.IO pings, pongs, upgrades and noops alike. A client that
sends nothing but those is cut off as one flooding messages is."""

from __future__ import annotations

import asyncio

import pytest
from app_harness import join, serving
from hostile import REAL_LIMITS, BareWebSocket, frame
from raw_client import RawClient

FLOOD = 2000  # frames, sent at once: far past the burst (40) and the cut-off (40 in a row)


@pytest.mark.parametrize(
    "flood",
    [
        frame(b"", opcode=0x9),  # a websocket ping: websockets answers each with a pong
        frame(b"x", opcode=0xA),  # an unsolicited websocket pong
        frame(b"3"),  # an Engine.IO pong nobody asked for
        frame(b"6"),  # an Engine.IO noop
        frame(b"5"),  # an Engine.IO upgrade, on a websocket
        frame(b"2probe"),  # an Engine.IO ping from the client
    ],
    ids=["ws-ping", "ws-pong", "eio-pong", "eio-noop", "eio-upgrade", "eio-ping"],
)
async def test_a_flood_of_frames_that_are_no_messages_is_cut_off(flood: bytes) -> None:
    async with serving(**REAL_LIMITS) as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        raw = await RawClient.open(server)
        await raw.join(code, "Pinger")
        raw.ws.transport.write(flood * FLOOD)
        assert await raw.closed(), "never cut off"
        assert (await ann.ok("sit", {"seat": 5}))["seat"] == 5  # the room never noticed
        await ann.close()


async def test_a_bare_websocket_flooding_pings_is_cut_off() -> None:
    """Before any Socket.IO CONNECT, too."""
    async with serving(**REAL_LIMITS, connect_deadline_seconds=60.0) as server:
        bare = await BareWebSocket.open(server.port, "127.0.0.2")
        assert bare is not None
        bare.send(frame(b"", opcode=0x9) * FLOOD)
        await asyncio.wait_for(bare.closed.wait(), 10)
        bare.close()
