"""A websocket's reader and writer, in the place of python-engineio's.

python-engineio serves a websocket through its ASGI driver's `websocket` class, which runs
the socket's own reader and writer: a task, a timer and futures for every frame read (each
wait is wrapped in `asyncio.wait_for`), a hand-over to the writer task for every packet
sent. GameWebSocket takes that class's place (app/realtime/transport.py) and serves the
connection over ASGI's own `receive` and `send`:

- each frame is read with one await, and handled there, in the task uvicorn runs the
  connection in: a message goes to the Socket.IO server (app/realtime/transport.py), which
  answers it before the next frame is read, with no task of its own;
- a packet is written at once when nothing waits before it: ASGI's `send` of it completes
  without waiting while the client reads. Otherwise it waits in the connection's Outbox
  (app/realtime/queues.py) for the writer task, which sends in order, waiting as `send`
  does for a client that reads slowly.

A connection that starts as long-polling and upgrades keeps python-engineio's own reader
and writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from engineio import packet
from engineio.async_drivers import asgi

from app.ops.logs import log_event
from app.realtime.doors import METERED
from app.realtime.eager import ResumingWork, first_step
from app.realtime.frames import FrameReader
from app.realtime.pings import Pinged, PingSweep
from app.realtime.queues import Outbox

MESSAGE = str(packet.MESSAGE)  # an Engine.IO frame's type, its first character
PONG = str(packet.PONG)
CLOSE = str(packet.CLOSE)
UPGRADE = str(packet.UPGRADE)
ENGINEIO_TYPES = frozenset("0123456")
BASE64 = "b"  # a binary packet written as base64 text
NOOP = packet.Packet(packet.NOOP)


class Wire:
    """A connection's ASGI `send`, for its Outbox to write to at once."""

    __slots__ = ("outbox", "send")

    def __init__(self, send: Callable[[dict[str, Any]], Coroutine[Any, Any, Any]], outbox: Outbox):
        self.send, self.outbox = send, outbox

    def send_now(self, text: str) -> bool:
        """Sends `text` now: True once it is sent, or begun and queued for the writer to
        finish (the client reads slowly) before anything else; a connection that is gone
        takes it too, to nobody."""
        try:
            rest = first_step(self.send({"type": "websocket.send", "text": text}))
        except Exception:  # the client is gone: its reader ends the connection
            return True
        if rest is not None:
            self.outbox.put_behind(rest)
        return True

    async def write(self, item: Any) -> None:
        if isinstance(item, ResumingWork):  # a send begun at once (`send_now`)
            await item
        else:
            await self.send({"type": "websocket.send", "text": item.encode()})

    async def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed
            await self.send({"type": "websocket.close"})


Heard = Callable[[str, str | bytes], Coroutine[Any, Any, Any] | None]
HangUp = Callable[[str, str | None], Coroutine[Any, Any, Any]]


def websocket_driver(
    heard: Heard, hang_up: HangUp, pings: PingSweep, limit: int
) -> type[GameWebSocket]:
    """GameWebSocket for one server: `heard(sid, data)` answers an Engine.IO message (what
    it returns, if anything, is awaited before the next frame is read), `hang_up(sid,
    reason)` closes a connection, `pings` pings it, `limit` is the largest frame taken."""
    served = {
        "heard": staticmethod(heard),
        "hang_up": staticmethod(hang_up),
        "pings": pings,
        "limit": limit,
    }
    return type("GameWebSocket", (GameWebSocket,), served)


