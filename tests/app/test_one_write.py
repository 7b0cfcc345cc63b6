"""What a message costs (app/realtime/serving.py LeanWebSocket, app/realtime/transport.py
GameServer): what
`send_now` frames in one loop pass leaves in one write, behind nothing and before anything
uvicorn writes later; an ACK is the text python-socketio would send; one task a message."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engineio import async_socket
from engineio import packet as eio_packet
from socketio import packet as sio_packet
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

from app.ops.config import Settings
from app.ops.limits import TokenBucket
from app.ops.metrics import Metrics
from app.realtime.serving import Flushes, LeanWebSocket
from app.realtime.transport import FrameBudget, GameServer, GameSocket


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing


def open_socket(flushes: Flushes | None = None) -> tuple[LeanWebSocket, FakeTransport]:
    """A LeanWebSocket past its handshake, on a transport that records each write (no
    uvicorn server behind it: only what send_now and _flush read is set), flushed by
    `flushes` (one app's: the sockets of one test share it)."""
    ws = LeanWebSocket.__new__(LeanWebSocket)
    transport = FakeTransport()
    ws.transport = transport  # type: ignore[assignment]
    ws.loop = asyncio.get_running_loop()
    ws.conn = ServerProtocol(state=State.OPEN)
    ws.writable = asyncio.Event()
    ws.writable.set()
    ws.disconnected = ws.close_sent = False
    ws.handshake_complete = True
    ws.initial_response = None
    ws._flush_due = False
    ws.flushes = flushes or Flushes()
    return ws, transport


def frames(writes: list[bytes]) -> list[str]:
    """The text of every frame in `writes` (server frames: unmasked), in order."""
    reader = StreamReader()
    reader.feed_data(b"".join(writes))
    reader.feed_eof()
    texts = []
    while reader.buffer:
        parser = Frame.parse(reader.read_exact, mask=False)
        try:
            while True:
                next(parser)
        except StopIteration as done:
            frame = done.value
        texts.append(frame.data.decode() if frame.opcode is Opcode.TEXT else frame.opcode.name)
    return texts


async def test_what_one_loop_pass_sends_a_socket_is_one_write() -> None:
    ws, transport = open_socket()
    assert ws.send_now('42["state",{"version":7}]') and ws.send_now("31[{}]")
    assert transport.writes == []  # framed, not written yet
    await asyncio.sleep(0)
    assert len(transport.writes) == 1
    assert frames(transport.writes) == ['42["state",{"version":7}]', "31[{}]"]
    assert ws.send_now("2")  # a later pass: a write of its own
    await asyncio.sleep(0)
    assert frames(transport.writes[1:]) == ["2"]


async def test_every_socket_framed_in_a_pass_is_written_at_its_end_one_write_each() -> None:
    """A change's states to a whole table: one loop callback flushes every socket framed in
    the pass; a socket framed while that callback runs (or after) is flushed in the next."""
    shared = Flushes()
    (first, first_out), (second, second_out) = open_socket(shared), open_socket(shared)
    assert first.send_now("a1") and second.send_now("b1") and first.send_now("a2")
    assert first_out.writes == second_out.writes == []
    await asyncio.sleep(0)
    assert frames(first_out.writes) == ["a1", "a2"] and len(first_out.writes) == 1
    assert frames(second_out.writes) == ["b1"] and len(second_out.writes) == 1
    loop = asyncio.get_running_loop()
    loop.call_soon(lambda: second.send_now("b2"))  # runs before the flush below
    assert first.send_now("a3")
    await asyncio.sleep(0)
    assert frames(first_out.writes[1:]) == ["a3"] and frames(second_out.writes[1:]) == ["b2"]
    assert second.send_now("b3")  # a later pass: framed and flushed again
    await asyncio.sleep(0)
    assert frames(second_out.writes[2:]) == ["b3"]


async def test_a_flush_that_fails_leaves_the_others_in_its_pass_and_later_ones_alone(
    caplog: Any,
) -> None:
    """Each socket had a callback of its own, so one failing could strand no other: with one
    callback for the pass, a failure (a bug) is logged and the rest are still written."""
    shared = Flushes()
    (broken, _), (fine, fine_out) = open_socket(shared), open_socket(shared)

    def fails() -> None:
        broken._flush_due = False
        raise RuntimeError("a bug")

    broken._flush = fails  # type: ignore[method-assign]
    assert broken.send_now("x") and fine.send_now("a")
    await asyncio.sleep(0)
    assert frames(fine_out.writes) == ["a"]
    assert "flush_failed" in caplog.text
    assert fine.send_now("b")  # and its later passes are flushed as ever
    await asyncio.sleep(0)
    assert frames(fine_out.writes[1:]) == ["b"]


async def test_a_text_is_framed_as_websockets_frames_it() -> None:
    """send_now frames text itself: byte for byte what websockets' `send_text` writes, for
    each of the three lengths of length, and websockets' own path once it must (closing)."""
    ws, transport = open_socket()
    texts = ["é" * 3, "x" * 125, "x" * 126, "y" * 65535, "z" * 65536]
    for text in texts:
        assert ws.send_now(text)
        expected = ServerProtocol(state=State.OPEN)
        expected.send_text(text.encode())
        assert ws.conn.writes[-1] == b"".join(expected.data_to_send())
    await asyncio.sleep(0)
    assert frames(transport.writes) == texts
    ws.conn.send_close(1000)
    ws.conn.data_to_send()
    assert not ws.send_now("late")  # websockets refuses once the close is sent
    assert ws.conn.writes == []


async def test_a_write_of_uvicorn_takes_the_framed_text_first() -> None:
    """A close (or pong, or queued send) before the flush empties the connection's buffer
    itself: the framed text goes out before it, and the flush has nothing left."""
    ws, transport = open_socket()
    ws.send_now("a")
    ws.conn.send_close(1000)  # what uvicorn does on the app's websocket.close
    transport.write(b"".join(ws.conn.data_to_send()))
    await asyncio.sleep(0)
    assert frames(transport.writes) == ["a", "CLOSE"]
    assert len(transport.writes) == 1


async def test_nothing_is_written_to_a_closing_transport() -> None:
    ws, transport = open_socket()
    ws.send_now("a")
    transport.closing = True
    await asyncio.sleep(0)
    assert transport.writes == []
    assert not ws.send_now("b")  # refused now: the caller queues it for the writer


async def test_an_ack_is_the_text_python_socketio_would_send() -> None:
    server = GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())
    sent: list[str] = []

    def queue_packet(sid: str, pkt: Any) -> None:  # python-engineio's MESSAGE packet
        assert pkt.packet_type == eio_packet.MESSAGE
        sent.append(pkt.data)

    def queue_text(sid: str, text: str) -> None:  # ours: the whole Engine.IO text
        assert text[:1] == str(eio_packet.MESSAGE), text
        sent.append(text[1:])

    server.eio.queue_packet = queue_packet  # type: ignore[method-assign]
    server.eio.queue_text = queue_text  # type: ignore[method-assign]
    slow_way: list[Any] = []  # python-socketio's Packet and encoder, where orjson refuses
    queue_through_packet = server._queue_packet

    def through_packet(eio_sid: str, pkt: Any) -> None:
        slow_way.append(pkt.data)
        queue_through_packet(eio_sid, pkt)

    server._queue_packet = through_packet  # type: ignore[method-assign]
    answers: list[Any] = [
        {"ok": True, "events": [{"kind": "flip", "card": "10♥"}]},  # beyond ASCII
        ("one", 2),  # a tuple: one argument each
        None,  # no argument
        {1: "an int key"},  # orjson refuses it: python-socketio's own way
    ]
    for number, answer in enumerate(answers):
        server.on(f"e{number}", lambda sid, *args, a=answer: a)
        sent.clear()
        await server._handle_event_internal(server, "sid", "eio", [f"e{number}"], "/", number)
        expected = sio_packet.Packet(sio_packet.ACK, namespace="/", id=number, data=None)
        expected.data = (
            [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        )
        want = expected.encode()
        prefix = f"3{number}"
        assert sent[0].startswith(prefix) and want.startswith(prefix), (sent, want)
        assert json.loads(sent[0][len(prefix) :]) == json.loads(want[len(prefix) :])
    assert slow_way == [[{1: "an int key"}]]
    sent.clear()
    await server._handle_event_internal(server, "sid", "eio", ["e0"], "/", None)
    assert sent == []  # no id: no answer asked for


async def test_a_handler_still_waiting_holds_up_no_later_message() -> None:
    """Each message begins where it is read: by GameSocket (a websocket) or by
    python-engineio's socket (long-polling, upgraded), at once or in a task of its own, and
    python-socketio runs the handler right there. A handler that waits (at its room's lock)
    never stops the connection's later messages from being read and handled."""
    server = GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())
    order: list[str] = []
    release = asyncio.Event()

    async def first(sid: str) -> None:
        order.append("first waits")
        await release.wait()
        order.append("first done")

    async def second(sid: str) -> None:
        order.append("second")
        release.set()

    server.on("first", first)
    server.on("second", second)
    for eio_sid, read in (
        ("websocket", lambda s, text: GameSocket(server.eio, s)._on_text_frame(text)),
        (
            "polling",
            lambda s, text: async_socket.AsyncSocket(server.eio, s).receive(
                eio_packet.Packet(eio_packet.MESSAGE, data=text[1:])
            ),
        ),
    ):
        order.clear()
        release.clear()
        server._budgets[eio_sid] = FrameBudget(TokenBucket(100, 100))
        await server.manager.connect(eio_sid, "/")
        for text in ('42["first"]', '42["second"]'):
            reading = read(eio_sid, text)
            if reading is not None:
                await asyncio.wait_for(reading, 1)  # python-engineio's read returns at once
        await asyncio.wait_for(release.wait(), 1)
        async with asyncio.timeout(1):  # the first goes on once its task gets its turn
            while len(order) < 3:
                await asyncio.sleep(0)
        assert order == ["first waits", "second", "first done"], eio_sid


