"""Who is at a table: a person (known by their token's hash, never the token) and a bot."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

Level = Literal["easy", "normal", "hard"]
# Bots' names: friendly, short and distinct at one table (two "Hard bot"s could not be told
# apart). A new bot takes the first name no bot at the table has, from its seat's on.
BOT_NAMES = ("Robo Rita", "Bleep", "Sprocket", "Pixel", "Gizmo", "Widget", "Clank", "Zippy")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


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

    @property
    def connected(self) -> bool:
        return self.disconnected_at is None


@dataclass(frozen=True)
class TableBot:
    id: str
    level: Level
    name: str
