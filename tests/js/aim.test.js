// Aiming a slap from the store's record of the pile on screen (static/js/aim.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { REACTION_MS, aimedPileId, notePileShown } from "../../static/js/aim.js";
import { createViewState } from "../../static/js/store.js";

const shown = (id, extra = {}) => ({ pile: { id, count: 0, top: [] }, ...extra });

test("aims at the pile on screen", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  assert.equal(aimedPileId(pile, 1000), 3);
  assert.equal(aimedPileId(pile, 99999), 3);
});

test("a tap just after the pile was taken aims at the taken pile (the server calls it late)", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  notePileShown(pile, shown(4), 2000);
  assert.equal(aimedPileId(pile, 2000 + REACTION_MS - 1), 3);
  assert.equal(aimedPileId(pile, 2000 + REACTION_MS), 4);
});

test("with a trigger showing on the new pile, the tap is for that trigger", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  notePileShown(pile, shown(4, { trigger: "jack" }), 2000);
  assert.equal(aimedPileId(pile, 2100), 4);
  notePileShown(pile, shown(4, { slap_open: true }), 2100);
  assert.equal(aimedPileId(pile, 2200), 4);
});

test("the same pile drawn again is no handover", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  notePileShown(pile, shown(3), 5000);
  assert.equal(pile.previousId, null);
  assert.equal(aimedPileId(pile, 5001), 3);
});

test("before any state, a slap aims at pile 0", () => {
  assert.equal(aimedPileId(createViewState().pile, 0), 0);
});
