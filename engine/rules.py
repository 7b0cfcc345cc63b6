"""House rules. The defaults are the product's digital rules (first slap to reach the server
wins, a false slap burns a card and freezes 1.5 s, the winner of a pile has 1 s to collect it
and flips next, a trigger nobody slaps lapses after 8 s); every field is a variant from the
table rule books."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Literal

from engine.cards import FACE_RANKS, Card


# What makes each trigger show on a pile (top last, never empty).
def _jack(pile: Sequence[Card]) -> bool:
    return pile[-1].rank == "J"


def _face(pile: Sequence[Card]) -> bool:
    return pile[-1].rank in FACE_RANKS


def _double(pile: Sequence[Card]) -> bool:
    return len(pile) >= 2 and pile[-2].rank == pile[-1].rank


def _sandwich(pile: Sequence[Card]) -> bool:
    return len(pile) >= 3 and pile[-3].rank == pile[-1].rank


# Every trigger, in the order a pile showing several is named by: a new trigger is a test
# above, a line here and its words in RULES_SCHEMA below.
SHOWS: dict[str, Callable[[Sequence[Card]], bool]] = {
    "jack": _jack,
    "face": _face,
    "double": _double,
    "sandwich": _sandwich,
}
TRIGGERS = tuple(SHOWS)
PENALTIES = ("burn", "give")
EMPTY_DECK = ("out", "last_chance")
AFTER_TAKE = ("winner", "left_of_winner")
MIN_PLAYERS, MAX_PLAYERS = 2, 8
MAX_COLLECT_SECONDS = 5.0  # longer than this and the table feels stuck after every take
# A lapse sooner than a slow human reaction would race the slappers; later than a minute
# and the table looks broken. 0 means a trigger never lapses.
MIN_TRIGGER_TIMEOUT, MAX_TRIGGER_TIMEOUT = 2.0, 60.0
# A tie window wider than this would hand a pile to the seat next to flip over a slap a
# human could see was faster (two frames at 40 fps); 0 turns the rule off.
MAX_TIE_WINDOW_MS = 50

Penalty = Literal["burn", "give"]
EmptyDeck = Literal["out", "last_chance"]
AfterTake = Literal["winner", "left_of_winner"]


@dataclass(frozen=True)
class Rules:
    freeze_seconds: float = 1.5
    penalty: Penalty = "burn"
    empty_deck: EmptyDeck = "out"
    triggers: frozenset[str] = field(default_factory=lambda: frozenset({"jack"}))
    decks: int = 1
    last_card_jack: bool = False
    time_limit: float | None = None
    collect_seconds: float = 1.0
    trigger_timeout: float = 8.0
    shuffle_taken: bool = False
    after_take: AfterTake = "winner"
    tie_window_ms: int = 0

    def __post_init__(self) -> None:
        _check_number("freeze_seconds", self.freeze_seconds, allow_zero=True)
        _check_number("collect_seconds", self.collect_seconds, allow_zero=True)
        if self.collect_seconds > MAX_COLLECT_SECONDS:
            raise ValueError(
                f"collect_seconds must be at most {MAX_COLLECT_SECONDS} seconds, "
                f"not {self.collect_seconds!r}"
            )
        _check_number("trigger_timeout", self.trigger_timeout, allow_zero=True)
        if self.trigger_timeout and not (
            MIN_TRIGGER_TIMEOUT <= self.trigger_timeout <= MAX_TRIGGER_TIMEOUT
        ):
            raise ValueError(
                f"trigger_timeout must be 0 (never) or {MIN_TRIGGER_TIMEOUT} to "
                f"{MAX_TRIGGER_TIMEOUT} seconds, not {self.trigger_timeout!r}"
            )
        if not isinstance(self.shuffle_taken, bool):
            raise ValueError(f"shuffle_taken must be true or false, not {self.shuffle_taken!r}")
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, not {self.penalty!r}")
        if self.empty_deck not in EMPTY_DECK:
            raise ValueError(f"empty_deck must be one of {EMPTY_DECK}, not {self.empty_deck!r}")
        object.__setattr__(self, "triggers", _check_triggers(self.triggers))
        if type(self.decks) is not int or self.decks not in (1, 2):
            raise ValueError(f"decks must be 1 or 2, not {self.decks!r}")
        if not isinstance(self.last_card_jack, bool):
            raise ValueError(f"last_card_jack must be true or false, not {self.last_card_jack!r}")
        if self.time_limit is not None:
            _check_number("time_limit", self.time_limit, allow_zero=False)
        if self.after_take not in AFTER_TAKE:
            raise ValueError(f"after_take must be one of {AFTER_TAKE}, not {self.after_take!r}")
        window = self.tie_window_ms
        if type(window) is not int or not 0 <= window <= MAX_TIE_WINDOW_MS:
            raise ValueError(
                f"tie_window_ms must be a whole number of ms from 0 to {MAX_TIE_WINDOW_MS}, "
                f"not {window!r}"
            )

    def trigger(self, pile: Sequence[Card]) -> str | None:
        """The name of the slap trigger showing on `pile` (top last), or None."""
        if not pile:
            return None
        for name, shows in self._shows:
            if shows(pile):
                return name
        return None

    @cached_property
    def _shows(self) -> tuple[tuple[str, Callable[[Sequence[Card]], bool]], ...]:
        """This table's triggers with their tests, in the order they are named."""
        return tuple((name, shows) for name, shows in SHOWS.items() if name in self.triggers)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, field by field (`asdict` deep-copies each value: slower, and every
        view of every change and every snapshot holds the rules). A fresh dict each time."""
        data = self._fields_as_data.copy()
        data["triggers"] = list(data["triggers"])
        return data

    @cached_property
    def _fields_as_data(self) -> dict[str, Any]:
        """`to_dict`, made once: the rules never change (frozen), and walking the fields on
        every call cost ten times the copy."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["triggers"] = sorted(self.triggers)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Builds rules from JSON-like data; unknown keys are refused, missing ones default."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown rule {unknown[0]!r}; known rules: {sorted(known)}")
        values = dict(data)
        if "triggers" in values:
            values["triggers"] = _check_triggers(values["triggers"])
        return cls(**values)


