"""The rules tables of docs/protocol.md (every rule a room has) and docs/engine.md (the
engine's `Rules`), and the JS tests' copy of the page's rules schema
(tests/js/rules-schema.json), all built from the one rules schema (engine/rules.py
RULES_SCHEMA, with the room's own rules in app/wire/rules_schema.py):

    .venv/bin/python -m tools.rules_docs

tests/app/test_rules_schema.py fails while any of them is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from app.wire import rules_schema
from app.wire.rules_schema import number_text
from engine.rules import RULES_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "protocol.md"
ENGINE_DOC = ROOT / "docs" / "engine.md"
TABLE_START = "<!-- rules table: built by `python -m tools.rules_docs` from engine/rules.py -->"
TABLE_END = "<!-- end of the rules table -->"


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
    """docs/protocol.md's rules table: one row per field of engine.Rules."""
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


def rewrite_docs(doc: Path = DOC, table: str | None = None) -> bool:
    """Puts the built table between the markers; True when the file changed."""
    text = doc.read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    new = text[:start] + (docs_table() if table is None else table) + text[end:]
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
    done = [
        (DOC, rewrite_docs()),
        (ENGINE_DOC, rewrite_docs(ENGINE_DOC, engine_table())),
        (JS_TESTS_COPY, rewrite_js_tests_copy()),
    ]
    for path, changed in done:
        print(f"{path}: {'rewritten' if changed else 'already up to date'}", file=sys.stderr)


if __name__ == "__main__":
    main()
