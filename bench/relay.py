"""The yardstick: a bare FastAPI + python-socketio relay, served like the app.

Rooms of four: a client connects with auth {"room": "..."}, every event it sends is
re-sent to its whole room (itself included) and answered with an ack {"ok": true}. No
rules, no state: what python-socketio costs per message on this machine, so the load
generator can report the app's CPU per message as a ratio that holds on any machine.

    BENCH_GC_FILE=/tmp/gc.json python -m bench.relay --port 8001
"""

from __future__ import annotations

import argparse
from typing import Any

import socketio
import uvicorn
from fastapi import FastAPI

from bench import gcwatch


def create_relay() -> socketio.ASGIApp:
    sio = socketio.AsyncServer(async_mode="asgi", ping_interval=10, ping_timeout=5)
    room_of: dict[str, str] = {}

    async def connect(sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        room = str(auth["room"])
        room_of[sid] = room
        await sio.enter_room(sid, room)

    async def disconnect(sid: str, reason: str | None = None) -> None:
        room_of.pop(sid, None)

    async def relay(event: str, sid: str, data: Any = None) -> dict[str, bool]:
        await sio.emit(event, data, to=room_of[sid])
        return {"ok": True}

    sio.on("connect", connect)
    sio.on("disconnect", disconnect)
    sio.on("*", relay)

    api = FastAPI()

    @api.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return socketio.ASGIApp(sio, other_asgi_app=api)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    gcwatch.install()
    config = uvicorn.Config(
        create_relay(),
        host=args.host,
        port=args.port,
        log_level="warning",
        loop="uvloop",
        http="httptools",
        ws="websockets-sansio",
        ws_max_size=4096,
        access_log=False,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