class GameWebSocket(Pinged):
    """python-engineio's ASGI websocket driver (engineio.async_drivers.asgi.WebSocket), its
    constructor's arguments and its call, serving the socket whose handler it is given."""

    heard: Heard
    hang_up: HangUp
    pings: PingSweep
    limit = 4096

    def __init__(self, handler: Any, server: Any) -> None:
        self.handler, self.server = handler, server
        self.socket = handler.__self__  # python-engineio's socket, whose handler this is
        self.sid = self.socket.sid

    async def __call__(self, environ: dict[str, Any]) -> str:
        socket = self.socket
        outbox = socket.queue
        if socket.connected or not isinstance(outbox, Outbox):
            # An upgrade from long-polling: python-engineio's own reader and writer.
            return str(await asgi.WebSocket(self.handler, self.server)(environ))
        send = environ["asgi.send"]
        await send({"type": "websocket.accept"})
        socket.connected = socket.upgraded = True
        wire = Wire(send, outbox)
        outbox.wire = wire
        writer = asyncio.ensure_future(self._write(outbox, wire))
        self.pings.watch(self)
        # Its events and pongs taken as they arrive, before uvicorn parses them (no await
        # since the accept: nothing was read meanwhile). Served through anything but
        # uvicorn's own `send` (a method of its protocol), it reads through ASGI only.
        metered = METERED.get(getattr(send, "__self__", None))  # type: ignore[arg-type]
        if metered is not None:
            metered.reader = FrameReader(self.hear, self.limit)
        try:
            await self._read(environ["asgi.receive"])
        finally:
            self.ended = True
            if metered is not None:
                metered.reader = None
            outbox.wire = None
            outbox.put_nowait(None)  # the writer sends what is queued, then closes
        await writer
        await socket.close(wait=False, abort=True, reason=self.server.reason.TRANSPORT_CLOSE)
        return ""

    def hear(self, text: str) -> None:
        """A client's event (`42...`) or pong (`3`), handed over as it arrives
        (app/realtime/frames.py): what `_read` does with it, without a wait."""
        if self.socket.queue.ended:
            return  # hung up: what is still in flight is nobody's
        if text[0] == PONG:
            self.pings.answered(self)
            return
        try:
            waiting = self.heard(self.sid, text[1:])  # an event: begun at once, never waited on
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=self.sid)
            return
        if waiting is not None:  # (only for what is no event)
            waiting.close()

    async def _read(self, receive: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> None:
        """Every frame uvicorn reads (what the FrameReader takes never comes here)."""
        sid = self.sid
        while True:
            event = await receive()
            if event["type"] != "websocket.receive":
                return  # the client went, or the connection closed
            text = event.get("text")
            data: str | bytes = (event.get("bytes") or b"") if text is None else text
            if len(data) > self.limit:
                return  # python-engineio's cap on a packet
            if self.socket.queue.ended:
                return  # hung up: what is still in flight is nobody's
            if text is None or text[:1] == BASE64:  # binary, or as base64 text: binary too
                await self._heard(sid, text.encode() if text is not None else data)
                continue  # (the guards cut it off)
            kind = text[:1]
            if kind == MESSAGE:
                await self._heard(sid, text[1:])
            elif kind == PONG:
                self.pings.answered(self)
            elif kind == CLOSE:
                await self.hang_up(sid, self.server.reason.CLIENT_DISCONNECT)
                return
            elif kind == UPGRADE:
                self.server.queue_packet(sid, NOOP)
            elif kind not in ENGINEIO_TYPES:
                await self.hang_up(sid, None)  # not Engine.IO: the client does not speak it
                return
            # anything else python-engineio ignores too

    async def _heard(self, sid: str, data: str | bytes) -> None:
        try:
            waiting = self.heard(sid, data)
            if waiting is not None:
                await waiting
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=sid)

    async def _write(self, outbox: Outbox, wire: Wire) -> None:
        """Sends what waits in the Outbox, in order, until its end (a None) or python-
        engineio's CLOSE, then closes the websocket."""
        try:
            while items := outbox.after(await outbox.get()):
                for item in items:
                    await wire.write(item)
                    outbox.written()
                    if getattr(item, "packet_type", None) == packet.CLOSE:
                        outbox.ended = True  # nothing more for it: the session closed
                        return  # python-engineio closed the session: the websocket goes
        except Exception:  # the websocket is gone
            pass
        finally:
            await wire.close()