FRAMES = [
    '2["flip",{}]',
    '25["slap",{"pile_id":3}]',
    '2007["sit",{"seat":null}]',
    '2["name","Pé 🃏",-1.5e3,[true,false]]',
    '2["x",{"a":1,"a":2}]',  # a repeated key: the last one
    '2 ["x"]',  # not the common shape: python-socketio's decoder
    '2["x",NaN]',  # orjson refuses these three: python-socketio's decoder reads them
    '2["x",123456789012345678901234567890]',
    '2["x","\\ud800"]',
    "2" + "1" * 17 + '["x",-123456789012345678]',  # the longest number orjson reads
    "2" + "1" * 150 + '["x"]',  # refused by both: an id too long
    '21-["x",{"_placeholder":true,"num":0}]',
    '2/admin,5["x"]',
    '2["x"',
    "2",
    '3["x"]',
    "0",
]


def test_an_event_frame_decodes_as_python_socketio_decodes_it() -> None:
    server = GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())
    fast = 0
    for text in FRAMES:
        try:
            want = sio_packet.Packet(encoded_packet=text)
        except Exception as error:
            refused: Exception | None = error
        else:
            refused = None
        plain = server._plain_event(text)
        if plain is not None:  # an EVENT in the default namespace: (ack id, data)
            fast += 1
            seen = (sio_packet.EVENT, None, plain[0], json.dumps(plain[1]))
        else:
            try:
                got = server.packet_class(encoded_packet=text)
            except Exception:
                assert refused is not None, text
                continue
            seen = (got.packet_type, got.namespace, got.id, json.dumps(got.data))
        assert refused is None, text
        assert seen == (want.packet_type, want.namespace, want.id, json.dumps(want.data)), text
    assert fast == 6  # the first five, and the 17-digit id with the 18-digit number


