"""`python -m app`: serve the app (the README's run command and the Docker image's).

Prints the address to open on a phone, runs one uvicorn worker (configured in
app/realtime/serving.py: uvloop, httptools, websockets, request deadlines), and on SIGTERM or
Ctrl-C drains: no new room or person is taken, every table stops where it is and is
written to the store, every connection is told the server is restarting (the page comes
back by itself), then connections close within a bound. The next process restores the
tables at start (app/tables/registry.py `Rooms.start`).
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys
from types import FrameType

import uvicorn
from pydantic import ValidationError

from app.ops.collector import Collector
from app.ops.config import Settings, get_settings, lan_address
from app.ops.logs import configure_logging
from app.realtime.uvicorn_config import server_config
from app.tables.registry import Rooms


class DrainingServer(uvicorn.Server):
    """uvicorn's server, with a drain step between the first stop signal and the close."""

    def __init__(
        self,
        config: uvicorn.Config,
        rooms: Rooms,
        drain_seconds: float,
        collector: Collector | None = None,
    ) -> None:
        super().__init__(config)
        self.rooms, self.drain_seconds, self.collector = rooms, drain_seconds, collector
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining = False

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        if self.collector is not None:
            self.collector.start()
        try:
            await super().serve(sockets)
        finally:
            if self.collector is not None:
                self.collector.stop()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self._loop is None:
            super().handle_exit(sig, frame)  # a second signal: stop without waiting
            return
        self._draining = True
        # A signal handler must not touch the loop directly: hand the drain to the loop.
        self._loop.call_soon_threadsafe(self._loop.create_task, self._drain(sig, frame))

    async def _drain(self, sig: int, frame: FrameType | None) -> None:
        try:
            await asyncio.wait_for(self.rooms.drain(), self.drain_seconds)
            await asyncio.sleep(min(0.2, self.drain_seconds))  # let the notices leave
        except (TimeoutError, OSError):
            pass  # the bound is the promise: close anyway
        finally:
            super().handle_exit(sig, frame)


def load_settings() -> Settings:
    try:
        return get_settings()
    except ValidationError as error:
        problems = "\n".join(
            f"  SLAPJACK_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in error.errors()
        )
        sys.exit(f"slapjack: invalid settings, not starting:\n{problems}")


def announce(settings: Settings) -> None:
    if settings.in_container:
        where = f"port {settings.port} inside a container: open the host's address"
    else:
        host = lan_address() if settings.host in ("0.0.0.0", "::") else settings.host
        scheme = "https" if settings.tls_cert else "http"
        where = f"{scheme}://{host}:{settings.port}/"
    print(f"\n  Slapjack is running: open {where}\n", flush=True)


def settle_the_heap(thresholds: tuple[int, int, int]) -> None:
    """Once start-up is done: what it left alive (the code, the frameworks, the templates)
    lives as long as the process, so it is frozen out of the collector's reach (a full
    collection no longer walks it), and the thresholds are set for a long-lived heap (for
    CPython's own collector: SLAPJACK_GC_YOUNG_SECONDS=0)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)


PRIVATE_FILES = 0o077  # umask: whatever the process creates is its owner's alone


def main() -> None:
    os.umask(PRIVATE_FILES)  # the store, its journal, anything written later
    settings = load_settings()
    from app.main import app  # built from the same cached settings

    # SLAPJACK_TLS_CERT/KEY: uvicorn serves HTTPS itself (a secure context for the phones).
    tls = {"ssl_certfile": settings.tls_cert, "ssl_keyfile": settings.tls_key}
    config = server_config(app, settings, **(tls if settings.tls_cert else {}))
    configure_logging(settings.log_level, server_too=True)
    rooms: Rooms = app.other_asgi_app.state.rooms
    settle_the_heap(settings.gc_thresholds)
    young = settings.gc_young_seconds
    collector = Collector(young, clock=rooms.clock) if young > 0 else None
    announce(settings)
    DrainingServer(config, rooms, settings.drain_seconds, collector).run()


if __name__ == "__main__":
    main()
