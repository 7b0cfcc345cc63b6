// Coming back (static/js/narration.js): the returning player is told what happened while
// they were away; others hear only that they are back.
import assert from "node:assert/strict";
import { test } from "node:test";

import { narrate } from "../../static/js/narration.js";
import { createViewState } from "../../static/js/store.js";

const state = { phase: "playing", you: { player: "pb", seat: null, host: false }, seats: [{ player: "pa", name: "Ann" }] };

test("back after the deal: told you watch this game; back mid-game: how many cards were flipped", () => {
  const missed = narrate(state, { kind: "reconnect", player: "pb", seat: null, flipped: 0, missed_deal: true }, createViewState());
  assert.deepEqual(missed, [["toast", { text: "A game was dealt while you were away: you're watching this one", game: false }]]);
  const flipped = narrate(state, { kind: "reconnect", player: "pb", seat: 1, flipped: 14, missed_deal: false }, createViewState());
  assert.deepEqual(flipped, [["toast", { text: "While you were away, 14 cards were flipped for you", game: false }]]);
  assert.deepEqual(narrate(state, { kind: "reconnect", player: "pb", seat: 1, flipped: 0, missed_deal: false }, createViewState()), []);
});

test("someone else back: their name, as before", () => {
  const view = createViewState();
  view.names.set("pa", "Ann");
  const back = narrate(state, { kind: "reconnect", player: "pa", seat: 0, flipped: 3, missed_deal: false }, view);
  assert.deepEqual(back, [["toast", { text: "Ann is back", game: false }]]);
});
