"""What an action caused, for the server to broadcast and the page to animate.

Every event is a small frozen value with a `kind` and `to_dict()`. Only face-up cards
ever appear in an event: a card given face-down to another deck is reported as None.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from engine.cards import Card


def field_names(kind: type) -> tuple[str, ...]:
    """The names of a dataclass's fields, in order: `fields()` builds them anew on every
    call, and every event of every change is turned into a dict."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # by event class (a fixed set of them)


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for name in field_names(type(self)):
            value = getattr(self, name)
            data[name] = str(value) if isinstance(value, Card) else value
        return data


@dataclass(frozen=True, slots=True)
class Flip(Event):
    """`seat` turned `card` face-up onto the pile."""

    kind: ClassVar[str] = "flip"
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Take(Event):
    """`seat` took the pile of `count` cards topped by `card`; the new pile is `pile_id`."""

    kind: ClassVar[str] = "take"
    seat: int
    card: Card
    count: int
    pile_id: int
    reaction_ms: int | None
    reason: Literal["slap", "last_card"] = "slap"


@dataclass(frozen=True, slots=True)
class FalseSlap(Event):
    """`seat` slapped no trigger: `card` burned face-up (None when given face-down to `to`,
    or when the seat had no card to pay and is out instead)."""

    kind: ClassVar[str] = "false_slap"
    seat: int
    card: Card | None
    to: int | None
    frozen_until: float


@dataclass(frozen=True, slots=True)
class Late(Event):
    """`seat` slapped pile `pile_id`, which someone had already taken: nothing happens but the
    photo finish. `winner` is the seat whose slap took that pile and `behind_ms` how long after
    that slap this one arrived; both None when the pile was not won by a slap (or is older than
    the last one won), and `behind_ms` is None when the winner slaps again. `tie` is the seat
    that was next to flip when this slap tied with the winner's and the tie rule gave the pile
    to the winner (Rules.tie_window_ms), else None; a tied slap may have arrived first, so its
    `behind_ms` may be 0."""

    kind: ClassVar[str] = "late"
    seat: int
    pile_id: int
    behind_ms: int | None = None
    winner: int | None = None
    tie: int | None = None


@dataclass(frozen=True, slots=True)
class Lapse(Event):
    """The `trigger` on pile `pile_id` showed for the rules' `trigger_timeout` unslapped:
    flipping resumes. The card stays slappable until the next flip covers it."""

    kind: ClassVar[str] = "lapse"
    trigger: str
    pile_id: int


@dataclass(frozen=True, slots=True)
class Out(Event):
    """`seat` is out of the game."""

    kind: ClassVar[str] = "out"
    seat: int


@dataclass(frozen=True, slots=True)
class Win(Event):
    """The game is over: `seat` won, by holding every card or by leading at the time limit."""

    kind: ClassVar[str] = "win"
    seat: int
    reason: Literal["cards", "time"]
