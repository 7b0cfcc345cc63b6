"""uvicorn's protocols as the app's server runs them (app/realtime/uvicorn_config.py): its
HTTP protocol with a deadline on reading each request (slowloris) and every connection
counted from its open (app/realtime/doors.py), and its websocket protocol lightened once
its handshake is read.

Every name of uvicorn used here beyond its documented API is in app/realtime/internals.py,
which a test checks against what is installed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.realtime.doors import Doors
from app.realtime.queues import LeanQueue


class DeadlineHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on reading each request: its headers
    and body must all arrive within `request_timeout` seconds of its first byte (or of the
    connection opening). uvicorn has none: a client trickling one header byte at a time
    held its connection, and a file descriptor, for ever."""

    request_timeout = 10.0  # seconds; deadline_http() makes a class with the setting's
    doors: Doors | None = None  # the server's count of open connections (app/realtime/doors.py)
    deadline: asyncio.TimerHandle | None = None
    door: str | None = None  # the address this connection is counted under, while it is
    socket_transport: asyncio.Transport  # the connection's (uvicorn's `transport` is its own)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.socket_transport = transport
        if self.doors is not None:
            self.door = self.doors.opened(transport.get_extra_info("peername"))
            if self.door is None:  # its address holds its share: closed before a byte is read
                transport.abort()
                return
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()  # each request on a kept-alive connection gets its own deadline

    def on_message_complete(self) -> None:
        self._disarm()  # read in full: answering it may take as long as it takes (long-polls)
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the websocket has its own pings
        doors, door, transport = self.doors, self.door, self.socket_transport
        if doors is not None and door is not None and not doors.upgrade(door):
            transport.write(WEBSOCKETS_FULL)  # no room for one more: HTTP keeps its reserve
            transport.close()
            return
        self.door = None  # counted as a websocket from here: the websocket's end uncounts it
        super().handle_websocket_upgrade()
        websocket: Any = transport.get_protocol()  # the websocket protocol serving it now
        lighten(websocket)
        if doors is not None and door is not None:  # its frames pass the meter first
            transport.set_protocol(doors.metered(websocket, transport, door))

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.door is not None and self.doors is not None:
            self.doors.closed(self.door)
            self.door = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self.deadline = loop.call_later(self.request_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if not self.socket_transport.is_closing():
            self.socket_transport.close()


def lighten(websocket: Any) -> None:
    """What uvicorn's websocket protocol keeps for a connection's life and no longer needs
    once its handshake is read (a third of an idle player's memory): its queue of ASGI
    events becomes a LeanQueue (asyncio.Queue's four empty deques are 3 KB), and the
    request's headers, which its scope holds a copy of, are let go (2 KB: websockets'
    parser holds the request itself until the connection ends)."""
    queue = LeanQueue()
    while not websocket.queue.empty():  # the connect event, put as the handshake was read
        queue.put_nowait(websocket.queue.get_nowait())
    websocket.queue = queue
    request = getattr(websocket, "request", None)
    if request is not None:
        request.headers.clear()


def deadline_http(seconds: float, doors: Doors | None = None) -> type[DeadlineHttp]:
    return type("DeadlineHttp", (DeadlineHttp,), {"request_timeout": seconds, "doors": doors})


WEBSOCKETS_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 20\r\nconnection: close\r\n\r\nToo many connections"
)
