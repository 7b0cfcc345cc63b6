"""The wire protocol: one model per client message, the command registry, the outgoing shapes.

docs/protocol.md is the human version of this file; tests check the two agree.
"""

from __future__ import annotations

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

from app.wire import rules_schema
from app.wire.errors import ErrorCode as ErrorCode  # re-exported: the protocol names its codes
from app.wire.errors import ProtocolError as ProtocolError
from engine import bracket
from engine.rules import MAX_PLAYERS

MAX_SEATS = MAX_PLAYERS  # a room seats as many as a game can have
Phase = Literal["lobby", "playing", "over"]
Who = Literal["anyone", "seated", "host"]  # who may send a command
PHASES: frozenset[Phase] = frozenset(("lobby", "playing", "over"))
BETWEEN_GAMES: frozenset[Phase] = frozenset(("lobby", "over"))


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


class EventEnd(Empty):
    pass


class Sit(Message):
    seat: Annotated[StrictInt, Field(ge=0, lt=MAX_SEATS)] | None = None


class AddBot(Message):
    level: Literal["easy", "normal", "hard"]


class Remove(Message):
    seat: Annotated[StrictInt, Field(ge=0, lt=MAX_SEATS)]


class Kick(Message):
    player: Annotated[str, Field(min_length=1, max_length=16)]


class Lock(Message):
    locked: bool


class Invite(Empty):
    pass


class RulesChange(Message):
    """A partial set of house rules. Its fields are built from the one rules schema
    (app/wire/rules_schema.py: kinds, choices and bounds); the engine's `Rules.from_dict` has the
    last word."""

    def changes(self) -> dict[str, Any]:
        """Only the fields the client sent; `time_limit: null` (no limit) counts as sent.
        The Table refuses any other null (rules_schema.merged_rules)."""
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


# ---- events: more than eight, heats at many tables and a final (app/tournaments/) ------------

EVENT_NAME_MAX = 40  # an event's name, as the stage shows it
MIN_TABLE, MAX_TABLE = bracket.MIN_SIZE, bracket.MAX_SIZE


class CreateEvent(Message):
    """POST /api/events: the event's name, who organises it, its tables and house rules."""

    name: Annotated[str, Field(min_length=1, max_length=200)]
    organiser: Annotated[str, Field(max_length=200)] | None = None
    size: Annotated[StrictInt, Field(ge=MIN_TABLE, le=MAX_TABLE)] = bracket.DEFAULT_SIZE
    first_to: Annotated[StrictInt, Field(ge=bracket.MIN_FIRST_TO, le=bracket.MAX_FIRST_TO)] = 1
    bots: bool = False
    rules: RulesUpdate | None = None


class EventBot(Message):
    level: Literal["easy", "normal", "hard"]


class EventRemove(Message):
    player: Annotated[str, Field(min_length=1, max_length=16)]


class EventPause(Message):
    paused: bool


