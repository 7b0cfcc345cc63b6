"""A cheap Socket.IO client: RFC 6455 WebSocket framing and Engine.IO v4 / Socket.IO v5
packets by hand on an asyncio Protocol, so that one core can play thousands of players.

Messages stay bytes: the caller looks at the first bytes to tell a `state` from an
`event` or an ack, and parses JSON only when it has to decide something. Outgoing frames
are masked with the all-zero key (legal: RFC 6455 5.3 only asks that a key be present), so
a frame is its payload behind a few header bytes, and fixed messages can be built once.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

ZERO_MASK = b"\x00\x00\x00\x00"


def text_frame(payload: bytes) -> bytes:
    """One final, masked text frame carrying `payload`."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, 0x80 | size)) + ZERO_MASK + payload
    if size < 65536:
        return bytes((0x81, 0x80 | 126)) + size.to_bytes(2, "big") + ZERO_MASK + payload
    return bytes((0x81, 0x80 | 127)) + size.to_bytes(8, "big") + ZERO_MASK + payload


def control_frame(opcode: int, payload: bytes) -> bytes:
    return bytes((0x80 | opcode, 0x80 | len(payload))) + ZERO_MASK + payload


PONG = text_frame(b"3")  # Engine.IO's answer to the server's ping "2"
LAG_PING = b'2["ping",{"id":"'  # the room's lag ping, on its own
RIDING = b',"ping":"'  # a lag ping riding on a state: its id last, before `"}]`


def lag_ping_id(packet: bytes) -> bytes | None:
    """The id of the room's lag ping in a Socket.IO packet (on its own, or riding on a
    `state`), which the page answers at once with `pong`; None in any other packet."""
    if packet.startswith(LAG_PING):
        return packet[len(LAG_PING) : packet.index(b'"', len(LAG_PING))]
    if packet.endswith(b'"}]') and packet.startswith(b'2["state",'):
        at = packet.rfind(RIDING, len(packet) - 40)
        if at > 0:
            return packet[at + len(RIDING) : -3]
    return None


class Wire(asyncio.Protocol):
    """One WebSocket connection to /socket.io/ speaking Engine.IO v4.

    `on_packet(payload)` gets every Socket.IO packet (the Engine.IO type "4" stripped:
    b'2["state",{...}]', b'3<id>[...]', b'0{"sid":...}', b'4{...}'); Engine.IO pings, and
    the room's lag pings (on their own or riding on a state), are answered here as the page
    answers them. `connected` resolves once the namespace is joined (or fails if refused).
    """

    def __init__(self, host: str, port: int, auth: dict[str, Any]) -> None:
        self.host, self.port = host, port
        self.auth = auth
        # The room in the query, as the page sends it: a cluster's nginx routes by it.
        room = auth.get("room")
        self.routing = f"&room={quote(str(room))}" if room else ""
        self.transport: asyncio.Transport | None = None
        self.upgraded = False
        self.buffer = bytearray()
        self.fragments: bytearray | None = None
        loop = asyncio.get_running_loop()
        self.connected: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.on_packet: Callable[[bytes], None] = lambda payload: None

    # ---- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(  # type: ignore[attr-defined]
            (
                f"GET /socket.io/?EIO=4&transport=websocket{self.routing} HTTP/1.1\r\n"
                f"Host: {self.host}:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.connected.done():
            self.connected.set_exception(ConnectionError(f"connection lost: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buffer[: buffer.find(b"\r\n")])
            if b" 101 " not in status:
                self.fail(f"no WebSocket upgrade: {status!r}")
                return
            del buffer[: end + 4]
            self.upgraded = True
        at, size = 0, len(buffer)
        while size - at >= 2:
            first, second = buffer[at], buffer[at + 1]
            length = second & 0x7F
            head = 2
            if length == 126:
                if size - at < 4:
                    break
                length = int.from_bytes(buffer[at + 2 : at + 4], "big")
                head = 4
            elif length == 127:
                if size - at < 10:
                    break
                length = int.from_bytes(buffer[at + 2 : at + 10], "big")
                head = 10
            if size - at < head + length:
                break
            payload = bytes(buffer[at + head : at + head + length])  # servers never mask
            at += head + length
            self.frame(first, payload)
        if at:
            del buffer[:at]

    # ---- frames and packets ------------------------------------------------------------

    def frame(self, first: int, payload: bytes) -> None:
        opcode, final = first & 0x0F, first & 0x80
        if opcode == 0x1 or opcode == 0x2:
            if final:
                self.engineio(payload)
            else:
                self.fragments = bytearray(payload)
        elif opcode == 0x0 and self.fragments is not None:
            self.fragments += payload
            if final:
                whole, self.fragments = bytes(self.fragments), None
                self.engineio(whole)
        elif opcode == 0x9:  # a WebSocket ping from uvicorn
            self.write(control_frame(0xA, payload))
        elif opcode == 0x8:
            self.close()

    def engineio(self, payload: bytes) -> None:
        kind = payload[:1]
        if kind == b"4":
            packet = payload[1:]
            if packet[:1] == b"0" and not self.connected.done():
                self.connected.set_result(None)
            elif packet[:1] == b"4" and not self.connected.done():
                self.fail(f"refused: {packet[1:].decode(errors='replace')}")
                return
            ping = lag_ping_id(packet)
            if ping is not None:
                self.write(text_frame(b'42["pong",{"id":"' + ping + b'"}]'))
            self.on_packet(packet)
        elif kind == b"2":
            self.write(PONG)
        elif kind == b"0":  # Engine.IO open: join the default namespace with our auth
            self.write(text_frame(b"40" + json.dumps(self.auth).encode()))

    def write(self, frame: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame)

    def fail(self, why: str) -> None:
        if not self.connected.done():
            self.connected.set_exception(ConnectionError(why))
        self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def open_wire(host: str, port: int, auth: dict[str, Any]) -> Wire:
    loop = asyncio.get_running_loop()
    _, wire = await loop.create_connection(lambda: Wire(host, port, auth), host, port)
    await asyncio.wait_for(wire.connected, 30)
    return wire


async def http(host: str, port: int, method: str, path: str, body: bytes = b"") -> tuple[int, Any]:
    """One HTTP/1.1 request on its own connection: (status, JSON body or None)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        answer = await reader.read()
    finally:
        writer.close()
    head, _, content = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    try:
        return status, json.loads(content) if content else None
    except ValueError:
        return status, None
