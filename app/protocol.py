"""The wire protocol: one model per client message, the command registry, the outgoing shapes.

docs/protocol.md is the human version of this file; tests check the two agree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypedDict

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    create_model,
)

from app import rules_schema
from app.errors import ErrorCode as ErrorCode  # re-exported: the protocol names its codes
from app.errors import ProtocolError as ProtocolError
from app.table import BETWEEN_GAMES, MAX_SEATS, PHASES, Done, Phase, Table, Who

NAME_MAX = 20


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


class RulesChange(Message):
    """A partial set of house rules. Its fields are built from the one rules schema
    (app/rules_schema.py: kinds, choices and bounds); the engine's `Rules.from_dict` has the
    last word."""

    def changes(self) -> dict[str, Any]:
        """Only the fields the client sent; `time_limit: null` (no limit) counts as sent.
        The Table refuses any other null (`merged_rules`)."""
        return self.model_dump(exclude_unset=True)


if TYPE_CHECKING:

    class RulesUpdate(RulesChange):
        """One optional field per house rule (built at run time)."""

else:
    RulesUpdate = create_model(
        "RulesUpdate", __base__=RulesChange, __module__=__name__, **rules_schema.update_fields()
    )


class Slap(Message):
    pile_id: Annotated[StrictInt, Field(ge=0)]


class Pong(Message):
    """The answer to the server's `ping`, with its id: one round-trip sample."""

    id: Annotated[str, Field(min_length=1, max_length=16)]


class CreateRoom(Message):
    rules: RulesUpdate | None = None


# ---- the command registry ----------------------------------------------------------------

Handler = Callable[[Table, str, Any, float], Done]  # (table, person id, payload, now)


@dataclass(frozen=True)
class Command:
    """One client event, declared once: its payload, its handler on the Table, who may send
    it and in which phases. The Table's own checks are the judge; tests/app/test_table.py
    checks these declarations against it, and test_protocol_doc.py against the docs."""

    model: type[Message]
    handler: Handler
    who: Who
    phases: frozenset[Phase]
    acks_events: bool = False  # the ok ack lists the events the action caused
    ends_connection: bool = False  # the server closes the connection after the ack


def _sit(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, Sit)
    return table.sit(person, message.seat, now)


def _add_bot(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, AddBot)
    return table.add_bot(person, message.level, now)


def _remove(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, Remove)
    return table.remove(person, message.seat, now)


def _rules(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, RulesUpdate)
    return table.set_rules(person, message.changes(), now)


def _pong(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, Pong)
    return table.pong(person, message.id, now)


def _slap(table: Table, person: str, message: Any, now: float) -> Done:
    assert isinstance(message, Slap)
    return table.play_as(person, "slap", message.pile_id, now)


COMMANDS: dict[str, Command] = {
    "sit": Command(Sit, _sit, "anyone", BETWEEN_GAMES),
    "stand": Command(Stand, lambda t, p, m, now: t.stand(p, now), "seated", BETWEEN_GAMES),
    "add_bot": Command(AddBot, _add_bot, "host", BETWEEN_GAMES),
    "remove": Command(Remove, _remove, "host", BETWEEN_GAMES),
    "rules": Command(RulesUpdate, _rules, "host", BETWEEN_GAMES),
    "start": Command(Start, lambda t, p, m, now: t.start(p, now), "host", frozenset({"lobby"})),
    "rematch": Command(
        Rematch, lambda t, p, m, now: t.rematch(p, now), "host", frozenset({"over"})
    ),
    "flip": Command(
        Flip,
        lambda t, p, m, now: t.play_as(p, "flip", None, now),
        "seated",
        frozenset({"playing"}),
        acks_events=True,
    ),
    "slap": Command(Slap, _slap, "seated", frozenset({"playing"}), acks_events=True),
    "pong": Command(Pong, _pong, "anyone", PHASES),
    "leave": Command(
        Leave,
        lambda t, p, m, now: Done(t.drop(p, now, left=True)),
        "anyone",
        PHASES,
        ends_connection=True,
    ),
}

# The events a client may send, and the model each payload must fit.
CLIENT_EVENTS: dict[str, type[Message]] = {name: c.model for name, c in COMMANDS.items()}


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
    # One emoji (app.table.clean_avatar); anything else is dropped, not refused.
    avatar: Annotated[str, Field(max_length=64)] | None = None
    # A shared screen (the /tv page): it watches and is never seated on arrival.
    watch: bool = False


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
    avatar: str | None
    bot: str | None
    connected: bool
    cards: int
    out: bool
    frozen_ms: int
    lag_ms: int | None


class Spectator(TypedDict):
    player: str
    name: str
    connected: bool


class MatchScore(TypedDict):
    player: str | None  # None: a bot
    name: str
    wins: int


class Pile(TypedDict):
    id: int
    count: int
    top: list[str]
    burned: int  # how many of the pile's bottom cards were burned under it (face up)


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
    trigger_lapsed: bool
    lapse_ms: int | None
    collect_ms: int
    race: dict[str, Any] | None
    winner: int | None
    win_reason: str | None
    stats: list[dict[str, Any]]
    rules: dict[str, Any]
    players_needed: int
    places: list[int]
    match: list[MatchScore]
    events: list[dict[str, Any]]  # what the change caused: {"kind", "version", ...}


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
PING = "ping"
