"""The lean reader (app/serving.py LeanWebSocket.data_received): once the app reads a
websocket, its whole text frames are parsed without websockets' parser. A message is heard
whole and in order however TCP cuts or joins the frames, and from the first frame it does
not take (a ping, a close, an oversized or malformed frame) websockets reads the rest as it
always did, with the same answers and close codes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from typing import Any

from app_harness import WAIT, Server, serving
from raw_client import RawClient
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from app.serving import _LEAN, _WEBSOCKETS_FOR_GOOD, LeanWebSocket, waits_for_a_frame


def client_frame(payload: bytes, head: int = 0x81, *, masked: bool = True) -> bytes:
    """A frame as a client sends it (masked with a random key unless told otherwise)."""
    size = len(payload)
    if size < 126:
        header = bytes((head, (0x80 if masked else 0) | size))
    else:
        header = bytes((head, (0x80 if masked else 0) | 126)) + size.to_bytes(2, "big")
    if not masked:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def event(ack_id: int, name: str, data: Any) -> bytes:
    return f"42{ack_id}{json.dumps([name, data])}".encode()


def wire_of(server: Server) -> LeanWebSocket:
    """The server's side of the test's one websocket."""
    (socket_,) = server.app.engineio_server.eio.sockets.values()
    wire = socket_.queue.wire
    assert isinstance(wire, LeanWebSocket)
    return wire


async def opened(server: Server) -> RawClient:
    raw = await RawClient.open(server)
    await raw.join(await server.new_room(), "Lee")
    raw.ws.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return raw


async def heard(raw: RawClient, ack_id: int) -> Any:
    """The answer to event `ack_id`, within WAIT seconds (the server's pings would keep a
    plain read going for ever)."""
    return await asyncio.wait_for(raw.ack(ack_id), WAIT)


async def write_in_pieces(raw: RawClient, data: bytes, cuts: list[int]) -> None:
    """`data` written in pieces cut at `cuts`, each its own TCP segment."""
    start = 0
    for cut in [*cuts, len(data)]:
        raw.ws.transport.write(data[start:cut])
        start = cut
        await asyncio.sleep(0.005)


async def test_frames_cut_anywhere_or_sent_together_are_heard_whole_and_in_order() -> None:
    async with serving() as server:
        raw = await opened(server)
        wire = wire_of(server)
        assert wire._reader == _LEAN
        # Unknown events: each is answered with an error ack, which shows it was heard.
        long_name = "x" * 200  # a frame with a two-byte length
        frames = [
            client_frame(event(1, "nope", {"a": 1})),
            client_frame(event(2, long_name, {})),
            client_frame(event(3, "nope", {"é": "ü"})),
        ]
        data = b"".join(frames)
        # The first two frames and the third's header in one segment; then the third's
        # bytes one by one. Then the long one cut inside its header's length, and its mask.
        await write_in_pieces(
            raw,
            data,
            [
                len(frames[0]) + len(frames[1]) + 1,
                *range(len(frames[0]) + len(frames[1]) + 2, len(data)),
            ],
        )
        for ack_id in (1, 2, 3):
            answer = await heard(raw, ack_id)
            assert answer["ok"] is False and answer["error"]["code"] == "unknown_event"
        again = client_frame(event(4, long_name, {}))
        await write_in_pieces(raw, again, [1, 3, 5, 8])
        assert (await heard(raw, 4))["error"]["code"] == "unknown_event"
        assert wire._reader == _LEAN and wire._partial == b""


async def test_a_ping_goes_to_websockets_which_answers_it_and_reads_on() -> None:
    async with serving() as server:
        raw = await opened(server)
        wire = wire_of(server)
        raw.ws.transport.write(client_frame(event(1, "nope", {})))
        pong = await raw.ws.ping(b"hi")
        await asyncio.wait_for(pong, WAIT)
        assert (await heard(raw, 1))["error"]["code"] == "unknown_event"
        assert wire._reader == _WEBSOCKETS_FOR_GOOD
        await raw.send(event(2, "nope", {}).decode())
        assert (await heard(raw, 2))["error"]["code"] == "unknown_event"


async def closed_with(raw: RawClient) -> int | None:
    assert await raw.closed()
    return raw.ws.close_code


async def test_an_oversized_frame_is_closed_with_1009() -> None:
    async with serving(max_message_bytes=1024) as server:
        raw = await opened(server)
        raw.ws.transport.write(client_frame(event(1, "nope", {"pad": "x" * 2000})))
        assert await closed_with(raw) == 1009


async def test_text_that_is_no_utf8_is_closed_with_1007() -> None:
    async with serving() as server:
        raw = await opened(server)
        raw.ws.transport.write(client_frame(b'42["nope",\xff]'))
        assert await closed_with(raw) == 1007


async def test_an_unmasked_frame_is_closed_with_1002() -> None:
    async with serving() as server:
        raw = await opened(server)
        raw.ws.transport.write(client_frame(event(1, "nope", {}), masked=False))
        assert await closed_with(raw) == 1002


async def test_a_fragmented_message_goes_to_websockets_and_is_heard() -> None:
    async with serving() as server:
        raw = await opened(server)
        wire = wire_of(server)
        text = event(1, "nope", {"a": 1})
        raw.ws.transport.write(client_frame(text[:5], 0x01) + client_frame(text[5:], 0x80))
        assert (await heard(raw, 1))["error"]["code"] == "unknown_event"
        assert wire._reader == _WEBSOCKETS_FOR_GOOD


def test_websockets_parser_is_between_frames_only_with_nothing_of_one_read() -> None:
    conn = ServerProtocol(state=State.OPEN)
    assert waits_for_a_frame(conn)
    conn.receive_data(b"\x81\x85")  # a header read: the buffer is empty, the frame is not done
    assert not conn.reader.buffer and not waits_for_a_frame(conn)
    conn.receive_data(b"\0\0\0\0hel")
    assert not waits_for_a_frame(conn)
    conn.receive_data(b"lo")
    assert waits_for_a_frame(conn)
    assert conn.events_received() == [Frame(Opcode.TEXT, b"hello")]
    conn.receive_data(b"\x81")  # a frame's first byte, left in the buffer
    assert not waits_for_a_frame(conn)
    assert not waits_for_a_frame(ServerProtocol())  # still reading the handshake
