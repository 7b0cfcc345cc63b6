"""How uvicorn serves the app: the one configuration `python -m app` and the tests use.

uvloop and httptools, in production and in the tests alike (plain asyncio never fires a
timer early, so it would hide a bug only uvloop shows), and the limits a public server
needs against slow or greedy clients: a deadline on reading each request (slowloris), a
cap on connections served at once, the trusted proxies whose X-Forwarded-For is believed.
Each websocket's incoming events wait in a lean queue (app/realtime/queues.py), not an
asyncio.Queue.

Every name of uvicorn and websockets used here beyond their documented API is in
app/realtime/internals.py, which a test checks against what is installed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

try:  # the C version websockets itself uses, where it was built (always, on PyPI's wheels)
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

from app.ops.config import Settings
from app.ops.logs import log_event
from app.realtime.doors import Doors
from app.realtime.queues import LeanQueue

KEEP_ALIVE_SECONDS = 5  # an idle kept-alive connection between requests (uvicorn's default)

# Who parses a websocket's incoming bytes (LeanWebSocket._reader).
_WEBSOCKETS = 0  # websockets' parser, until the lean reader can take over at a frame's start
_LEAN = 1  # LeanWebSocket's own, for the frames every message of ours is
_WEBSOCKETS_FOR_GOOD = 2  # websockets' again, from a frame the lean reader leaves to it
_TEXT_FIN = 0x81  # a frame's first byte: final, no extension bit, opcode TEXT


class DeadlineHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on reading each request: its headers
    and body must all arrive within `request_timeout` seconds of its first byte (or of the
    connection opening). uvicorn has none: a client trickling one header byte at a time
    held its connection, and a file descriptor, for ever."""

    request_timeout = 10.0  # seconds; deadline_http() makes a class with the setting's
    doors: Doors | None = None  # the server's count of open connections (app/realtime/doors.py)
    _deadline: asyncio.TimerHandle | None = None
    _door: str | None = None  # the address this connection is counted under, while it is

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.doors is not None:
            self._door = self.doors.opened(self.client)
            if self._door is None:  # its address holds its share: closed before a byte is read
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
        doors, door = self.doors, self._door
        if doors is None or door is None:
            super().handle_websocket_upgrade()
            return
        if not doors.upgrade(door):  # no room for one more websocket: HTTP keeps its reserve
            self.transport.write(WEBSOCKETS_FULL)
            self.transport.close()
            return
        self._door = None  # counted as a websocket from here: the websocket's end uncounts it
        super().handle_websocket_upgrade()
        # Whichever websocket protocol serves it, its frames pass the meter first.
        websocket: Any = self.transport.get_protocol()
        self.transport.set_protocol(doors.metered(websocket, self.transport, door))

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._door is not None and self.doors is not None:
            self.doors.closed(self._door)
            self._door = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class LeanWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's websocket protocol (the `websockets` sans-I/O one) with its incoming events
    in a LeanQueue: uvicorn only puts, gets and asks whether it is empty."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = LeanQueue()  # type: ignore[assignment]
        # Set by the app (app/realtime/transport.py) once it reads this websocket: each text message
        # is then handed to it as uvicorn reads it, instead of queued for the app's
        # `receive` (a future, a wake-up and three coroutines per message, and a reader
        # waiting in between, for every connection) and reading paused until it is taken.
        self.listener: Callable[[str], None] | None = None
        # Where `send_now` hands this websocket to be flushed at the end of the loop pass:
        # the app's (app/realtime/transport.py GameEngineIO.flushes), set with the listener.
        self.flushes: Flushes | None = None
        self._flush_due = False  # a `_flush` is on the loop for what send_now framed
        self._reader = _WEBSOCKETS  # who parses incoming bytes (`data_received`)
        # The lean reader's start of a frame not yet whole: no bigger than the read limit
        # allows (a bigger frame goes to websockets as soon as its length is read).
        self._partial = b""
        self._read_limit: int | None = None  # the biggest frame websockets would take

    def data_received(self, data: bytes) -> None:
        """Incoming bytes. Once the app reads this websocket (its `listener`), each whole
        text frame is parsed here and its text handed to the listener: websockets' parser
        builds a Frame, runs a generator per read and an event list per frame, and uvicorn
        then walks that list, which cost as much as everything the listener does with a
        message. The frame must be what every message of ours is (final, masked, text, no
        extension bit, no bigger than websockets would take, UTF-8); from the first that is
        anything else (a ping, a close, a binary or fragmented frame, an oversized or
        malformed one) the bytes go to websockets as before, for good, so what it answers
        (a pong, a close with its code) is as ever. It only ever sees bytes from a frame's
        start."""
        if self._reader == _LEAN:
            self._read_lean(data)
        elif self._reader == _WEBSOCKETS and self._lean_from_here():
            self._reader = _LEAN
            self._read_lean(data)
        else:
            super().data_received(data)

    def _lean_from_here(self) -> bool:
        """Whether the lean reader can take over now: the app reads, the connection is open
        with nothing negotiated, and websockets' parser holds no byte and waits for a
        frame's first."""
        conn = self.conn
        if (
            self.listener is None
            or self.close_sent
            or conn.state is not OPEN
            or conn.extensions
            or conn.debug
            or conn.current_size is not None
            or not waits_for_a_frame(conn)
        ):
            return False
        limit, fragment = conn.max_message_size, conn.max_fragment_size
        if fragment is not None:
            limit = fragment if limit is None else min(limit, fragment)
        self._read_limit = limit
        return True

    def _read_lean(self, data: bytes) -> None:
        if self._partial:
            data, self._partial = self._partial + data, b""
        end, limit, at = len(data), self._read_limit, 0
        while at < end:
            listener = self.listener
            if listener is None or self.close_sent or self.conn.state is not OPEN:
                break  # the app stopped reading, or closing: as websockets and uvicorn decide
            if end - at < 2:
                self._partial = data[at:]
                return
            if data[at] != _TEXT_FIN or data[at + 1] < 0x80:
                break  # no final text frame, or not masked (websockets closes then)
            size = data[at + 1] & 0x7F
            if size < 126:
                start = at + 6
            elif size == 126:
                if end - at < 4:
                    self._partial = data[at:]
                    return
                size, start = int.from_bytes(data[at + 2 : at + 4], "big"), at + 8
            else:
                break  # an 8-byte length: never a message of ours (websockets reads it)
            if limit is not None and size > limit:
                break  # websockets closes with 1009
            if end < start + size:
                self._partial = data[at:]
                return
            try:
                text = apply_mask(data[start : start + size], data[start - 4 : start]).decode()
            except UnicodeDecodeError:
                break  # uvicorn closes with 1007
            at = start + size
            listener(text)
        else:
            return
        self._reader = _WEBSOCKETS_FOR_GOOD
        super().data_received(data[at:] if at else data)

    def abort_if_stuck(self) -> None:
        """Cuts the connection if writing is paused (a client that stopped reading): a send
        waiting for it to read again would wait for ever. Its reader and writer end."""
        if not self.writable.is_set() and not self.transport.is_closing():
            self.transport.abort()

    def handle_text(self, event: Frame) -> None:
        """A whole text message in one frame (every message of ours) goes to the listener
        without the list of frames uvicorn gathers a message in; anything else as before."""
        if not (event.fin and self._to_listener(event.data)):
            super().handle_text(event)

    def send_receive_event_to_app(self) -> None:
        """A message in several frames: to the listener too, so none overtakes another."""
        frames = self.frames
        if self.curr_msg_data_type == "text" and self._to_listener(
            frames[0] if len(frames) == 1 else b"".join(frames)
        ):
            self.frames = []
        else:
            super().send_receive_event_to_app()

    def _to_listener(self, data: bytes | bytearray | memoryview) -> bool:
        """True once the text message in `data` went to the listener; False, and nothing
        done, without one, once closing, or for text that is no UTF-8 (uvicorn's own
        handling then closes with 1007)."""
        listener = self.listener
        if listener is None or self.close_sent:
            return False
        try:
            text = str(data, "utf-8")
        except UnicodeDecodeError:
            return False
        listener(text)
        return True

    def send_now(self, text: str) -> bool:
        """Writes a text message to the socket (by the end of this loop pass: `_flush`), if
        it can take it without waiting: what
        `send({"type": "websocket.send", "text": text})` does once it is past its wait for
        `writable`, with no coroutine and no await. False, and nothing written, when the
        client is not reading fast enough (the transport paused writing), the handshake is
        not done, or the connection is closing: the caller then queues the message for
        the connection's writer, which waits as `send` does."""
        flushes = self.flushes
        if (
            flushes is None
            or not self.writable.is_set()
            or self.disconnected
            or self.close_sent
            or not self.handshake_complete
            or self.initial_response is not None
            or self.transport.is_closing()
        ):
            return False
        conn = self.conn
        if (
            conn.state is OPEN
            and not conn.extensions
            and not conn.expect_continuation_frame
            and not conn.debug
        ):
            # The frame websockets' `send_text` would build (a server's: unmasked, FIN, no
            # extension), without its Frame object and header-by-header serializing (nor its
            # debug log line: with that on, websockets frames it).
            data = text.encode()
            size = len(data)
            if size < 126:
                conn.writes.append(bytes((0x81, size)) + data)
            elif size < 65536:
                conn.writes.append(b"\x81\x7e" + size.to_bytes(2, "big") + data)
            else:
                conn.writes.append(b"\x81\x7f" + size.to_bytes(8, "big") + data)
        else:
            try:
                conn.send_text(text.encode())
            except InvalidState:
                return False
        if not self._flush_due:
            self._flush_due = True
            flushes.add(self)
        return True

    def _flush(self) -> None:
        """Writes what `send_now` framed since the last loop pass, in one write: a change's
        `state` and the ack of the message that made it reach their sender together, where
        a write each cost a system call and the kernel's loopback or NIC work twice. The
        frames wait in the connection's own buffer (`data_to_send`), which every other write
        of uvicorn's (a close, a pong, `send`) empties first, so nothing overtakes them."""
        self._flush_due = False
        # The connection's own list, emptied in place: `data_to_send()` would leave a new
        # one behind each time, a young object per connection for the collector to walk.
        output = self.conn.writes
        if output:
            data = b"".join(output)
            output.clear()
            if not self.transport.is_closing():
                self.transport.write(data)


