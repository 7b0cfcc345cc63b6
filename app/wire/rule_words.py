"""The words the house-rules form and the rules summary show for each rule: message ids
(static/js/messages.js, translated in app/locale), never the words themselves.

The engine describes each rule once (engine/rules.py `RULES_SCHEMA`: kind, values, bounds);
here each rule, the room's own too, gets its label, its hints, the choices the form offers
and what the summary says. app/wire/rules_schema.py puts the two together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
class RuleWords:
    label: str  # message id of the form's label
    options: tuple[RuleOption, ...] = ()
    help: str | None = None  # message id of a short hint beside the label
    # The summary's words for a value no option speaks for (a number: {seconds} or {number}, or
    # {minutes} through summary_minutes when it is whole minutes; a set: {triggers}; a
    # flag: when it is not its default, on or off). A value equal to the default is left out
    # unless summary_default.
    summary: str | None = None
    summary_minutes: str | None = None
    summary_default: bool = True


def _seconds(*values: float) -> tuple[RuleOption, ...]:
    return tuple(RuleOption(value, "rules.seconds") for value in values)


# Every house rule's words, by the rule's name, in no order of their own (the schema's is
# the form's).
WORDS: dict[str, RuleWords] = {
    "triggers": RuleWords(
        "rules.triggers",
        options=(
            RuleOption("jack", "rules.triggers.jack", "rules.triggers.jack.help"),
            RuleOption("double", "rules.triggers.double", "rules.triggers.double.help"),
            RuleOption("sandwich", "rules.triggers.sandwich", "rules.triggers.sandwich.help"),
            RuleOption("face", "rules.triggers.face", "rules.triggers.face.help"),
        ),
        summary="summary.slap",
    ),
    "last_card_jack": RuleWords("rules.last_card_jack", summary="summary.last_card_jack"),
    "penalty": RuleWords(
        "rules.penalty",
        options=(
            RuleOption("burn", "rules.penalty.burn", summary="summary.burn"),
            RuleOption("give", "rules.penalty.give", summary="summary.give"),
        ),
    ),
    "freeze_seconds": RuleWords(
        "rules.freeze_seconds",
        options=(RuleOption(0, "rules.none"), *_seconds(1, 1.5, 3)),
        summary="summary.freeze",
    ),
    "empty_deck": RuleWords(
        "rules.empty_deck",
        options=(
            RuleOption("out", "rules.empty_deck.out"),
            RuleOption(
                "last_chance", "rules.empty_deck.last_chance", summary="summary.last_chance"
            ),
        ),
    ),
    "decks": RuleWords(
        "rules.decks",
        options=(
            RuleOption(1, "rules.decks.one"),
            RuleOption(2, "rules.decks.two", summary="summary.two_decks"),
        ),
    ),
    "time_limit": RuleWords(
        "rules.time_limit",
        options=(
            RuleOption(None, "rules.time_limit.none"),
            *(RuleOption(minutes * 60, "rules.minutes") for minutes in (1, 2, 5, 10)),
        ),
        summary="summary.seconds",
        summary_minutes="summary.minutes",
    ),
    "collect_seconds": RuleWords(
        "rules.collect_seconds",
        options=(
            RuleOption(0, "rules.collect_seconds.none", summary="summary.no_collect"),
            *_seconds(0.5, 1, 2),
        ),
        summary="summary.collect",
        summary_default=False,
    ),
    "trigger_timeout": RuleWords(
        "rules.trigger_timeout",
        options=(
            RuleOption(0, "rules.trigger_timeout.none", summary="summary.no_lapse"),
            *_seconds(5, 8, 15),
        ),
        summary="summary.lapse",
        summary_default=False,
    ),
    "shuffle_taken": RuleWords("rules.shuffle_taken", summary="summary.shuffle"),
    "after_take": RuleWords(
        "rules.after_take",
        options=(
            RuleOption("winner", "rules.after_take.winner"),
            RuleOption(
                "left_of_winner",
                "rules.after_take.left_of_winner",
                summary="summary.left_of_winner",
            ),
        ),
    ),
    "tie_window_ms": RuleWords(
        "rules.tie_window_ms",
        options=(
            RuleOption(0, "rules.tie_window_ms.none"),
            *(RuleOption(ms, "rules.milliseconds") for ms in (10, 25, 50)),
        ),
        help="rules.tie_window_ms.help",
        summary="summary.tie_window",
    ),
    # The room's own rule (app/wire/rules_schema.py ROOM_RULES).
    "lag_fair": RuleWords("rules.lag_fair", help="rules.lag_fair.help", summary="summary.lag_fair"),
    "false_starts": RuleWords(
        "rules.false_starts", help="rules.false_starts.help", summary="summary.no_false_starts"
    ),
}
