"""The Socket.IO server on the libraries' own paths (SLAPJACK_TRANSPORT=stock): python-socketio
and python-engineio as they ship, python-engineio's own socket, reader and writer, and
uvicorn's own websocket protocol (app/realtime/serving.py), with the guards of the lean
transport that their public hooks allow (docs/protocol.md, "Transports"):

- Every frame takes a token from its connection's budget, and binary packets, reserved
  event names and malformed frames are refused (app/realtime/guards.py) in a handler of
  python-engineio's `message` event (`eio.on`) wrapped around python-socketio's own, before
  python-socketio decodes the frame.
- No room ever waits on a silent socket: what the app sends (app/realtime/outgoing.py, and
  `emit`) goes through python-engineio's `send_packet`, never awaited by the room: started
  at once, it queues without waiting, and whatever waits (python-engineio closes a
  connection whose pong is late inline, in the send) goes on in a task of its own.
- Bounded send queues: each connection's queue (python-engineio makes it with the server's
  `create_queue`) takes no message past `send_queue_limit`: the connection is dropped from
  its room, its queue freed.

The few names of the libraries this still reaches beyond their documented API are in
app/realtime/internals.py (and docs/protocol.md, "Transports", says why each).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import socketio
from engineio import packet as engineio_packet
from socketio import packet

from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.realtime.eager import first_step
from app.realtime.guards import RESERVED_EVENTS, FrameGuards
from app.wire.encoded import Encoded

NAMESPACE = "/"


class OutgoingQueue(asyncio.Queue[Any]):
    """A connection's outgoing packets (python-engineio's `queue`): `put` never waits, and
    once `limit` packets wait, a message more (the app's, or python-socketio's own: an ack)
    is not queued but tells `overflowed`, once: the client does not read. Engine.IO's own
    packets (a ping, a CLOSE) and the writer's end always get through."""

    def __init__(self, limit: int, overflowed: Callable[[OutgoingQueue], None]) -> None:
        super().__init__()
        self.limit, self.overflowed = limit, overflowed
        self.sid: str | None = None  # set once the connection is known (engineio_connect)
        self.dropping = False

    async def put(self, item: Any) -> None:
        self.put_nowait(item)

    def put_nowait(self, item: Any) -> None:
        if (
            item is not None
            and item.packet_type == engineio_packet.MESSAGE
            and self.qsize() >= self.limit
        ):
            if not self.dropping:
                self.dropping = True
                self.overflowed(self)
            return
        super().put_nowait(item)

    def discard(self) -> None:
        """What was never written (a client that does not read): freed now."""
        while not self.empty():
            self.get_nowait()
            self.task_done()


