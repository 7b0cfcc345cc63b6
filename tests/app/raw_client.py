"""A hand-made Engine.IO/Socket.IO websocket client: what a broken or hostile client sends,
frame by frame, and what a phone that fell asleep (silent) or never reads looks like."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from typing import Any

from app_harness import WAIT, Server
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed


class RawClient:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[str | bytes] = []
        self.acks: dict[int, Any] = {}  # answers by event id, in whatever order they came

    @classmethod
    async def open(
        cls, server: Server, *, headers: dict[str, str] | None = None, small_buffer: bool = False
    ) -> RawClient:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if small_buffer:  # a client that stops reading fills this quickly
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        ws = await connect(
            f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket",
            sock=sock,
            ping_interval=None,  # no websocket-level help: Engine.IO pings only
            max_queue=4,  # when unread, websockets stops reading the socket (back-pressure)
            additional_headers=headers,
        )
        client = cls(ws)
        opened = await client.next()
        assert isinstance(opened, str) and opened.startswith("0"), opened
        return client

    async def join(self, code: str, name: str, token: str | None = None) -> dict[str, Any]:
        auth: dict[str, Any] = {"room": code, "name": name}
        if token is not None:
            auth["token"] = token
        await self.send("40" + json.dumps(auth))
        connected, welcome = False, None
        while not (connected and welcome):  # the welcome may come before the CONNECT answer
            frame = await self.next_matching(lambda f: f.startswith(("40", "44", '42["welcome"')))
            assert not frame.startswith("44"), frame
            if frame.startswith("40"):
                connected = True
            else:
                welcome = dict(json.loads(frame[2:])[1])
        return welcome

    async def send(self, frame: str | bytes) -> None:
        await self.ws.send(frame)

    def pong_blindly(self, every: float = 0.5) -> asyncio.Task[None]:
        """Sends a pong every `every` seconds without reading a thing: a client that stopped
        reading while its network still carries what it sends. The caller cancels it."""

        async def pong() -> None:
            while True:
                await self.send("3")
                await asyncio.sleep(every)

        return asyncio.create_task(pong())

    async def next(self) -> str | bytes:
        frame = await asyncio.wait_for(self.ws.recv(), WAIT)
        self.frames.append(frame)
        return frame

    async def next_matching(self, wanted: Any) -> str:
        while True:
            frame = await self.next()
            if isinstance(frame, str) and frame == "2":
                await self.send("3")  # a live client answers the server's ping
            elif isinstance(frame, str) and wanted(frame):
                return frame

    async def ack(self, ack_id: int) -> Any:
        """The answer to the event sent with id `ack_id` (frames `43<id>[...]`)."""
        while ack_id not in self.acks:
            frame = await self.next_matching(lambda f: f.startswith("43"))
            number, _, payload = frame[2:].partition("[")
            self.acks[int(number)] = json.loads("[" + payload)[0]
        return self.acks.pop(ack_id)

    async def closed(self) -> bool:
        """Reads (answering pings) until the server closes the connection; False if it
        has not within WAIT seconds."""
        try:
            async with asyncio.timeout(WAIT):
                while True:
                    frame = await self.ws.recv()
                    if frame == "2":
                        await self.send("3")
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False

    async def close(self) -> None:
        await self.ws.close()


def client_frame(payload: bytes, head: int = 0x81, *, masked: bool = True) -> bytes:
    """A frame as a client sends it (masked with a random key unless told otherwise)."""
    size = len(payload)
    if size < 126:
        header = bytes((head, (0x80 if masked else 0) | size))
    else:
        header = bytes((head, (0x80 if masked else 0) | 126)) + size.to_bytes(2, "big")
    if not masked:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))
