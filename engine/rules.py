"""House rules. The defaults are the product's digital rules (first slap to reach the server
wins, a false slap burns a card and freezes 1.5 s, the winner of a pile has 1 s to collect it
and flips next, a trigger nobody slaps lapses after 8 s); every field is a variant from the
table rule books."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Literal

from engine.cards import FACE_RANKS, Card

TRIGGERS = ("jack", "face", "double", "sandwich")  # also the order a showing trigger is named
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
        top, triggers = pile[-1], self.triggers
        if "jack" in triggers and top.rank == "J":
            return "jack"
        if "face" in triggers and top.rank in FACE_RANKS:
            return "face"
        if "double" in triggers and len(pile) >= 2 and pile[-2].rank == top.rank:
            return "double"
        if "sandwich" in triggers and len(pile) >= 3 and pile[-3].rank == top.rank:
            return "sandwich"
        return None

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
# Every house rule described once: its kind, the values a client may ask for, the form's
# choices, and message ids (static/js/messages.js, translated in app/locale) for its label,
# its hints and the rules summary. app/wire/rules_schema.py builds the protocol's RulesUpdate,
# the house-rules form (templates/_rules.html), the page's rules summary and
# docs/protocol.md's rules table from it; the type and the default come from `Rules`.

RuleKind = Literal["set", "flag", "choice", "number"]


@dataclass(frozen=True)
class RuleOption:
    """One choice the form offers: a value as the wire carries it (None: "no limit")."""

    value: Any
    # Message id; a number's label gets {seconds}, {minutes} and {count}, or {number} (the
    # value as written) for a rule in another unit ("rules.milliseconds").
    label: str
    help: str | None = None  # message id of a short hint beside it
    summary: str | None = None  # message id the rules summary says when this is chosen


@dataclass(frozen=True)
class RuleSpec:
    name: str
    kind: RuleKind
    label: str  # message id of the form's label
    doc: str  # what it does, one line for docs/protocol.md (for developers, in English)
    options: tuple[RuleOption, ...] = ()
    minimum: float | None = None  # a number's bounds as a client may send it
    maximum: float | None = None
    integer: bool = False
    nullable: bool = False  # null is a value ("no limit")
    help: str | None = None  # message id of a short hint beside the label
    # The summary's words for a value no option speaks for (a number: {seconds} or {number}, or
    # {minutes} through summary_minutes when it is whole minutes; a set: {triggers}; a
    # flag: when it is on). A value equal to the default is left out unless summary_default.
    summary: str | None = None
    summary_minutes: str | None = None
    summary_default: bool = True
    own_default: Any = None  # the default of a rule the app adds (not a field of Rules)

    @property
    def default(self) -> Any:
        defaults = Rules().to_dict()
        return defaults.get(self.name, self.own_default)

    @property
    def values(self) -> tuple[Any, ...]:
        return tuple(option.value for option in self.options)


def _seconds(*values: float) -> tuple[RuleOption, ...]:
    return tuple(RuleOption(value, "rules.seconds") for value in values)


RULES_SCHEMA: tuple[RuleSpec, ...] = (
    RuleSpec(
        "triggers",
        "set",
        "rules.triggers",
        "what makes a slap correct",
        options=(
            RuleOption("jack", "rules.triggers.jack", "rules.triggers.jack.help"),
            RuleOption("double", "rules.triggers.double", "rules.triggers.double.help"),
            RuleOption("sandwich", "rules.triggers.sandwich", "rules.triggers.sandwich.help"),
            RuleOption("face", "rules.triggers.face", "rules.triggers.face.help"),
        ),
        summary="summary.slap",
    ),
    RuleSpec(
        "last_card_jack",
        "flag",
        "rules.last_card_jack",
        "a seat whose last card flipped is a Jack takes the pile",
        summary="summary.last_card_jack",
    ),
    RuleSpec(
        "penalty",
        "choice",
        "rules.penalty",
        "a false slapper's card goes face-up under the pile, or face-down to the last flipper",
        options=(
            RuleOption("burn", "rules.penalty.burn", summary="summary.burn"),
            RuleOption("give", "rules.penalty.give", summary="summary.give"),
        ),
    ),
    RuleSpec(
        "freeze_seconds",
        "number",
        "rules.freeze_seconds",
        "how long a false slapper may not flip or slap",
        options=(RuleOption(0, "rules.none"), *_seconds(1, 1.5, 3)),
        minimum=0,
        maximum=10,
        summary="summary.freeze",
    ),
    RuleSpec(
        "empty_deck",
        "choice",
        "rules.empty_deck",
        "out at once with no cards, or one last chance to slap back in",
        options=(
            RuleOption("out", "rules.empty_deck.out"),
            RuleOption(
                "last_chance", "rules.empty_deck.last_chance", summary="summary.last_chance"
            ),
        ),
    ),
    RuleSpec(
        "decks",
        "number",
        "rules.decks",
        "one deck of 52 cards, or two shuffled together",
        options=(
            RuleOption(1, "rules.decks.one"),
            RuleOption(2, "rules.decks.two", summary="summary.two_decks"),
        ),
        minimum=1,
        maximum=2,
        integer=True,
    ),
    RuleSpec(
        "time_limit",
        "number",
        "rules.time_limit",
        "seconds; then the first seat holding more cards than every other wins",
        options=(
            RuleOption(None, "rules.time_limit.none"),
            *(RuleOption(minutes * 60, "rules.minutes") for minutes in (1, 2, 5, 10)),
        ),
        minimum=10,
        maximum=3600,
        nullable=True,
        summary="summary.seconds",
        summary_minutes="summary.minutes",
    ),
    RuleSpec(
        "collect_seconds",
        "number",
        "rules.collect_seconds",
        "the collect pause: after a take nobody may flip for this long (the winner gathers the "
        "pile); a slap on the empty pile meanwhile is `late` for the pile just taken, never a "
        "false slap. `0` turns it off",
        options=(
            RuleOption(0, "rules.collect_seconds.none", summary="summary.no_collect"),
            *_seconds(0.5, 1, 2),
        ),
        minimum=0,
        maximum=MAX_COLLECT_SECONDS,
        summary="summary.collect",
        summary_default=False,
    ),
    RuleSpec(
        "trigger_timeout",
        "number",
        "rules.trigger_timeout",
        f"`0` or {MIN_TRIGGER_TIMEOUT:g}-{MAX_TRIGGER_TIMEOUT:g}: a trigger nobody slaps for this "
        "many seconds lapses (a `lapse` event) and flipping resumes; it stays slappable until "
        "covered. `0`: never (the table waits for a slap)",
        options=(
            RuleOption(0, "rules.trigger_timeout.none", summary="summary.no_lapse"),
            *_seconds(5, 8, 15),
        ),
        minimum=0,
        maximum=MAX_TRIGGER_TIMEOUT,
        summary="summary.lapse",
        summary_default=False,
    ),
    RuleSpec(
        "shuffle_taken",
        "flag",
        "rules.shuffle_taken",
        "the winner shuffles a taken pile before it goes under their deck (seeds 000, 003, "
        "004), so following the public flips does not predict the next ones",
        summary="summary.shuffle",
    ),
    RuleSpec(
        "after_take",
        "choice",
        "rules.after_take",
        "who flips first after a take: the winner, or the seat on the winner's left (the next "
        "seat still in; seed 003)",
        options=(
            RuleOption("winner", "rules.after_take.winner"),
            RuleOption(
                "left_of_winner",
                "rules.after_take.left_of_winner",
                summary="summary.left_of_winner",
            ),
        ),
    ),
    RuleSpec(
        "tie_window_ms",
        "number",
        "rules.tie_window_ms",
        f"`0` to {MAX_TIE_WINDOW_MS} ms: slaps reaching the server within this long of the first "
        "slap at a trigger are a genuine tie, and the seat next to flip among them (else the "
        "tied slapper nearest after it) takes the pile (seed 000); the room holds the first "
        "slap this long. `0`: off, the first slap wins",
        options=(
            RuleOption(0, "rules.tie_window_ms.none"),
            *(RuleOption(ms, "rules.milliseconds") for ms in (10, 25, 50)),
        ),
        minimum=0,
        maximum=MAX_TIE_WINDOW_MS,
        integer=True,
        help="rules.tie_window_ms.help",
        summary="summary.tie_window",
    ),
)
NULLABLE_RULES = frozenset(spec.name for spec in RULES_SCHEMA if spec.nullable)
