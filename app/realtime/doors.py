"""Who may hold a connection open, counted from the moment its transport opens (uvicorn's
HTTP protocol, before a byte of HTTP or Socket.IO is read), whichever websocket protocol
then serves it (app/realtime/serving.py hands each connection here):

- at most `connections_per_address` connections open at once per client address (HTTP and
  websocket alike; IPv6 by /64), so that one address trickling requests (slowloris) or
  holding bare websockets cannot take the server's connections;
- at most `websockets_per_address` websockets per address, and websockets never take the
  last `http_reserve` of `max_connections`: pages, the API and /healthz always have room
  (uvicorn answers 503 to HTTP only once all `max_connections` are taken);
- a websocket whose client reads nothing for a ping interval and timeout while the server
  has more to write (its writes paused all that time) is cut: a writer waiting to send to
  it would otherwise wait for ever, and its connection stay open;
- every frame a websocket sends that is not an Engine.IO message (websocket pings and
  pongs, binary and continuation frames, Engine.IO pings, pongs, upgrades, noops, anything
  else) is charged to a budget of the same rate, burst and cut-off as the connection's
  messages (app/realtime/transport.py charges those): `flood_cutoff` frames in a row past
  it and the connection is cut.

A trusted proxy's own address is not capped per address (everyone behind it shares it):
the proxy in front caps per address (nginx: `limit_conn`)."""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any

from app.ops.config import Settings
from app.ops.limits import TokenBucket, address_key
from app.ops.logs import Throttled
from app.realtime.frames import FrameReader

_CLOSE = 0x8  # websocket opcodes
_TEXT = 0x1
_MESSAGE = 0x34  # "4": an Engine.IO MESSAGE, counted by the message budget


class Doors:
    """The open connections of one server, per address and per kind."""

    def __init__(self, settings: Settings) -> None:
        self.per_address = settings.connections_per_address
        self.websockets_per_address = settings.websockets_per_address
        self.most_websockets = max(0, settings.max_connections - settings.http_reserve)
        self.rate, self.burst = settings.rate_per_second, settings.rate_burst
        self.cutoff = settings.flood_cutoff
        # A client that reads nothing for this long while writes wait for it is cut.
        self.stall_seconds = settings.ping_interval_seconds + settings.ping_timeout_seconds
        proxies = {p.strip() for p in settings.trusted_proxies.split(",") if p.strip()}
        self.trust_all = "*" in proxies
        self.trusted = {address_key(p) for p in proxies}
        self.open: dict[str, int] = {}  # address: connections open (HTTP and websocket)
        self.websockets: dict[str, int] = {}  # address: websockets open
        self.websocket_count = 0
        self._refusals = Throttled("connection_refused")

    def _capped(self, key: str) -> bool:
        return not (self.trust_all or key in self.trusted)

    def opened(self, client: tuple[str, int] | None) -> str | None:
        """A transport opened from `client`: the address it is counted under, or None if
        that address holds its share already (the caller closes it)."""
        key = address_key(client[0]) if client else "unknown"
        held = self.open.get(key, 0)
        if held >= self.per_address and self._capped(key):
            self.refused("connections_per_address", key)
            return None
        self.open[key] = held + 1
        return key

    def closed(self, key: str) -> None:
        held = self.open.get(key, 0) - 1
        if held > 0:
            self.open[key] = held
        else:
            self.open.pop(key, None)

    def upgrade(self, key: str) -> bool:
        """The connection counted under `key` asks to become a websocket: True, and counted
        as one too, if websockets have room and its address has its share left."""
        if self.websocket_count >= self.most_websockets:
            self.refused("http_reserve", key)
            return False
        held = self.websockets.get(key, 0)
        if held >= self.websockets_per_address and self._capped(key):
            self.refused("websockets_per_address", key)
            return False
        self.websockets[key] = held + 1
        self.websocket_count += 1
        return True

    def websocket_closed(self, key: str) -> None:
        self.websocket_count -= 1
        held = self.websockets.get(key, 0) - 1
        if held > 0:
            self.websockets[key] = held
        else:
            self.websockets.pop(key, None)
        self.closed(key)

    def metered(self, inner: asyncio.Protocol, transport: Any, key: str) -> Metered:
        """The websocket protocol `inner`, its frames counted and its end uncounted."""
        meter = FrameMeter(TokenBucket(self.rate, self.burst), self.cutoff)
        return Metered(inner, transport, meter, self, key)

    def refused(self, why: str, key: str, **fields: Any) -> None:
        """One JSON line, rate-limited for the whole server (with how many went untold)."""
        self._refusals.log(time.monotonic(), why=why, address=key, **fields)


