"""The house rules as the app shows and takes them, all built from one schema (the engine's
RULES_SCHEMA and the room's own ROOM_RULES, with their words): the form's fields
(templates/_rules.html), the page's copy of the schema for its rules summary and form code
(static/js/rules.js) and the protocol's RulesUpdate fields. docs/protocol.md's rules table is
built from it too, by `python -m tools.docs_tables`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictInt

from app.wire.errors import ErrorCode, ProtocolError
from app.wire.rule_words import WORDS, RuleOption, RuleWords
from engine.rules import NULLABLE_RULES, RULES_SCHEMA, RuleKind, Rules
from engine.rules import RuleSpec as Rule

__all__ = [
    "SCHEMA",
    "RuleSpec",
    "form_rules",
    "merged_rules",
    "page_schema",
    "update_fields",
]


@dataclass(frozen=True)
class RuleSpec:
    """A house rule as the app shows and takes it: the engine's description of it (or the
    room's own: `ROOM_RULES`) with its words (app/wire/rule_words.py)."""

    name: str
    kind: RuleKind
    doc: str
    default: Any
    choices: tuple[Any, ...]  # a set's or a choice's values, in the engine's order
    label: str
    options: tuple[RuleOption, ...]
    minimum: float | None
    maximum: float | None
    integer: bool
    nullable: bool
    help: str | None
    summary: str | None
    summary_minutes: str | None
    summary_default: bool

    @classmethod
    def of(cls, rule: Rule, words: RuleWords, default: Any) -> RuleSpec:
        return cls(
            rule.name,
            rule.kind,
            rule.doc,
            default,
            rule.choices,
            words.label,
            words.options,
            rule.minimum,
            rule.maximum,
            rule.integer,
            rule.nullable,
            words.help,
            words.summary,
            words.summary_minutes,
            words.summary_default,
        )

    @property
    def values(self) -> tuple[Any, ...]:
        """The values the form offers, in its order."""
        return tuple(option.value for option in self.options)


# The room's own house rules (app/tables/table.py keeps them beside the engine's Rules),
# described as the engine's are, with their defaults.
ROOM_RULES: tuple[tuple[Rule, Any], ...] = (
    (
        Rule(
            "lag_fair",
            "flag",
            "[lag-fair judging](#lag-fair-judging): a slap counts at its arrival minus the "
            "slapper's measured round trip (at most `SLAPJACK_LAG_CAP_MS`). The room's rule, "
            "not the engine's: it is not in `docs/engine.md`'s `Rules`",
        ),
        False,
    ),
    (
        Rule(
            "false_starts",
            "flag",
            "[false starts](#false-starts): a person's slap that comes sooner after the trigger "
            "reached them than `SLAPJACK_FALSE_START_MS` takes nothing. Off only for tables of "
            "test scripts. The room's rule, not the engine's",
        ),
        True,
    ),
)
# Every house rule a room has, in the form's order.
SCHEMA: tuple[RuleSpec, ...] = tuple(
    RuleSpec.of(rule, WORDS[rule.name], default)
    for rule, default in [*((rule, rule.default) for rule in RULES_SCHEMA), *ROOM_RULES]
)

SECONDS_PER_MINUTE = 60


def number_text(value: float) -> str:
    """1 -> "1", 1.5 -> "1.5", 60.0 -> "60": as the page writes a number too."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def form_value(value: Any) -> str:
    """An option's value in the form (and as the page reads it back): null is ""."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return number_text(value)


def option_params(value: Any) -> dict[str, Any]:
    """What an option's label may name: {seconds}, {minutes}, {count} (of minutes), or
    {number}, the value as written, for a rule in another unit ("{number} ms")."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return {}
    minutes = value / SECONDS_PER_MINUTE
    count = int(minutes) if float(minutes).is_integer() else minutes  # "1 minute", not "1.0"
    text = number_text(value)
    return {"seconds": text, "minutes": number_text(minutes), "count": count, "number": text}


def _option(spec: RuleSpec, option: RuleOption) -> dict[str, Any]:
    default = spec.default
    chosen = option.value in default if spec.kind == "set" else option.value == default
    return {
        "value": option.value,
        "form_value": form_value(option.value),
        "label": option.label,
        "help": option.help,
        "params": option_params(option.value),
        "chosen": chosen,
    }


def form_rules() -> list[dict[str, Any]]:
    """The house-rules form's fields, in the schema's order (templates/_rules.html)."""
    return [
        {
            "name": spec.name,
            "kind": spec.kind,
            "label": spec.label,
            "help": spec.help,
            "default": spec.default,
            "options": [_option(spec, option) for option in spec.options],
        }
        for spec in SCHEMA
    ]


def page_schema() -> list[dict[str, Any]]:
    """The schema as the page's scripts read it (a <script type="application/json">)."""
    return [
        {
            "name": spec.name,
            "kind": spec.kind,
            "default": spec.default,
            "choices": list(spec.choices),
            "nullable": spec.nullable,
            "integer": spec.integer,
            "summary": spec.summary,
            "summary_minutes": spec.summary_minutes,
            "summary_default": spec.summary_default,
            "options": [
                {"value": option.value, "label": option.label, "summary": option.summary}
                for option in spec.options
            ],
        }
        for spec in SCHEMA
    ]


def page_schema_json() -> str:
    text = json.dumps(page_schema(), separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def merged_rules(rules: Rules, changes: dict[str, Any]) -> Rules:
    """`rules` with the fields a client sent; only a nullable rule (`time_limit`: no limit)
    may be null."""
    if any(value is None for key, value in changes.items() if key not in NULLABLE_RULES):
        raise ProtocolError(ErrorCode.BAD_REQUEST, "only time_limit may be null")
    try:
        return Rules.from_dict({**rules.to_dict(), **changes})
    except ValueError as exc:
        raise ProtocolError(ErrorCode.BAD_RULES, str(exc)[:200]) from None


def one_of(values: tuple[Any, ...]) -> Any:
    """Literal["burn", "give"] from a tuple known only at run time."""
    return Literal.__getitem__(values)


def update_field(spec: RuleSpec) -> Any:
    """The pydantic type of one field of the protocol's RulesUpdate (every field optional)."""
    annotation: Any
    if spec.kind == "set":
        item = one_of(spec.values)
        # An empty list passes here so the engine refuses it as bad_rules, in its own words.
        annotation = Annotated[list.__class_getitem__(item), Field(max_length=len(spec.options))]
    elif spec.kind == "flag":
        annotation = StrictBool
    elif spec.kind == "choice":
        annotation = one_of(spec.values)
    else:
        number: Any = StrictInt if spec.integer else float
        bounds = Field(ge=spec.minimum, le=spec.maximum, allow_inf_nan=False)
        annotation = Annotated[number, bounds]
    return (annotation | None, None)


def update_fields() -> dict[str, Any]:
    return {spec.name: update_field(spec) for spec in SCHEMA}