def check_players(players: int) -> None:
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")


def _check_number(name: str, value: object, *, allow_zero: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of seconds, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "more than zero"
        raise ValueError(f"{name} must be {bound} seconds, not {value!r}")


def _check_triggers(triggers: object) -> frozenset[str]:
    if isinstance(triggers, str) or not isinstance(triggers, Sequence | set | frozenset):
        raise ValueError(f"triggers must be a set of trigger names, not {triggers!r}")
    try:
        names = frozenset(triggers)
    except TypeError:
        raise ValueError(f"triggers must be a set of trigger names, not {triggers!r}") from None
    unknown = sorted(str(name) for name in names - set(TRIGGERS))
    if unknown:
        raise ValueError(f"unknown trigger {unknown[0]!r}; known triggers: {list(TRIGGERS)}")
    if not names:
        raise ValueError("triggers must name at least one trigger")
    return names


# ---- the one rules schema ------------------------------------------------------------------
# Every house rule described once: its kind, the values a client may send and what it does;
# the type and the default come from `Rules`. The app adds the words its form and rules
# summary show (app/wire/rule_words.py) and builds from both the protocol's RulesUpdate, the
# house-rules form and the page's rules summary (app/wire/rules_schema.py); the rules tables
# of docs/engine.md and docs/protocol.md are built from it (tools/docs_tables.py).

RuleKind = Literal["set", "flag", "choice", "number"]


@dataclass(frozen=True)
class RuleSpec:
    name: str
    kind: RuleKind
    # What it does, for developers, in English: the row of the rules tables of docs/engine.md
    # and docs/protocol.md (tools/docs_tables.py), naming each of its choices.
    doc: str
    choices: tuple[Any, ...] = ()  # the values of a set or a choice
    minimum: float | None = None  # a number's bounds as a client may send it
    maximum: float | None = None
    integer: bool = False
    nullable: bool = False  # null is a value ("no limit")

    @property
    def default(self) -> Any:
        return Rules().to_dict()[self.name]


RULES_SCHEMA: tuple[RuleSpec, ...] = (
    RuleSpec(
        "triggers",
        "set",
        'what makes a slap correct, one or more of: `"jack"`; `"face"` (J, Q, K on top); '
        '`"double"` (the top two cards of the same rank); `"sandwich"` (the top card and the '
        "card two below it of the same rank)",
        choices=TRIGGERS,
    ),
    RuleSpec(
        "last_card_jack",
        "flag",
        "a seat whose final card, flipped, is a Jack takes the pile at once",
    ),
    RuleSpec(
        "penalty",
        "choice",
        '`"burn"`: a false slapper\'s top card goes face-up under the pile. `"give"`: it goes '
        "face-down under the deck of the seat that most recently flipped (burned instead when "
        "that is the slapper itself, nobody has flipped yet, or that seat is out)",
        choices=PENALTIES,
    ),
    RuleSpec(
        "freeze_seconds",
        "number",
        "how long a false slapper may not flip or slap; `0` turns it off",
        minimum=0,
        maximum=10,
    ),
    RuleSpec(
        "empty_deck",
        "choice",
        '`"out"`: a seat with no cards is out at once. `"last_chance"`: it stays in with no '
        "cards and may still slap; a correct slap brings it back with the pile; it is out when "
        "another seat takes a pile, when its turn to flip comes round with no trigger showing, "
        "or when it slaps falsely",
        choices=EMPTY_DECK,
    ),
    RuleSpec(
        "decks",
        "number",
        "one deck of 52 cards, or two shuffled together (104)",
        minimum=1,
        maximum=2,
        integer=True,
    ),
    RuleSpec(
        "time_limit",
        "number",
        "seconds from the deal; from then on the game ends at the first moment one seat holds "
        "more cards than every other (the pile is not counted), checked by every action and "
        "every `tick`. None (`null`): no limit",
        minimum=10,
        maximum=3600,
        nullable=True,
    ),
    RuleSpec(
        "collect_seconds",
        "number",
        "the collect pause: after a take nobody may flip for this long (the winner gathers the "
        "pile); a slap on the empty pile meanwhile is `late` for the pile just taken, never a "
        "false slap. `0` turns it off",
        minimum=0,
        maximum=MAX_COLLECT_SECONDS,
    ),
    RuleSpec(
        "trigger_timeout",
        "number",
        f"`0` or {MIN_TRIGGER_TIMEOUT:g}-{MAX_TRIGGER_TIMEOUT:g}: a trigger nobody slaps for this "
        "many seconds lapses (a `lapse` event) and flipping resumes; it stays slappable until "
        "covered. `0`: never (the table waits for a slap)",
        minimum=0,
        maximum=MAX_TRIGGER_TIMEOUT,
    ),
    RuleSpec(
        "shuffle_taken",
        "flag",
        "the winner shuffles a taken pile before it goes under their deck (seeds 000, 003, "
        "004), so following the public flips does not predict the next ones",
    ),
    RuleSpec(
        "after_take",
        "choice",
        'who flips first after a take: `"winner"` (seeds 000, 001), or `"left_of_winner"`: '
        "the next seat up from the winner that is still in (seed 003)",
        choices=AFTER_TAKE,
    ),
    RuleSpec(
        "tie_window_ms",
        "number",
        f"`0` to {MAX_TIE_WINDOW_MS} ms: slaps reaching the server within this long of the first "
        "slap at a trigger are a genuine tie, and the seat next to flip among them (else the "
        "tied slapper nearest after it) takes the pile (seed 000); the caller judges the tie "
        "([Ties too close to call](#ties-too-close-to-call)), a room by holding the first slap "
        "this long. `0`: off, the first slap wins",
        minimum=0,
        maximum=MAX_TIE_WINDOW_MS,
        integer=True,
    ),
)
NULLABLE_RULES = frozenset(spec.name for spec in RULES_SCHEMA if spec.nullable)
