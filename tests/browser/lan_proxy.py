"""A forward HTTP proxy on loopback that plays the party's Wi-Fi for a browser with no
name-resolution switch of its own (WebKitGTK): every host it is asked for (say
`party.test`, a LAN name that is no secure context) is this machine, on the port asked
for, and what goes through is piped on unchanged but for the first request's line. It can
be cut like a dropped network: open connections are reset and new ones refused until it is
restored. It keeps the request lines it refused since the last cut.

It runs in a thread with its own event loop, so pages keep their connections while the
test's loop waits on something else."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Coroutine
from typing import Any

TARGET = "127.0.0.1"
READ_ERRORS = (asyncio.IncompleteReadError, asyncio.LimitOverrunError)


class LanProxy:
    def __init__(self) -> None:
        self.port = 0
        self._cut = False
        self._open: set[asyncio.StreamWriter] = set()
        self.refused: list[str] = []  # the request lines refused since the last cut
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lan-proxy", daemon=True)

    def start(self) -> LanProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the LAN proxy did not start")
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        listener = socket.socket()
        listener.bind((TARGET, 0))
        self.port = listener.getsockname()[1]
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, sock=listener))
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    def _call(self, work: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(work, self._loop).result(10)

    def cut(self) -> None:
        """The network drops: every connection through the proxy is reset, new ones refused."""
        self._call(self._set_cut(True))

    def restore(self) -> None:
        self._call(self._set_cut(False))

    async def _set_cut(self, cut: bool) -> None:
        self._cut = cut
        if cut:
            self.refused = []
            for writer in list(self._open):
                writer.transport.abort()
            self._open.clear()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._cut:
            with contextlib.suppress(OSError, TimeoutError, *READ_ERRORS):
                async with asyncio.timeout(2):
                    head = await reader.readuntil(b"\r\n\r\n")
                    self.refused.append(head.partition(b"\r\n")[0].decode("latin-1"))
            writer.transport.abort()
            return
        self._open.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, _, headers = head.partition(b"\r\n")
            method, target, version = line.split(b" ", 2)
            if method == b"CONNECT":
                port = int(target.rpartition(b":")[2])
                up_reader, upstream = await asyncio.open_connection(TARGET, port)
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                first = b""
            else:
                # http://party.test:PORT/path -> /path, to this machine's PORT. Later requests
                # on a kept-alive connection go on as the browser wrote them (the server
                # reads an absolute URL too); a WebSocket gets a connection of its own.
                authority, _, path = target.partition(b"://")[2].partition(b"/")
                port = int(authority.rpartition(b":")[2]) if b":" in authority else 80
                up_reader, upstream = await asyncio.open_connection(TARGET, port)
                first = b" ".join((method, b"/" + path, version)) + b"\r\n" + headers
            self._open.add(upstream)
            upstream.write(first)
            await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
        except (OSError, ValueError, *READ_ERRORS):
            pass
        finally:
            for end in (writer, upstream):
                if end is not None:
                    self._open.discard(end)
                    end.transport.abort()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    with contextlib.suppress(OSError):
        if sink.can_write_eof():
            sink.write_eof()
