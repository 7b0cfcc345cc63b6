"""The Socket.IO server as a public game server runs it: python-socketio and python-engineio
with the guards every frame passes before any handler of ours sees it.

- Sending never runs app code and never waits. python-engineio's own send closes a
  connection whose pings went unanswered *inline*, which runs the disconnect handler inside
  the sender: a room broadcasting under its lock would deadlock on a sleeping phone. Here
  such a send queues nothing and the close runs as a task of its own. A send to a
  connection whose outgoing queue is full (a client that never reads) drops that connection
  the same way.
- Every frame a client sends takes a token from its connection's budget, whatever it is:
  an event past the budget is answered rate_limited, and a connection that keeps going
  past it (refused or malformed frames in a row) is cut off at the transport
  (app/realtime/guards.py).
- Binary packets are refused at their first frame: the game sends none, and python-socketio
  would gather a packet's announced attachments (up to 9,999,999,999) without bound.
- An event named like Socket.IO's own (`connect`, `disconnect`, `*` ...) is answered
  unknown_event and reaches no handler: a client-sent `connect` re-ran the connect handler.
- A websocket is read and written by app/realtime/websocket.py, each message answered where
  it is read; a client's event goes straight to the app's handler of every event, decoded
  and answered with orjson (python-socketio's decoder and encoder, and its layers of
  dispatch, cost a fifth of a message outside the game).

Every name of python-engineio and python-socketio used here beyond their documented API is
in app/realtime/internals.py, which a test checks against what is installed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Coroutine
from functools import partial
from typing import Any

import engineio
import orjson
import socketio
from engineio import packet as engineio_packet
from socketio import packet

from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.realtime.eager import first_step
from app.realtime.guards import RESERVED_EVENTS, FrameGuards
from app.realtime.pings import PingSweep
from app.realtime.queues import Outbox
from app.realtime.websocket import Heard, websocket_driver
from app.wire.encoded import to_json

NAMESPACE = "/"
EVENT_TYPE = str(packet.EVENT)  # "2": a Socket.IO packet's type, its first character
# Where orjson's integers end (int64) and floats begin: a frame with a run of this many
# digits (an ack id or a number) is left to python-socketio's decoder.
LONG_NUMBER = re.compile(r"[0-9]{19}")
# An EVENT in the default namespace, its ack id (if any) and the start of its data.
PLAIN_EVENT = re.compile(r"2([0-9]*)\[")
# The events run at once, outside a task (`GameServer.heard`): a game's own, which need no
# task before their first wait.
HOT_EVENT = re.compile(r'2[0-9]*\["(?:flip|slap|pong)"')
PING = engineio_packet.Packet(engineio_packet.PING)  # the same "2" to everyone


class GameEngineIO(engineio.AsyncServer):  # type: ignore[misc]
    """python-engineio's server with a send that never waits nor calls back into the app,
    and our websocket reader and writer (app/realtime/websocket.py)."""

    send_queue_limit = 500  # messages; GameServer sets it from the settings
    _async: dict[str, Any]  # python-engineio's driver table (typed here: it has no annotations)

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._drops: set[asyncio.Task[None]] = set()  # held: asyncio keeps tasks weakly
        self._polled: set[str] = set()  # the long-polling sessions (and websockets from them)
        self._polling_watch: asyncio.Task[None] | None = None
        self.pong_seconds = float(options.get("ping_timeout", 20))  # python-engineio's default

    def opened(self, sid: str, environ: dict[str, Any]) -> None:
        """A new session, at python-engineio's connect event. A websocket's pings are
        app/realtime/pings.py's: python-engineio starts one of its own (a task sleeping
        ping_interval) right after this event unless one is out already. A long-polling
        session keeps python-engineio's pings, and is watched for a late pong here (its own
        monitoring is off: a session whose client stopped polling would stay for ever)."""
        socket = self.sockets.get(sid)
        if socket is None:
            return
        if environ.get("asgi.scope", {}).get("type") == "websocket":
            socket.last_ping = None
            return
        self._polled.add(sid)
        if self._polling_watch is None:
            self._polling_watch = asyncio.get_running_loop().create_task(self._watch_polling())

    async def _watch_polling(self) -> None:
        """Every ping timeout, while any long-polling session is open: one whose pong is late
        is dropped (python-engineio's own check, on its wall-clock `last_ping`)."""
        try:
            while self._polled:
                await asyncio.sleep(self.pong_seconds)
                now = time.time()
                for sid in list(self._polled):
                    socket = self.sockets.get(sid)
                    if socket is None or socket.closed:
                        self._polled.discard(sid)
                    elif socket.last_ping and now - socket.last_ping > self.pong_seconds:
                        self._drop_later(socket, self.reason.PING_TIMEOUT, "ping_timeout")
        finally:
            self._polling_watch = None

    def serve_websockets(self, heard: Heard, settings: Settings) -> None:
        """Every websocket opened as one is served by app/realtime/websocket.py, `heard`
        answering its messages, pinged by one sweep (python-engineio's driver table names
        the class it serves a websocket with; a connection upgraded from long-polling keeps
        python-engineio's own reader and writer)."""
        interval, timeout = settings.ping_interval_seconds, settings.ping_timeout_seconds
        pings = PingSweep(interval, timeout, partial(self.queue_packet, pkt=PING), self._late)
        driver = websocket_driver(heard, pings, settings.max_message_bytes)
        self._async = {**self._async, "websocket": driver}

    def _late(self, connection: Any) -> None:
        self._drop_later(connection.socket, self.reason.PING_TIMEOUT, "ping_timeout")

    def create_queue(self, *args: Any, **kwargs: Any) -> Outbox:
        """Each connection's outgoing queue (python-engineio makes one per socket here)."""
        return Outbox()

    async def send_packet(self, sid: str, pkt: Any) -> None:
        """python-engineio's send of a packet (python-socketio's acks, its connect and
        disconnect packets, `emit`): queued, never waiting (see `queue_packet`)."""
        self.queue_packet(sid, pkt)

    def queue_packet(self, sid: str, pkt: Any) -> None:
        """`pkt` queued on the connection `sid` (written at once if nothing is queued before
        it); nothing if the connection is gone, and a late pong or a full queue drops the
        connection in a task of its own: a send never waits and never runs app code."""
        socket = self._receiver(sid)
        if socket is not None:
            socket.queue.put_nowait(pkt)

    def queue_text(self, sid: str, text: str) -> None:
        """`queue_packet` of an Engine.IO MESSAGE whose whole text is `text` (`42[...]`,
        app/realtime/outgoing.py): written as it is when nothing is queued before it, and only
        otherwise made a packet, to wait in the queue."""
        socket = self._receiver(sid)
        if socket is not None and not socket.queue.send_now(text):
            socket.queue.put_behind(engineio_packet.Packet(engineio_packet.MESSAGE, text[1:]))

    def _receiver(self, sid: str) -> Any:
        """The connection `sid`'s socket, if a message may be queued on it: None if it is
        gone, its queue has ended (the connection is closing), or it holds send_queue_limit
        messages unwritten (a client that does not read: dropped in a task of its own)."""
        socket = self.sockets.get(sid)
        if socket is None or socket.queue.ended:
            return None
        if socket.queue.held >= self.send_queue_limit:
            self._drop_later(socket, self.reason.SERVER_DISCONNECT, "slow_consumer")
            return None
        return socket

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
        sends CLOSE and waits for the client to go, and a hostile one never goes. A writer
        stuck in a send to a client that stopped reading is cut by app/realtime/doors.py."""
        socket = self.sockets.pop(sid, None)
        if socket is None:
            return
        await socket.close(wait=False, abort=True, reason=reason or self.reason.SERVER_DISCONNECT)
        socket.queue.put_nowait(None)  # ends its writer, which closes the websocket


class GameServer(FrameGuards, socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio's server, every incoming frame checked before python-socketio sees it
    (its handlers of python-engineio's events, each called from ours), and each handler run
    where its message is read (python-socketio's `async_handlers=False`)."""

    def __init__(self, settings: Settings, metrics: Metrics, **options: Any) -> None:
        self.guard(settings, metrics)
        self._client_event: Any = None  # the app's handler of every client event (`on("*")`)
        self._handling: set[asyncio.Task[Any]] = set()  # held: asyncio keeps tasks weakly
        # python-socketio's handlers run where their message is read (in the reader's task,
        # or started at once: `heard`), and python-engineio monitors no connection: the
        # websockets' pings are app/realtime/pings.py's.
        super().__init__(**{**options, "async_handlers": False, "monitor_clients": False})
        eio = self.eio
        eio.send_queue_limit = settings.send_queue_limit
        # python-socketio's handlers of python-engineio's events, registered in its
        # constructor: each is called from ours, once a frame passed the guards.
        self._socketio = dict(eio.handlers)
        eio.on("connect", self.engineio_connect)
        eio.on("message", self.engineio_message)
        eio.on("disconnect", self.engineio_disconnect)
        eio.serve_websockets(self.heard, settings)
        self.queue_text = eio.queue_text  # app/realtime/outgoing.py's send, per recipient

    def _engineio_server_class(self) -> type[GameEngineIO]:
        return GameEngineIO

    def on(self, event: str, handler: Any = None, namespace: str | None = None) -> Any:
        """python-socketio's `on`, noting the app's handler of every event of the default
        namespace (`"*"`): a client's event goes straight to it (`engineio_message`)."""
        if event == "*" and handler is not None and (namespace or NAMESPACE) == NAMESPACE:
            self._client_event = handler
        return super().on(event, handler, namespace)

    async def engineio_connect(self, eio_sid: str, environ: dict[str, Any]) -> Any:
        if self.budget_for(eio_sid, environ) is None:
            return False  # refused: python-engineio answers 401
        # The connect request's body reader: python-engineio's ASGI driver makes a class for
        # it on every request (3 KB), and this environ lives as long as the connection.
        # Nothing reads a connect's body (a polling transport's POSTs have their own).
        environ.pop("wsgi.input", None)
        self.eio.opened(eio_sid, environ)
        return await self._socketio["connect"](eio_sid, environ)

    async def engineio_disconnect(self, eio_sid: str, reason: Any) -> None:
        self._budgets.pop(eio_sid, None)
        await self._socketio["disconnect"](eio_sid, reason)

    def heard(self, eio_sid: str, data: Any) -> Coroutine[Any, Any, None] | None:
        """A message a websocket read (app/realtime/websocket.py). A flip, a slap or a pong
        (almost every event) runs at once (app/realtime/eager.py), outside any task: most
        run to their end without waiting, and no task is made at all; one that waits (its
        room's lock, a held slap's judging) goes on as a task of its own, and the next
        frame is read meanwhile. Any other event runs in a task of its own from its start
        (it may need one before its first wait: `asyncio.timeout`, a Redis pool's wait for
        a connection). Anything else is the reader's to await (a connect must be done
        before the next frame counts): what is returned."""
        work = self.engineio_message(eio_sid, data)
        if not (isinstance(data, str) and data[:1] == EVENT_TYPE):
            return work
        if not HOT_EVENT.match(data):
            self._go_on(work)
            return None
        try:
            rest = first_step(work)
        except Exception as error:  # a bug of ours: what the task's end would log
            log_event("message_failed", level=logging.ERROR, exc_info=error)
            return None
        if rest is not None:
            self._go_on(rest)
        return None

    def _go_on(self, work: Coroutine[Any, Any, Any]) -> None:
        """`work` in a task of its own, kept until it is done (`_settled`)."""
        task = asyncio.get_running_loop().create_task(work)
        self._handling.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[Any]) -> None:
        """A message's task is done: let go of it, and log its failure (one JSON line with
        the traceback, never an exception nobody retrieved)."""
        self._handling.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log_event("message_failed", level=logging.ERROR, exc_info=error)

    async def engineio_message(self, eio_sid: str, data: Any) -> None:
        """A frame's Socket.IO packet, checked and dispatched. An EVENT (a flip, a slap: all
        but a handful of frames) goes to the app's handler from here, with no layer between;
        anything else to python-socketio's own handling."""
        charged = self._charged(eio_sid, data)
        if charged is None:
            return None
        budget, within = charged
        plain = plain_event(data)
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
            if kind == packet.EVENT:
                if not isinstance(args, list) or not args or not isinstance(args[0], str):
                    return self._malformed(eio_sid, budget, "bad_event")
                if args[0] in RESERVED_EVENTS:
                    return self._refuse_reserved(eio_sid, namespace, pkt_id, args[0])
                await self._event(eio_sid, namespace, pkt_id, args, data)
            elif kind == packet.CONNECT:
                namespace = namespace or NAMESPACE
                if self.manager.sid_from_eio_sid(eio_sid, namespace) is not None:
                    return self._malformed(eio_sid, budget, "connected_twice")
                await self._socketio["message"](eio_sid, data)
                if eio_sid not in self._budgets:
                    await self._ended_while_connecting(eio_sid, namespace)
            elif kind in (packet.DISCONNECT, packet.ACK):
                await self._socketio["message"](eio_sid, data)
            else:  # CONNECT_ERROR or a type that does not exist: never a client's to send
                self._malformed(eio_sid, budget, "bad_type")
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=eio_sid)

    async def _event(
        self, eio_sid: str, namespace: str | None, pkt_id: Any, args: list[Any], data: str
    ) -> None:
        """A client's event, to the app's handler of every event, its answer the ACK: what
        python-socketio's dispatch would do when no handler of the event's own name is
        registered (the app registers none). Another namespace: python-socketio's way."""
        handler = self._client_event
        if handler is None or (namespace or NAMESPACE) != NAMESPACE:
            await self._socketio["message"](eio_sid, data)
            return
        sid = self.manager.sid_from_eio_sid(eio_sid, NAMESPACE)
        if sid is not None and self.manager.is_connected(sid, NAMESPACE):
            answer = await handler(args[0], sid, *args[1:])
            self._send_answer(eio_sid, namespace, pkt_id, answer)

    async def _ended_while_connecting(self, eio_sid: str, namespace: str) -> None:
        """The connection ended while the connect handler ran (it waits for the room's
        lock, or a restore): python-socketio's disconnect skipped it as not yet connected,
        and connected it after. It is disconnected now, or its person would stay at the
        table as connected, and their room would never expire."""
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if sid is not None and self.manager.is_connected(sid, namespace):
            await self.disconnect(sid, namespace=namespace, ignore_queue=True)

    def _send_answer(self, eio_sid: str, namespace: str | None, id: Any, answer: Any) -> None:
        """A handler's answer, as the ACK of message `id` (none without one). Its text is
        written by orjson, as app/realtime/outgoing.py writes every `state`: python-socketio
        would build a Packet, scan the answer for binary and encode it with the stdlib. Our
        answers are plain JSON (app.wire.protocol.ack); anything orjson refuses takes
        python-socketio's way."""
        if id is None:
            return
        args = [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        try:
            text = to_json(args)
        except TypeError:
            self._queue_packet(eio_sid, self._ack_packet(namespace, id, args))
            return
        where = "" if namespace in (None, NAMESPACE) else f"{namespace},"
        self.eio.queue_text(eio_sid, f"{engineio_packet.MESSAGE}{packet.ACK}{where}{id}{text}")

    def _queue_packet(self, eio_sid: str, pkt: Any) -> None:
        """A Socket.IO packet of ours (an error ack): each encoded part an Engine.IO MESSAGE."""
        encoded = pkt.encode()
        for part in encoded if isinstance(encoded, list) else [encoded]:
            self.eio.queue_packet(
                eio_sid, engineio_packet.Packet(engineio_packet.MESSAGE, data=part)
            )

    async def hang_up(self, eio_sid: str) -> None:
        await self.eio.hang_up(eio_sid)


def plain_event(text: Any) -> tuple[int | None, Any] | None:
    """Almost every frame a client sends: an EVENT in the default namespace with an ack id,
    `2<id>[...]`, as (ack id, data) decoded with orjson (python-socketio's decoder walks the
    text character by character and parses with the stdlib, and makes a Packet). None for
    anything else, or JSON orjson refuses (NaN, lone surrogates) or reads otherwise (an
    integer beyond 64 bits becomes a float), and for any run of 19 digits, in the data or
    the ack id (python-socketio refuses an id past 100 digits): python-socketio's own
    decoder then reads it as it always did."""
    if not isinstance(text, str):
        return None
    head = PLAIN_EVENT.match(text)
    if head is None or LONG_NUMBER.search(text):
        return None
    try:
        data = orjson.loads(text[head.end() - 1 :])
    except orjson.JSONDecodeError:
        return None
    digits = head.group(1)
    return (int(digits) if digits else None), data
