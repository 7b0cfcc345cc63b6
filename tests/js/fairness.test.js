// Seen to be fair: the photo finish on every screen, "too late by", the nudge
// and the lapse, "Your turn" only when a flip would be taken, burned cards drawn apart.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { nudgeDue, raceNews, stateChanges, triggerKey } from "../../static/js/changes.js";
import { narrate } from "../../static/js/narration.js";
import { burnedOnTop } from "../../static/js/pile.js";
import { rulesSummary } from "../../static/js/rules.js";
import { canFlip, flipWait } from "../../static/js/state.js";
import { createViewState } from "../../static/js/store.js";

// The page's copy of the rules schema (kept true by tests/app/test_rules_schema.py).
const SCHEMA = JSON.parse(readFileSync(new URL("./rules-schema.json", import.meta.url), "utf8"));

// Ana in seat 0, Sam in seat 1, Priya in seat 2; `you` is seat `me`.
const table = (me, extra = {}) => ({
  phase: "playing",
  next: 1,
  you: { player: `p${me}`, seat: me, host: false },
  seats: [
    { player: "p0", name: "Ana", cards: 10, frozen_ms: 0 },
    { player: "p1", name: "Sam", cards: 10, frozen_ms: 0 },
    { player: "p2", name: "Priya", cards: 10, frozen_ms: 0 },
  ],
  pile: { id: 5, count: 0, top: [] },
  collect_ms: 0,
  rules: { triggers: ["jack"] },
  ...extra,
});
const won = (runners) => ({ race: { pile_id: 4, winner: 1, runners_up: runners } });

test("a take with a runner-up: every screen says who beat whom by how much", () => {
  const before = (me) => table(me, won([]));
  const after = (me) => table(me, won([{ seat: 2, behind_ms: 38 }]));
  assert.equal(raceNews(after(0), before(0)).text, "Sam beat Priya by 38 ms!");
  assert.equal(raceNews(after(1), before(1)).text, "You beat Priya by 38 ms!");
  assert.equal(raceNews(after(1), before(1)).tone, "good");
  assert.equal(raceNews(after(2), before(2)).text, "Sam beat you by 38 ms!");
  const effects = stateChanges(after(0), before(0));
  assert.deepEqual(effects.find(([kind]) => kind === "banner")[1].text, "Sam beat Priya by 38 ms!");
});

test("the photo finish is said once per pile, not for slower runners-up or on arrival", () => {
  const one = table(0, won([{ seat: 2, behind_ms: 38 }]));
  const two = table(0, won([{ seat: 2, behind_ms: 38 }, { seat: 0, behind_ms: 120 }]));
  assert.equal(raceNews(two, one), null);
  assert.equal(raceNews(one, null), null); // a page opened mid-game tells no old news
  assert.equal(raceNews(table(0, won([])), table(0)), null); // a take with nobody close
  const next = table(0, { race: { pile_id: 6, winner: 0, runners_up: [{ seat: 1, behind_ms: 5 }] } });
  assert.equal(raceNews(next, one).text, "You beat Sam by 5 ms!");
});

test("the slow one is told by how much: too late by 120 ms", () => {
  const late = { kind: "late", seat: 2, pile_id: 4, behind_ms: 120.4, winner: 1 };
  const effects = narrate(table(2), late, createViewState());
  assert.deepEqual(effects[0], ["banner", { text: "Too late by 120 ms! Sam was faster. No penalty.", tone: "", about: "" }]);
  assert.deepEqual(narrate(table(0), late, createViewState()), []); // only the slapper hears it
  const unknown = narrate(table(2), { kind: "late", seat: 2, pile_id: 1, behind_ms: null, winner: null }, createViewState());
  assert.equal(unknown[0][1].text, "Too late! No penalty.");
});

test("a trigger appearing asks for a nudge, due only while that trigger still shows unslapped", () => {
  const jack = table(0, { trigger: "jack", slap_open: true, pile: { id: 5, count: 3, top: ["2C", "5D", "JS"] } });
  const effects = stateChanges(jack, table(0));
  assert.deepEqual(effects.at(-1), ["nudge", "5:3"]);
  const key = triggerKey(jack);
  assert.equal(nudgeDue(jack, key), true);
  assert.equal(nudgeDue({ ...jack, trigger_lapsed: true }, key), false);
  assert.equal(nudgeDue(table(0, { pile: { id: 6, count: 0, top: [] } }), key), false); // taken
  assert.equal(nudgeDue({ ...jack, pile: { id: 5, count: 4, top: ["5D", "JS", "JH"] } }, key), false);
});

test("a lapse is told to everyone, naming the card", () => {
  const state = table(0, { trigger: "jack", slap_open: true, trigger_lapsed: true, pile: { id: 5, count: 2, top: ["5D", "JS"] } });
  const effects = narrate(state, { kind: "lapse", trigger: "jack", pile_id: 5 }, createViewState());
  assert.equal(effects[0][1].text, "Nobody slapped the Jack of spades: flipping goes on");
});

