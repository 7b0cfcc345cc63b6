"""A websocket's reader and writer, in the place of python-engineio's.

python-engineio serves a websocket through its ASGI driver's `websocket` class, which runs
the socket's own reader and writer: a task, a timer and futures for every frame read (each
wait is wrapped in `asyncio.wait_for`), a hand-over to the writer task for every packet
sent. GameWebSocket takes that class's place (app/realtime/transport.py) and serves the
connection over ASGI's own `receive` and `send`:

- each frame is read with one await, and handled there, in the task uvicorn runs the
  connection in: a message goes to the Socket.IO server (app/realtime/transport.py), which
  answers it before the next frame is read, with no task of its own;
- a packet is written at once when nothing waits before it: a frame of ours straight to
  the connection's transport (app/realtime/frames.py `write_frame`). Otherwise (a client
  that reads slowly, a websocket closing) it waits in the connection's Outbox
  (app/realtime/queues.py) for the writer task, which sends it through ASGI's `send`, in
  order, waiting as `send` does for a client that reads slowly.

A connection that starts as long-polling and upgrades keeps python-engineio's own reader
and writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from engineio import packet
from engineio.async_drivers import asgi

from app.ops.logs import log_event
from app.realtime.doors import METERED
from app.realtime.frames import FrameReader, write_frame
from app.realtime.pings import Pinged, PingSweep
from app.realtime.queues import Outbox, Send

MESSAGE = str(packet.MESSAGE)  # an Engine.IO frame's type, its first character
PONG = str(packet.PONG)
CLOSE = str(packet.CLOSE)
UPGRADE = str(packet.UPGRADE)
ENGINEIO_TYPES = frozenset("0123456")
BASE64 = "b"  # a binary packet written as base64 text
NOOP = packet.Packet(packet.NOOP)


Heard = Callable[[str, str | bytes], Coroutine[Any, Any, Any] | None]


def websocket_driver(heard: Heard, pings: PingSweep, limit: int) -> type[GameWebSocket]:
    """GameWebSocket for one server: `heard(sid, data)` answers an Engine.IO message (what
    it returns, if anything, is awaited before the next frame is read), `pings` pings each
    connection, `limit` is the largest frame taken. The server (app/realtime/transport.py
    GameEngineIO) hangs a connection up (`hang_up(sid, reason)`)."""
    served = {"heard": staticmethod(heard), "pings": pings, "limit": limit}
    return type("GameWebSocket", (GameWebSocket,), served)


class GameWebSocket(Pinged):
    """python-engineio's ASGI websocket driver (engineio.async_drivers.asgi.WebSocket), its
    constructor's arguments and its call, serving the socket whose handler it is given."""

    heard: Heard
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
        outbox.send = send
        writer = asyncio.ensure_future(self._write(outbox, send))
        self.pings.watch(self)
        # Its events and pongs taken as they arrive, before uvicorn parses them (no await
        # since the accept: nothing was read meanwhile). Served through anything but
        # uvicorn's own `send` (a method of its protocol), it reads through ASGI only.
        metered = METERED.get(getattr(send, "__self__", send))
        if metered is not None:
            metered.reader = reader = FrameReader(self.hear, self.limit, metered.transport)
            outbox.write = partial(write_frame, metered, reader)  # what it sends: at once
        try:
            await self._read(environ["asgi.receive"])
        finally:
            self.ended = True
            outbox.send = outbox.write = None
            # The writer sends what is queued, then closes. (The FrameReader stays: what it
            # takes from here, `_heard` drops, the end being put.)
            outbox.put_nowait(None)
        await writer
        await socket.close(wait=False, abort=True, reason=self.server.reason.TRANSPORT_CLOSE)
        return ""

    def hear(self, text: str) -> Coroutine[Any, Any, Any] | None:
        """A client's message (`4...`) or pong (`3`): from `_read`, or as it arrives for an
        event or a pong (app/realtime/frames.py). What it returns (only for what is no
        event) the reader awaits before the next frame."""
        if text[0] == PONG:
            self.pings.answered(self)
            return None
        return self._heard(text[1:])

    def _heard(self, data: str | bytes) -> Coroutine[Any, Any, Any] | None:
        if self.socket.queue.ended:
            return None  # hung up: what is still in flight is nobody's
        try:
            return self.heard(self.sid, data)
        except Exception:  # a bug of ours: one JSON line, and the connection goes on
            log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=self.sid)
            return None

    async def _read(self, receive: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> None:
        """Every frame uvicorn reads (what the FrameReader takes never comes here)."""
        sid = self.sid
        while True:
            event = await receive()
            if event["type"] != "websocket.receive":
                return  # the client went, or the connection closed
            text = event.get("text")
            data: str | bytes = (event.get("bytes") or b"") if text is None else text
            if len(data) > self.limit or self.socket.queue.ended:
                return  # python-engineio's cap on a packet, or hung up: nobody's now
            if text is None or text[:1] == BASE64:  # binary, or as base64 text: binary too
                waiting = self._heard(data if text is None else text.encode())
            elif (kind := text[:1]) in (MESSAGE, PONG):
                waiting = self.hear(text)
            elif kind == CLOSE:
                await self.server.hang_up(sid, self.server.reason.CLIENT_DISCONNECT)
                return
            elif kind not in ENGINEIO_TYPES:
                await self.server.hang_up(sid, None)  # not Engine.IO: the client does not speak it
                return
            else:  # an upgrade is answered; anything else python-engineio ignores too
                waiting = None
                if kind == UPGRADE:
                    self.server.queue_packet(sid, NOOP)
            try:
                if waiting is not None:
                    await waiting
            except Exception:  # a bug of ours: one JSON line, and the connection goes on
                log_event("frame_failed", level=logging.ERROR, exc_info=True, sid=sid)

    async def _write(self, outbox: Outbox, send: Send) -> None:
        """Sends what waits in the Outbox, in order, until its end (a None) or python-
        engineio's CLOSE, then closes the websocket."""
        try:
            while items := outbox.after(await outbox.get()):
                for item in items:
                    await send({"type": "websocket.send", "text": item.encode()})
                    outbox.written()
                    if getattr(item, "packet_type", None) == packet.CLOSE:
                        outbox.ended = True  # nothing more for it: the session closed
                        return  # python-engineio closed the session: the websocket goes
        except Exception:  # the websocket is gone
            pass
        finally:
            with contextlib.suppress(Exception):  # already closed
                await send({"type": "websocket.close"})
