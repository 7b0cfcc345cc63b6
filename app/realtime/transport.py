"""The Socket.IO server as a public game server runs it: python-socketio and python-engineio
with the guards every frame passes before any handler of ours sees it.

- Sending never runs app code. python-engineio's own send closes a connection whose pings
  went unanswered *inline*, which runs the disconnect handler inside the sender: a room
  broadcasting under its lock, so the room deadlocked on a sleeping phone. Here such a
  send queues nothing and the close runs as a task of its own. A send to a connection whose
  outgoing queue is full (a client that never reads) drops that connection the same way.
- Every frame a client sends takes a token from its connection's budget, whatever it is:
  an event past the budget is answered rate_limited, and a connection that keeps going
  past it (refused or malformed frames in a row) is cut off at the transport.
- Binary packets are refused at their first frame: the game sends none, and python-socketio
  would gather a packet's announced attachments (up to 9,999,999,999) without bound.
- A connection costs as little memory as it can while it sits idle: a lean queue
  (app/realtime/queues.py), no request body reader kept past the connect.
- A websocket has a reader and a writer of ours (GameSocket): a packet is written at
  once when nothing is queued before it, a frame is handed over as uvicorn reads it, and
  one sweep sends every connection's pings and drops the late (python-engineio spent a
  task, a timer and futures per frame, per packet and per ping, and the collector walked
  them all). A long-polling connection, and one that upgrades from it, keeps
  python-engineio's own path, whose writer takes what is queued without a `wait_for` each.
- A malformed frame is counted, logged as one JSON line at most (rate-limited), never a
  traceback.
- An event named like Socket.IO's own (`connect`, `disconnect`, `*` ...) is answered
  unknown_event and reaches no handler: a client-sent `connect` re-ran the connect handler.

Every name of python-engineio and python-socketio used here beyond their documented API is
in app/realtime/internals.py, which a test checks against what is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import engineio
import orjson
import socketio
from engineio import async_socket, exceptions
from engineio import packet as engineio_packet
from socketio import packet

from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.realtime.eager import ResumingWork, first_step
from app.realtime.guards import RESERVED_EVENTS, FrameBudget, FrameGuards
from app.realtime.outgoing import Assembled
from app.realtime.queues import LeanQueue, Outbox
from app.realtime.serving import Flushes, LeanWebSocket
from app.wire.encoded import to_json

# How often the ping sweep runs: a ping goes out, and a late pong is noticed, at most
# this much later than python-engineio's own timing would.
SWEEP_SECONDS = 0.25
PING = engineio_packet.Packet(engineio_packet.PING)  # the same "2" to everyone
MESSAGE_TYPE = str(engineio_packet.MESSAGE)  # "4": an Engine.IO frame's type, its first character
EVENT_TYPE = str(packet.EVENT)  # "2": a Socket.IO packet's type, its first character
DIGITS = frozenset("0123456789")
NOOP = engineio_packet.Packet(engineio_packet.NOOP)

# Where orjson's integers end (int64) and floats begin: a frame with a run of this many
# digits (an ack id or a number) is left to python-socketio's decoder.
LONG_NUMBER = re.compile(r"[0-9]{19}")
# An EVENT in the default namespace, its ack id (if any) and the start of its data.
PLAIN_EVENT = re.compile(r"2([0-9]*)\[")


class GameSocket(async_socket.AsyncSocket):  # type: ignore[misc]
    """python-engineio's socket with a `poll` that waits only when there is nothing to send,
    and, for a websocket opened as one (every browser and the benchmark's clients), a
    reader and a writer of our own:

    - the reader awaits each frame as it is (python-engineio wraps every wait in a task and
      `asyncio.wait_for`: a task, a timer, a context and futures per frame received, alive
      until the next frame);
    - the writer attaches the websocket to the connection's Outbox (app/realtime/queues.py), so a
      packet goes straight out when nothing is queued before it, and waits on the queue
      without a timer: every way a connection ends (its client closes, the ping check or a
      drop closes the socket, the reader ends) queues the None that ends the writer.

    A connection that starts as long-polling and upgrades keeps python-engineio's own."""

    # python-engineio's, set in its constructor (typed here: it has no annotations)
    connected: bool
    upgraded: bool
    last_ping: float | None

    async def poll(self) -> list[Any]:
        """The packets queued, at least one; [] once the connection ends (a None queued).
        Raises QueueEmpty after ping interval + ping timeout with nothing to send, or when
        cancelled, as python-engineio's own does: its writer then closes the websocket."""
        queue: LeanQueue = self.queue
        if queue.empty():
            # A bare timer cancelling the getter (a future): half the cost of wait_for,
            # and of asyncio.timeout, which is the writer's cost per message it sends.
            # (Not awaited inside an `except`: a writer waiting there would hold the
            # exception, its traceback and frames alive, and the collector walks them.)
            getter = queue.get()
            wait = self.server.ping_interval + self.server.ping_timeout
            timer = asyncio.get_running_loop().call_later(wait, getter.cancel)
            try:
                first = await getter
            except asyncio.CancelledError:  # the timer, or the writer cancelled
                raise exceptions.QueueEmpty() from None
            finally:
                timer.cancel()
        else:
            first = queue.get_nowait()
        return self._after(queue, first)

    @staticmethod
    def _after(queue: LeanQueue, first: Any) -> list[Any]:
        """`first` and whatever else is queued behind it, up to a None (the end)."""
        queue.task_done()
        if first is None:
            return []
        packets = [first]
        while not queue.empty():
            pkt = queue.get_nowait()
            queue.task_done()
            if pkt is None:
                queue.put_nowait(None)  # the next poll ends the writer
                break
            packets.append(pkt)
        return packets

    async def _websocket_handler(self, ws: Any) -> None:
        wire = getattr(getattr(ws, "asgi_send", None), "__self__", None)
        outbox = self.queue
        if self.connected or not isinstance(wire, LeanWebSocket) or not isinstance(outbox, Outbox):
            await super()._websocket_handler(ws)  # an upgrade from long-polling
            return
        self.connected = self.upgraded = True
        writer = asyncio.ensure_future(self._write(ws, outbox))
        wire.flushes = self.server.flushes
        outbox.wire = wire
        wire.listener = self._on_text_frame
        try:
            await self._read(ws)  # what came before the listener, binary frames, the end
        finally:
            wire.listener = None
            outbox.wire = None
            outbox.put_nowait(None)  # the writer sends what is queued, then closes
        await writer
        await self.close(wait=False, abort=True, reason=self.server.reason.TRANSPORT_CLOSE)

    async def _read(self, ws: Any) -> None:
        limit = self.server.max_http_buffer_size
        while True:
            try:
                data = await ws.wait()
            except Exception:  # OSError: the websocket closed
                return
            if data is None or len(data) > limit:
                return
            try:
                pkt = packet_from(data)
            except Exception:  # not an Engine.IO frame: the client does not speak it
                return
            try:
                await self.receive(pkt)
            except exceptions.UnknownPacketError:
                pass
            except exceptions.SocketIsClosedError:
                return
            except Exception:  # a bug of ours: one JSON line, and the connection goes on
                log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=self.sid)

    def _on_text_frame(self, text: str) -> None:
        """A text frame, handed over as uvicorn reads it (LeanWebSocket's listener): what
        python-engineio's `receive` does with it, without a coroutine. A message goes to
        GameEngineIO.on_message: at once, or as a task, in arrival order."""
        server: GameEngineIO = self.server
        if self.closing or self.closed:
            return  # what is still in flight from a connection that is ending
        if len(text) > server.max_http_buffer_size:
            server.hang_up_in_turn(self.sid)  # packet is too large
            return
        if text[:1] == MESSAGE_TYPE and text[1:2] in DIGITS:
            # A Socket.IO packet (its type first), almost every frame: the data python-
            # engineio's decoding gives, without its Packet and the exception it raises
            # and catches to learn that a payload starting with a digit is no JSON.
            server.on_message(self.sid, text[1:])
            return
        try:
            pkt = packet_from(text)
        except Exception:  # not an Engine.IO frame: the client does not speak it
            server.hang_up_in_turn(self.sid)
            return
        kind = pkt.packet_type
        if kind == engineio_packet.MESSAGE:
            server.on_message(self.sid, pkt.data)
        elif kind == engineio_packet.PONG:
            self.schedule_ping()
        elif kind == engineio_packet.CLOSE:
            server.hang_up_in_turn(self.sid, server.reason.CLIENT_DISCONNECT)
        elif kind == engineio_packet.UPGRADE:
            server._deliver(self, NOOP)
        # anything else python-engineio ignores too

    async def _write(self, ws: Any, outbox: Outbox) -> None:
        while True:
            packets = self._after(outbox, await outbox.get())
            if not packets:
                break
            try:
                for pkt in packets:
                    await ws.send(pkt.encode())
                    outbox.written()
            except Exception:  # the websocket is gone
                break
        await ws.close()

    def schedule_ping(self) -> None:
        """The next ping, ping_interval after the pong that calls this: one entry in the
        server's sweep (python-engineio starts a task sleeping ping_interval each time)."""
        if self.last_ping:
            self.last_ping = None
            self.server.ping_later(self)

    async def close(self, wait: bool = True, abort: bool = False, reason: Any = None) -> None:
        await super().close(wait=wait, abort=abort, reason=reason)
        outbox = self.queue
        if self.closed and isinstance(outbox, Outbox) and outbox.wire is not None:
            outbox.put_nowait(None)  # our writer waits without a timer: end it now