class Flushes:
    """The websockets with frames framed by `send_now` this loop pass, flushed by one
    callback at its end: a change's messages to a whole table cost one loop callback, not
    one per recipient. One per app (its Engine.IO server's), on the loop that serves it."""

    __slots__ = ("_due",)

    def __init__(self) -> None:
        self._due: list[LeanWebSocket] = []

    def add(self, websocket: LeanWebSocket) -> None:
        """`websocket` is flushed at the end of this pass (the callback is put on the loop
        with the first of the pass)."""
        if not self._due:
            websocket.loop.call_soon(self._run)
        self._due.append(websocket)

    def _run(self) -> None:
        due, self._due = self._due, []
        for websocket in due:
            try:
                websocket._flush()
            except Exception:  # a bug: one connection's, never every other's in the pass
                log_event("flush_failed", level=logging.ERROR, exc_info=True)


def waits_for_a_frame(conn: ServerProtocol) -> bool:
    """Whether websockets' parser waits for a frame's first byte, with nothing read of it:
    its generator is suspended in the reader's `at_eof` (between frames), not in
    `Frame.parse` (within one), where the bytes read so far may have left the buffer
    empty."""
    parser: Any = conn.parser
    while parser is not None:
        inner = getattr(parser, "gi_yieldfrom", None)
        if inner is None:
            return False
        if getattr(inner, "gi_code", None) is _AT_EOF:
            return not conn.reader.buffer
        parser = inner
    return False


