"""Wires the ASGI app: FastAPI for pages and HTTP, Socket.IO beside it. Nothing else."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import socketio
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware

from app.cluster.node import cluster_node
from app.ops.clock import Clock
from app.ops.config import Settings, get_settings
from app.ops.limits import CodeBudget, PerAddress
from app.ops.logs import configure_logging, library_logger, log_event
from app.ops.metrics import Metrics
from app.realtime.clients import ClientList
from app.realtime.origins import origin_check
from app.realtime.outgoing import SocketTransport
from app.realtime.polling import guarded_post, is_polled_post
from app.realtime.transport import GameServer
from app.stores import StoreError, open_store
from app.tables.notation import NEWEST_SCHEMA
from app.tables.registry import Rooms
from app.tournaments.cluster import serve_in_cluster
from app.tournaments.registry import Tournaments
from app.web import api as web
from app.web import pages, sockets
from app.web.assets import BUILD_DIR, URL_PREFIX, HashedFiles
from app.web.lookups import CodeLookups

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def create_app(settings: Settings | None = None, clock: Clock | None = None) -> socketio.ASGIApp:
    """The app; `clock` is the one its rooms, timers, saves and leases run on (a test's
    ManualClock, real time otherwise)."""
    settings = settings or get_settings()
    clock = clock if clock is not None else Clock()
    configure_logging(settings.log_level)
    metrics = Metrics()
    clients = ClientList()  # a disconnect's work independent of the server's clients
    sio = GameServer(
        settings,
        metrics,
        async_mode="asgi",
        client_manager=clients,
        cors_allowed_origins=origin_check(settings.allowed_origins),
        max_http_buffer_size=settings.max_message_bytes,
        ping_interval=settings.ping_interval_seconds,
        ping_timeout=settings.ping_timeout_seconds,
        # Their lines as ours: JSON, no traceback for what a client sent, rate-limited.
        logger=library_logger("socketio"),
        engineio_logger=library_logger("engineio"),
    )
    # Opened at start-up, not here: importing the app must not touch a file or a network.
    store = open_store(
        settings.store,
        newest_schema=NEWEST_SCHEMA,
        damaged=settings.store_damaged,
        connections=settings.redis_connections,
    )
    # On Redis, a cluster node (app/cluster/node.py): tables served under a lease, saves fenced.
    cluster = cluster_node(store, settings, sio, metrics, clock)
    rooms = Rooms(
        settings,
        SocketTransport(sio, clients, rooms=cluster is not None),
        metrics,
        store=cluster.store if cluster else store,
        clock=clock,
    )
    if cluster is not None:
        cluster.serve(rooms)
    events = Tournaments(rooms)  # events: heats at many tables, beside the rooms
    if cluster is not None:
        serve_in_cluster(events, cluster)  # an event's record held by lease, as a table's

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            if cluster is not None:
                await cluster.start()  # free tables taken now, the others with their people
            else:
                await rooms.start()  # every saved table, back before the first connection
                await events.start()  # then every event, which reads its tables
        except StoreError as error:
            # Not starting is better than starting without the tables: a restart policy
            # tries again, and the tables are still there when the store is back.
            log_event("store_unavailable", level=logging.CRITICAL, reason=str(error)[:300])
            raise
        yield
        # A last write; stored tables stay (in a cluster the leases go: ClusterStore.close).
        await rooms.shutdown(settings.drain_seconds)
        if cluster is not None:
            await cluster.close()

    # No /docs, /redoc or /openapi.json on a public server unless asked for.
    docs = settings.api_docs
    api = FastAPI(
        title="Slapjack",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
        openapi_url="/openapi.json" if docs else None,
    )
    api.state.rooms = rooms
    api.state.events = events
    api.state.settings = settings
    api.state.cluster = cluster
    api.state.room_limit = (
        cluster.room_limit if cluster else PerAddress.per_minute(settings.rooms_per_minute)
    )
    # One budget of room codes per address for every way to test one (app/web/lookups.py).
    code_limit = (
        cluster.code_limit
        if cluster
        else CodeBudget(
            settings.wrong_codes_per_minute,
            settings.wrong_codes_burst,
            settings.guess_wave_per_minute,
        )
    )
    lookups = CodeLookups(code_limit, metrics, clock)
    api.state.code_lookups = lookups
    web.install(api)
    pages.install(api)
    api.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    api.mount(URL_PREFIX, HashedFiles(directory=BUILD_DIR, check_dir=False), name="assets")
    # Pages, scripts and styles compressed for phones on mobile data (a third of the bytes).
    api.add_middleware(GZipMiddleware, minimum_size=1024)
    sockets.install(sio, rooms, settings, lookups, cluster, events)
    return GameApp(sio, other_asgi_app=api, allowed_hosts=settings.allowed_hosts)


class GameApp(socketio.ASGIApp):  # type: ignore[misc]
    """Socket.IO and the pages, behind one Host check when SLAPJACK_ALLOWED_HOSTS is set:
    against DNS rebinding, where another site's name resolves to this server and its page
    then talks to us as if it were ours (same-origin to the browser, so Origin can't tell)."""

    def __init__(self, *args: Any, allowed_hosts: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.allowed_hosts = {host.lower() for host in allowed_hosts}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.allowed_hosts and scope["type"] in ("http", "websocket"):
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host.lower().rsplit(":", 1)[0] not in self.allowed_hosts:
                await PlainTextResponse("Unknown host", status_code=400)(scope, receive, send)
                return
        if is_polled_post(scope):
            await guarded_post(self.engineio_server, super().__call__, scope, receive, send)
            return
        await super().__call__(scope, receive, send)


app = create_app()
