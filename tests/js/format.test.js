// Words and numbers as the page writes them: cards, triggers, house rules, countdowns.
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardLabel, cardName, parseCard } from "../../static/js/cards.js";
import { seconds } from "../../static/js/freeze.js";
import { readFileSync } from "node:fs";

import { watchersText } from "../../static/js/panels.js";
import { rulesSummary, triggerWords } from "../../static/js/rules.js";

// The page's copy of engine/rules.py's RULES_SCHEMA (tests/app/test_rules_schema.py keeps
// this file equal to what the server hands the page).
const SCHEMA = JSON.parse(readFileSync(new URL("./rules-schema.json", import.meta.url), "utf8"));

test("cards read as people say them", () => {
  assert.equal(cardLabel("10h"), "10♥");
  assert.equal(cardName("JS"), "Jack of spades");
  assert.equal(cardName("AD"), "Ace of diamonds");
  assert.equal(parseCard("9X").symbol, "?");
});

test("triggers in the server's order, as a list or as one of them", () => {
  assert.equal(triggerWords(["double", "jack"], "many", SCHEMA), "Jacks, doubles");
  assert.equal(triggerWords(["double", "jack"], "one", SCHEMA), "a Jack or a double");
  assert.equal(triggerWords(["sandwich", "face", "jack"], "one", SCHEMA), "a Jack, a face card or a sandwich");
  assert.equal(triggerWords(["no_such_trigger"], "one", SCHEMA), "no_such_trigger"); // no words for it
  assert.equal(triggerWords(undefined), "");
});

test("the house rules in one line", () => {
  const rules = { triggers: ["jack"], penalty: "burn", freeze_seconds: 1.5, decks: 1, empty_deck: "out", last_card_jack: false, time_limit: null };
  assert.equal(rulesSummary(rules, SCHEMA), "Slap Jacks · wrong slap burns a card · 1.5 s freeze");
  const house = { ...rules, penalty: "give", freeze_seconds: 0, decks: 2, empty_deck: "last_chance", last_card_jack: true, time_limit: 600 };
  assert.equal(
    rulesSummary(house, SCHEMA),
    "Slap Jacks · a last-card Jack takes the pile · wrong slap gives a card · last chance when empty · 2 decks · 10 min limit",
  );
  assert.equal(rulesSummary({ ...rules, time_limit: 90 }, SCHEMA).endsWith("90 s limit"), true);
  assert.equal(rulesSummary(null, SCHEMA), "");
  // A flag is said when it is not its default: lag-fair judging on, the false-start check off.
  assert.equal(rulesSummary({ ...rules, lag_fair: true, false_starts: true }, SCHEMA).endsWith("lag-fair judging"), true);
  assert.equal(rulesSummary({ ...rules, lag_fair: false, false_starts: false }, SCHEMA).endsWith("no false-start check"), true);
  // Every rule of the schema says something for some value: none is silently left out.
  for (const spec of SCHEMA) {
    const values = spec.kind === "flag" ? [true, false] : spec.kind === "set" ? [[spec.options[0].value]] : [...spec.options.map((option) => option.value), 90];
    const said = values.map((value) => rulesSummary({ [spec.name]: value }, [{ ...spec, summary_default: true }]));
    assert.ok(said.some(Boolean), `${spec.name} never shows in the summary`);
  }
});

test("freeze countdowns in tenths of a second, never below zero", () => {
  assert.equal(seconds(1500), "1.5");
  assert.equal(seconds(49), "0.0");
  assert.equal(seconds(-20), "0.0");
});

test("watchers: up to four names, then how many more", () => {
  const state = (names) => ({ you: { player: "me" }, spectators: names.map((name, i) => ({ player: `p${i}`, name })) });
  assert.equal(watchersText(state([])), "");
  assert.equal(watchersText(state(["Ana", "Bo"])), "Watching: Ana, Bo");
  assert.equal(watchersText(state(["A", "B", "C", "D", "E", "F"])), "Watching: A, B, C, D and 2 more");
});
