"""The one rules schema (engine/rules.py RULES_SCHEMA, and the room's own rules in
app/wire/rules_schema.py, with their words in app/wire/rule_words.py) drives the house-rules
form, the page's rules summary, the protocol's RulesUpdate and docs/protocol.md's rules table:
every field of engine.Rules (and every rule the room shows) appears in each, and nothing is
added by hand."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_harness import Server

from app.tables.table import Table
from app.wire import rules_schema
from app.wire.protocol import CreateRoom, RulesUpdate
from app.wire.rule_words import WORDS
from engine.rules import RULES_SCHEMA as ENGINE_SCHEMA
from engine.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
RULES_SCHEMA = rules_schema.SCHEMA
ENGINE_RULES = [field.name for field in fields(Rules)]
# Every rule a room shows: the engine's and the room's own (lag_fair).
RULE_NAMES = list(Table("K7PQRX", Rules()).rules_shown())


def test_every_rule_is_described_once() -> None:
    names = [spec.name for spec in RULES_SCHEMA]
    assert set(ENGINE_RULES) < set(RULE_NAMES)
    assert sorted(names) == sorted(RULE_NAMES)
    assert len(set(names)) == len(names)


def test_every_rule_has_words_and_only_the_rules_do() -> None:
    assert set(WORDS) == set(RULE_NAMES)


@pytest.mark.parametrize("rule", ENGINE_SCHEMA, ids=lambda rule: rule.name)
def test_the_form_offers_every_value_of_a_set_or_a_choice(rule: Any) -> None:
    offered = [option.value for option in WORDS[rule.name].options]
    if rule.kind in ("set", "choice"):
        assert sorted(offered) == sorted(rule.choices)
    else:
        assert rule.choices == ()


@pytest.mark.parametrize("spec", RULES_SCHEMA, ids=lambda spec: spec.name)
def test_every_offered_value_is_a_rule_the_engine_takes(spec: rules_schema.RuleSpec) -> None:
    if spec.name not in ENGINE_RULES:  # a room's own rule: the Table takes it
        assert spec.kind == "flag"
        return
    for option in spec.options:
        value = [option.value] if spec.kind == "set" else option.value
        assert Rules.from_dict({spec.name: value}).to_dict()[spec.name] == value
    if spec.kind == "number":
        assert spec.minimum is not None and spec.maximum is not None
        for bound in (spec.minimum, spec.maximum):
            Rules.from_dict({spec.name: int(bound) if spec.integer else float(bound)})
        offered = [option.value for option in spec.options if option.value is not None]
        zero_means_none = spec.minimum > 0 and not spec.nullable
        assert all(spec.minimum <= value <= spec.maximum for value in offered) or zero_means_none
    if spec.kind in ("set", "choice"):
        assert len(spec.options) >= 2


def form_fields(html: str) -> dict[str, set[str]]:
    """name -> the values the form offers for it (a checkbox without value: {"on"})."""
    offered: dict[str, set[str]] = {}
    for tag in re.findall(r"<input [^>]*type=\"checkbox\"[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        assert name is not None
        offered.setdefault(name.group(1), set()).add(value.group(1) if value else "on")
    for name, body in re.findall(r'<select name="([^"]+)">(.*?)</select>', html, flags=re.S):
        offered[name] = set(re.findall(r'<option value="([^"]*)"', body))
    return offered


async def test_the_form_has_every_rule_with_its_default(server: Server) -> None:
    code = await server.new_room()
    async with httpx.AsyncClient(base_url=server.url) as http:
        for path in ["/", f"/r/{code}"]:
            html = (await http.get(path)).text
            form = html[html.index('<details class="house-rules">') :]
            form = form[: form.index("</details>")]
            offered = form_fields(form)
            assert set(offered) == set(RULE_NAMES), path
            defaults = Rules().to_dict()
            for spec in RULES_SCHEMA:
                if spec.kind == "flag":
                    continue
                values = {rules_schema.form_value(option.value) for option in spec.options}
                assert offered[spec.name] == values, spec.name
                chosen = defaults[spec.name] if spec.kind == "set" else [defaults[spec.name]]
                for value in chosen:
                    text = rules_schema.form_value(value)
                    marked = "checked" if spec.kind == "set" else "selected"
                    assert re.search(rf'value="{re.escape(text)}"( [a-z]+)? {marked}', form), (
                        spec.name
                    )
            # Whole minutes read as such ("1 minute", never "1.0 minutes").
            assert ">1 minute<" in form and ">10 minutes<" in form, path
            # Each field has words: the label's message, not its id.
            assert "rules." not in unescape(re.sub(r'name="[^"]*"', "", form)), path


async def test_the_page_gets_the_schema_its_summary_reads(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        html = (await http.get("/")).text
    block = re.search(r'<script type="application/json" id="rules-schema">(.*?)</script>', html)
    assert block is not None
    schema = json.loads(block.group(1))
    assert [spec["name"] for spec in schema] == [spec.name for spec in RULES_SCHEMA]
    for spec in schema:  # the summary has words for every rule (tests/js/format.test.js)
        has_words = spec["summary"] or any(option["summary"] for option in spec["options"])
        assert has_words, spec["name"]
    # The JS unit tests read a copy of it: it must be this one.
    copy = json.loads((ROOT / "tests" / "js" / "rules-schema.json").read_text())
    assert copy == schema, "run `python -m tools.docs_tables` (it rewrites the copy)"


def test_the_protocol_takes_exactly_the_rules() -> None:
    assert set(RulesUpdate.model_fields) == set(RULE_NAMES)
    for spec in RULES_SCHEMA:
        if spec.kind != "number":
            continue
        assert spec.minimum is not None and spec.maximum is not None
        below, above = spec.minimum - 1, spec.maximum + 1
        for wrong in (below, above):
            value = int(wrong) if spec.integer else float(wrong)
            with pytest.raises(ValueError):
                RulesUpdate.model_validate({spec.name: value})
    assert CreateRoom.model_validate({"rules": {"decks": 2}}).rules is not None


async def test_the_form_offers_who_flips_after_a_take_and_the_tie_window_in_both_languages(
    server: Server,
) -> None:
    words = {
        "en": ["the player on the winner's left", ">25 ms<", "the tied player next to flip"],
        "ms": ["pemain di sebelah kiri pemenang", ">25 ms<", "pemain seri yang giliran"],
    }
    async with httpx.AsyncClient(base_url=server.url) as http:
        for lang, expected in words.items():
            html = unescape((await http.get("/", headers={"Accept-Language": lang})).text)
            form = html[html.index('<details class="house-rules">') :]
            form = form[: form.index("</details>")]
            for text in expected:
                assert text in form, (lang, text)
            offered = form_fields(form)
            assert offered["after_take"] == {"winner", "left_of_winner"}
            assert offered["tie_window_ms"] == {"0", "10", "25", "50"}


def test_the_protocol_takes_the_tie_window_in_whole_ms_and_after_take_by_name() -> None:
    update = RulesUpdate.model_validate({"after_take": "left_of_winner", "tie_window_ms": 50})
    assert (update.after_take, update.tie_window_ms) == ("left_of_winner", 50)
    for wrong in ({"tie_window_ms": 10.5}, {"tie_window_ms": 51}, {"after_take": "left"}):
        with pytest.raises(ValueError):
            RulesUpdate.model_validate(wrong)
