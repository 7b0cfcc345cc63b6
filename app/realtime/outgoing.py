"""Server-to-client messages (app/wire/encoded.py `Encoded`) written to every connection.

python-socketio's `emit` builds a Packet per call (and scans its payload for binary), and
for a room it starts a task per recipient. A room's change goes to everyone at the table at
once, so each distinct message is encoded once (orjson) into its Socket.IO text packet,
with its Engine.IO type in front, and that one text is written to every recipient's
websocket (app/realtime/transport.py `queue_text`: what python-engineio's `send_packet` does,
without a packet object where nothing is queued before it). The bytes on the wire are what
`emit` sends: `42["state",{...}]`.
"""

from __future__ import annotations

from typing import Any, Protocol

from app.wire.encoded import Encoded

NAMESPACE = "/"  # the game uses Socket.IO's default namespace only


class SocketServer(Protocol):
    """python-socketio's server as ours extends it (app.realtime.transport.GameServer: named
    here by what it does, not imported)."""

    def queue_text(self, eio_sid: str, text: str) -> None: ...

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...

    async def enter_room(self, sid: str, room: str) -> None: ...


class Clients(Protocol):
    """The server's list of clients (app/realtime/clients.py `ClientList`)."""

    def eio_sid(self, sid: str, namespace: str) -> str | None: ...


class SocketTransport:
    """What a Room needs from python-socketio's server (ours: GameServer): `emit` as it is,
    `enter_room` where there are `rooms`, and `send` of an encoded message, the broadcast
    path."""

    def __init__(self, sio: SocketServer, clients: Clients, *, rooms: bool = True) -> None:
        self.sio = sio
        self.clients = clients  # the `client_manager` `sio` was made with
        self.rooms = rooms

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None:
        await self.sio.emit(event, data, to=to)

    async def enter_room(self, sid: str, room: str) -> None:
        """Puts the connection `sid` in python-socketio's room `room` (a table's or an
        event's code), where a cluster's hand-over finds the connections to close
        (app/cluster/node.py): only where `rooms` are kept, in a cluster (one process needs
        none, and each costs memory: app/realtime/clients.py keeps them)."""
        if self.rooms:
            await self.sio.enter_room(sid, room)

    def send(self, message: Encoded, to: str) -> None:
        """Queues `message` on the connection `to` (a Socket.IO sid), after whatever was
        queued there before; nothing if it is gone. A connection is asked for no more than a
        place in its queue: nothing here waits on a client (GameEngineIO's `queue_text`, what
        its `send_packet` does, without a coroutine per recipient, and with no packet object
        where the text can be written at once)."""
        eio_sid = self.clients.eio_sid(to, NAMESPACE)
        if eio_sid is not None:
            self.sio.queue_text(eio_sid, message.text)
