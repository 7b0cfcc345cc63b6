"""A websocket's own path (app/realtime/websocket.py GameWebSocket, app/realtime/queues.py
Outbox, app/realtime/transport.py GameEngineIO and GameServer.heard): packets written at
once when nothing waits before them and in order when some do, each frame handled where it
is read, an event answered without a task unless it waits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from functools import partial
from socket import SO_SNDBUF, SOL_SOCKET
from typing import Any

import pytest
from app_harness import (
    WAIT,
    Client,
    Logged,
    autoplay,
    cards_held,
    check_refusals,
    close_all,
    join,
    serving,
    until,
)
from engineio import async_socket
from engineio import packet as eio_packet
from raw_client import RawClient, client_frame
from websockets.frames import Frame
from websockets.protocol import Protocol, Side

from app.ops.config import Settings
from app.ops.limits import TokenBucket
from app.ops.metrics import Metrics
from app.realtime.doors import Doors
from app.realtime.eager import ResumingWork, first_step
from app.realtime.frames import FrameReader, text_frame, write_frame
from app.realtime.guards import FrameBudget
from app.realtime.queues import Outbox
from app.realtime.transport import GameEngineIO, GameServer
from app.realtime.websocket import GameWebSocket

# ---- the Outbox (app/realtime/queues.py), on a websocket's frame writer -------------------


class FakeTransport(asyncio.Transport):
    """A connection's asyncio transport: the frames written to it, whether it closes."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[bytes] = []
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.frames.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing


class FakeMeter:
    """What a frame writer writes through (app/realtime/doors.py Metered): its transport,
    whether the transport's writes wait, and the connection's FrameReader."""

    def __init__(self) -> None:
        self.transport = FakeTransport()
        self.paused = False
        self.reader = FrameReader(lambda text: None, 4096, self.transport)

    def writer(self) -> Any:
        return partial(write_frame, self, self.reader)

    @property
    def texts(self) -> list[str]:
        """The frames written, read back by websockets' own parser (a client's)."""
        client = Protocol(Side.CLIENT, max_size=None)  # an open websocket's client side
        client.receive_data(b"".join(self.transport.frames))
        frames = client.events_received()
        return [bytes(f.data).decode() for f in frames if isinstance(f, Frame)]


class FakeSend:
    """A websocket's ASGI `send`, as the connection's writer uses it: what it sent."""

    def __init__(self) -> None:
        self.written: list[str] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        self.written.append(message["text"])


def attached(outbox: Outbox) -> tuple[FakeMeter, FakeSend]:
    """The websocket's writer runs: its ASGI `send`, and a frame writer on a meter."""
    meter, send = FakeMeter(), FakeSend()
    outbox.send, outbox.write = send, meter.writer()
    return meter, send


def message(data: str) -> Any:
    return eio_packet.Packet(eio_packet.MESSAGE, data=data)


