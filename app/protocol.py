"""The wire protocol: one model per client message, the error codes, the outgoing shapes.

docs/protocol.md is the human version of this file; tests check the two agree.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from engine import ErrorCode as EngineCode
from engine.rules import MAX_PLAYERS

MAX_SEATS = MAX_PLAYERS  # a room seats as many as a game can have
NAME_MAX = 20


class ErrorCode(StrEnum):
    """Every error code the server sends, in acks, connection refusals and HTTP answers."""

    BAD_REQUEST = "bad_request"
    UNKNOWN_EVENT = "unknown_event"
    RATE_LIMITED = "rate_limited"
    NOT_HOST = "not_host"
    WRONG_PHASE = "wrong_phase"
    NOT_SEATED = "not_seated"
    SEAT_TAKEN = "seat_taken"
    NO_FREE_SEAT = "no_free_seat"
    TOO_FEW_PLAYERS = "too_few_players"
    BAD_RULES = "bad_rules"
    INTERNAL = "internal_error"
    # The engine's refusals, passed through with the engine's own codes.
    BAD_SEAT = EngineCode.BAD_SEAT.value
    GAME_OVER = EngineCode.GAME_OVER.value
    OUT = EngineCode.OUT.value
    FROZEN = EngineCode.FROZEN.value
    NOT_YOUR_TURN = EngineCode.NOT_YOUR_TURN.value
    SLAP_PENDING = EngineCode.SLAP_PENDING.value
    NO_CARDS = EngineCode.NO_CARDS.value
    # Connection refusals.
    BAD_AUTH = "bad_auth"
    NO_ROOM = "no_room"
    BAD_NAME = "bad_name"
    ROOM_FULL = "room_full"
    SHUTTING_DOWN = "shutting_down"  # also refuses new rooms over HTTP
    # HTTP only.
    TOO_MANY_ROOMS = "too_many_rooms"
    TOO_LARGE = "too_large"


class ProtocolError(Exception):
    """A refusal the client should see: becomes an error ack (or a refused connection)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ---- client messages ---------------------------------------------------------------------


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Empty(Message):
    """A message with no fields: `{}` (or nothing)."""


class Stand(Empty):
    pass


class Start(Empty):
    pass


class Rematch(Empty):
    pass


class Flip(Empty):
    pass


class Leave(Empty):
    pass


class Sit(Message):
    seat: Annotated[StrictInt, Field(ge=0, lt=MAX_SEATS)] | None = None


class AddBot(Message):
    level: Literal["easy", "normal", "hard"]


class Remove(Message):
    seat: Annotated[StrictInt, Field(ge=0, lt=MAX_SEATS)]


Seconds = Annotated[float, Field(allow_inf_nan=False)]
Trigger = Literal["jack", "face", "double", "sandwich"]


class RulesUpdate(Message):
    """A partial set of house rules; the engine's `Rules.from_dict` has the last word."""

    freeze_seconds: Annotated[Seconds, Field(ge=0, le=10)] | None = None
    penalty: Literal["burn", "give"] | None = None
    empty_deck: Literal["out", "last_chance"] | None = None
    # An empty list passes here so the engine refuses it as bad_rules, in its own words.
    triggers: Annotated[list[Trigger], Field(max_length=4)] | None = None
    decks: Annotated[StrictInt, Field(ge=1, le=2)] | None = None
    last_card_jack: StrictBool | None = None
    time_limit: Annotated[Seconds, Field(ge=10, le=3600)] | None = None

    def changes(self) -> dict[str, Any]:
        """Only the fields the client sent; `time_limit: null` (no limit) counts as sent."""
        changed = self.model_dump(exclude_unset=True)
        if any(v is None for k, v in changed.items() if k != "time_limit"):
            raise ProtocolError(ErrorCode.BAD_REQUEST, "only time_limit may be null")
        return changed


class Slap(Message):
    pile_id: Annotated[StrictInt, Field(ge=0)]


class CreateRoom(Message):
    rules: RulesUpdate | None = None


# The events a client may send, and the model each payload must fit.
CLIENT_EVENTS: dict[str, type[Message]] = {
    "sit": Sit,
    "stand": Stand,
    "add_bot": AddBot,
    "remove": Remove,
    "rules": RulesUpdate,
    "start": Start,
    "rematch": Rematch,
    "flip": Flip,
    "slap": Slap,
    "leave": Leave,
}