class StockServer(FrameGuards, socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio's server, its Engine.IO events wrapped by the frame guards."""

    def __init__(self, settings: Settings, metrics: Metrics, **options: Any) -> None:
        super().__init__(**options)
        self.guard(settings, metrics)
        self._sending: set[asyncio.Task[None]] = set()  # held: asyncio keeps tasks weakly
        eio = self.eio
        # python-engineio makes each connection's queue with its server's `create_queue`.
        eio.create_queue = self.outgoing_queue
        # python-socketio's handlers of python-engineio's events, each called from ours.
        self._eio_handlers = dict(eio.handlers)
        eio.on("connect", self.engineio_connect)
        eio.on("message", self.engineio_message)
        eio.on("disconnect", self.engineio_disconnect)

    def outgoing_queue(self, *args: Any, **kwargs: Any) -> OutgoingQueue:
        return OutgoingQueue(self.settings.send_queue_limit, self._overflowed)

    def _overflowed(self, queue: OutgoingQueue) -> None:
        """A connection's queue is full: it is dropped (in a task of its own: this runs
        inside a send), and what it never read is freed now."""
        queue.discard()
        if queue.sid is not None:
            self.start_background_task(self._drop_slow_consumer, queue.sid)

    async def _drop_slow_consumer(self, eio_sid: str) -> None:
        log_event("connection_dropped", level=logging.WARNING, why="slow_consumer", sid=eio_sid)
        await self.hang_up(eio_sid)

    async def engineio_connect(self, eio_sid: str, environ: dict[str, Any]) -> Any:
        if self.budget_for(eio_sid, environ) is None:
            return False  # refused: python-engineio answers 401
        socket = self.eio.sockets.get(eio_sid)  # made just before this event, with its queue
        if socket is not None and isinstance(socket.queue, OutgoingQueue):
            socket.queue.sid = eio_sid
        return await self._eio_handlers["connect"](eio_sid, environ)

    async def engineio_disconnect(self, eio_sid: str, reason: Any) -> None:
        self._budgets.pop(eio_sid, None)
        await self._eio_handlers["disconnect"](eio_sid, reason)

    async def engineio_message(self, eio_sid: str, data: Any) -> None:
        """A frame's Socket.IO packet, checked, then python-socketio's own handling of it."""
        charged = self._charged(eio_sid, data)
        if charged is None:
            return None
        budget, within = charged
        try:
            pkt = self.packet_class(encoded_packet=data)
        except Exception:  # anything the decoder chokes on is the client's fault
            return self._malformed(eio_sid, budget, "undecodable")
        kind, namespace = pkt.packet_type, pkt.namespace
        if kind in (packet.BINARY_EVENT, packet.BINARY_ACK):
            return self._cut_off(eio_sid, budget, "binary")
        if not within:
            return self._over_budget(eio_sid, budget, kind, namespace, pkt.id)
        budget.refused_in_a_row = 0
        if kind == packet.EVENT:
            args = pkt.data
            if not isinstance(args, list) or not args or not isinstance(args[0], str):
                return self._malformed(eio_sid, budget, "bad_event")
            if args[0] in RESERVED_EVENTS:
                return self._refuse_reserved(eio_sid, namespace, pkt.id, args[0])
        elif kind == packet.CONNECT:
            if self.manager.sid_from_eio_sid(eio_sid, namespace or NAMESPACE) is not None:
                return self._malformed(eio_sid, budget, "connected_twice")
        elif kind not in (packet.DISCONNECT, packet.ACK):
            return self._malformed(eio_sid, budget, "bad_type")  # CONNECT_ERROR, or no type
        try:
            await self._eio_handlers["message"](eio_sid, data)
            if kind == packet.CONNECT and eio_sid not in self._budgets:
                await self._ended_while_connecting(eio_sid, namespace or NAMESPACE)
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=eio_sid)

    async def _ended_while_connecting(self, eio_sid: str, namespace: str) -> None:
        """The connection ended while the connect handler ran (it waits for the room's
        lock, or a restore): python-socketio's disconnect skipped it as not yet connected,
        and connected it after. It is disconnected now, or its person would stay at the
        table as connected, and their room would never expire."""
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        if sid is not None and self.manager.is_connected(sid, namespace):
            await self.disconnect(sid, namespace=namespace, ignore_queue=True)

    # ---- sending: never awaited by the app ---------------------------------------------

    def queue_text(self, eio_sid: str, text: str) -> None:
        """Sends an Engine.IO MESSAGE whose whole text is `text` (`42[...]`) through
        python-engineio's `send_packet`, started here (app/realtime/eager.py): it queues
        the packet without waiting, in line with python-socketio's own acks (a state is
        out before the ack of the action that made it). Should it wait (a late pong makes
        python-engineio close the connection inline, and the disconnect handler runs), the
        rest goes on as a task of its own: the caller never waits."""
        pkt = engineio_packet.Packet(engineio_packet.MESSAGE, data=text[1:])
        try:
            rest = first_step(self.eio.send_packet(eio_sid, pkt))
        except Exception as error:  # a bug of ours: what the task's end would log
            log_event("send_failed", level=logging.ERROR, exc_info=error)
            return
        if rest is not None:
            task = asyncio.get_running_loop().create_task(rest)
            self._sending.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._sending.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log_event("send_failed", level=logging.ERROR, exc_info=error)

    def _queue_packet(self, eio_sid: str, pkt: Any) -> None:
        """A Socket.IO packet of ours (an error ack), sent as the app's messages are."""
        encoded = pkt.encode()
        for part in encoded if isinstance(encoded, list) else [encoded]:
            self.queue_text(eio_sid, f"{engineio_packet.MESSAGE}{part}")

    async def emit(
        self,
        event: str,
        data: Any = None,
        to: Any = None,
        room: Any = None,
        skip_sid: Any = None,
        namespace: str | None = None,
        callback: Any = None,
        ignore_queue: bool = False,
    ) -> None:
        """python-socketio's `emit`, but an event with data to a room, a connection or
        everyone (what the app emits) is sent as its messages are, never awaited here."""
        if data is None or skip_sid is not None or callback is not None:
            await super().emit(
                event,
                data,
                to=to,
                room=room,
                skip_sid=skip_sid,
                namespace=namespace,
                callback=callback,
                ignore_queue=ignore_queue,
            )
            return
        namespace = namespace or NAMESPACE
        if namespace != NAMESPACE:
            await super().emit(event, data, to=to, room=room, namespace=namespace)
            return
        text = Encoded.of(event, data).text
        try:
            participants = list(self.manager.get_participants(namespace, to or room))
        except KeyError:  # nobody has connected yet, or no such room
            return
        for _, eio_sid in participants:
            self.queue_text(eio_sid, text)

    async def hang_up(self, eio_sid: str) -> None:
        """Closes the connection itself, not only the session: python-engineio's `disconnect`
        sends CLOSE and waits for the client to take it, and a hostile one never does. The
        session ends (its disconnect handler runs), and the writer's end is queued: the
        writer closes the websocket once it is through what it was writing."""
        eio = self.eio
        socket = eio.sockets.pop(eio_sid, None)
        if socket is None:
            return
        await socket.close(wait=False, abort=True, reason=eio.reason.SERVER_DISCONNECT)
        socket.queue.put_nowait(None)