# ---- the command registry ----------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One client event, declared once: its payload, who may send it and in which phases.
    Its handler on the Table is app/tables/commands.py's; the Table's own checks are the
    judge. tests/app/test_table.py checks these declarations against it, and
    test_protocol_doc.py against the docs."""

    model: type[Message]
    who: Who
    phases: frozenset[Phase]
    acks_events: bool = False  # the ok ack lists the events the action caused
    ends_connection: bool = False  # the server closes the connection after the ack


COMMANDS: dict[str, Command] = {
    "sit": Command(Sit, "anyone", BETWEEN_GAMES),
    "stand": Command(Stand, "seated", BETWEEN_GAMES),
    "add_bot": Command(AddBot, "host", BETWEEN_GAMES),
    "remove": Command(Remove, "host", BETWEEN_GAMES),
    "kick": Command(Kick, "host", PHASES),
    "lock": Command(Lock, "host", PHASES),
    "invite": Command(Invite, "host", PHASES),
    "rules": Command(RulesUpdate, "host", BETWEEN_GAMES),
    "start": Command(Start, "host", frozenset({"lobby"})),
    "rematch": Command(Rematch, "host", frozenset({"over"})),
    "flip": Command(Flip, "seated", frozenset({"playing"}), acks_events=True),
    "slap": Command(Slap, "seated", frozenset({"playing"}), acks_events=True),
    "pong": Command(Pong, "anyone", PHASES),
    "leave": Command(Leave, "anyone", PHASES, ends_connection=True),
}

# An event's commands (a connection to an event, not a table), declared as a table's are; the
# organiser is its host. Their handlers are app/tournaments/room.py's.
EVENT_COMMANDS: dict[str, Command] = {
    "event_start": Command(Start, "host", frozenset({"lobby"})),
    "event_bot": Command(EventBot, "host", frozenset({"lobby"})),
    "event_remove": Command(EventRemove, "host", frozenset({"lobby", "playing"})),
    "event_lock": Command(Lock, "host", frozenset({"lobby"})),
    "event_invite": Command(Invite, "host", frozenset({"lobby"})),
    "event_pause": Command(EventPause, "host", frozenset({"playing"})),
    "event_end": Command(EventEnd, "host", frozenset({"lobby", "playing"})),
    "leave": COMMANDS["leave"],
}

# The events a client may send, and the model each payload must fit.
CLIENT_EVENTS: dict[str, type[Message]] = {
    name: c.model for name, c in (*COMMANDS.items(), *EVENT_COMMANDS.items())
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
    # One RGI emoji (app.wire.names.check_avatar); anything else is refused (bad_avatar).
    avatar: Annotated[str, Field(max_length=64)] | None = None
    # A shared screen (the /tv page): it watches and is never seated on arrival.
    watch: bool = False
    # The host's invite (the link's `invite`): lets a new person in while the table is locked.
    invite: Annotated[str, Field(max_length=32)] | None = None


def parse_auth(auth: Any) -> Auth:
    if not isinstance(auth, dict):
        raise ProtocolError(ErrorCode.BAD_AUTH, "auth must be {room, name, token}")
    try:
        return Auth.model_validate(auth)
    except ValidationError:
        raise ProtocolError(ErrorCode.BAD_AUTH, "auth must be {room, name, token}") from None


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


class SeatStats(BaseModel):
    """One seat's figures in `state.stats` (the game-over podium reads them), as the engine's
    `Game.stats_by_seat` gives them: the wire's contract for them, field by field.
    docs/protocol.md's stats table is built from these descriptions (tools/docs_tables.py),
    and every view the tests make is checked against this model."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    seat: int = Field(ge=0, description="the seat")
    takes: int = Field(ge=0, description="piles the seat took")
    false_slaps: int = Field(ge=0, description="slaps when no trigger showed")
    best_ms: int | None = Field(
        ge=0,
        description="its fastest winning slap: ms from the trigger showing to the slap that "
        "took the pile (a late slap, however quick, is not counted); null before its first "
        "take by a slap",
    )
    median_ms: int | None = Field(
        ge=0,
        description="the median of its reactions over every correct slap, won or late, in ms "
        "from the trigger showing; null before its first correct slap",
    )
    closest_win_ms: int | None = Field(
        ge=0,
        description="its smallest lead over the first runner-up of a pile it won, in ms; null "
        "when no pile it won had a runner-up",
    )
    closest_loss_ms: int | None = Field(
        ge=0,
        description="the smallest `behind_ms` of its late slaps: how close it came to a pile "
        "another seat took; null when it has none",
    )


class HeatView(TypedDict):
    """`state.heat`: the table is one of an event's (docs/protocol.md, Events)."""

    event: str
    name: str
    round: int
    final: bool
    first_to: int
    winner: int | None  # the seat that won the heat


class AtAnEvent(TypedDict, total=False):
    """The fields of a `state` sent only at a table of an event."""

    heat: HeatView


class SeatView(AtAnEvent):
    """A `state` without `you`: the same for everyone who sees from the same seat."""

    room: str
    version: int
    phase: str
    game: int
    first: int
    host: str | None
    owner: str | None
    locked: bool
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
    stats: list[SeatStats]  # as dicts: a game's record, in the shape this model checks
    rules: dict[str, Any]
    players_needed: int
    places: list[int]
    match: list[MatchScore]
    events: list[dict[str, Any]]  # what the change caused: {"kind", "version", ...}


class _Riding(TypedDict, total=False):
    ping: str  # a lag ping riding on the state: answer `pong` with it


class State(SeatView, _Riding):
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
EVENT_STATE = "event_state"  # a connection to an event: its state (docs/protocol.md, Events)
EVENT = "event"
PING = "ping"
