"""The values a Table is made of and answers with: who is at it (a person, known by their
token's hash and never the token, and a bot), the policy the server gives it, and what a
command returns (`Outcome`, `Joined`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from app.ops.config import Settings
from app.tables.events import AppEvent

Level = Literal["easy", "normal", "hard"]
# Bots' names: friendly, short and distinct at one table (two "Hard bot"s could not be told
# apart). A new bot takes the first name no bot at the table has, from its seat's on.
BOT_NAMES = ("Robo Rita", "Bleep", "Sprocket", "Pixel", "Gizmo", "Widget", "Clank", "Zippy")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def address_hash(code: str, address: str) -> str:
    """A client address as a table keeps it (to refuse a kicked person's address): hashed
    with the table's code, so no stored table holds an address or matches another's."""
    return hashlib.sha256(f"{code}/{address}".encode()).hexdigest()


@dataclass(eq=False)
class Person:
    id: str  # public: in every state
    name: str
    token_hash: str  # the token itself is never kept
    connected_since: float
    disconnected_at: float | None = None  # None while connected
    avatar: str | None = None  # one emoji the person picked (kept with the name on the device)
    # A shared screen (/r/CODE/tv, joined with `watch`): it shows the table and never plays,
    # so it is never seated on arrival and never made host.
    screen: bool = False
    # While away: cards the autopilot flipped for them, and whether a game was dealt
    # without them (they were stood up, and are remembered until they come back or the
    # next deal). Told once when they come back (the Reconnect event).
    away_flips: int = 0
    missed_deal: bool = False
    # When they first came to the table (a reconnection keeps it): a host's role passes to
    # whoever has been here longest. When they last took a new name (None: never).
    arrived_at: float = 0.0
    renamed_at: float | None = None
    # Their connection's client address (`address_hash`), for a kick to refuse: in memory
    # only, set again at every connection.
    address: str | None = None

    @property
    def connected(self) -> bool:
        return self.disconnected_at is None


@dataclass(frozen=True)
class TableBot:
    id: str
    level: Level
    name: str


# The settings' defaults, read without the environment: a policy's defaults are theirs.
_DEFAULTS = Settings.model_construct()


@dataclass(frozen=True)
class Policy:
    """The server's settings a table's rules depend on (not part of a snapshot); a field
    not given takes its setting's default."""

    max_people: int = _DEFAULTS.max_people_per_room
    # A disconnected host keeps the role this long.
    handover_seconds: float = _DEFAULTS.host_handover_seconds
    # Lag-fair judging credits nobody with more (app/tables/lag.py).
    lag_cap_seconds: float = _DEFAULTS.lag_cap_ms / 1000
    # A person's slap this soon after the trigger reached them is a false start (0: never).
    false_start_seconds: float = _DEFAULTS.false_start_ms / 1000

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(
            settings.max_people_per_room,
            settings.host_handover_seconds,
            settings.lag_cap_ms / 1000,
            settings.false_start_ms / 1000,
        )


@dataclass(frozen=True)
class Outcome:
    """What a command did: the events to broadcast and the ack's extra fields."""

    events: list[AppEvent]
    reply: dict[str, Any] = field(default_factory=dict)
    refresh: bool = False  # the state changed with no event: broadcast it all the same


class Joined(NamedTuple):
    person: Person
    token: str  # the token to give back in `welcome`
    returning: bool  # an existing person: their older connection, if any, is replaced
    events: list[AppEvent]
