// What a new state changed, compared with the one before (static/js/changes.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { stateChanges } from "../../static/js/changes.js";

const table = (extra = {}) => ({
  phase: "playing",
  next: 1,
  you: { player: "pa", seat: 0, host: false },
  seats: [{ player: "pa", name: "Ana", cards: 10 }, { player: "ps", name: "Sam", cards: 10 }],
  rules: { triggers: ["jack"] },
  pile: { id: 1, count: 3, top: ["2C", "5D", "JS"] },
  ...extra,
});
const has = (effects, kind) => effects.some(([name]) => name === kind);

test("a trigger appearing clears the banner, says the card and calls for a slap", () => {
  const effects = stateChanges(table({ trigger: "jack" }), table());
  assert.deepEqual(effects, [["clearBanner"], ["announce", "Jack of spades! Slap!"], ["sound", "jack"], ["nudge", "1:3"]]);
});

test("nothing changed, nothing said", () => {
  assert.deepEqual(stateChanges(table(), table()), []);
});

test("your turn coming round: a sound and a nudge", () => {
  const effects = stateChanges(table({ next: 0 }), table());
  assert.deepEqual(effects, [["clearBanner"], ["sound", "turn"], ["buzz", 15], ["announce", "Your turn!"]]);
});

test("a freeze ending clears the banner only when it was about the freeze", () => {
  const frozen = table({ seats: [{ player: "pa", name: "Ana", cards: 9, frozen_ms: 800 }, { player: "ps", name: "Sam", cards: 10 }] });
  assert.deepEqual(stateChanges(table(), frozen, "freeze"), [["clearBanner"]]);
  assert.deepEqual(stateChanges(table(), frozen, ""), []);
});

test("your turn while frozen keeps the wrong-slap banner", () => {
  const frozen = (next) =>
    table({ next, seats: [{ player: "pa", name: "Ana", cards: 9, frozen_ms: 800 }, { player: "ps", name: "Sam", cards: 10 }] });
  assert.equal(has(stateChanges(frozen(0), frozen(1), "freeze"), "clearBanner"), false);
});

test("a phase change drops the game's toasts and the banner", () => {
  const effects = stateChanges(table({ phase: "over" }), table());
  assert.deepEqual(effects.slice(0, 2), [["dropGameToasts"], ["clearBanner"]]);
});

test("house rules changed by the host are told to everyone else", () => {
  const changed = table({ rules: { triggers: ["jack", "double"] } });
  assert.deepEqual(stateChanges(changed, table()), [["toast", { text: "The host changed the house rules", game: false }]]);
  const asHost = { ...changed, you: { player: "pa", seat: 0, host: true } };
  assert.deepEqual(stateChanges(asHost, table()), []);
});

test("the first state is no change", () => {
  assert.deepEqual(stateChanges(table({ phase: "lobby" }), null), []);
});
