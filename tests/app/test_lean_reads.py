"""The lean reader (app/realtime/serving.py LeanWebSocket.data_received): once the app reads a
websocket, its whole text frames are parsed without websockets' parser. A message is heard
whole and in order however TCP cuts or joins the frames, and from the first frame it does
not take (a ping, a close, an oversized or malformed frame) websockets reads the rest as it
always did, with the same answers and close codes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from typing import Any

from app_harness import WAIT, Server, serving
from raw_client import RawClient
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from app.realtime.queues import LeanQueue
from app.realtime.serving import (
    _LEAN,
    _WEBSOCKETS,
    _WEBSOCKETS_FOR_GOOD,
    LeanWebSocket,
    waits_for_a_frame,
)


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


# ---- the reader alone: every cut, deterministically ---------------------------------------


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.paused = self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self.paused = True

    def close(self) -> None:
        self.closed = True


def reader(limit: int = 1024) -> tuple[LeanWebSocket, list[str]]:
    """A LeanWebSocket past its handshake whose app reads (its listener records each text),
    with uvicorn's own path behind it for what the lean reader leaves (no server)."""
    ws = LeanWebSocket.__new__(LeanWebSocket)
    ws.conn = ServerProtocol(state=State.OPEN, max_size=limit)
    ws.transport = FakeTransport()  # type: ignore[assignment]
    ws.queue = LeanQueue()  # type: ignore[assignment]
    ws.close_sent = ws.read_paused = False
    ws.frames = []
    ws._reader, ws._partial, ws._read_limit = _WEBSOCKETS, b"", None
    heard: list[str] = []
    ws.listener = heard.append
    return ws, heard


def fed(ws: LeanWebSocket, data: bytes, cuts: list[int]) -> None:
    start = 0
    for cut in [*cuts, len(data)]:
        if cut > start:
            ws.data_received(data[start:cut])
        start = max(start, cut)


TEXTS = ["", "2", "x" * 120, "é" * 62, "y" * 126, "z" * 300, '42["flip",{}]']


def test_every_cut_of_frames_is_heard_whole_in_order_by_the_lean_reader() -> None:
    stream = b"".join(client_frame(text.encode()) for text in TEXTS)
    rng = random.Random(8)
    cuttings = [[cut] for cut in range(len(stream))]  # one cut anywhere
    cuttings += [list(range(len(stream)))]  # a byte at a time
    cuttings += [sorted(rng.sample(range(len(stream)), 12)) for _ in range(200)]
    for cuts in cuttings:
        ws, heard = reader()
        fed(ws, stream, cuts)
        assert heard == TEXTS, cuts
        assert ws._reader == _LEAN and ws._partial == b""
        assert ws.queue.empty() and not ws.transport.writes  # type: ignore[attr-defined]


def test_from_the_first_frame_it_does_not_take_websockets_reads_on_at_every_cut() -> None:
    """A binary frame and a ping amid texts: every text still reaches the listener in order,
    the binary message goes to uvicorn's queue, the ping is answered, whatever the cuts."""
    stream = (
        client_frame(b"one")
        + client_frame(b"\x00\x01", head=0x82)
        + client_frame(b"two")
        + client_frame(b"hi", head=0x89)
        + client_frame(b"three")
    )
    for cut in range(len(stream)):
        ws, heard = reader()
        fed(ws, stream, [cut])
        assert heard == ["one", "two", "three"], cut
        assert ws._reader == _WEBSOCKETS_FOR_GOOD
        assert ws.queue.get_nowait() == {"type": "websocket.receive", "bytes": b"\x00\x01"}
        writes = b"".join(ws.transport.writes)  # type: ignore[attr-defined]
        assert writes == b"\x8a\x02hi"  # the pong


def test_a_frame_held_when_the_app_stops_reading_goes_whole_to_uvicorns_queue() -> None:
    first, second = client_frame(b"first"), client_frame(b"second message")
    for cut in range(1, len(second)):
        ws, heard = reader()
        ws.data_received(first + second[:cut])
        ws.listener = None  # the app's reader ended (app/realtime/transport.py)
        ws.data_received(second[cut:])
        assert heard == ["first"]
        assert ws.queue.get_nowait() == {"type": "websocket.receive", "text": "second message"}


def test_the_lean_reader_takes_over_only_between_frames() -> None:
    """Bytes websockets read before the app listened (a frame's header, or all of it) stay
    websockets' until its parser is between frames; the frame after is the lean reader's."""
    frame = client_frame(b"hello")
    for cut in range(1, len(frame)):
        ws, heard = reader()
        listener, ws.listener = ws.listener, None
        ws.data_received(frame[:cut])  # read by websockets: nobody listens yet
        ws.listener = listener
        ws.data_received(frame[cut:])
        assert heard == ["hello"] and ws._reader == _WEBSOCKETS  # websockets finished it
        ws.data_received(client_frame(b"next"))
        assert heard == ["hello", "next"] and ws._reader == _LEAN


def test_the_read_limit_is_websockets_own() -> None:
    """A frame one byte past the limit goes to websockets, which closes with 1009; one at it
    is read."""
    ws, heard = reader(limit=200)
    ws.data_received(client_frame(b"a" * 200))
    assert heard == ["a" * 200] and ws._reader == _LEAN
    ws.data_received(client_frame(b"a" * 201))
    assert heard == ["a" * 200] and ws._reader == _WEBSOCKETS_FOR_GOOD
    assert ws.conn.close_sent is not None and ws.conn.close_sent.code == 1009
    assert ws.transport.closed  # type: ignore[attr-defined]
