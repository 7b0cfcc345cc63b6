"""What happened in a room, as typed values: one dataclass per room event kind, and the
engine's own events wrapped with the moment they happened.

Each has one `to_dict()`, the event as sent in its `state`'s `events` (the Room adds
`version`); `Restart`, `Paused` and `Resumed` go out alone, as `event` messages of their own.
docs/protocol.md lists every kind; tests/app/test_protocol_doc.py reads them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from engine import Event, FalseSlap, Flip
from engine.events import field_names

EventDict = dict[str, Any]  # {"kind", "version", ...}


@dataclass(frozen=True, slots=True)
class RoomEvent:
    """A change to the room around the game: people, seats, host, rules, the deal."""

    kind: ClassVar[str] = "room"

    def to_dict(self) -> EventDict:
        data: EventDict = {"kind": self.kind}
        for name in field_names(type(self)):
            data[name] = getattr(self, name)
        return data


@dataclass(frozen=True, slots=True)
class Join(RoomEvent):
    """A new person entered the room."""

    kind: ClassVar[str] = "join"
    player: str
    name: str


@dataclass(frozen=True, slots=True)
class Reconnect(RoomEvent):
    """A person came back. `flipped`: cards the autopilot flipped for their seat while they
    were away; `missed_deal`: a game was dealt without them (they were not here)."""

    kind: ClassVar[str] = "reconnect"
    player: str
    seat: int | None
    flipped: int = 0
    missed_deal: bool = False


@dataclass(frozen=True, slots=True)
class Disconnect(RoomEvent):
    """A connection dropped; the person may come back with their token."""

    kind: ClassVar[str] = "disconnect"
    player: str
    seat: int | None


@dataclass(frozen=True, slots=True)
class Leave(RoomEvent):
    """A person said goodbye (`leave`)."""

    kind: ClassVar[str] = "leave"
    player: str
    seat: int | None


@dataclass(frozen=True, slots=True)
class Sit(RoomEvent):
    kind: ClassVar[str] = "sit"
    player: str
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class Stand(RoomEvent):
    kind: ClassVar[str] = "stand"
    player: str
    seat: int


@dataclass(frozen=True, slots=True)
class BotAdded(RoomEvent):
    kind: ClassVar[str] = "bot"
    seat: int
    level: str
    name: str


@dataclass(frozen=True, slots=True)
class Remove(RoomEvent):
    """The host cleared a seat; `player` is None for a bot."""

    kind: ClassVar[str] = "remove"
    seat: int
    player: str | None


@dataclass(frozen=True, slots=True)
class Kick(RoomEvent):
    """The host removed a person for good (their seat, if any, is free); sent alone to
    them too, as their connection closes."""

    kind: ClassVar[str] = "kick"
    player: str
    seat: int | None


@dataclass(frozen=True, slots=True)
class Lock(RoomEvent):
    """The host locked the table (nobody new without the invite) or opened it."""

    kind: ClassVar[str] = "lock"
    locked: bool


@dataclass(frozen=True, slots=True)
class FalseStart(RoomEvent):
    """A slap sooner after the trigger reached the slapper than a person can react: it
    took nothing, and the seat may not take this pile."""

    kind: ClassVar[str] = "false_start"
    seat: int
    pile_id: int
    reaction_ms: int


@dataclass(frozen=True, slots=True)
class Closed(RoomEvent):
    """The room closed with people in it (no game was dealt and nobody acted for a while);
    sent alone, with no version, before the connections close."""

    kind: ClassVar[str] = "closed"


@dataclass(frozen=True, slots=True)
class Host(RoomEvent):
    kind: ClassVar[str] = "host"
    player: str


@dataclass(frozen=True, slots=True)
class RulesChanged(RoomEvent):
    kind: ClassVar[str] = "rules"
    rules: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Start(RoomEvent):
    kind: ClassVar[str] = "start"
    game: int
    first: int
    rematch: bool


@dataclass(frozen=True, slots=True)
class Abandon(RoomEvent):
    """A game nobody at the table could play any more ended without a winner."""

    kind: ClassVar[str] = "abandon"
    game: int


@dataclass(frozen=True, slots=True)
class Restart(RoomEvent):
    """The server is shutting down; sent to every connection, with no version."""

    kind: ClassVar[str] = "restart"
    message: str


@dataclass(frozen=True, slots=True)
class Paused(RoomEvent):
    """The table stopped where it is: the server cannot confirm it is still its judge (its
    store is away: `by` "server"), or the event this table is a heat of is paused (`by`
    "organiser"). Nothing is judged until `resumed`; sent alone, with no version."""

    kind: ClassVar[str] = "paused"
    by: str = "server"


def paused(by_event: bool) -> EventDict:
    """The `paused` notice a table's connections get (no version): the event this table is a
    heat of holds it (`by_event`), or its server cannot confirm it is still its judge."""
    return Paused(by="organiser" if by_event else "server").to_dict()


@dataclass(frozen=True, slots=True)
class Resumed(RoomEvent):
    """The table goes on after a pause; sent alone, with no version."""

    kind: ClassVar[str] = "resumed"


@dataclass(frozen=True, slots=True)
class GameEvent:
    """An engine event as it happened at `at`; `auto` for a flip the autopilot made."""

    event: Event
    at: float
    auto: bool = False

    @property
    def kind(self) -> str:
        return self.event.kind

    def to_dict(self) -> EventDict:
        """Times become milliseconds left, never server clock values."""
        data = self.event.to_dict()
        if isinstance(self.event, FalseSlap):
            del data["frozen_until"]
            data["frozen_ms"] = max(0, round((self.event.frozen_until - self.at) * 1000))
        if isinstance(self.event, Flip):
            data["auto"] = self.auto
        return data


AppEvent = RoomEvent | GameEvent
