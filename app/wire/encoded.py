"""A server event encoded once, however many connections receive it: its Socket.IO text.

A room hands these to the transport (app/realtime/outgoing.py `SocketTransport.send`), which
writes the one text to every recipient's connection. The bytes are what python-socketio's
`emit` sends: `42["state",{...}]`, Engine.IO's MESSAGE type then Socket.IO's EVENT.
"""

from __future__ import annotations

from typing import Any, Protocol

import orjson

ENGINEIO_MESSAGE = "4"  # Engine.IO's MESSAGE packet type (python-engineio's packet.MESSAGE)
EVENT_PACKET = "2"  # Socket.IO's EVENT packet type, in the default namespace
# What every event's text starts with on the wire: Engine.IO's MESSAGE, then Socket.IO's EVENT.
MESSAGE_EVENT = f"{ENGINEIO_MESSAGE}{EVENT_PACKET}"


def event_head(event: str) -> str:
    """The text an event's Engine.IO packet starts with, up to its data: `42["event",`
    (event names are plain words)."""
    return f'{MESSAGE_EVENT}["{event}",'


def to_json(data: Any) -> str:
    """Compact JSON text (orjson: several times faster than json, the same meaning)."""
    return orjson.dumps(data).decode()


class Encoded:
    """A server event, encoded: its name and its whole Engine.IO text, `42["event",{...}]`
    (app/realtime/transport.py `queue_text` makes it a packet only where it must wait in a queue).
    Its `data` (for in-process transports and tests) is read back from that text: the
    server builds the text only, once per message, and never a copy it would not send.
    Not to be changed once made. (A plain class: one is made per recipient of every
    change, and a frozen dataclass's `__init__` costs three times as much.)"""

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


class Transport(Protocol):
    """What a room needs from the Socket.IO server: the seam between app/tables and the
    transport (app/realtime/outgoing.py SocketTransport wraps python-socketio's server)."""

    async def emit(self, event: str, data: Any = None, to: str | None = None) -> None: ...

    async def enter_room(self, sid: str, room: str) -> None: ...

    def send(self, message: Encoded, to: str) -> None:
        """`message`, encoded once, queued on one connection (its Socket.IO sid) after what
        was queued there before; nothing if it is gone. Never waits: a room sends under
        its lock, to every person at the table in one pass."""
        ...