test("the deck says your turn only when the server would take the flip", () => {
  const mine = (extra) => table(1, extra);
  assert.equal(canFlip(mine()), true);
  assert.equal(flipWait(mine({ collect_ms: 400 })), "collect");
  assert.equal(canFlip(mine({ collect_ms: 400 })), false);
  const frozen = mine();
  frozen.seats[1] = { ...frozen.seats[1], frozen_ms: 900 };
  assert.equal(flipWait(frozen), "frozen");
  assert.equal(canFlip(frozen), false);
  assert.equal(flipWait(mine({ trigger: "jack", slap_open: true })), "trigger");
  assert.equal(canFlip(mine({ trigger: "jack", slap_open: true, trigger_lapsed: true })), true);
  assert.equal(canFlip(table(0)), false); // Sam's turn
});

test("burned cards are the bottom of the pile: drawn apart only while they show", () => {
  assert.equal(burnedOnTop({ id: 5, count: 1, burned: 1 }, ["JS"]), 1);
  assert.equal(burnedOnTop({ id: 5, count: 3, burned: 1 }, ["JS", "2C", "4H"]), 1);
  assert.equal(burnedOnTop({ id: 5, count: 4, burned: 1 }, ["2C", "4H", "9D"]), 0); // covered
  assert.equal(burnedOnTop({ id: 5, count: 3, burned: 2 }, ["JS", "QH", "4H"]), 2);
  assert.equal(burnedOnTop({ id: 6, count: 1, burned: 0 }, ["4H"]), 0); // none under this one
  assert.equal(burnedOnTop({ id: 6, count: 1 }, ["4H"]), 0); // a server that does not say
});

test("a burned card that makes a trigger is drawn in the fan, like the trigger it is", () => {
  // a Jack burned onto the empty pile: the pile's only card, and a trigger
  assert.equal(burnedOnTop({ id: 5, count: 1, burned: 1 }, ["JS"], "jack"), 0);
  assert.equal(burnedOnTop({ id: 5, count: 1, burned: 1 }, ["JS"], null), 1);
  // a burned 5 under a flipped 5 (the double house rule)
  assert.equal(burnedOnTop({ id: 5, count: 2, burned: 1 }, ["5S", "5H"], "double"), 0);
  assert.equal(burnedOnTop({ id: 5, count: 2, burned: 1 }, ["5S", "6H"]), 1);
});

test("the rules summary names the new house rules when they differ from the default", () => {
  const base = { triggers: ["jack"], penalty: "burn", freeze_seconds: 1.5, decks: 1 };
  assert.equal(rulesSummary({ ...base, collect_seconds: 1, trigger_timeout: 8 }, SCHEMA), "Slap Jacks · wrong slap burns a card · 1.5 s freeze");
  const all = rulesSummary({ ...base, collect_seconds: 2, trigger_timeout: 0, shuffle_taken: true }, SCHEMA);
  assert.equal(all, "Slap Jacks · wrong slap burns a card · 1.5 s freeze · 2 s to collect a pile · the table waits for every slap · won piles are shuffled");
});

test("a photo finish the tie rule decided says why the pile went where it did", () => {
  // Seat 1 (Sam) was next to flip and tied with Priya.
  const tied = (me, winner = 1, tie = 1, loser = 2) =>
    table(me, { race: { pile_id: 4, winner, runners_up: [{ seat: loser, behind_ms: 0 }], tie } });
  const before = (me) => table(me, won([]));
  assert.equal(raceNews(tied(0), before(0)).text, "Sam and Priya tied: Sam was next to flip!");
  assert.equal(raceNews(tied(1), before(1)).text, "You and Priya tied: you were next to flip!");
  assert.equal(raceNews(tied(1), before(1)).tone, "good");
  assert.equal(raceNews(tied(2), before(2)).text, "Sam and you tied: Sam was next to flip!");
  // Ana was next to flip but did not slap: Priya sits nearest after her among the tied.
  const after = raceNews(tied(1, 2, 0, 1), before(1));
  assert.equal(after.text, "Priya and you tied: Priya sits nearest after Ana, who was next to flip!");
  assert.equal(raceNews(tied(2, 2, 0, 1), before(2)).text, "You and Sam tied: you sit nearest after Ana, who was next to flip!");
});

test("the tied slapper who lost is told it was a tie, not by how many ms", () => {
  const late = { kind: "late", seat: 2, pile_id: 4, behind_ms: 0, winner: 1, tie: 1 };
  const effects = narrate(table(2), late, createViewState());
  assert.deepEqual(effects[0], ["banner", { text: "A tie with Sam, and Sam was next to flip. No penalty.", tone: "", about: "" }]);
  const untied = narrate(table(2), { ...late, behind_ms: 80, tie: null }, createViewState());
  assert.equal(untied[0][1].text, "Too late by 80 ms! Sam was faster. No penalty.");
});

test("the rules summary names who flips after a take and the tie window", () => {
  const base = { triggers: ["jack"], penalty: "burn", freeze_seconds: 1.5, decks: 1 };
  assert.equal(rulesSummary({ ...base, after_take: "winner", tie_window_ms: 0 }, SCHEMA), "Slap Jacks · wrong slap burns a card · 1.5 s freeze");
  const seeded = rulesSummary({ ...base, after_take: "left_of_winner", tie_window_ms: 25 }, SCHEMA);
  assert.equal(
    seeded,
    "Slap Jacks · wrong slap burns a card · 1.5 s freeze · the winner's left flips next · slaps within 25 ms tie: the next to flip takes it",
  );
});
