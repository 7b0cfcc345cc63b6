// Aiming a slap from the store's record of the pile on screen (static/js/aim.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { aimedPileId, notePileShown } from "../../static/js/aim.js";
import { createViewState } from "../../static/js/store.js";

const shown = (id, extra = {}) => ({ pile: { id, count: 0, top: [] }, ...extra });

test("aims at the pile on screen", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  assert.equal(aimedPileId(pile), 3);
});

test("a tap just after the pile was taken aims at the pile it sees: the server judges it", () => {
  // No client-side window: the collect pause makes that tap late on the server.
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  notePileShown(pile, shown(4), 2000);
  assert.equal(aimedPileId(pile), 4);
  assert.equal(pile.previousId, 3);
});

test("a trigger showing is recorded for the pile's highlight", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(4, { trigger: "jack" }), 2000);
  assert.equal(pile.trigger, true);
  notePileShown(pile, shown(4), 2100);
  assert.equal(pile.trigger, false);
});

test("the same pile drawn again is no handover", () => {
  const pile = createViewState().pile;
  notePileShown(pile, shown(3), 1000);
  notePileShown(pile, shown(3), 5000);
  assert.equal(pile.previousId, null);
  assert.equal(aimedPileId(pile), 3);
});

test("before any state, a slap aims at pile 0", () => {
  assert.equal(aimedPileId(createViewState().pile), 0);
});
