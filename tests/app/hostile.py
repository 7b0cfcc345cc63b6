"""Hostile clients over raw sockets, each from an address of its own on loopback (Linux
routes all of 127.0.0.0/8 to lo, so a client bound to 127.0.0.7 is a different address to
the server): bare websockets that never join, trickled requests, floods of frames."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
import time
from collections.abc import Iterable

import httpx

from app.ops.config import Settings

# The per-connection limits as deployed (the harness's FAST settings lift them).
REAL_LIMITS = {
    name: Settings.model_fields[name].default
    for name in ("rate_per_second", "rate_burst", "flood_cutoff")
}

WEBSOCKET_PATH = "/socket.io/?EIO=4&transport=websocket"


def frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """One masked client frame (final)."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        head = bytes((0x80 | opcode, 0x80 | size))
    else:
        head = bytes((0x80 | opcode, 0x80 | 126)) + struct.pack("!H", size)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


class BareWebSocket:
    """A websocket that answers Engine.IO pings (so it never times out) and does nothing
    else: it never sends a Socket.IO CONNECT."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.opened = asyncio.Event()  # Engine.IO's open packet came: the session is on
        self.closed = asyncio.Event()
        self.task = asyncio.ensure_future(self._answer_pings())

    @classmethod
    async def open(cls, port: int, source: str) -> BareWebSocket | None:
        """None if the server refused it (closed, or answered anything but 101)."""
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(source, 0)
            )
        except OSError:
            return None
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {WEBSOCKET_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        try:
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            writer.close()
            return None
        if not head.startswith(b"HTTP/1.1 101"):
            writer.close()
            return None
        return cls(reader, writer)

    async def _answer_pings(self) -> None:
        try:
            while True:
                first, second = await self.reader.readexactly(2)
                size = second & 0x7F
                if size == 126:
                    size = struct.unpack("!H", await self.reader.readexactly(2))[0]
                elif size == 127:
                    size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
                payload = await self.reader.readexactly(size)
                if first & 0x0F == 0x8:
                    break
                if payload.startswith(b"0"):
                    self.opened.set()
                if payload == b"2":
                    self.writer.write(frame(b"3"))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self.closed.set()

    async def answered(self, seconds: float = 20.0) -> bool:
        """Whether the server opened the session and kept it (False: it closed it first)."""
        waits = [asyncio.ensure_future(event.wait()) for event in (self.opened, self.closed)]
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        return self.opened.is_set() and not self.closed.is_set()

    def send(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self) -> None:
        self.task.cancel()
        self.writer.close()


async def hold_bare_websockets(
    port: int, sources: Iterable[str], each: int, held: list[BareWebSocket]
) -> None:
    """Opens `each` bare websockets from every address in `sources`, adding those the server
    took to `held`, and re-opens any the server closes, until cancelled (a client that
    keeps the server's connections taken)."""
    sources = list(sources)
    while True:
        held[:] = [w for w in held if not w.closed.is_set()]
        for source in sources:
            mine = sum(1 for w in held if w.writer.get_extra_info("sockname")[0] == source)
            opened = await asyncio.gather(
                *(BareWebSocket.open(port, source) for _ in range(each - mine))
            )
            held.extend(w for w in opened if w is not None)
        await asyncio.sleep(0.2)


async def trickle(port: int, source: str) -> None:
    """A slowloris request: one header byte at a time, never finished; re-opened whenever
    the server cuts it, until cancelled."""
    while True:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(source, 0)
            )
        except OSError:
            await asyncio.sleep(0.05)
            continue
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
            while not reader.at_eof():
                writer.write(b"X")
                await writer.drain()
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the
                # cancel that ends the attack when the read finishes at that moment, and
                # the attack then never ends (the test hung in its clean-up).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await reader.read(1024)
        except OSError:
            pass
        finally:
            writer.close()
        await asyncio.sleep(0.5)  # and again


async def http_success(url: str, attempts: int, *, path: str = "/healthz") -> tuple[int, int]:
    """(answered 2xx, attempts) for `attempts` requests, each on a new connection, made
    from 127.0.0.1 one after another, each given 15 s (the server shares its process and
    the machine's two cores with the attack, and with other test runs)."""
    good = 0
    for _ in range(attempts):
        try:
            async with httpx.AsyncClient(base_url=url, timeout=15.0) as http:
                answer = await http.get(path)
            good += answer.is_success
        except httpx.HTTPError:
            pass
    return good, attempts


async def until(condition: object, timeout: float) -> bool:
    """Polls `condition()` every 50 ms; whether it held within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        await asyncio.sleep(0.05)
    return False
