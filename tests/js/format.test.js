// Words and numbers as the page writes them: cards, triggers, house rules, countdowns.
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardLabel, cardName, parseCard } from "../../static/js/cards.js";
import { seconds } from "../../static/js/freeze.js";
import { rulesSummary, watchersText } from "../../static/js/panels.js";
import { triggerWords } from "../../static/js/rules.js";

test("cards read as people say them", () => {
  assert.equal(cardLabel("10h"), "10♥");
  assert.equal(cardName("JS"), "Jack of spades");
  assert.equal(cardName("AD"), "Ace of diamonds");
  assert.equal(parseCard("9X").symbol, "?");
});

test("triggers in the server's order, as a list or as one of them", () => {
  assert.equal(triggerWords(["double", "jack"]), "Jacks, doubles");
  assert.equal(triggerWords(["double", "jack"], "one"), "a Jack or a double");
  assert.equal(triggerWords(["jack", "face", "sandwich"], "one"), "a Jack, a face card or a sandwich");
  assert.equal(triggerWords(["marriage"], "one"), "marriage"); // a trigger the page has no words for
  assert.equal(triggerWords(undefined), "");
});

test("the house rules in one line", () => {
  const rules = { triggers: ["jack"], penalty: "burn", freeze_seconds: 1.5, decks: 1, empty_deck: "out", last_card_jack: false, time_limit: null };
  assert.equal(rulesSummary(rules), "Slap Jacks · wrong slap burns a card · 1.5 s freeze");
  const house = { ...rules, penalty: "give", freeze_seconds: 0, decks: 2, empty_deck: "last_chance", last_card_jack: true, time_limit: 600 };
  assert.equal(
    rulesSummary(house),
    "Slap Jacks · wrong slap gives a card · 2 decks · last chance when empty · a last-card Jack takes the pile · 10 min limit",
  );
  assert.equal(rulesSummary({ ...rules, time_limit: 90 }).endsWith("90 s limit"), true);
  assert.equal(rulesSummary(null), "");
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
