"""The docs' tables that are built from code, and the JS tests' copy of the page's rules
schema: the rules tables of docs/protocol.md (every rule a room has) and docs/engine.md (the
engine's `Rules`), from the one rules schema (engine/rules.py RULES_SCHEMA, with the room's
own rules in app/wire/rules_schema.py); docs/protocol.md's table of a seat's stats, from the
wire's model of them (app/wire/protocol.py SeatStats); tests/js/rules-schema.json.

    .venv/bin/python -m tools.docs_tables

tests/app/test_rules_lists.py, test_rules_schema.py and test_protocol_doc.py fail while any
is stale.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from app.wire import rules_schema
from app.wire.protocol import SeatStats
from app.wire.rules_schema import number_text
from engine.rules import RULES_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "protocol.md"
ENGINE_DOC = ROOT / "docs" / "engine.md"
TABLE_START = "<!-- rules table: built by `python -m tools.docs_tables` from engine/rules.py -->"
TABLE_END = "<!-- end of the rules table -->"
STATS_START = (
    "<!-- stats table: built by `python -m tools.docs_tables` from app/wire/protocol.py -->"
)
STATS_END = "<!-- end of the stats table -->"


def _json(value: Any) -> str:
    return json.dumps(value)


def _type_text(spec: rules_schema.RuleSpec) -> str:
    if spec.kind == "set":
        names = ", ".join(f"`{_json(value)}`" for value in spec.choices)
        return f"list of {names} (at least one)"
    if spec.kind == "flag":
        return "bool"
    if spec.kind == "choice":
        return " \\| ".join(f"`{_json(value)}`" for value in spec.choices)
    assert spec.minimum is not None and spec.maximum is not None
    kind = "integer" if spec.integer else "number"
    text = f"{kind} {number_text(spec.minimum)}-{number_text(spec.maximum)}"
    return f"{text} \\| null" if spec.nullable else text


def docs_table() -> str:
    """docs/protocol.md's rules table: one row per rule a room has."""
    rows = [TABLE_START, "| field | type | default | |", "| --- | --- | --- | --- |"]
    for spec in rules_schema.SCHEMA:
        default = f"`{_json(spec.default)}`"
        rows.append(f"| `{spec.name}` | {_type_text(spec)} | {default} | {spec.doc} |")
    rows.append(TABLE_END)
    return "\n".join(rows)


def _python_text(value: Any) -> str:
    """A default as Python writes it in docs/engine.md: {"jack"}, "burn", 1.5, None, False."""
    if isinstance(value, list):
        return "{" + ", ".join(_json(item) for item in value) + "}"
    return _json(value) if isinstance(value, str) else repr(value)


def engine_table() -> str:
    """docs/engine.md's rules table: one row per field of engine.Rules, in the schema's order."""
    rows = [TABLE_START, "| field | default | meaning |", "| --- | --- | --- |"]
    for rule in RULES_SCHEMA:
        rows.append(f"| `{rule.name}` | `{_python_text(rule.default)}` | {rule.doc} |")
    rows.append(TABLE_END)
    return "\n".join(rows)


WIRE_TYPES = {int: "integer", float: "number", str: "text", bool: "bool"}


def _wire_type(annotation: Any, metadata: list[Any]) -> str:
    """int | None with ge=0 -> "integer >= 0 \\| null"."""
    args = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else ()
    kinds = [a for a in args if a is not type(None)] if args else [annotation]
    text = " \\| ".join(WIRE_TYPES[kind] for kind in kinds)
    text += "".join(f" >= {item.ge}" for item in metadata if getattr(item, "ge", None) is not None)
    return f"{text} \\| null" if type(None) in args else text


def stats_table() -> str:
    """docs/protocol.md's table of a seat's stats: one row per field of SeatStats."""
    rows = [STATS_START, "| field | type | |", "| --- | --- | --- |"]
    for name, field in SeatStats.model_fields.items():
        kind = _wire_type(field.annotation, field.metadata)
        rows.append(f"| `{name}` | {kind} | {field.description} |")
    rows.append(STATS_END)
    return "\n".join(rows)


# Each table built into a doc: (the doc, its start marker, its end marker, the builder).
TABLES = (
    (DOC, TABLE_START, TABLE_END, docs_table),
    (ENGINE_DOC, TABLE_START, TABLE_END, engine_table),
    (DOC, STATS_START, STATS_END, stats_table),
)


def rewrite(doc: Path, start_marker: str, end_marker: str, table: str) -> bool:
    """Puts the built table between the markers; True when the file changed."""
    text = doc.read_text()
    start, end = text.index(start_marker), text.index(end_marker) + len(end_marker)
    new = text[:start] + table + text[end:]
    if new != text:
        doc.write_text(new)
    return new != text


JS_TESTS_COPY = ROOT / "tests" / "js" / "rules-schema.json"


def rewrite_js_tests_copy(path: Path = JS_TESTS_COPY) -> bool:
    """The page's schema as tests/js reads it (node has no server to ask)."""
    text = json.dumps(rules_schema.page_schema(), indent=1) + "\n"
    changed = not path.exists() or path.read_text() != text
    if changed:
        path.write_text(text)
    return changed


def main() -> None:
    done = [(doc, rewrite(doc, start, end, build())) for doc, start, end, build in TABLES]
    done.append((JS_TESTS_COPY, rewrite_js_tests_copy()))
    for path, changed in done:
        print(f"{path}: {'rewritten' if changed else 'already up to date'}", file=sys.stderr)


if __name__ == "__main__":
    main()
