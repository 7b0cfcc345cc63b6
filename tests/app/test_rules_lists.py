"""Every list of triggers and rules kept outside the rules schema (engine/rules.py
RULES_SCHEMA) is built from it or checked against it here, needing no server (`make check`):
the page's words for each rule and trigger in both catalogs, the docs' rules tables, and
each rule's doc naming each of its values. The form, the protocol and the page's copy of
the schema: tests/app/test_rules_schema.py."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from app.tables.table import Table
from app.web import i18n
from app.wire.rule_words import WORDS
from engine.rules import RULES_SCHEMA as ENGINE_SCHEMA
from engine.rules import TRIGGERS, Rules
from tools import docs_tables

ROOT = Path(__file__).resolve().parents[2]
ENGINE_RULES = [field.name for field in fields(Rules)]
# Every rule a room shows: the engine's and the room's own (lag_fair).
RULE_NAMES = list(Table("K7PQRX", Rules()).rules_shown())


def page_words_wanted() -> set[str]:
    """Every message id the rules need from messages.js: each rule's words (labels, hints,
    choices, summaries) and each trigger's (in a list, as one of them, and the table's call
    when it shows: static/js/rules.js, render.js)."""
    wanted: set[str | None] = {
        f"trigger.{name}.{form}" for name in TRIGGERS for form in ("many", "one")
    }
    wanted |= {f"call.{name}" for name in TRIGGERS}
    for words in WORDS.values():
        wanted |= {words.label, words.help, words.summary, words.summary_minutes}
        wanted |= {word for o in words.options for word in (o.label, o.help, o.summary)}
    return {word for word in wanted if word is not None}


def test_every_rule_and_trigger_has_the_pages_words_in_both_languages() -> None:
    source = (ROOT / "static" / "js" / "messages.js").read_text()
    ids = {key for _, key, _, _ in i18n.js_messages(source)}
    wanted = page_words_wanted()
    assert {f"trigger.{name}.one" for name in TRIGGERS} <= wanted
    assert sorted(wanted - ids) == [], "add them to static/js/messages.js, then `make messages`"
    for lang in ("en", "ms"):
        missing = sorted(wanted - set(i18n.page_messages(lang)))
        assert missing == [], f"`make messages`, then translate them in {lang}'s .po"


def test_the_docs_rules_tables_are_the_built_ones() -> None:
    for doc, table in (
        ("protocol.md", docs_tables.docs_table()),
        ("engine.md", docs_tables.engine_table()),
    ):
        text = (ROOT / "docs" / doc).read_text()
        assert table in text, f"docs/{doc}: run `python -m tools.docs_tables`"
    protocol = docs_tables.docs_table()
    assert {name for name in RULE_NAMES if f"| `{name}` |" in protocol} == set(RULE_NAMES)
    engine = docs_tables.engine_table()
    assert {name for name in ENGINE_RULES if f"| `{name}` |" in engine} == set(ENGINE_RULES)


@pytest.mark.parametrize("rule", ENGINE_SCHEMA, ids=lambda rule: rule.name)
def test_each_rule_says_what_each_of_its_choices_does(rule: Any) -> None:
    """The docs' tables say it from the schema: a new trigger or choice has its line."""
    assert [c for c in rule.choices if f"`{json.dumps(c)}`" not in rule.doc] == []