async def test_a_connection_that_ends_while_it_joins_is_disconnected_once_it_has() -> None:
    """The connect handler waits (a busy room's lock); the client goes meanwhile, and
    python-socketio's disconnect skips a connection not yet connected. It must still hear
    of it, or the person stays at the table as connected and the room never expires."""
    server = GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())
    release = asyncio.Event()
    heard: list[str] = []

    async def connect(sid: str, environ: Any, auth: Any) -> bool:
        await release.wait()
        heard.append("connect")
        return True

    async def disconnect(sid: str, reason: str) -> None:
        heard.append(f"disconnect: {reason}")

    server.on("connect", connect)
    server.on("disconnect", disconnect)
    server.eio.send = lambda *args: asyncio.sleep(0)  # type: ignore[method-assign]
    server._budgets["eio"] = FrameBudget(TokenBucket(100, 100))
    server.environ["eio"] = {}
    joining = asyncio.create_task(server._handle_connect("eio", "/", {"room": "ABCDEF"}))
    await asyncio.sleep(0.01)
    await server._handle_eio_disconnect("eio", server.reason.TRANSPORT_CLOSE)
    assert heard == []  # python-socketio: not connected yet, nothing to tell
    release.set()
    await asyncio.wait_for(joining, 1)
    assert heard == ["connect", f"disconnect: {server.reason.TRANSPORT_CLOSE}"]
    assert server.manager.sid_from_eio_sid("eio", "/") is None