def writer_takes(outbox: Outbox) -> str:
    """What the connection's writer does with one queued packet: takes it, sends it, counts
    it written. Returns its text."""
    item = outbox.get_nowait()
    outbox.task_done()
    outbox.written()
    text: str = item.encode()
    return text


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_a_text_frame_is_what_websockets_reads(size: int) -> None:
    """Each length's encoding (in the byte, in 2 bytes, in 8), read back by websockets'
    parser; UTF-8 past ASCII counts in bytes."""
    meter = FakeMeter()
    text = "é" * (size // 2) + "x" * (size % 2)
    assert meter.writer()(text)
    assert meter.texts == [text]
    assert meter.transport.frames == [text_frame(text)]


def test_a_packet_goes_straight_out_when_nothing_is_unsent() -> None:
    outbox = Outbox()
    meter, send = attached(outbox)
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    assert meter.texts == ["4a", "4b"] and send.written == []
    assert outbox.qsize() == 0 and outbox.unsent == 0


def test_without_a_writer_every_packet_queues() -> None:
    """Long-polling, an upgraded websocket, or before the writer attached itself."""
    outbox = Outbox()
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    assert outbox.qsize() == 2 and outbox.unsent == 2
    meter, _ = attached(outbox)  # the writer attaches with those two still to write
    outbox.put_nowait(message("c"))
    assert meter.texts == [] and outbox.qsize() == 3  # behind them, not before
    assert [writer_takes(outbox) for _ in range(3)] == ["4a", "4b", "4c"]
    outbox.put_nowait(message("d"))
    assert meter.texts == ["4d"]


def test_once_writes_wait_everything_queues_until_the_writer_caught_up() -> None:
    outbox = Outbox()
    meter, _ = attached(outbox)
    outbox.put_nowait(message("1"))  # straight out
    meter.paused = True  # the client stopped reading: "2" is the writer's
    outbox.put_nowait(message("2"))
    meter.paused = False  # it reads again: still, "3" must not overtake "2"
    outbox.put_nowait(message("3"))
    assert meter.texts == ["41"]
    assert outbox.qsize() == 2 and outbox.unsent == 2
    sent = [writer_takes(outbox)]  # the writer sends "2" ...
    outbox.put_nowait(message("4"))  # ... and "3" is still unsent: "4" queues behind it
    assert meter.texts == ["41"] and outbox.qsize() == 2
    sent += [writer_takes(outbox), writer_takes(outbox)]
    assert sent == ["42", "43", "44"]
    assert outbox.unsent == 0
    outbox.put_nowait(message("5"))  # nothing unsent: straight out again
    assert meter.texts == ["41", "45"] and outbox.qsize() == 0


def test_a_packet_handed_to_the_writer_still_holds_back_later_ones() -> None:
    """The writer takes a batch off the queue (qsize 0) and sends it with awaits between:
    until it counted each written, what comes next queues behind."""
    outbox = Outbox()
    meter, _ = attached(outbox)
    meter.paused = True
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    meter.paused = False
    batch = outbox.after(outbox.get_nowait())  # taken, not yet written
    assert len(batch) == 2 and outbox.qsize() == 0 and outbox.unsent == 2
    outbox.put_nowait(message("c"))
    assert meter.texts == [] and outbox.qsize() == 1
    for _ in batch:
        outbox.written()
    assert writer_takes(outbox) == "4c" and outbox.unsent == 0


def test_the_end_always_goes_through_the_queue() -> None:
    """None ends the writer: written at once it would mean nothing, and it counts as no
    packet (the writer never counts it written)."""
    outbox = Outbox()
    meter, _ = attached(outbox)
    outbox.put_nowait(None)
    assert meter.texts == [] and outbox.qsize() == 1 and outbox.unsent == 0
    assert outbox.get_nowait() is None


def test_qsize_counts_only_what_is_queued() -> None:
    """The slow-consumer cap (send_queue_limit) reads what is unsent: packets written at
    once are not waiting anywhere and must not count towards it."""
    outbox = Outbox()
    meter, _ = attached(outbox)
    for number in range(1000):
        outbox.put_nowait(message(str(number)))
    assert len(meter.texts) == 1000 and outbox.qsize() == 0 and outbox.held == 0
    meter.paused = True
    for number in range(3):
        outbox.put_nowait(message(str(number)))
    assert outbox.qsize() == 3 and outbox.held == 3
    while outbox.qsize():
        writer_takes(outbox)


def test_a_text_goes_straight_out_only_where_a_packet_would() -> None:
    """`send_now` (a state's text, app/realtime/outgoing.py): written as a packet would be,
    and False, with nothing done, wherever a packet would have to queue: the caller queues
    it."""
    outbox = Outbox()
    assert not outbox.send_now("41")  # no writer yet
    meter, _ = attached(outbox)
    assert outbox.send_now("41")
    meter.paused = True
    assert not outbox.send_now("42")  # the client stopped reading
    outbox.put_behind(message("2"))  # (as the caller does)
    meter.paused = False
    assert not outbox.send_now("43")  # "42" is unsent: "43" must not overtake it
    assert meter.texts == ["41"] and outbox.qsize() == 1 and outbox.unsent == 1
    assert writer_takes(outbox) == "42" and outbox.send_now("43")
    assert meter.texts == ["41", "43"]


def test_what_answers_a_message_heard_goes_out_in_one_write() -> None:
    """The ack of a message and the state it made (here two packets queued while the reader
    hears it) leave in one write of the transport, in order; what comes outside a message's
    hearing is written at once. A transport closed by what was heard gets nothing."""
    outbox = Outbox()
    meter, _ = attached(outbox)

    def answer(text: str) -> None:
        outbox.put_nowait(message("state"))
        outbox.put_nowait(message("ack"))
        assert meter.transport.frames == []  # nothing out yet: gathered

    meter.reader.listener = answer
    meter.reader.take(client_frame(b'421["flip",{}]'), lambda data: None)
    assert meter.transport.frames == [text_frame("4state") + text_frame("4ack")]
    outbox.put_nowait(message("later"))
    assert len(meter.transport.frames) == 2 and meter.texts == ["4state", "4ack", "4later"]

    def hang_up(text: str) -> None:
        outbox.put_nowait(message("gone"))
        meter.transport.closing = True

    meter.reader.listener = hang_up
    meter.reader.take(client_frame(b'422["leave",{}]'), lambda data: None)
    assert meter.texts == ["4state", "4ack", "4later"] and outbox.unsent == 0


def test_nothing_is_written_at_once_after_the_end() -> None:
    """Once its end is put (a hang-up, or python-engineio's close), the writer's last frame
    may be uvicorn's close, and the transport stays open until the client answers it: no
    frame of ours may follow."""
    outbox = Outbox()
    meter, _ = attached(outbox)
    outbox.put_nowait(None)
    assert not outbox.send_now("4late") and meter.transport.frames == []


def test_a_listener_that_fails_loses_no_frame_and_gathers_nothing_after() -> None:
    outbox = Outbox()
    meter, _ = attached(outbox)

    def fails(text: str) -> None:
        outbox.put_nowait(message("answer"))
        raise RuntimeError("a bug")

    meter.reader.listener = fails
    with pytest.raises(RuntimeError):
        meter.reader.take(client_frame(b'421["flip",{}]'), lambda data: None)
    outbox.put_nowait(message("later"))
    assert meter.texts == ["4answer", "4later"] and len(meter.transport.frames) == 2


async def test_the_meter_tells_when_the_transport_s_writes_wait() -> None:
    """uvicorn's protocol behind the meter (app/realtime/doors.py Metered) hears the pause
    too; the frame writer reads the meter's `paused`."""
    told: list[str] = []

    class Inner(asyncio.Protocol):
        def pause_writing(self) -> None:
            told.append("pause")

        def resume_writing(self) -> None:
            told.append("resume")

    settings = Settings(allowed_origins=["http://127.0.0.1"])
    metered = Doors(settings).metered(Inner(), FakeTransport(), "192.0.2.1")
    reader = FrameReader(lambda text: None, 4096, metered.transport)
    metered.pause_writing()
    assert metered.paused and not write_frame(metered, reader, "4waits")
    metered.resume_writing()
    assert not metered.paused and write_frame(metered, reader, "4goes")
    assert told == ["pause", "resume"] and metered.transport.frames == [text_frame("4goes")]


@pytest.mark.parametrize("why", ["for good", "closing"])
def test_uvicorn_s_send_takes_over_where_a_frame_of_ours_might_follow_its_close(
    why: str,
) -> None:
    """Once the FrameReader hands everything to uvicorn (a close, a ping, a frame it does not
    take), uvicorn may answer or close, and its close must be the last frame out; once the
    transport closes (uvicorn's close at shutdown), nothing more is written. The writer's
    `send` (uvicorn's) takes every packet from there."""
    outbox = Outbox()
    meter, _ = attached(outbox)
    if why == "for good":
        meter.reader.take(b"\x88\x80abcd", lambda data: None)  # a client's close frame
        assert meter.reader.for_good
    else:
        meter.transport.closing = True
    outbox.put_nowait(message("x"))
    assert meter.transport.frames == [] and outbox.unsent == 1
    assert writer_takes(outbox) == "4x"


def test_the_writer_takes_what_is_queued_up_to_the_end() -> None:
    outbox = Outbox()
    for data in ("a", "b"):
        outbox.put_behind(message(data))
    outbox.put_nowait(None)
    outbox.put_behind(message("late"))  # after the end: never the writer's
    taken = outbox.after(outbox.get_nowait())
    assert [p.encode() for p in taken] == ["4a", "4b"]
    assert outbox.after(outbox.get_nowait()) == []  # the end, put back for the next take
    assert outbox.ended


# ---- sending (GameEngineIO.queue_text), to sockets of python-engineio's own --------------


def engine() -> GameEngineIO:
    return GameEngineIO(async_mode="asgi")


def connected(server: GameEngineIO, sid: str) -> Any:
    socket = async_socket.AsyncSocket(server, sid)
    server.sockets[sid] = socket
    return socket


def queued(socket: Any) -> list[Any]:
    packets = []
    while not socket.queue.empty():
        packets.append(socket.queue.get_nowait())
        socket.queue.task_done()
    return packets


def drops(server: GameEngineIO) -> list[str]:
    return sorted(task.get_name() for task in server._drops)


async def test_a_text_is_written_at_once_or_queued_as_its_packet_behind_the_rest() -> None:
    """GameEngineIO.queue_text, what every state takes: straight to the wire when nothing is
    unsent, else queued as the packet that encodes to the same text, in order; nothing for
    a connection that is gone; past the queue's cap the connection is dropped."""
    server = engine()
    server.send_queue_limit = 3
    socket = connected(server, "reader")
    meter, _ = attached(socket.queue)
    server.queue_text("reader", '42["state",{"version":1}]')
    assert meter.texts == ['42["state",{"version":1}]'] and socket.queue.qsize() == 0
    socket.queue.write = None  # no writer to write at once (long-polling): queued as packets
    server.queue_text("reader", '42["state",{"version":2}]')
    socket.queue.write = meter.writer()
    server.queue_text("reader", '42["state",{"version":3}]')
    assert meter.texts == ['42["state",{"version":1}]']
    assert [p.encode() for p in queued(socket)] == [
        '42["state",{"version":2}]',
        '42["state",{"version":3}]',
    ]
    server.queue_text("gone", "42[]")  # no such connection: nothing, no error
    # The two taken above are not counted written yet: one more fits.
    for version in range(4, 7):
        server.queue_text("reader", f'42["state",{{"version":{version}}}]')
    assert socket.queue.held == 3 and len(queued(socket)) == 1
    assert drops(server) == ["reader"]  # the cap (3) reached: dropped, in a task of its own
    await asyncio.gather(*server._drops)
    assert "reader" not in server.sockets
    assert socket.closed and socket.queue.ended


async def test_nothing_is_queued_for_a_connection_that_is_ending() -> None:
    server = engine()
    socket = connected(server, "ending")
    socket.queue.put_nowait(None)  # its writer's end: hung up, or its reader stopped
    queued(socket)
    server.queue_text("ending", "42[]")
    server.queue_packet("ending", message("x"))
    assert queued(socket) == [] and drops(server) == []


async def test_a_send_never_waits_and_never_closes_in_the_sender() -> None:
    """python-engineio's send_packet closes a connection whose pong is late inline, and
    the disconnect handler would run inside the sender (a room sending under its lock).
    Ours only queues: its socket's own ping bookkeeping is never consulted."""
    server = engine()
    closed: list[str] = []

    async def disconnect(sid: str, reason: str) -> None:
        closed.append(sid)

    server.on("disconnect", disconnect)
    socket = connected(server, "late")
    socket.last_ping = 1.0  # pinged in 1970, never answered
    work = server.send_packet("late", message("x"))
    assert first_step(work) is None  # done in one step: no wait
    assert [p.encode() for p in queued(socket)] == ["4x"] and closed == []


# ---- a websocket's reader and writer (GameWebSocket), over a fake ASGI connection ----------


class Asgi:
    """ASGI's receive and send for one websocket: frames from the client, what was sent."""

    def __init__(self, *frames: str | bytes) -> None:
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for frame in frames:
            self.client_sends(frame)
        self.sent: list[dict[str, Any]] = []
        self.writable = asyncio.Event()
        self.writable.set()

    def client_sends(self, frame: str | bytes) -> None:
        key = "text" if isinstance(frame, str) else "bytes"
        self.frames.put_nowait({"type": "websocket.receive", key: frame})

    def client_goes(self) -> None:
        self.frames.put_nowait({"type": "websocket.disconnect", "code": 1000})

    async def receive(self) -> dict[str, Any]:
        return await self.frames.get()

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()  # uvicorn's send waits while the client reads nothing
        self.sent.append(message)

    @property
    def texts(self) -> list[str]:
        return [m["text"] for m in self.sent if m["type"] == "websocket.send"]

    def environ(self) -> dict[str, Any]:
        return {"asgi.receive": self.receive, "asgi.send": self.send}


class Served:
    """A GameServer (python-socketio's) and one websocket its driver serves, its messages
    and hang-ups recorded instead of handled."""

    def __init__(self, *frames: str | bytes, limit: int = 4096) -> None:
        settings = Settings(allowed_origins=["http://127.0.0.1"], max_message_bytes=limit)
        self.server = GameServer(settings, Metrics())
        self.eio: GameEngineIO = self.server.eio
        self.socket = connected(self.eio, "sid")
        self.heard: list[Any] = []
        self.hung_up: list[tuple[str, str | None]] = []
        driver: type[GameWebSocket] = self.eio._async["websocket"]

        def heard(sid: str, data: Any) -> None:
            self.heard.append(data)

        hang_up_for_real = self.eio.hang_up

        async def hang_up(sid: str, reason: str | None = None) -> None:
            self.hung_up.append((sid, reason))
            await hang_up_for_real(sid, reason)

        driver.heard = staticmethod(heard)  # type: ignore[method-assign, assignment]
        self.eio.hang_up = hang_up  # type: ignore[method-assign]
        self.asgi = Asgi(*frames)
        self.websocket = driver(self.socket._websocket_handler, self.eio)

    async def run(self) -> None:
        await asyncio.wait_for(self.websocket(self.asgi.environ()), WAIT)


async def test_messages_are_heard_and_a_pong_and_a_noop_change_nothing() -> None:
    served = Served('42["sit",{"seat":1}]', "40", "6", "3", 'b"x"')
    served.asgi.client_sends(b"binary")
    served.asgi.client_goes()
    await served.run()
    assert served.heard == ['2["sit",{"seat":1}]', "0", b'b"x"', b"binary"]  # binary: bytes
    assert served.asgi.sent[0] == {"type": "websocket.accept"}
    assert served.asgi.sent[-1] == {"type": "websocket.close"}
    assert served.socket.closed and served.hung_up == []


@pytest.mark.parametrize("frame", ["x", "", "\x00", "9"])
async def test_what_is_no_engine_io_is_hung_up_on(frame: str) -> None:
    served = Served(frame, '42["never",{}]')
    await served.run()
    assert served.hung_up == [("sid", None)] and served.heard == []
    assert served.socket.closed and "sid" not in served.eio.sockets


async def test_a_frame_past_the_limit_ends_the_connection_unheard() -> None:
    served = Served("42" + "x" * 64, limit=256)  # the limit's floor is 256
    served.asgi.frames = asyncio.Queue()
    served.asgi.client_sends("42" + "x" * 300)
    await served.run()
    assert served.heard == [] and served.socket.closed


async def test_a_close_hangs_up_as_the_client_asked_and_an_upgrade_is_answered() -> None:
    served = Served("5", "1", '42["never",{}]')
    await served.run()
    assert served.hung_up == [("sid", served.eio.reason.CLIENT_DISCONNECT)]
    assert served.asgi.texts == ["6"] and served.heard == []


async def test_without_uvicorn_every_packet_goes_through_the_writer_in_order() -> None:
    """Served by an ASGI server other than uvicorn (no meter to write frames through), every
    packet waits for the writer task, which sends it with ASGI's `send`: in order, each one
    after the one before is out, however long the client takes to read."""
    served = Served()
    reading = asyncio.create_task(served.websocket(served.asgi.environ()))
    await until(lambda: served.socket.queue.send is not None)
    outbox: Outbox = served.socket.queue
    assert outbox.write is None
    served.eio.queue_text("sid", "4first")
    await until(lambda: outbox.unsent == 0)
    served.asgi.writable.clear()  # the client stops reading
    for text in ("4second", "4third"):
        served.eio.queue_text("sid", text)
    await asyncio.sleep(0.01)
    assert served.asgi.texts == ["4first"] and outbox.unsent == 2
    served.asgi.writable.set()
    await until(lambda: outbox.unsent == 0)
    served.eio.queue_text("sid", "4fourth")
    await until(lambda: outbox.unsent == 0)
    assert served.asgi.texts == ["4first", "4second", "4third", "4fourth"]
    served.asgi.client_goes()
    await asyncio.wait_for(reading, WAIT)


async def test_a_send_to_a_client_that_went_is_nothing() -> None:
    """The writer's `send` fails (uvicorn: ClientDisconnected): the writer ends quietly."""
    served = Served()

    async def gone(message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":
            raise OSError("the client went")
        served.asgi.sent.append(message)

    environ = {**served.asgi.environ(), "asgi.send": gone}
    reading = asyncio.create_task(served.websocket(environ))
    await until(lambda: served.socket.queue.send is not None)
    served.eio.queue_text("sid", "4lost")
    served.asgi.client_goes()
    await asyncio.wait_for(reading, WAIT)
    assert served.asgi.sent[-1] == {"type": "websocket.close"} and served.socket.closed


async def test_the_writer_ends_the_websocket_after_python_engineios_close() -> None:
    """python-engineio closes a session itself (its disconnect): its CLOSE is the last
    packet written, the websocket closes, and nothing is queued for it afterwards."""
    served = Served()
    reading = asyncio.create_task(served.websocket(served.asgi.environ()))
    await until(lambda: served.socket.queue.send is not None)
    await served.eio.disconnect("sid")
    await until(lambda: {"type": "websocket.close"} in served.asgi.sent)
    assert served.asgi.texts[-1] == "1"
    served.eio.queue_text("sid", "4late")
    assert "4late" not in served.asgi.texts
    served.asgi.client_goes()
    await asyncio.wait_for(reading, WAIT)


# ---- through a real server --------------------------------------------------------------


def versions(frames: list[str | bytes]) -> list[int]:
    return [
        json.loads(frame[2:])[1]["version"]
        for frame in frames
        if isinstance(frame, str) and frame.startswith('42["state"')
    ]


async def test_a_client_that_pauses_reading_gets_every_state_in_order() -> None:
    """While the client does not read, the server's sends wait and the packets queue; once
    it reads again the queue drains and later packets go straight out, never before the
    queued ones."""
    async with serving(
        send_queue_limit=100_000, ping_interval_seconds=60.0, ping_timeout_seconds=60.0
    ) as server:
        # Small kernel buffers on the server's side (inherited from its listening socket):
        # its sends wait after a few dozen states, not after MBs.
        server.sock.setsockopt(SOL_SOCKET, SO_SNDBUF, 4096)
        code = await server.new_room()
        players = await join(server, code, "Ann", "Bob", "Cid")
        stuck = await RawClient.open(server, small_buffer=True)
        await stuck.join(code, "Stuck")
        sockets = server.app.engineio_server.eio.sockets
        others = {player.sio.eio.sid for player in players}
        (socket,) = [s for sid, s in sockets.items() if sid not in others]
        outbox: Outbox = socket.queue
        assert outbox.send is not None  # served by GameWebSocket
        room = server.room(code)
        changes = 0

        async def change() -> None:
            """Three people sit and stand at once: the room's changes come while the
            writer is catching up, not only between its steps."""
            nonlocal changes

            async def sit_and_stand(player: Client, seats: tuple[int, int]) -> None:
                await player.ok("sit", {"seat": seats[changes % 2]})
                await player.ok("stand")

            seats = [(6, 7), (4, 5), (2, 3)]
            await asyncio.gather(
                *(sit_and_stand(p, s) for p, s in zip(players, seats, strict=True))
            )
            changes += 1

        # 1. It does not read (not even its socket: no buffer of its own drains meanwhile):
        # its packets queue, and every one after goes behind them.
        stuck.ws.transport.pause_reading()
        async with asyncio.timeout(WAIT * 3):
            while outbox.unsent < 10:
                await change()
        unsent = outbox.unsent
        for _ in range(5):
            await change()
        assert outbox.unsent >= unsent + 5 * 6  # 5 changes, 3 people each sat and stood

        # 2. It reads again while the room goes on: the queued ones, then the rest.
        target = 10**9

        async def read_on() -> None:  # (never cancelled: websockets' recv waits it out)
            while not versions(stuck.frames) or versions(stuck.frames)[-1] < target:
                await stuck.next()

        stuck.ws.transport.resume_reading()
        reading = asyncio.create_task(read_on())
        async with asyncio.timeout(WAIT * 3):
            while outbox.unsent > 0:
                await change()
        for _ in range(5):
            await change()
            assert outbox.unsent == 0  # caught up: straight out again
        target = room.version
        await change()  # what the reader reads to see it is there
        await asyncio.wait_for(reading, WAIT)
        seen = versions(stuck.frames)
        assert seen == list(range(seen[0], seen[-1] + 1)), seen
        assert seen[-1] >= target
        await close_all(players)
        stuck.ws.transport.abort()


async def test_what_is_no_engine_io_frame_ends_the_connection() -> None:
    async with serving() as server:
        code = await server.new_room()
        for frame in ("x", ""):
            raw = await RawClient.open(server)
            await raw.join(code, f"Garbled {len(frame)}")  # names at a table differ
            await raw.send(frame)
            assert await raw.closed(), frame
        sockets = server.app.engineio_server.eio.sockets
        await until(lambda: not sockets, "the garbled connections gone")


async def test_an_engine_io_close_ends_the_connection_and_the_room_sees_it() -> None:
    """A CLOSE is the client hanging up on purpose (python-engineio's CLIENT_DISCONNECT):
    the room sees the person leave, not a dropped connection to wait for."""
    async with serving() as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        raw = await RawClient.open(server)
        welcome = await raw.join(code, "Leaves")
        await raw.send("1")
        assert await raw.closed()
        await ann.wait_for(
            lambda: any(
                e["kind"] == "leave" and e["player"] == welcome["player"] for e in ann.events
            )
        )
        await ann.close()


async def test_an_upgrade_probe_is_answered_with_a_noop(server: Any) -> None:
    code = await server.new_room()
    raw = await RawClient.open(server)
    await raw.join(code, "Probe")
    await raw.send("5")
    assert await raw.next_matching(lambda f: f == "6") == "6"
    await raw.send('421["stand",{}]')  # the connection goes on
    assert (await raw.ack(1))["ok"]
    await raw.close()


async def test_a_client_that_upgrades_from_polling_plays_a_game() -> None:
    """The upgraded websocket keeps python-engineio's reader and writer, and its pings
    (short here: many of them in a game)."""
    async with serving(ping_interval_seconds=0.5, ping_timeout_seconds=5.0) as server:
        code = await server.new_room()
        ann = await Client(server, code, "Ann").connect(transports=["polling", "websocket"])
        bob = await Client(server, code, "Bob").connect()
        await until(lambda: ann.sio.transport() == "websocket", "Ann's upgrade")
        sockets = server.app.engineio_server.eio.sockets
        upgraded = sockets[ann.sio.eio.sid]
        assert upgraded.upgraded and upgraded.queue.send is None
        assert sockets[bob.sio.eio.sid].queue.send is not None
        for client in (ann, bob):
            if client.seat is not None:
                await client.ok("stand")
        await ann.ok("sit", {"seat": 0})
        await bob.ok("sit", {"seat": 1})
        await ann.ok("start")
        for acks in await asyncio.gather(autoplay(ann), autoplay(bob)):
            check_refusals(acks)
        assert ann.state["phase"] == "over" and cards_held(ann.state) == 52
        assert not ann.disconnected.is_set() and not bob.disconnected.is_set()
        await close_all([ann, bob])


async def test_a_browser_offering_compression_gets_plain_frames() -> None:
    """Every browser offers permessage-deflate (the websockets client does too): the server
    declines it, so no connection carries a compressor, and the game goes on in plain text."""
    async with serving() as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        offered = raw.ws.request.headers.get("Sec-WebSocket-Extensions")
        assert offered is not None and "permessage-deflate" in offered
        assert raw.ws.response.headers.get("Sec-WebSocket-Extensions") is None
        assert raw.ws.protocol.extensions == []
        await raw.join(code, "Plain")
        await raw.send('421["stand",{}]')
        assert (await raw.ack(1))["ok"]
        await raw.close()


async def test_after_a_websocket_ping_uvicorn_writes_and_the_game_goes_on() -> None:
    """A websocket's packets are frames of ours until the client sends what only uvicorn
    reads (here a websocket-level ping: uvicorn answers it with a pong frame). From then on
    uvicorn's `send` writes every packet, in order with its own frames, and the close the
    client asks for is answered, the last frame out."""
    async with serving() as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Pinger")
        [socket] = server.app.engineio_server.eio.sockets.values()
        outbox: Outbox = socket.queue
        assert outbox.write is not None and outbox.write("4direct")  # a frame of ours
        assert await raw.next_matching(lambda f: f == "4direct") == "4direct"
        await asyncio.wait_for(await raw.ws.ping(), WAIT)  # answered: uvicorn's pong
        assert not outbox.write("4refused")  # uvicorn's from here
        await raw.send('421["sit",{"seat":0}]')
        assert (await raw.ack(1))["ok"]
        await raw.send('422["stand",{}]')
        assert (await raw.ack(2))["ok"]
        assert outbox.unsent == 0 and "4refused" not in raw.frames
        await raw.ws.close()
        assert raw.ws.close_code == 1000  # the server's answer to our close came back
        await until(lambda: not server.app.engineio_server.eio.sockets, "the socket gone")


async def test_a_websocket_has_no_keepalive_of_its_own_engine_io_pings_it() -> None:
    """uvicorn's websocket-level pings would duplicate Engine.IO's (two timers per
    connection, a ping and a pong every 20 s): off, on every connection uvicorn serves.
    Engine.IO's sweep pings instead, and python-engineio's own monitoring is off."""
    async with serving() as server:
        config = server.server.config
        assert config.ws_ping_interval is None and config.ws_ping_timeout is None
        eio = server.app.engineio_server.eio
        assert eio.start_service_task is False  # monitor_clients=False
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Quiet")
        [socket] = eio.sockets.values()
        assert socket.queue.send is not None  # served by GameWebSocket
        await raw.close()


# ---- an event answered where it is read (GameServer.heard, app/realtime/eager.py) ----------


FLIP = '2["flip",{}]'  # a Socket.IO EVENT, as the reader hands it over


def game_server(handler: Any) -> GameServer:
    """A GameServer whose python-engineio message handler (after the guards) is `handler`."""
    server = GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())
    server.engineio_message = handler  # type: ignore[method-assign]
    return server


async def test_an_event_that_never_waits_is_handled_at_once_without_a_task() -> None:
    """A Socket.IO EVENT (a flip, a slap) runs to its end inside `heard` when it never
    waits, as the frame is read: no task, no loop pass. Anything else is given back to the
    reader to await (a connect is done before the next frame counts)."""
    handled: list[tuple[str, Any]] = []

    async def handler(sid: str, data: Any) -> str:
        handled.append((sid, data))
        return "answered"

    server = game_server(handler)
    assert server.heard("s1", FLIP) is None
    assert handled == [("s1", FLIP)] and not server._handling  # before any loop pass
    connect = server.heard("s1", "0")
    assert handled == [("s1", FLIP)] and connect is not None
    await connect
    assert handled == [("s1", FLIP), ("s1", "0")]


async def test_an_event_that_waits_goes_on_as_a_task_with_what_it_waited_for(
    logged: Logged,
) -> None:
    """An EVENT that waits (a room's lock held, a lag-fair slap's judging) has begun at
    once and goes on in a task: what it waited for is handed back into it, its end is
    let go, and a failure before or after the wait is one `message_failed` line (with
    its traceback): never an exception nobody retrieved."""
    loop = asyncio.get_running_loop()
    waits: dict[str, asyncio.Future[str]] = {}
    steps: list[str] = []

    async def handler(sid: str, data: Any) -> None:
        name = data.split('"who":"')[1][0]  # a game's events, told apart by their payload
        steps.append(f"{name} begins")
        if '"bad"' in data:
            raise RuntimeError("a bug of ours, before any wait")
        waits[name] = loop.create_future()
        got = await waits[name]
        steps.append(f"{name} got {got}")
        if got == "fail":
            raise ValueError("a bug of ours, after the wait")

    server = game_server(handler)
    server.heard("s1", '2["flip",{"who":"a"}]')
    server.heard("s2", '2["slap",{"who":"b"}]')
    server.heard("s3", '2["pong",{"who":"d","bad":1}]')
    assert steps == ["a begins", "b begins", "d begins"]  # all at once, in order
    assert logged.events == ["message_failed"] and "before any wait" in logged.tracebacks[0]
    assert len(server._handling) == 2  # a and b, begun, waiting in tasks
    await asyncio.sleep(0)  # their tasks take up their waits
    waits["b"].set_result("fail")
    waits["a"].set_result("a card")
    await until(lambda: not server._handling)
    assert steps[3:] == ["b got fail", "a got a card"]
    assert logged.events == ["message_failed"] * 2
    assert "ValueError: a bug of ours, after the wait" in logged.tracebacks[1]


async def test_a_handler_still_waiting_holds_up_no_later_message() -> None:
    """A websocket's event that waits (at its room's lock) never stops the connection's
    later frames from being read and answered."""
    order: list[str] = []
    release = asyncio.Event()

    async def first(sid: str) -> None:
        order.append("first waits")
        await release.wait()
        order.append("first done")

    async def second(sid: str) -> None:
        order.append("second")
        release.set()

    served = Served('42["first"]', '42["second"]')
    served.server.on("first", first)
    served.server.on("second", second)
    served.server._budgets["sid"] = FrameBudget(TokenBucket(100, 100))
    await served.server.manager.connect("sid", "/")
    driver = type(served.websocket)
    driver.heard = staticmethod(served.server.heard)  # type: ignore[method-assign, assignment]
    served.asgi.client_goes()
    await served.run()
    await asyncio.wait_for(release.wait(), WAIT)
    await until(lambda: len(order) == 3)
    assert order == ["first waits", "second", "first done"]


async def test_a_waiting_event_cancelled_hears_the_cancellation_where_it_waits() -> None:
    """Shutting down cancels what still runs: an event that began at once and waits gets
    the CancelledError at its wait, as a task's coroutine would. A handler that catches
    it and goes on then sees no exception left being handled, as in a task."""
    seen: list[Any] = []

    async def handler(sid: str, data: Any) -> None:
        try:
            await asyncio.get_running_loop().create_future()  # never done
        except asyncio.CancelledError:
            seen.append("cancelled at the wait")
        seen.append(sys.exc_info()[1])
        if data == FLIP:
            raise asyncio.CancelledError  # and this one ends as cancelled after all

    server = game_server(handler)
    server.heard("s1", FLIP)
    server.heard("s2", '2["slap",{}]')
    tasks = list(server._handling)
    await asyncio.sleep(0)
    for task in tasks:
        task.cancel()
    await until(lambda: not server._handling)
    assert seen == ["cancelled at the wait", None] * 2
    assert sorted(task.cancelled() for task in tasks) == [False, True]


async def test_a_waiting_event_cancelled_before_its_task_steps_still_hears_it() -> None:
    """The room's lock handed to a waiting event, and its task cancelled in that same loop
    pass (a shutdown): the cancellation reaches the event at its wait, so the lock passes
    on to the next waiter instead of staying taken by nobody."""
    lock = asyncio.Lock()
    ran: list[str] = []

    async def handler(sid: str, data: Any) -> None:
        async with lock:
            ran.append(sid)

    server = game_server(handler)
    await lock.acquire()
    server.heard("s1", FLIP)  # waits for the lock: a task from that wait
    [task] = server._handling
    lock.release()  # hands the lock to s1's wait...
    task.cancel()  # ...and s1's task is cancelled before it has taken a step
    await until(lambda: not server._handling)
    assert task.cancelled() and ran == []
    server.heard("s2", FLIP)
    await until(lambda: ran == ["s2"])  # the lock is free for the next one
    assert not lock.locked()


async def test_a_resumed_coroutine_awaited_goes_on_from_its_wait() -> None:
    """app.realtime.eager.ResumingWork is a coroutine: awaited (not only run by a task), it
    hands over its wait, then the values and the exceptions that come back, as the work would."""
    loop = asyncio.get_running_loop()
    first, second = loop.create_future(), loop.create_future()

    async def work() -> str:
        got = await first
        try:
            await second
        except KeyError as error:
            return f"{got}, then {error.args[0]}"
        return "no error"

    coro = work()
    rest = first_step(coro)
    assert isinstance(rest, ResumingWork)
    waiting = asyncio.ensure_future(_await(rest))
    await asyncio.sleep(0)
    first.set_result("a card")
    await asyncio.sleep(0)
    second.set_exception(KeyError("a Jack"))
    assert await waiting == "a card, then a Jack"
    assert first_step(_done("at once")) is None

    async def waits() -> None:
        await loop.create_future()

    named = first_step(waits())
    assert named is not None
    task = loop.create_task(named)
    await asyncio.sleep(0)
    assert waits.__qualname__ in repr(task) and task.get_stack()  # for debugging
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def _await(awaitable: Any) -> Any:
    return await awaitable


async def _done(value: str) -> str:
    return value