class FrameMeter:
    """Reads a client's websocket byte stream only as far as each frame's header (and the
    first byte of a text frame's payload), charging every frame but an Engine.IO message
    to `bucket`. Nothing is changed or held back: the bytes go on as they came."""

    __slots__ = ("_head", "_peek", "_skip", "bucket", "cutoff", "in_a_row")

    def __init__(self, bucket: TokenBucket, cutoff: int) -> None:
        self.bucket, self.cutoff = bucket, cutoff
        self.in_a_row = 0  # frames past the budget in a row
        self._head = b""  # the start of a header not yet whole
        self._skip = 0  # the current frame's payload bytes still to come
        self._peek = -1  # the mask byte of a text frame's first payload byte still to come

    def feed(self, data: bytes) -> bool:
        """False once `cutoff` frames in a row went past the budget: cut the connection."""
        if self._head:
            data, self._head = self._head + data, b""
        at, end = 0, len(data)
        while at < end:
            if self._skip:
                if self._peek >= 0:
                    first, self._peek = data[at] ^ self._peek, -1
                    if first != _MESSAGE and not self._charge():
                        return False
                take = min(self._skip, end - at)
                self._skip -= take
                at += take
                continue
            if end - at < 2:
                self._head = data[at:]
                return True
            second = data[at + 1]
            size = second & 0x7F
            header = 2 + (2 if size == 126 else 8 if size == 127 else 0)
            masked = second & 0x80
            if end - at < header + (4 if masked else 0):
                self._head = data[at:]
                return True
            if size == 126:
                size = int.from_bytes(data[at + 2 : at + 4], "big")
            elif size == 127:
                size = int.from_bytes(data[at + 2 : at + 10], "big")
            opcode = data[at] & 0x0F
            mask = data[at + header] if masked else 0
            at += header + (4 if masked else 0)
            self._skip = size
            if opcode == _TEXT and size:
                self._peek = mask  # charged or not by its first byte
            elif opcode != _CLOSE and not self._charge():
                return False
        return True

    def _charge(self) -> bool:
        if self.bucket.take(time.monotonic()):
            self.in_a_row = 0
            return True
        self.in_a_row += 1
        return self.in_a_row < self.cutoff


# Each websocket protocol's meter, found by the protocol (the app knows it by ASGI's `send`,
# a method of it): held until the connection is lost. (A meter holds its protocol, so a
# weak key alone would keep both for good: `connection_lost` takes the entry out.)
METERED: weakref.WeakKeyDictionary[asyncio.Protocol, Metered] = weakref.WeakKeyDictionary()


class Metered(asyncio.Protocol):
    """A websocket's protocol (uvicorn's) behind its FrameMeter: the transport calls this,
    this calls it. Its writes paused for `doors.stall_seconds` on end (a client that reads
    nothing), the connection is cut. The websocket's count is given back when it ends."""

    def __init__(
        self, inner: asyncio.Protocol, transport: Any, meter: FrameMeter, doors: Doors, key: str
    ) -> None:
        self.inner, self.transport, self.meter = inner, transport, meter
        self.doors, self.key = doors, key
        self._counted = True
        self._cut = False
        self._stalled: asyncio.TimerHandle | None = None  # armed while writes are paused
        # Set by the app once it reads this websocket (app/realtime/websocket.py): its events
        # and pongs are taken here, as they arrive (app/realtime/frames.py).
        self.reader: FrameReader | None = None
        self.paused = False  # the transport's writes wait (app/realtime/frames.py `write_frame`)
        METERED[inner] = self

    def data_received(self, data: bytes) -> None:
        if self._cut:
            return  # what was still in flight
        if self.meter.feed(data):
            reader = self.reader
            if reader is None:
                self.inner.data_received(data)
            else:
                reader.take(data, self.inner.data_received)
            return
        self._cut = True
        self.doors.refused("frames_past_budget", self.key)
        if not self.transport.is_closing():
            self.transport.abort()

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.paused = True
        if self._stalled is None:
            loop = asyncio.get_running_loop()
            self._stalled = loop.call_later(self.doors.stall_seconds, self._cut_stalled)
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.paused = False
        self._unstall()
        self.inner.resume_writing()

    def _unstall(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def _cut_stalled(self) -> None:
        self._stalled = None
        self.doors.refused("stalled_reader", self.key)
        if not self.transport.is_closing():
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        METERED.pop(self.inner, None)
        self._unstall()
        if self._counted:
            self._counted = False
            self.doors.websocket_closed(self.key)
        self.inner.connection_lost(exc)
