"""A websocket's events and pongs read where they arrive (app/realtime/frames.py FrameReader,
in app/realtime/doors.py's meter): each heard whole and in order however TCP cuts or joins
the frames; every other frame goes on to uvicorn whole and in order, and from the first
frame it does not take (a ping, a close, a binary, fragmented, oversized or malformed one)
uvicorn reads the rest as it always did, with the same answers and close codes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from typing import Any

from app_harness import WAIT, Server, serving
from raw_client import RawClient, client_frame

from app.realtime.doors import METERED
from app.realtime.frames import FrameReader, unmask


class Unwritten(asyncio.Transport):
    """A connection's transport, where the listener answers nothing."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        raise AssertionError(f"written: {bytes(data)!r}")

    def is_closing(self) -> bool:
        return False


def event(ack_id: int, name: str, data: Any) -> bytes:
    return f"42{ack_id}{json.dumps([name, data])}".encode()


def reader_of(server: Server) -> FrameReader:
    """The server's reader of the test's one websocket."""
    doors = server.server.config.http.doors  # the server's (app/realtime/serving.py)
    [reader] = [m.reader for m in list(METERED.values()) if m.doors is doors and m.reader]
    return reader


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


def test_unmasking_is_rfc_6455s() -> None:
    for size in (0, 1, 3, 4, 5, 125, 126, 1000):
        payload, mask = os.urandom(size), os.urandom(4)
        assert unmask(payload, mask) == bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_frames_cut_anywhere_or_sent_together_are_heard_whole_and_in_order() -> None:
    async with serving() as server:
        raw = await opened(server)
        reader = reader_of(server)
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
        assert not reader.for_good and reader._partial == b""


async def test_a_ping_goes_to_uvicorn_which_answers_it_and_reads_on() -> None:
    async with serving() as server:
        raw = await opened(server)
        reader = reader_of(server)
        raw.ws.transport.write(client_frame(event(1, "nope", {})))
        pong = await raw.ws.ping(b"hi")
        await asyncio.wait_for(pong, WAIT)
        assert (await heard(raw, 1))["error"]["code"] == "unknown_event"
        assert reader.for_good
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


async def test_a_fragmented_message_goes_to_uvicorn_and_is_heard() -> None:
    async with serving() as server:
        raw = await opened(server)
        reader = reader_of(server)
        text = event(1, "nope", {"a": 1})
        raw.ws.transport.write(client_frame(text[:5], 0x01) + client_frame(text[5:], 0x80))
        assert (await heard(raw, 1))["error"]["code"] == "unknown_event"
        assert reader.for_good


# ---- the reader alone: every cut, deterministically ---------------------------------------


def fed(reader: FrameReader, data: bytes, cuts: list[int]) -> list[bytes]:
    """`data` given to `reader` in pieces cut at `cuts`: what it forwarded, piece by piece."""
    forwarded: list[bytes] = []
    start = 0
    for cut in [*cuts, len(data)]:
        if cut > start:
            reader.take(data[start:cut], forwarded.append)
        start = max(start, cut)
    return forwarded


OURS = ["3", '42["flip",{}]', "42" + "x" * 120, "42" + "é" * 62, "42" + "y" * 300, "3"]


def test_every_cut_of_frames_is_heard_whole_in_order() -> None:
    stream = b"".join(client_frame(text.encode()) for text in OURS)
    rng = random.Random(8)
    cuttings = [[cut] for cut in range(len(stream))]  # one cut anywhere
    cuttings += [list(range(len(stream)))]  # a byte at a time
    cuttings += [sorted(rng.sample(range(len(stream)), 12)) for _ in range(200)]
    for cuts in cuttings:
        heard: list[str] = []
        reader = FrameReader(heard.append, 1024, Unwritten())
        assert fed(reader, stream, cuts) == [], cuts
        assert heard == OURS, cuts
        assert not reader.for_good and reader._partial == b""


def test_what_is_not_ours_goes_on_whole_in_order_at_every_cut() -> None:
    """A CONNECT and an ack amid events go on as they came, each frame whole; from a binary
    frame on, everything goes on, whatever the cuts."""
    connect, ack = client_frame(b'40{"room":"ABCDEF"}'), client_frame(b"431[]")
    binary = client_frame(b"\x00\x01", head=0x82)
    one, two = client_frame(b'42["one"]'), client_frame(b'42["two"]')
    stream = connect + one + ack + binary + two
    for cut in range(len(stream)):
        heard: list[str] = []
        reader = FrameReader(heard.append, 1024, Unwritten())
        forwarded = b"".join(fed(reader, stream, [cut]))
        assert heard == ['42["one"]'], cut
        assert forwarded == connect + ack + binary + two, cut
        assert reader.for_good


def test_a_frame_not_ours_that_is_no_utf8_goes_on_with_everything_after() -> None:
    """A CONNECT or an ack uvicorn would close on (1007) is not forwarded as one of the
    frames it reads quietly: from it on everything is uvicorn's, and what the server sends
    is uvicorn's to write too (app/realtime/frames.py `write_frame`)."""
    heard: list[str] = []
    reader = FrameReader(heard.append, 1024, Unwritten())
    bad, one = client_frame(b"40\xff"), client_frame(b'42["one"]')
    assert b"".join(fed(reader, bad + one, [])) == bad + one
    assert heard == [] and reader.for_good


def test_the_read_limit_is_uvicorns_own() -> None:
    """A frame one byte past the limit goes on to uvicorn (which closes with 1009), and
    everything after it; one at the limit is heard."""
    heard: list[str] = []
    reader = FrameReader(heard.append, 200, Unwritten())
    at_limit, past = client_frame(b"42" + b"a" * 198), client_frame(b"42" + b"a" * 199)
    assert fed(reader, at_limit, []) == [] and heard == ["42" + "a" * 198]
    assert b"".join(fed(reader, past + at_limit, [])) == past + at_limit
    assert reader.for_good and len(heard) == 1
