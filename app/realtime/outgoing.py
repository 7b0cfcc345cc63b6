"""Server-to-client messages encoded once, however many connections receive them.

python-socketio's `emit` builds a Packet per call (and scans its payload for binary), and
for a room it starts a task per recipient. A room's change goes to everyone at the table at
once, so here each distinct message is encoded once (orjson) into its Socket.IO text packet,
with its Engine.IO type in front, and that one text is written to every recipient's
websocket (app/realtime/transport.py `queue_text`: python-engineio's `send_packet`, its API for
sending a raw packet, without the packet object where nothing is queued before it). The
bytes on the wire are what `emit` sends: `42["state",{...}]`.
"""

from __future__ import annotations

from typing import Any, Protocol

import orjson
from engineio import packet as eio_packet

NAMESPACE = "/"  # the game uses Socket.IO's default namespace only
EVENT_PACKET = "2"  # Socket.IO's EVENT packet type, in the default namespace
# What every event's text starts with on the wire: Engine.IO's MESSAGE, then Socket.IO's EVENT.
MESSAGE_EVENT = f"{eio_packet.MESSAGE}{EVENT_PACKET}"


def event_head(event: str) -> str:
    """The text an event's Engine.IO packet starts with, up to its data: `42["event",`
    (event names are plain words)."""
    return f'{MESSAGE_EVENT}["{event}",'


def to_json(data: Any) -> str:
    """Compact JSON text (orjson: several times faster than json, the same meaning)."""
    return orjson.dumps(data).decode()


class Assembled(eio_packet.Packet):  # type: ignore[misc]  # python-engineio has no types
    """An Engine.IO MESSAGE packet made from its encoded text, what `encode()` returns (and
    has cached, as python-engineio's packets cache theirs): the text is built in one piece,
    not as a Socket.IO packet that `encode()` copies again behind its type. Its `data` is
    read back from that text when asked for (long-polling and tests). The packet's
    attributes it sets are in app/realtime/internals.py."""

    def __init__(self, encoded: str) -> None:
        self.packet_type = eio_packet.MESSAGE
        self.binary = False
        self.encode_cache = encoded

    @property
    def data(self) -> str:
        return str(self.encode_cache[1:])


class Encoded:
    """A server event, encoded: its name and its whole Engine.IO text, `42["event",{...}]`
    (app/realtime/transport.py `queue_text` makes it a packet only where it must wait in a queue).
    Its `data` (for in-process transports and tests) is read back from that text: the
    server builds the text only, once per message, and never a copy it would not send.
    Not to be changed once made. (A plain class: one is made per recipient of every
    change, and a frozen dataclass's `__init__` cost three times as much.)"""

    __slots__ = ("event", "text")

    def __init__(self, event: str, text: str) -> None:
        self.event = event
        self.text = text

    def __repr__(self) -> str:
        return f"Encoded({self.event!r}, {self.text!r})"

    @classmethod
    def of(cls, event: str, data: Any = None, data_json: str | None = None) -> Encoded:
        """`event` with `data`, or with `data_json` when the caller already holds its JSON."""
        text = data_json if data_json is not None else to_json(data)
        return cls(event, f"{event_head(event)}{text}]")

    @property
    def data(self) -> Any:
        """The event's data as a client reads it."""
        return orjson.loads(self.text[len(MESSAGE_EVENT) :])[1]


class SocketServer(Protocol):
    """python-socketio's server as ours extend it (app.realtime.transport.GameServer, lean,
    or app.realtime.stock.StockServer, which import this module: named here by what they
    do, not imported)."""

    manager: Any

    def queue_text(self, eio_sid: str, text: str) -> None: ...

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...

    async def enter_room(self, sid: str, room: str) -> None: ...


class SocketTransport:
    """What a Room needs from python-socketio's server (ours: GameServer or StockServer):
    `emit` and `enter_room` as they are, and `send` of an encoded message, the broadcast
    path."""

    def __init__(self, sio: SocketServer) -> None:
        self.sio = sio

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None:
        await self.sio.emit(event, data, to=to)

    async def enter_room(self, sid: str, room: str) -> None:
        await self.sio.enter_room(sid, room)

    def send(self, message: Encoded, to: str) -> None:
        """Queues `message` on the connection `to` (a Socket.IO sid), after whatever was
        queued there before; nothing if it is gone. A connection is asked for no more than a
        place in its queue: nothing here waits on a client (lean: GameEngineIO's
        `queue_text`, what its `send_packet` does, without a coroutine per recipient, and
        with no packet object where the text can be written at once; stock: python-engineio's
        `send_packet` in a task of its own)."""
        eio_sid = self.sio.manager.eio_sid_from_sid(to, NAMESPACE)
        if eio_sid is not None:
            self.sio.queue_text(eio_sid, message.text)
