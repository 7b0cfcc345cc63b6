"""The shapes of a table snapshot (what a store keeps) and of a view (what a person is sent),
as pydantic models that refuse a missing, extra or mistyped field: a change to either shape
shows here first, beside the golden fixtures it also changes."""

from __future__ import annotations

import operator
from functools import reduce
from types import UnionType
from typing import (
    Annotated,
    Any,
    Literal,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from app.wire.protocol import State
from engine import Rules

CARD = r"^(A|[2-9]|10|J|Q|K)[SHDC]$"
Card = Annotated[str, Field(pattern=CARD)]


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _rules_round_trip(rules: dict[str, Any]) -> dict[str, Any]:
    """The rules as `Rules.to_dict` writes them, every field of the engine's Rules."""
    if Rules.from_dict(rules).to_dict() != rules:
        raise ValueError(f"rules are not as Rules.to_dict writes them: {rules!r}")
    return rules


class StatsSnapshot(Shape):
    takes: int
    false_slaps: int
    best_ms: int | None
    closest_win_ms: int | None
    closest_loss_ms: int | None
    reactions_ms: list[int]


class RaceSnapshot(Shape):
    pile_id: int
    winner: int
    at: float
    shown_at: float | None
    behind: list[Annotated[list[int], Field(min_length=2, max_length=2)]]
    tie: int | None  # the seat next to flip, when the tie rule decided the take
    tied: list[int]  # the seats whose slaps tied with the winner's


class GameSnapshot(Shape):
    version: Literal[1]
    rules: dict[str, Any]
    hands: list[list[Card]]
    pile: list[Card]
    pile_id: int
    burned: int
    out: list[bool]
    frozen_until: list[float]
    next: int | None
    winner: int | None
    win_reason: str | None
    last_flipper: int | None
    now: float
    deadline: float | None
    trigger_since: float | None
    trigger_lapsed: bool
    collect_until: float
    race: RaceSnapshot | None
    shuffle_seed: int
    stats: list[StatsSnapshot]

    _rules = field_validator("rules")(_rules_round_trip)


class PersonSnapshot(Shape):
    id: str
    name: str
    token_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]  # never the token itself
    connected_for: float
    gone_for: float | None
    avatar: str | None
    screen: bool
    away_flips: Annotated[int, Field(ge=0)]  # cards flipped for them while they were away
    missed_deal: bool  # away when a game was dealt: not dealt in, told on return
    here_for: float  # since they first came (the host's role passes to who came first)
    renamed_ago: float | None  # since they last took a new name (None: never)


class BotSnapshot(Shape):
    id: str
    level: str
    name: str


SHA256 = r"^[0-9a-f]{64}$"


class KickedSnapshot(Shape):
    """Who the host removed for good: only hashes, never a token or an address."""

    token_sha256: list[Annotated[str, Field(pattern=SHA256)]]
    address_sha256: list[Annotated[str, Field(pattern=SHA256)]]


class TableSnapshot(Shape):
    schema_: Literal[1] = Field(alias="schema")
    code: str
    version: int
    phase: Literal["lobby", "playing", "over"]
    rules: dict[str, Any]
    lag_fair: bool
    false_starts: bool
    games: int
    first: int
    seats: list[str | None]
    people: list[PersonSnapshot]
    host: str | None
    owner: str | None  # the table's own host: the role comes back to them
    locked: bool
    invite_sha256: Annotated[str, Field(pattern=SHA256)] | None  # never the invite itself
    kicked: KickedSnapshot
    acted_ago: float  # since someone last came in or sent a command
    bots: list[BotSnapshot]
    next_bot: int
    wins: dict[str, int]
    out_order: list[int]  # seats, in the order they went out
    turn_started_ago: float
    game: GameSnapshot | None

    _rules = field_validator("rules")(_rules_round_trip)


def _model_of(shape: Any) -> Any:
    """A wire TypedDict (and those inside it) as a strict pydantic model refusing extra keys
    (pydantic reads typing.TypedDict only from Python 3.12)."""
    if is_typeddict(shape):
        hints = get_type_hints(shape)
        fields: dict[str, Any] = {name: (_model_of(kind), ...) for name, kind in hints.items()}
        return create_model(shape.__name__, __base__=Shape, **fields)
    origin, args = get_origin(shape), get_args(shape)
    if origin in (UnionType, Union):
        return reduce(operator.or_, [_model_of(arg) for arg in args])
    if origin is list:
        return list[_model_of(args[0])]  # type: ignore[misc]
    return shape


# A person's `state`: the wire's own TypedDicts (app/wire/protocol.py), nothing more.
STATE = _model_of(State)


def check_snapshot(snapshot: dict[str, Any]) -> TableSnapshot:
    return TableSnapshot.model_validate(snapshot)


def check_state(state: dict[str, Any]) -> None:
    STATE.model_validate(state)
