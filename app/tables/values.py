"""The values a Table is made of and answers with: who is at it (a person, known by their
token's hash and never the token, and a bot), the policy the server gives it, and what a
command returns (`Outcome`, `Joined`)."""

from __future__ import annotations

import hashlib
import secrets
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


def invite_holds(invite: str | None, invite_hash: str | None) -> bool:
    """Whether `invite` is the one whose hash a host (or an organiser) keeps."""
    return (
        invite is not None
        and invite_hash is not None
        and secrets.compare_digest(token_hash(invite), invite_hash)
    )


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


# A heat's first game is dealt once everyone dealt to it is here, or this long after the
# table was opened (a phone that never comes is dealt in: the autopilot flips for it).
HEAT_GATHER_SECONDS = 20.0
# A heat that needs another game (first to N wins) deals it this long after a game ends:
# time to see who won that one.
HEAT_NEXT_GAME_SECONDS = 6.0


@dataclass(eq=False)
class Heat:
    """What makes a table one of an event's (app/tournaments/): the event deals its seats and
    its games, the table has no host, and its winner is the first of its players to win
    `first_to` games (`Table.wins`). Its totals across its games (`totals`: takes, wrong
    slaps, the fastest winning slap, by occupant id) and its last game's places (`places`)
    are what the event's recap and standings read."""

    event: str  # the event's code
    name: str  # the event's name, shown at the table
    round: int  # 1, 2, ...
    final: bool
    first_to: int
    gather_until: float  # the first deal comes by then (on the table's clock)
    over_at: float | None = None  # when its last game ended
    totals: dict[str, dict[str, int | None]] = field(default_factory=dict)
    places: list[str] = field(default_factory=list)  # occupant ids, the last game's places