def packet_from(data: str | bytes) -> Any:
    return engineio_packet.Packet(encoded_packet=data)


class GameEngineIO(engineio.AsyncServer):  # type: ignore[misc]
    """python-engineio's server with a send that never calls back into the app."""

    send_queue_limit = 500  # messages; GameServer sets it from the settings

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._drops: set[asyncio.Task[None]] = set()  # held: asyncio keeps tasks weakly
        self._handling: set[asyncio.Task[Any]] = set()  # the same, for messages and hang-ups
        # The messages and hang-ups read whose task has not taken its first step yet (each
        # leaves as it does: app/realtime/eager.py): a message read after any of them waits
        # its turn.
        self._to_begin: set[ResumingWork] = set()
        # The sweep's two lines, each in the order it is due (every entry waits the same
        # interval): (when, socket) pings to send, (when, socket, ping sent) pongs awaited.
        self._pings: deque[tuple[float, GameSocket]] = deque()
        self._pongs: deque[tuple[float, GameSocket, float]] = deque()
        self.flushes = Flushes()  # what every websocket of this server wrote this loop pass

    # ---- pings: one sweep for every connection ----------------------------------------
    # python-engineio gives each connection a task per ping (sleeping ping_interval) and
    # its service task checks one socket at a time, with an `asyncio.wait_for` and a
    # TimeoutError for each: thousands of tasks, timers and exceptions a minute, and
    # objects the collector walks. Here one task wakes every SWEEP_SECONDS and sends the
    # pings that are due and closes the connections whose pong is late.

    def on_message(self, sid: str, data: Any) -> None:
        """A message for the app's handler (python-socketio's): what python-engineio's
        `_trigger_event` with run_async does (a socket's `receive` calls it: see below),
        without its wrapper coroutine and checks per message (the handler is a coroutine
        function; a failure is logged, as it logs one).

        A Socket.IO EVENT (a flip, a slap: almost every message) starts at once, here
        (app/realtime/eager.py), when no message read before it still waits to begin: most run to
        their end without waiting, and then no task is made at all. One that waits goes
        on from there as a task. Anything else (a connect, which may wait on the store or
        on Redis under `asyncio.timeout`, which needs a task) is a task from its start,
        and every message read while such a task waits to begin queues behind it: each
        message begins in the order it was read. (What the server itself starts, a timer's
        job or a drop, is not in that line: it is not something a client sent.)"""
        handler = self.handlers.get("message")
        if handler is None:
            return
        work = handler(sid, data)
        if not self._to_begin and isinstance(data, str) and data[:1] == EVENT_TYPE:
            try:
                rest = first_step(work)
            except Exception as error:  # a bug of ours: what the task's end would log
                log_event("message_failed", level=logging.ERROR, exc_info=error)
                return
            if rest is not None:  # it waits: the rest runs as a task, already begun
                self._hold(rest, self._message_settled)
            return
        self._hold(ResumingWork(work, line=self._to_begin), self._message_settled)

    async def _trigger_event(self, event: str, *args: Any, **kwargs: Any) -> Any:
        """python-engineio's, but a message its own sockets read (long-polling, a socket
        upgraded from it, a frame GameSocket._read reads) takes `on_message`'s way, in the
        same line as every websocket's."""
        if event == "message" and kwargs.get("run_async"):
            self.on_message(*args)
            return None
        return await super()._trigger_event(event, *args, **kwargs)

    def hang_up_in_turn(self, sid: str, reason: str | None = None) -> None:
        """Closes `sid` in a task, in the line of the messages read (a client's CLOSE)."""
        self._hold(
            ResumingWork(self.hang_up(sid, reason), line=self._to_begin), self._hang_up_settled
        )

    def _hold(
        self, work: Coroutine[Any, Any, Any], settled: Callable[[asyncio.Task[Any]], None]
    ) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._handling.add(task)
        task.add_done_callback(settled)

    def _message_settled(self, task: asyncio.Task[Any]) -> None:
        self._settled(task, "message_failed")

    def _hang_up_settled(self, task: asyncio.Task[Any]) -> None:
        self._settled(task, "hang_up_failed")

    def _settled(self, task: asyncio.Task[Any], failed: str) -> None:
        """A message's or hang-up's task is done: let go of it, and log its failure (one
        JSON line with the traceback, never an exception nobody retrieved)."""
        self._handling.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log_event(failed, level=logging.ERROR, exc_info=error)

    def ping_later(self, socket: GameSocket) -> None:
        self._pings.append((time.monotonic() + self.ping_interval, socket))

    async def _service_task(self) -> None:
        """Replaces python-engineio's (started by it on the first connection, stopped by
        its `shutdown` through service_task_event)."""
        self.service_task_event = self.create_event()
        last_scan = time.monotonic()
        while not self.service_task_event.is_set():
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                self.sweep(time.monotonic())
                if time.monotonic() - last_scan >= self.ping_timeout:
                    last_scan = time.monotonic()
                    self._forget_closed()
            except Exception:  # never let the sweep die: it is every connection's ping
                log_event("sweep_failed", level=logging.ERROR, exc_info=True)

    def sweep(self, now: float) -> None:
        """Sends the pings due by `now` (time.monotonic(): the lines are in its order, and
        a wall clock stepped back would hold every ping behind the first); drops each
        connection whose pong is late. `last_ping` stays python-engineio's wall time."""
        pings, pongs = self._pings, self._pongs
        while pings and pings[0][0] <= now:
            _, socket = pings.popleft()
            if socket.closing or socket.closed or socket.last_ping is not None:
                continue  # gone, or already pinged (a stale entry)
            sent = socket.last_ping = time.time()
            pongs.append((now + self.ping_timeout, socket, sent))  # before: _deliver may drop
            try:
                self._deliver(socket, PING)
            except Exception:  # one connection's trouble is not everyone's ping
                log_event("ping_failed", level=logging.ERROR, exc_info=True, sid=socket.sid)
        while pongs and pongs[0][0] <= now:
            _, socket, sent = pongs.popleft()
            if socket.last_ping == sent and not (socket.closing or socket.closed):
                self._drop_later(socket, self.reason.PING_TIMEOUT, "ping_timeout")

    def _forget_closed(self) -> None:
        """What python-engineio's service task also did: a closed long-polling session
        nobody asks for again would stay in `sockets` for ever."""
        for sid, socket in list(self.sockets.items()):
            if socket.closed:
                self.sockets.pop(sid, None)

    def adopt(self, sid: str) -> None:
        """Makes a new connection's socket a GameSocket. python-engineio builds its sockets
        inside `_handle_connect` with no hook; its connect event, where this is called,
        comes before the socket's first poll."""
        socket = self.sockets.get(sid)
        if type(socket) is async_socket.AsyncSocket:
            socket.__class__ = GameSocket

    def create_queue(self, *args: Any, **kwargs: Any) -> Outbox:
        """Each connection's outgoing queue (python-engineio makes one per socket here)."""
        return Outbox()

    async def send_packet(self, sid: str, pkt: Any) -> None:
        self.queue_packet(sid, pkt)

    def queue_packet(self, sid: str, pkt: Any) -> None:
        """`pkt` queued on the connection `sid` (written at once if nothing is queued before
        it); nothing if the connection is gone, and a late pong or a full queue drops the
        connection in a task of its own: a send never waits and never runs app code."""
        socket = self._receiver(sid)
        if socket is not None:
            self._deliver(socket, pkt)

    def queue_text(self, sid: str, text: str) -> None:
        """`queue_packet` of an Engine.IO MESSAGE whose whole text is `text` (`42[...]`,
        app/realtime/outgoing.py): written as it is when nothing is queued before it, and only
        otherwise made a packet, to wait in the queue."""
        socket = self._receiver(sid)
        if socket is not None and self._has_room(socket) and not socket.queue.send_now(text):
            socket.queue.put_behind(Assembled(text))  # unbounded: never waits

    def _receiver(self, sid: str) -> Any:
        """The connection `sid`'s socket, if a message may be queued on it: None if it is
        gone or closing, or if its pong is late (it is then dropped, in a task of its own)."""
        socket = self.sockets.get(sid)
        if socket is None or socket.closing or socket.closed:
            return None
        if socket.last_ping and time.time() - socket.last_ping > self.ping_timeout:
            self._drop_later(socket, self.reason.PING_TIMEOUT, "ping_timeout")
            return None
        return socket

    def _deliver(self, socket: Any, pkt: Any) -> None:
        if self._has_room(socket):
            socket.queue.put_nowait(pkt)  # unbounded, written at once if it can be: never waits

    def _has_room(self, socket: Any) -> bool:
        """False, and the connection dropped in a task of its own, once it holds
        send_queue_limit messages unwritten (a client that does not read)."""
        if socket.queue.held >= self.send_queue_limit:
            self._drop_later(socket, self.reason.SERVER_DISCONNECT, "slow_consumer")
            return False
        return True

    def _drop_later(self, socket: Any, reason: str, why: str) -> None:
        if any(task.get_name() == socket.sid for task in self._drops):
            return  # already going
        task = asyncio.get_running_loop().create_task(self._drop(socket, reason, why))
        task.set_name(socket.sid)
        self._drops.add(task)
        task.add_done_callback(self._drops.discard)

    async def _drop(self, socket: Any, reason: str, why: str) -> None:
        if why == "slow_consumer":
            log_event("connection_dropped", level=logging.WARNING, why=why, sid=socket.sid)
        while not socket.queue.empty():  # what it never read: free it now
            socket.queue.get_nowait()
            socket.queue.task_done()
        await self.hang_up(socket.sid, reason)
        socket.queue.put_nowait(None)  # the writer's end, even if it was drained above

    async def hang_up(self, sid: str, reason: str | None = None) -> None:
        """Closes the connection itself, not only the session: python-engineio's disconnect
        sends CLOSE and waits for the client to go, and a hostile one never goes."""
        socket = self.sockets.pop(sid, None)
        if socket is None:
            return
        await socket.close(wait=False, abort=True, reason=reason or self.reason.SERVER_DISCONNECT)
        socket.queue.put_nowait(None)  # ends its writer, which closes the websocket
        wire = getattr(socket.queue, "wire", None)
        if wire is not None:
            # A writer stuck in a send to a client that stops reading would never get to
            # that None: the connection is cut instead, which ends the send (and the reader).
            wire.abort_if_stuck()


