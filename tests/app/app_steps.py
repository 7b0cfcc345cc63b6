"""Steps several test modules take over the wire: a game started by people who joined (and
bots), a connection the server refuses, and a race staged at a Jack on the pile."""

from typing import Any

import pytest
import socketio
from app_harness import WAIT, Client, Server, join

from app.tables.room import Room
from engine import Game


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


async def seated(server: Server, names: list[str], **rules: Any) -> tuple[str, list[Client]]:
    code = await server.new_room(**rules)
    clients = await join(server, code, *names)
    for client in clients:
        await client.ok("sit", {"seat": None})
    await clients[0].ok("start")
    return code, clients


def rig_a_jack(room: Room, players: int) -> None:
    """The table's game becomes one with a Jack on the pile (under the room's lock)."""
    hands = [[f"{rank}C", f"{rank}D"] for rank in range(2, 2 + players)]  # no trigger
    now = room.clock.now()
    room.table.game = Game.from_hands(hands, rules=room.rules, pile=["JS"], now=now)
    room.table.turn_started_at = now
    room._apply([], now)  # broadcast it, as any change is


async def stage_a_jack(server: Server, code: str, clients: list[Client]) -> dict[str, Any]:
    """A fresh game state with a Jack on the pile and slaps open, seen by every client."""
    room = server.room(code)
    async with room.lock:
        rig_a_jack(room, room.game.players if room.game is not None else len(clients))
        version = room.version
    states = [
        await c.wait_state(lambda s, v=version: s["version"] >= v and s["slap_open"])
        for c in clients
    ]
    return states[0]
