"""A websocket's own path (app/realtime/queues.py Outbox, app/realtime/serving.py
LeanWebSocket, app/realtime/transport.py
GameSocket and GameEngineIO's ping sweep): packets written at once when nothing waits
before them and in order when some do, frames handed over as uvicorn reads them, and one
sweep that pings every connection and drops the ones that stopped answering."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from socket import SO_SNDBUF, SOL_SOCKET
from typing import Any

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
from engineio import packet as eio_packet
from raw_client import RawClient

from app.realtime.eager import ResumingWork, first_step
from app.realtime.queues import Outbox
from app.realtime.serving import LeanWebSocket
from app.realtime.transport import NOOP, PING, GameEngineIO, GameSocket

# ---- the Outbox (app/realtime/queues.py), on a wire that takes or refuses what it is given


class FakeWire:
    """LeanWebSocket.send_now as the Outbox sees it: True and the text written, or False
    (the client reads too slowly, the connection is closing) and nothing written."""

    def __init__(self) -> None:
        self.takes = True
        self.written: list[str] = []

    def send_now(self, text: str) -> bool:
        if self.takes:
            self.written.append(text)
        return self.takes

    def abort_if_stuck(self) -> None:
        """What a hang-up asks of the wire (nothing to cut here)."""


def message(data: str) -> Any:
    return eio_packet.Packet(eio_packet.MESSAGE, data=data)


def writer_takes(outbox: Outbox) -> str:
    """What the connection's writer does with one queued packet: takes it, sends it, counts
    it written. Returns what it sent."""
    pkt = outbox.get_nowait()
    outbox.task_done()
    outbox.written()
    text: str = pkt.encode()
    return text


def test_a_packet_goes_straight_out_when_nothing_is_unsent() -> None:
    outbox, wire = Outbox(), FakeWire()
    outbox.wire = wire
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    assert wire.written == ["4a", "4b"]
    assert outbox.qsize() == 0 and outbox.unsent == 0


def test_without_a_wire_every_packet_queues() -> None:
    """Long-polling, an upgraded websocket, or before the writer attached the wire."""
    outbox = Outbox()
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    assert outbox.qsize() == 2 and outbox.unsent == 2
    wire = FakeWire()
    outbox.wire = wire  # the writer attaches it with those two still to write
    outbox.put_nowait(message("c"))
    assert wire.written == [] and outbox.qsize() == 3  # behind them, not before
    assert [writer_takes(outbox) for _ in range(3)] == ["4a", "4b", "4c"]
    outbox.put_nowait(message("d"))
    assert wire.written == ["4d"]


def test_once_the_wire_refuses_everything_queues_until_the_writer_caught_up() -> None:
    outbox, wire = Outbox(), FakeWire()
    outbox.wire = wire
    outbox.put_nowait(message("1"))  # straight out
    wire.takes = False  # the client stopped reading
    outbox.put_nowait(message("2"))
    wire.takes = True  # it reads again: still, "3" must not overtake "2"
    outbox.put_nowait(message("3"))
    assert wire.written == ["41"]
    assert outbox.qsize() == 2 and outbox.unsent == 2
    sent = [writer_takes(outbox)]  # the writer sends "2" ...
    outbox.put_nowait(message("4"))  # ... and "3" is still unsent: "4" queues behind it
    assert wire.written == ["41"] and outbox.qsize() == 2
    sent += [writer_takes(outbox), writer_takes(outbox)]
    assert sent == ["42", "43", "44"]
    assert outbox.unsent == 0
    outbox.put_nowait(message("5"))  # nothing unsent: straight out again
    assert wire.written == ["41", "45"] and outbox.qsize() == 0


def test_a_packet_handed_to_the_writer_still_holds_back_later_ones() -> None:
    """The writer takes a batch off the queue (qsize 0) and sends it with awaits between:
    until it counted each written, what comes next queues behind."""
    outbox, wire = Outbox(), FakeWire()
    outbox.wire = wire
    wire.takes = False
    outbox.put_nowait(message("a"))
    outbox.put_nowait(message("b"))
    wire.takes = True
    batch = [outbox.get_nowait(), outbox.get_nowait()]  # taken, not yet written
    outbox.task_done()
    outbox.task_done()
    assert outbox.qsize() == 0 and outbox.unsent == 2
    outbox.put_nowait(message("c"))
    assert wire.written == [] and outbox.qsize() == 1
    for _ in batch:
        outbox.written()
    assert writer_takes(outbox) == "4c" and outbox.unsent == 0


def test_the_end_always_goes_through_the_queue() -> None:
    """None ends the writer: written at once it would mean nothing, and it counts as no
    packet (the writer never counts it written)."""
    outbox, wire = Outbox(), FakeWire()
    outbox.wire = wire
    outbox.put_nowait(None)
    assert wire.written == [] and outbox.qsize() == 1 and outbox.unsent == 0
    assert outbox.get_nowait() is None


def test_qsize_counts_only_what_is_queued() -> None:
    """The slow-consumer cap (send_queue_limit) reads qsize: packets written at once are
    not waiting anywhere and must not count towards it."""
    outbox, wire = Outbox(), FakeWire()
    outbox.wire = wire
    for number in range(1000):
        outbox.put_nowait(message(str(number)))
    assert len(wire.written) == 1000 and outbox.qsize() == 0
    wire.takes = False
    for number in range(3):
        outbox.put_nowait(message(str(number)))
    assert outbox.qsize() == 3


def test_a_text_goes_straight_out_only_where_a_packet_would() -> None:
    """`send_now` (a state's text, app/realtime/outgoing.py): written as a packet would be, and
    False, with nothing queued, wherever a packet would have to queue: the caller queues it."""
    outbox, wire = Outbox(), FakeWire()
    assert not outbox.send_now("41")  # no wire yet
    outbox.wire = wire
    assert outbox.send_now("41")
    wire.takes = False
    assert not outbox.send_now("42")  # the client stopped reading
    outbox.put_nowait(message("2"))  # so the caller queues "42" (as its packet)
    wire.takes = True
    assert not outbox.send_now("43")  # "42" is unsent: "43" must not overtake it
    assert wire.written == ["41"] and outbox.qsize() == 1 and outbox.unsent == 1


# ---- the ping sweep (GameEngineIO.sweep), on real sockets with no connection -------------


def engine(ping_interval: float = 10, ping_timeout: float = 5) -> GameEngineIO:
    return GameEngineIO(async_mode="asgi", ping_interval=ping_interval, ping_timeout=ping_timeout)


def queued(socket: GameSocket) -> list[Any]:
    packets = []
    while not socket.queue.empty():
        packets.append(socket.queue.get_nowait())
        socket.queue.task_done()
    return packets


def connected(server: GameEngineIO, sid: str) -> GameSocket:
    socket = GameSocket(server, sid)
    server.sockets[sid] = socket
    return socket


def drops(server: GameEngineIO) -> list[str]:
    return sorted(task.get_name() for task in server._drops)


async def test_a_text_is_written_at_once_or_queued_as_its_packet_behind_the_rest() -> None:
    """GameEngineIO.queue_text, what every state takes: straight to the wire when nothing is
    unsent, else queued as the packet that encodes to the same text, in order; nothing for
    a connection that is gone; past the queue's cap the connection is dropped."""
    server = engine()
    server.send_queue_limit = 3
    socket = connected(server, "reader")
    wire = FakeWire()
    socket.queue.wire = wire
    server.queue_text("reader", '42["state",{"version":1}]')
    assert wire.written == ['42["state",{"version":1}]'] and socket.queue.qsize() == 0
    wire.takes = False  # the client stopped reading
    server.queue_text("reader", '42["state",{"version":2}]')
    wire.takes = True
    server.queue_text("reader", '42["state",{"version":3}]')
    assert wire.written == ['42["state",{"version":1}]']
    assert [p.encode() for p in queued(socket)] == [
        '42["state",{"version":2}]',
        '42["state",{"version":3}]',
    ]
    server.queue_text("gone", "42[]")  # no such connection: nothing, no error
    wire.takes = False  # the two taken above are not counted written yet: one more fits
    for version in range(4, 7):
        server.queue_text("reader", f'42["state",{{"version":{version}}}]')
    assert socket.queue.held == 3 and len(queued(socket)) == 1
    assert drops(server) == ["reader"]  # the cap (3) reached: dropped, in a task of its own
    await asyncio.gather(*server._drops)
    assert "reader" not in server.sockets


async def test_a_text_for_a_closing_or_silent_connection_is_not_queued() -> None:
    """queue_text takes queue_packet's way to a connection: nothing for one that is closing,
    and one whose pong is late is dropped instead."""
    server = engine(ping_interval=10, ping_timeout=5)
    closing, silent = connected(server, "closing"), connected(server, "silent")
    closing.closing = True
    server.queue_text("closing", "42[]")
    silent.last_ping = time.time() - 6  # pinged 6 s ago, and the timeout is 5
    server.queue_text("silent", "42[]")
    assert queued(closing) == [] and queued(silent) == []
    assert drops(server) == ["silent"]
    await asyncio.gather(*server._drops)


async def test_the_sweep_sends_each_ping_when_it_is_due_in_order() -> None:
    server = engine(ping_interval=10, ping_timeout=5)
    first, second = connected(server, "first"), connected(server, "second")
    start = time.monotonic()
    first.schedule_ping()  # as python-engineio does on connect (and on each pong)
    second.schedule_ping()
    assert first.last_ping is None and second.last_ping is None
    server.sweep(start + 1)  # nothing due yet
    assert queued(first) == [] and queued(second) == []
    due = server._pings[1][0]  # the second's, a moment after the first's
    server.sweep(due)
    assert queued(first) == [PING] and queued(second) == [PING]
    # last_ping is python-engineio's wall time (the sweep's lines run on the monotonic clock)
    assert all(abs(s.last_ping - time.time()) < 60 for s in (first, second) if s.last_ping)
    assert first.last_ping is not None and second.last_ping is not None
    server.sweep(due + 4.9)  # pinged, the pong is not late yet: nothing dropped
    assert queued(first) == [] and queued(second) == [] and drops(server) == []


async def test_a_late_pong_drops_the_connection_and_an_answered_ping_does_not() -> None:
    server = engine(ping_interval=10, ping_timeout=5)
    answers, silent = connected(server, "answers"), connected(server, "silent")
    answers.schedule_ping()
    silent.schedule_ping()
    pinged = time.monotonic() + 10.5
    server.sweep(pinged)
    assert queued(answers) == [PING] and queued(silent) == [PING]
    answers._on_text_frame("3")  # its pong: its next ping ping_interval after it
    assert answers.last_ping is None
    server.sweep(pinged + 5)  # the pong's deadline
    assert drops(server) == ["silent"]
    await asyncio.wait_for(asyncio.gather(*server._drops), WAIT)
    assert silent.closed and "silent" not in server.sockets
    assert silent.queue.get_nowait() is None  # its writer is told to end
    assert queued(answers) == [PING]  # its next one, due by then
    answers._on_text_frame("3")
    server.sweep(pinged + 10)  # that pong came in time too
    assert drops(server) == [] and "answers" in server.sockets


async def test_stale_and_closed_entries_are_skipped() -> None:
    server = engine(ping_interval=10, ping_timeout=5)
    twice, gone = connected(server, "twice"), connected(server, "gone")
    twice.schedule_ping()
    server.ping_later(twice)  # a second entry for a socket already waiting for its ping
    gone.schedule_ping()
    gone.closed = True
    server.sweep(time.monotonic() + 10.5)
    assert queued(twice) == [PING]  # one ping, not two
    assert queued(gone) == []
    assert not server._pings and len(server._pongs) == 1  # the stale entries are gone
    server.sweep(time.monotonic() + 20)  # twice's pong is late; gone is nobody's concern
    assert drops(server) == ["twice"]
    await asyncio.wait_for(asyncio.gather(*server._drops), WAIT)


async def test_a_second_pong_schedules_no_second_ping() -> None:
    server = engine(ping_interval=10, ping_timeout=5)
    socket = connected(server, "sid")
    socket.schedule_ping()
    server.sweep(time.monotonic() + 10.5)
    assert queued(socket) == [PING]
    socket._on_text_frame("3")
    socket._on_text_frame("3")  # a pong that answers no ping
    assert len(server._pings) == 1


# ---- frames as uvicorn reads them (GameSocket._on_text_frame) ------------------------------------


class Heard:
    """What _on_text_frame asked of the server, recorded instead of done."""

    def __init__(self, server: GameEngineIO) -> None:
        self.messages: list[tuple[str, Any]] = []
        self.hang_ups: list[tuple[str, str | None]] = []
        server.on_message = lambda sid, data: self.messages.append((sid, data))  # type: ignore[method-assign]
        server.hang_up_in_turn = lambda sid, reason=None: self.hang_ups.append((sid, reason))  # type: ignore[method-assign]


def test_heard_hands_messages_over_and_hangs_up_on_what_is_no_engine_io() -> None:
    server = engine()
    socket = connected(server, "sid")
    heard = Heard(server)
    socket._on_text_frame('42["sit",{"seat":1}]')
    assert heard.messages == [("sid", '2["sit",{"seat":1}]')]
    for frame in ("x", "", "4" + "a" * server.max_http_buffer_size):
        heard.hang_ups.clear()
        socket._on_text_frame(frame)
        assert heard.hang_ups == [("sid", None)], frame
    assert len(heard.messages) == 1


def test_heard_close_hangs_up_as_the_client_asked_and_upgrade_is_answered() -> None:
    server = engine()
    socket = connected(server, "sid")
    heard = Heard(server)
    socket._on_text_frame("1")
    assert heard.hang_ups == [("sid", server.reason.CLIENT_DISCONNECT)]
    socket._on_text_frame("5")
    assert queued(socket) == [NOOP]
    socket._on_text_frame("6")  # a NOOP from the client: nothing to do
    assert queued(socket) == [] and len(heard.hang_ups) == 1 and heard.messages == []


# ---- through a real server --------------------------------------------------------------


def versions(frames: list[str | bytes]) -> list[int]:
    return [
        json.loads(frame[2:])[1]["version"]
        for frame in frames
        if isinstance(frame, str) and frame.startswith('42["state"')
    ]


async def test_a_client_that_pauses_reading_gets_every_state_in_order() -> None:
    """While the client does not read, the server's transport pauses writing and the
    packets queue; once it reads again the queue drains and later packets go straight out,
    never before the queued ones."""
    async with serving(
        send_queue_limit=100_000, ping_interval_seconds=60.0, ping_timeout_seconds=60.0
    ) as server:
        code = await server.new_room()
        players = await join(server, code, "Ann", "Bob", "Cid")
        stuck = await RawClient.open(server, small_buffer=True)
        await stuck.join(code, "Stuck")
        sockets = server.app.engineio_server.eio.sockets
        others = {player.sio.eio.sid for player in players}
        (socket,) = [s for sid, s in sockets.items() if sid not in others]
        outbox: Outbox = socket.queue
        wire = outbox.wire
        assert isinstance(wire, LeanWebSocket)
        # Small buffers on the server's side too: it pauses after a few states, not MBs.
        wire.transport.get_extra_info("socket").setsockopt(SOL_SOCKET, SO_SNDBUF, 4096)
        wire.transport.set_write_buffer_limits(high=2048)
        straight: list[str] = []
        send_now = wire.send_now

        def counted(text: str) -> bool:
            written = send_now(text)
            if written:
                straight.append(text)
            return written

        wire.send_now = counted  # type: ignore[method-assign]
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
        # its packets queue, and not one more goes straight out.
        stuck.ws.transport.pause_reading()
        async with asyncio.timeout(WAIT * 3):
            while outbox.unsent < 10:
                await change()
        written = len(straight)
        for _ in range(5):
            await change()
        assert len(straight) == written and outbox.unsent >= 20

        # 2. It reads again while the room goes on: the queued ones, then the rest.
        target = 10**9

        async def read_on() -> None:  # (never cancelled: websockets' recv waits it out)
            while not versions(stuck.frames) or versions(stuck.frames)[-1] < target:
                await stuck.next()

        stuck.ws.transport.resume_reading()
        reading = asyncio.create_task(read_on())
        async with asyncio.timeout(WAIT * 3):
            while outbox.unsent > 0 or len(straight) == written:
                await change()
        for _ in range(5):
            await change()
        target = room.version
        await change()  # what the reader reads to see it is there
        await asyncio.wait_for(reading, WAIT)
        seen = versions(stuck.frames)
        assert seen == list(range(seen[0], seen[-1] + 1)), seen
        assert seen[-1] >= target
        assert len(straight) >= written + 5  # once caught up, straight out again
        await close_all(players)
        stuck.ws.transport.abort()


async def test_a_client_that_answers_pings_stays_through_many_of_them() -> None:
    async with serving(ping_interval_seconds=0.3, ping_timeout_seconds=3.0) as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Awake")
        pings = 0
        async with asyncio.timeout(WAIT * 2):
            while pings < 6:
                frame = await raw.next()
                if frame == "2":
                    pings += 1
                    await raw.send("3")
        assert len(server.app.engineio_server.eio.sockets) == 1
        await raw.send('421["stand",{}]')  # and it still plays
        assert (await raw.ack(1))["ok"]
        await raw.close()


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
    """The upgraded websocket keeps python-engineio's reader and writer, and the sweep's
    pings (short here: many of them in a game)."""
    async with serving(ping_interval_seconds=0.5, ping_timeout_seconds=5.0) as server:
        code = await server.new_room()
        ann = await Client(server, code, "Ann").connect(transports=["polling", "websocket"])
        bob = await Client(server, code, "Bob").connect()
        await until(lambda: ann.sio.transport() == "websocket", "Ann's upgrade")
        sockets = server.app.engineio_server.eio.sockets
        upgraded = sockets[ann.sio.eio.sid]
        assert upgraded.upgraded and upgraded.queue.wire is None
        assert sockets[bob.sio.eio.sid].queue.wire is not None
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


async def test_a_websocket_has_no_keepalive_of_its_own_engine_io_pings_it() -> None:
    """uvicorn's websocket-level pings would duplicate Engine.IO's (two timers per
    connection, a ping and a pong every 20 s): off; Engine.IO's sweep pings instead."""
    async with serving() as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Quiet")
        [socket] = server.app.engineio_server.eio.sockets.values()
        wire = socket.queue.wire
        assert isinstance(wire, LeanWebSocket)
        assert wire.ping_interval is None
        assert wire.ping_timer is None and wire.pong_timer is None
        assert socket in [entry[1] for entry in server.app.engineio_server.eio._pings]
        await raw.close()


def engine_with(handler: Any) -> GameEngineIO:
    """A bare GameEngineIO whose message handler is `handler`."""
    eio = GameEngineIO(async_mode="asgi")
    eio.on("message", handler)
    return eio


FLIP = '2["flip",{}]'  # a Socket.IO EVENT, as GameSocket._on_text_frame hands it over


async def test_an_event_that_never_waits_is_handled_at_once_without_a_task() -> None:
    """A Socket.IO EVENT (a flip, a slap) runs to its end inside `on_message` when it
    never waits, as the frame is read: no task, no loop pass. Anything else is a task."""
    handled: list[tuple[str, Any]] = []

    async def handler(sid: str, data: Any) -> str:
        handled.append((sid, data))
        await asyncio.sleep(0) if data == "0" else None  # only a connect waits here
        return "answered"

    eio = engine_with(handler)
    eio.on_message("s1", FLIP)
    assert handled == [("s1", FLIP)]  # before this test gave the loop a pass
    assert not eio._handling and not eio._to_begin
    eio.on_message("s1", "0")  # a connect: a task, which has not begun yet
    assert handled == [("s1", FLIP)] and len(eio._handling) == 1
    await until(lambda: not eio._handling)
    assert handled == [("s1", FLIP), ("s1", "0")]
    assert not eio._to_begin


async def test_an_event_that_waits_goes_on_as_a_task_with_what_it_waited_for(
    logged: Logged,
) -> None:
    """An EVENT that waits (a room's lock held, a lag-fair slap's judging) has begun at
    once and goes on in a task: what it waited for is handed back into it, its end is
    let go, and a failure before or after the wait is one `message_failed` line (with
    its traceback), as is one in a message that is a task from its start: never an
    exception nobody retrieved."""
    loop = asyncio.get_running_loop()
    waits: dict[str, asyncio.Future[str]] = {}
    steps: list[str] = []

    async def handler(sid: str, data: Any) -> None:
        name = data.split('"')[1][-1]  # the last letter of the event name
        steps.append(f"{name} begins")
        if '"bad"' in data:
            raise RuntimeError("a bug of ours, before any wait")
        waits[name] = loop.create_future()
        got = await waits[name]
        steps.append(f"{name} got {got}")
        if got == "fail":
            raise ValueError("a bug of ours, after the wait")

    eio = engine_with(handler)
    eio.on_message("s1", '2["a",{}]')
    eio.on_message("s2", '2["b",{}]')
    eio.on_message("s3", '2["bad",{}]')
    assert steps == ["a begins", "b begins", "d begins"]  # all at once, in order
    assert logged.events == ["message_failed"] and "before any wait" in logged.tracebacks[0]
    assert len(eio._handling) == 2 and not eio._to_begin  # a and b, already begun
    await asyncio.sleep(0)  # their tasks take up their waits
    waits["b"].set_result("fail")
    waits["a"].set_result("a card")
    await until(lambda: not eio._handling)
    eio.on_message("s4", '0["bad",{}]')  # not an event: a task, which fails
    assert steps[3:] == ["b got fail", "a got a card"]
    await until(lambda: not eio._handling)
    assert steps[5:] == ["d begins"]
    assert logged.events == ["message_failed"] * 3
    errors = logged.tracebacks
    assert "ValueError: a bug of ours, after the wait" in errors[1]
    assert "before any wait" in errors[2] and "in handler" in errors[2]  # traceback


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

    eio = engine_with(handler)
    eio.on_message("s1", FLIP)
    eio.on_message("s2", '2["slap",{}]')
    tasks = list(eio._handling)
    await asyncio.sleep(0)
    for task in tasks:
        task.cancel()
    await until(lambda: not eio._handling)
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

    eio = engine_with(handler)
    await lock.acquire()
    eio.on_message("s1", FLIP)  # waits for the lock: a task from that wait
    [task] = eio._handling
    lock.release()  # hands the lock to s1's wait...
    task.cancel()  # ...and s1's task is cancelled before it has taken a step
    await until(lambda: not eio._handling)
    assert task.cancelled() and ran == []
    eio.on_message("s2", FLIP)
    await until(lambda: ran == ["s2"])  # the lock is free for the next one
    assert not lock.locked()


async def test_a_message_task_cancelled_before_it_began_leaves_the_line_quietly() -> None:
    """A connect still waiting to begin when the server cancels it: out of the line (the
    next event runs at once again) and no 'never awaited' warning for its handler."""
    import gc
    import warnings

    handled: list[Any] = []

    async def handler(sid: str, data: Any) -> None:
        handled.append(data)

    eio = engine_with(handler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eio.on_message("s1", "0")
        [task] = eio._handling
        task.cancel()
        await until(lambda: not eio._handling)
        cancelled = task.cancelled()
        del task  # and with it the handler's coroutine, warned about then if never awaited
        gc.collect()
    assert cancelled and handled == [] and not eio._to_begin
    assert not [w for w in caught if "never awaited" in str(w.message)]
    eio.on_message("s1", FLIP)
    assert handled == [FLIP]


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
    assert named is not None and named.__name__ == waits.__qualname__  # what a task shows
    assert named.cr_frame is not None and named.cr_code is waits.__code__
    task = loop.create_task(named)
    assert "waits" in repr(task) and task.get_stack()  # where it waits, for debugging
    task.cancel()


async def _await(awaitable: Any) -> Any:
    return await awaitable


async def _done(value: str) -> str:
    return value


async def test_messages_polling_reads_take_the_same_line() -> None:
    """python-engineio's own sockets (long-polling) hand a message to `_trigger_event`
    with run_async: it goes to on_message, so it begins in the same order as a
    websocket's, and an event among them runs at once when nothing waits before it."""
    handled: list[Any] = []

    async def handler(sid: str, data: Any) -> None:
        handled.append(data)

    eio = engine_with(handler)
    assert await eio._trigger_event("message", "s1", FLIP, run_async=True) is None
    assert handled == [FLIP]
    await eio._trigger_event("message", "s1", "0", run_async=True)
    eio.on_message("s2", FLIP)
    assert handled == [FLIP]
    await until(lambda: not eio._handling)
    assert handled == [FLIP, "0", FLIP]


async def test_messages_begin_in_the_order_they_arrive() -> None:
    """A message that is a task (a connect, a hang-up) and has not begun yet keeps every
    message read after it behind it, from any connection: an event read next is a task
    too, and begins after it. Once nothing waits to begin, events run at once again."""
    begun: list[Any] = []

    async def handler(sid: str, data: Any) -> None:
        begun.append(data)

    async def hang_up(sid: str, reason: str | None = None) -> None:
        begun.append(f"hang up {sid}")

    eio = engine_with(handler)
    eio.hang_up = hang_up  # type: ignore[method-assign]
    eio.on_message("s1", '0{"token":"x"}')  # s1 connects
    eio.on_message("s1", FLIP)  # and flips at once
    eio.hang_up_in_turn("s2")  # s2 says goodbye (a CLOSE)
    eio.on_message("s3", FLIP)  # s3 flips
    assert begun == []  # all behind the connect, which has not begun
    await until(lambda: not eio._handling)
    assert begun == ['0{"token":"x"}', FLIP, "hang up s2", FLIP]
    assert not eio._to_begin
    eio.on_message("s1", '2["slap",{}]')
    assert begun[-1] == '2["slap",{}]'  # at once again


async def test_a_socketio_frame_reaches_the_handler_as_python_engineio_decodes_it() -> None:
    """GameSocket._on_text_frame hands a Socket.IO packet (`4` then a digit) over without building
    python-engineio's Packet: the data must be what that Packet's decoding gives."""
    eio = GameEngineIO(async_mode="asgi", max_http_buffer_size=64)
    heard: list[tuple[str, Any]] = []
    eio.on_message = lambda sid, data: heard.append((sid, data))  # type: ignore[method-assign]
    socket = GameSocket(eio, "s1")
    frames = ['42["flip",{}]', "40", '40{"token":"x"}', "41", '437[{"ok":true}]', "4²", "4"]
    for text in frames:
        heard.clear()
        socket._on_text_frame(text)
        assert heard == [("s1", eio_packet.Packet(encoded_packet=text).data)], text
    hung_up: list[str] = []
    eio.hang_up_in_turn = lambda sid, reason=None: hung_up.append(sid)  # type: ignore[method-assign]
    heard.clear()
    socket._on_text_frame("42" + "x" * 64)  # too large: never handled, the connection is cut
    assert heard == [] and hung_up == ["s1"]
