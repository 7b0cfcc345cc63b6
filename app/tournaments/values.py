"""What an event (app/tournaments/tournament.py `Tournament`) is made of and answers with:
its players (`Entrant`), its heats as it keeps them (`HeatRecord`), its organiser, the heats a
deal opens (`Dealt`), a command's `Outcome` and a join's `Joined`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from app.tables.values import Heat, Level, Person, TableBot
from app.wire.names import clean_avatar

Stage = Literal["lobby", "playing", "over"]
Role = Literal["organiser", "player", "guest"]
EventDict = dict[str, Any]  # {"kind", ...}: what a change caused, for the stage's motion


@dataclass(eq=False)
class Entrant:
    """A player of the event: a person (known by their token's hash) or a bot."""

    id: str
    name: str
    token_hash: str | None  # None: a bot
    avatar: str | None = None
    bot: Level | None = None
    out_in: int | None = None  # the round they went out in; None while still in
    removed: bool = False  # by the organiser: they play no further part
    # Their connection's client address (`address_hash`), for a removal to refuse: in memory
    # only, set again at every connection.
    address: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the event's record keeps it (its address is not kept)."""
        return {
            "id": self.id,
            "name": self.name,
            "token_sha256": self.token_hash,
            "avatar": self.avatar,
            "bot": self.bot,
            "out_in": self.out_in,
            "removed": self.removed,
        }

    @classmethod
    def from_dict(cls, e: dict[str, Any]) -> Entrant:
        bot = e["bot"]
        if bot not in (None, "easy", "normal", "hard"):
            raise ValueError(f"unknown bot level {bot!r}")
        hashed = e["token_sha256"]
        return cls(
            str(e["id"]),
            str(e["name"]),
            None if hashed is None else str(hashed),
            clean_avatar(e["avatar"]),
            bot,
            None if e["out_in"] is None else int(e["out_in"]),
            bool(e["removed"]),
        )


@dataclass(eq=False)
class HeatRecord:
    """One table of a round as the event keeps it: who was dealt to it (seat order) and,
    once decided, who went through and the table's standing (best first)."""

    code: str
    players: list[str]
    decided: bool = False
    winner: str | None = None
    standing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "players": list(self.players),
            "decided": self.decided,
            "winner": self.winner,
            "standing": list(self.standing),
        }

    @classmethod
    def from_dict(cls, h: dict[str, Any]) -> HeatRecord:
        winner = h["winner"]
        return cls(
            str(h["code"]),
            [str(p) for p in h["players"]],
            bool(h["decided"]),
            None if winner is None else str(winner),
            [str(p) for p in h["standing"]],
        )


@dataclass(frozen=True)
class Organiser:
    id: str
    name: str
    token_hash: str


@dataclass(frozen=True)
class Dealt:
    """A heat the shell opens as a table (`Table.for_heat`)."""

    code: str
    heat: Heat
    people: list[Person]
    bots: list[TableBot]


@dataclass
class Outcome:
    """What a command did: its events, the ack's extra fields, and the heats to open."""

    events: list[EventDict]
    reply: dict[str, Any] = field(default_factory=dict)
    dealt: list[Dealt] = field(default_factory=list)


class Joined(NamedTuple):
    who: str | None  # the organiser's or a player's id; None: a guest (a screen, a latecomer)
    token: str | None  # to give back in `welcome`
    role: Role
    returning: bool
    events: list[EventDict]
