"""What uvicorn's websocket protocol would keep for a connection's life unused is let go
once its handshake is read (app/realtime/serving.py `lighten`): its queue of ASGI events is
a LeanQueue, not an asyncio.Queue (four deques, 3 KB a connection), and the handshake
request's headers are cleared (the scope has its own copy). The connection works as ever
through both: its CONNECT and acks are read from that queue."""

from __future__ import annotations

import asyncio
from typing import Any

from app_harness import Client, serving

from app.realtime.doors import METERED
from app.realtime.queues import LeanQueue


async def test_an_open_websocket_keeps_neither_asyncio_queue_nor_request_headers() -> None:
    async with serving() as server:
        code = await server.new_room()
        client = await Client(server, code, "Ann").connect()
        try:
            (served,) = list(METERED)  # uvicorn's protocol serving this connection
            websocket: Any = served
            assert isinstance(websocket.queue, LeanQueue)
            assert not isinstance(websocket.queue, asyncio.Queue)
            assert len(websocket.request.headers) == 0
            assert websocket.scope["headers"]  # the scope's own copy is what the app reads
            assert (await client.ok("sit", {"seat": 0}))["ok"]
        finally:
            await client.close()
