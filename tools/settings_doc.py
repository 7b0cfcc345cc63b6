"""docs/settings.md, written from `Settings` itself: every field's variable, default, accepted
values and description. `python -m tools.settings_doc` rewrites the file;
tests/app/test_settings_doc.py fails when it is stale."""

from __future__ import annotations

import typing
from pathlib import Path

import annotated_types
from pydantic.fields import FieldInfo

from app.ops.config import Settings

DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"

HEADER = """\
# Settings

Every setting is an environment variable named `SLAPJACK_` and the field's name in capitals,
read once at start (`app/ops/config.py`). A value that is not accepted stops `python -m app`
at start with a line naming the variable and the problem. Lists are JSON:
`SLAPJACK_ALLOWED_HOSTS='["slap.example"]'`.

This file is generated from the `Settings` class: after changing a setting, run
`.venv/bin/python -m tools.settings_doc` (tests/app/test_settings_doc.py fails until you do).

| variable | default | accepts | what it does |
| --- | --- | --- | --- |
"""


def shown(value: object) -> str:
    """A default as it is written in the environment."""
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    if isinstance(value, (list, tuple)):
        return "`[" + ", ".join(str(item) for item in value) + "]`"
    if value == "":
        return "(empty)"
    return f"`{value}`"


def bounds(info: FieldInfo) -> str:
    """The field's bounds in words: ">= 1, <= 65535"."""
    words = []
    for rule in info.metadata:
        for name, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            limit = getattr(rule, name, None)
            if isinstance(rule, annotated_types.BaseMetadata) and limit is not None:
                words.append(f"{sign} {limit}")
    return ", ".join(words)


def accepts(info: FieldInfo) -> str:
    """What a value may be: its kind, then its bounds."""
    kind = info.annotation
    if kind is bool:
        text = "`true` or `false`"
    elif kind is int:
        text = "a whole number"
    elif kind is float:
        text = "a number"
    elif kind is str:
        text = "text"
    elif typing.get_origin(kind) is list:
        text = "a JSON list of texts"
    elif typing.get_origin(kind) is typing.Literal:
        text = " or ".join(f"`{choice}`" for choice in typing.get_args(kind))
    elif typing.get_origin(kind) is tuple:
        text = f"a JSON list of {len(typing.get_args(kind))} whole numbers"
    else:
        raise TypeError(f"no words for the kind {kind!r}: add them to tools/settings_doc.py")
    limits = bounds(info)
    return f"{text}, {limits}" if limits else text


def render() -> str:
    rows = []
    for name, info in Settings.model_fields.items():
        if not info.description:
            raise ValueError(f"Settings.{name} has no description: give its Field one")
        cells = (
            f"`SLAPJACK_{name.upper()}`",
            shown(info.get_default(call_default_factory=True)),
            accepts(info),
            info.description,
        )
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n")
    return HEADER + "".join(rows)


def main() -> None:
    DOC.write_text(render())
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