class GameServer(FrameGuards, socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio's server, every incoming frame checked before it is dispatched."""

    def __init__(self, settings: Settings, metrics: Metrics, **options: Any) -> None:
        self.guard(settings, metrics)
        self._async_handlers: dict[Any, bool] = {}  # handler: is a coroutine function
        # Each message is started where it is read (GameEngineIO.on_message, for
        # GameSocket._on_text_frame and python-engineio's own sockets alike: at once, or as a task
        # of its own). python-socketio then runs the handler right there, not in a second
        # task of its own (a task's creation and loop pass per message, for nothing: each
        # message still waits for no other but at its room's lock, in arrival order).
        super().__init__(**{**options, "async_handlers": False})
        self.eio.async_handlers = True
        self.eio.send_queue_limit = settings.send_queue_limit
        self.queue_text = self.eio.queue_text  # app/realtime/outgoing.py's send, per recipient

    def _engineio_server_class(self) -> type[GameEngineIO]:
        return GameEngineIO

    async def _handle_eio_connect(self, eio_sid: str, environ: dict[str, Any]) -> Any:
        if self.budget_for(eio_sid, environ) is None:
            return False  # refused: python-engineio answers 401
        # The connect request's body reader: python-engineio's ASGI driver makes a class for
        # it on every request (3 KB), and this environ lives as long as the connection.
        # Nothing reads a connect's body (a polling transport's POSTs have their own).
        environ.pop("wsgi.input", None)
        self.eio.adopt(eio_sid)
        await super()._handle_eio_connect(eio_sid, environ)

    async def _handle_eio_disconnect(self, eio_sid: str, reason: str) -> None:
        self._budgets.pop(eio_sid, None)
        await super()._handle_eio_disconnect(eio_sid, reason)

    async def _handle_connect(self, eio_sid: str, namespace: str | None, data: Any) -> None:
        """python-socketio's, and if the connection ended while the connect handler ran (it
        waits for the room's lock, or a restore): python-socketio's disconnect skipped the
        connection as not yet connected, so it is disconnected now that it is, or its
        person would stay at the table as connected, and their room would never expire."""
        await super()._handle_connect(eio_sid, namespace, data)
        if eio_sid not in self._budgets:
            await self._handle_disconnect(eio_sid, namespace, self.reason.TRANSPORT_CLOSE)

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        """A frame's Socket.IO packet, checked and dispatched. An EVENT (a flip, a slap: all
        but a handful of frames) goes to its handler from here, with no layer between."""
        charged = self._charged(eio_sid, data)
        if charged is None:
            return None
        budget, within = charged
        plain = self._plain_event(data)
        pkt = None
        if plain is not None:
            kind, namespace, (pkt_id, args) = packet.EVENT, None, plain
        else:
            try:
                pkt = self.packet_class(encoded_packet=data)
            except Exception:  # anything the decoder chokes on is the client's fault
                return self._malformed(eio_sid, budget, "undecodable")
            kind, namespace, pkt_id, args = pkt.packet_type, pkt.namespace, pkt.id, pkt.data
            if kind in (packet.BINARY_EVENT, packet.BINARY_ACK):
                return self._cut_off(eio_sid, budget, "binary")
        if not within:
            return self._over_budget(eio_sid, budget, kind, namespace, pkt_id)
        budget.refused_in_a_row = 0
        try:
            if kind != packet.EVENT:
                await self._dispatch(eio_sid, budget, pkt)
                return
            if not isinstance(args, list) or not args or not isinstance(args[0], str):
                return self._malformed(eio_sid, budget, "bad_event")
            event = args[0]
            if event in RESERVED_EVENTS:
                return self._refuse_reserved(eio_sid, namespace, pkt_id, event)
            client_event = self._catch_all(namespace, event)
            if client_event is None:
                await self._handle_event(eio_sid, namespace, pkt_id, args)
                return
            namespace = namespace or "/"
            sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
            if sid is not None and self.manager.is_connected(sid, namespace):
                answer = await client_event(event, sid, *args[1:])
                self._send_answer(eio_sid, namespace, pkt_id, answer)
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=eio_sid)

    def _plain_event(self, text: str) -> tuple[int | None, Any] | None:
        """Almost every frame a client sends: an EVENT in the default namespace with an ack
        id, `2<id>[...]`, as (ack id, data) decoded with orjson (python-socketio's decoder
        walks the text character by character and parses with the stdlib: a tenth of a
        message's cost, and a Packet). None for anything else, or JSON orjson refuses (NaN,
        lone surrogates) or reads otherwise (an integer beyond 64 bits becomes a float), and
        for any run of 19 digits, in the data or the ack id (python-socketio refuses an id
        past 100 digits): python-socketio's own decoder then reads it as it always did."""
        head = PLAIN_EVENT.match(text)
        if head is None or LONG_NUMBER.search(text):
            return None
        try:
            data = orjson.loads(text[head.end() - 1 :])
        except orjson.JSONDecodeError:
            return None
        digits = head.group(1)
        return (int(digits) if digits else None), data

    async def _dispatch(self, eio_sid: str, budget: FrameBudget, pkt: Any) -> None:
        """Every packet but an EVENT (see `_handle_eio_message`): a connect, a disconnect,
        an ack; anything else is no client's to send."""
        kind = pkt.packet_type
        if kind == packet.CONNECT:
            if self.manager.sid_from_eio_sid(eio_sid, pkt.namespace or "/") is not None:
                return self._malformed(eio_sid, budget, "connected_twice")
            await self._handle_connect(eio_sid, pkt.namespace, pkt.data)
        elif kind == packet.DISCONNECT:
            await self._handle_disconnect(eio_sid, pkt.namespace, self.reason.CLIENT_DISCONNECT)
        elif kind == packet.ACK:
            await self._handle_ack(eio_sid, pkt.namespace, pkt.id, pkt.data)
        else:  # CONNECT_ERROR or a type that does not exist: never a client's to send
            self._malformed(eio_sid, budget, "bad_type")

    def _catch_all(self, namespace: str | None, event: str) -> Any:
        """The app's handler of every client event (`sio.on("*")`, a coroutine function)
        when it is the one python-socketio would call for `event`: no handler of the
        event's own name and no reserved name (python-socketio looks for a namespace
        handler only when neither is found). A client's event then goes straight to it,
        as python-socketio's `_handle_event` and `_trigger_event` would take it there (a
        layer of checks and calls per message, a tenth of a message's cost outside the
        game); None: python-socketio's own way."""
        handlers = self.handlers.get(namespace or "/")
        if handlers is None or event in handlers or event in self.reserved_events:
            return None
        handler = handlers.get("*")
        if handler is None:
            return None
        is_async = self._async_handlers.get(handler)
        if is_async is None:  # looked at once per handler: this runs for every message
            is_async = self._async_handlers[handler] = inspect.iscoroutinefunction(handler)
        return handler if is_async else None

    async def _handle_event_internal(
        self, server: GameServer, sid: str, eio_sid: str, data: list[Any], namespace: str, id: Any
    ) -> None:
        """python-socketio's: the handler runs, and its answer goes back as the ACK."""
        answer = await server._trigger_event(data[0], namespace, sid, *data[1:])
        self._send_answer(eio_sid, namespace, id, answer)

    def _send_answer(self, eio_sid: str, namespace: str, id: Any, answer: Any) -> None:
        """A handler's answer, as the ACK of message `id` (none without one). Its text is
        written by orjson straight away, as app/realtime/outgoing.py writes every `state`:
        python-socketio would build a Packet, scan the answer for binary and encode it
        with the stdlib, a fifth of the cost of a flip outside the game. Our answers are
        plain JSON (app.wire.protocol.ack); anything orjson refuses takes python-socketio's way."""
        if answer is self.not_handled or id is None:
            return
        args = [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        try:
            text = to_json(args)
        except TypeError:
            self._queue_packet(eio_sid, self._ack_packet(namespace, id, args))
            return
        where = "" if namespace in (None, "/") else f"{namespace},"
        # python-engineio's `send` of it, without the Packet it would make and encode into
        # this same text: an Engine.IO MESSAGE, then the Socket.IO ACK.
        self.eio.queue_text(eio_sid, f"{engineio_packet.MESSAGE}{packet.ACK}{where}{id}{text}")

    def _queue_packet(self, eio_sid: str, pkt: Any) -> None:
        """python-socketio's `_send_packet`, which never waits with our Engine.IO server
        (its `send_packet` only queues): each encoded part as an Engine.IO MESSAGE."""
        encoded = pkt.encode()
        for part in encoded if isinstance(encoded, list) else [encoded]:
            self.eio.queue_packet(
                eio_sid, engineio_packet.Packet(engineio_packet.MESSAGE, data=part)
            )

    async def hang_up(self, eio_sid: str) -> None:
        await self.eio.hang_up(eio_sid)