def parse(event: str, args: tuple[Any, ...]) -> Message:
    """The validated payload of a client event; ProtocolError for anything else."""
    model = CLIENT_EVENTS.get(event)
    if model is None:
        raise ProtocolError(ErrorCode.UNKNOWN_EVENT, "the server handles no such event")
    if len(args) > 1:
        raise ProtocolError(ErrorCode.BAD_REQUEST, "send one JSON object")
    payload = args[0] if args else None
    if payload is None:
        payload = {}
    if not isinstance(payload, dict):
        raise ProtocolError(ErrorCode.BAD_REQUEST, "send one JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise ProtocolError(ErrorCode.BAD_REQUEST, _first_problem(exc)) from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "payload"
    return f"{where}: {error['msg']}"[:200]


# ---- connection --------------------------------------------------------------------------


class Auth(Message):
    room: Annotated[str, Field(min_length=1, max_length=16)]
    name: Annotated[str, Field(max_length=200)]
    token: Annotated[str, Field(max_length=64)] | None = None


def parse_auth(auth: Any) -> Auth:
    if not isinstance(auth, dict):
        raise ProtocolError(ErrorCode.BAD_AUTH, "auth must be {room, name, token}")
    try:
        return Auth.model_validate(auth)
    except ValidationError:
        raise ProtocolError(ErrorCode.BAD_AUTH, "auth must be {room, name, token}") from None


def clean_name(name: str) -> str:
    """The name as stored and shown: trimmed; refused when empty, long, with controls or
    line breaks, with nothing visible in it, or dressed as a bot ("Hard bot")."""
    trimmed = name.strip()
    if not 1 <= len(trimmed) <= NAME_MAX:
        raise ProtocolError(ErrorCode.BAD_NAME, f"a name is 1 to {NAME_MAX} characters")
    if any(unicodedata.category(ch) in NAME_FORBIDDEN for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name cannot hold control characters")
    if not any(_visible(ch) for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name needs a letter, digit or sign")
    if BOT_LIKE.search(trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "only bots are called bot")
    return trimmed


# Controls, format characters (zero-width ...), surrogates, private use, unassigned, and
# line and paragraph separators (U+2028, U+2029).
NAME_FORBIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Letters by category that draw nothing: the Hangul fillers and the braille blank.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
BOT_LIKE = re.compile(r"\bbots?\b", re.IGNORECASE)  # the bots are "Easy bot", "Hard bot"


def _visible(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] in "LNPS" and ch not in BLANK_LETTERS


# ---- outgoing ----------------------------------------------------------------------------

Ack = dict[str, Any]  # {"ok": true, ...} or {"ok": false, "error": {"code", "message"}}
EventDict = dict[str, Any]  # {"kind", "version", ...}: the kinds are in docs/protocol.md


class Welcome(TypedDict):
    player: str
    token: str


class You(TypedDict):
    player: str | None
    seat: int | None
    host: bool


class SeatState(TypedDict):
    seat: int
    player: str | None
    name: str
    bot: str | None
    connected: bool
    cards: int
    out: bool
    frozen_ms: int


class Spectator(TypedDict):
    player: str
    name: str
    connected: bool


class Pile(TypedDict):
    id: int
    count: int
    top: list[str]


class Seen(TypedDict):
    """A `state` without `you`: the same for everyone who sees from the same seat."""

    room: str
    version: int
    phase: str
    game: int
    first: int
    host: str | None
    seats: list[SeatState | None]
    spectators: list[Spectator]
    pile: Pile
    next: int | None
    slap_open: bool
    trigger: str | None
    winner: int | None
    win_reason: str | None
    stats: list[dict[str, Any]]
    rules: dict[str, Any]


class State(Seen):
    you: You


def ack(error: ProtocolError | None = None, **fields: Any) -> Ack:
    """Every ack the server sends is built here."""
    if error is not None:
        return {"ok": False, "error": refusal(error)}
    return {"ok": True, **fields}


def refusal(error: ProtocolError) -> dict[str, str]:
    """The `data` of a refused connection, and the body of an HTTP error."""
    return {"code": error.code.value, "message": error.message}


# Server event names.
WELCOME = "welcome"
STATE = "state"
EVENT = "event"