_AT_EOF = StreamReader.at_eof.__code__


def deadline_http(seconds: float, doors: Doors | None = None) -> type[DeadlineHttp]:
    return type("DeadlineHttp", (DeadlineHttp,), {"request_timeout": seconds, "doors": doors})


WEBSOCKETS_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 20\r\nconnection: close\r\n\r\nToo many connections"
)


def server_config(app: Any, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """uvicorn's configuration for `app`. The HTTP protocol is DeadlineHttp on either
    transport: uvicorn has no deadline on reading a request (docs/protocol.md)."""
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "loop": "uvloop",
        # Both transports: every connection counted from its open (app/realtime/doors.py).
        "http": deadline_http(settings.request_timeout_seconds, Doors(settings)),
        # `lean`: ours, which hands each text frame to the app as it is read and writes
        # without a coroutine. `stock`: uvicorn's own choice ("auto": the websockets
        # sans-I/O protocol, which LeanWebSocket extends), as any ASGI app gets it.
        "ws": LeanWebSocket if settings.transport == "lean" else "auto",
        "ws_max_size": settings.max_message_bytes,  # the same cap engine.io applies
        # No permessage-deflate (Socket.IO's own server has it off by default too): every
        # browser offers it, and it would cost each connection a compressor and a
        # decompressor (60 KB idle, against 23 KB without) and each state a compression
        # per recipient, for messages of a few hundred bytes on a LAN or a phone network.
        "ws_per_message_deflate": False,
        # No websocket-level keepalive: Engine.IO's own pings (SLAPJACK_PING_INTERVAL_SECONDS,
        # one sweep for every connection: app/realtime/transport.py) already find a vanished peer,
        # sooner, and keep proxies' idle timers fed. uvicorn's would add two timers per
        # connection, and a ping written and a pong read per connection every 20 s.
        "ws_ping_interval": None,
        "ws_ping_timeout": None,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.trusted_proxies,
        "limit_concurrency": settings.max_connections,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "timeout_graceful_shutdown": settings.shutdown_seconds,
        "log_config": None,  # uvicorn's own lines go through our JSON log too
        "access_log": False,  # one line per request is noise; metrics count what matters
        **overrides,
    }
    return uvicorn.Config(app, **options)
