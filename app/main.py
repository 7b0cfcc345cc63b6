"""Wires the ASGI app: FastAPI for pages and HTTP, Socket.IO beside it. Nothing else."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import socketio
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app import pages, sockets, web
from app.config import Settings, get_settings
from app.limits import PerAddress
from app.logs import configure_logging
from app.origins import origin_check
from app.outgoing import SocketTransport
from app.rooms import Rooms

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def create_app(settings: Settings | None = None) -> socketio.ASGIApp:
    settings = settings or get_settings()
    configure_logging(settings.log_level)
    sio = socketio.AsyncServer(
        async_mode="asgi",
        cors_allowed_origins=origin_check(settings.allowed_origins),
        max_http_buffer_size=settings.max_message_bytes,
        ping_interval=settings.ping_interval_seconds,
        ping_timeout=settings.ping_timeout_seconds,
    )
    rooms = Rooms(settings, SocketTransport(sio))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        rooms.close_all()  # cancels every room's timers and bots

    api = FastAPI(title="Slapjack", lifespan=lifespan)
    api.state.rooms = rooms
    api.state.settings = settings
    api.state.room_limit = PerAddress.per_minute(settings.rooms_per_minute)
    web.install(api)
    pages.install(api)
    api.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    sockets.install(sio, rooms, settings)
    return socketio.ASGIApp(sio, other_asgi_app=api)


app = create_app()
