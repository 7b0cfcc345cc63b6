"""Steps several test modules take over the wire: a game started by people who joined (and
bots), and a connection the server refuses."""

from typing import Any

import pytest
import socketio
from app_harness import WAIT, Client, Server, join


async def start_game(
    server: Server, names: list[str], bots: list[str] = (), **rules: Any
) -> list[Client]:
    code = await server.new_room(**rules)
    clients = await join(server, code, *names)
    for client in clients:
        await client.ok("sit", {"seat": None})
    for level in bots:
        await clients[0].ok("add_bot", {"level": level})
    await clients[0].ok("start")
    for client in clients:
        await client.wait_state(lambda s: s["phase"] == "playing")
    return clients


async def refused(server: Server, auth: Any, **options: Any) -> Any:
    """The reason the server gives for refusing a connection with `auth`, or None."""
    client = socketio.AsyncClient(reconnection=False)
    reasons: list[Any] = []
    client.on("connect_error", lambda data=None: reasons.append(data))
    with pytest.raises(socketio.exceptions.ConnectionError):
        await client.connect(
            server.url, auth=auth, transports=["websocket"], wait_timeout=WAIT, **options
        )
    return reasons[0] if reasons else None
