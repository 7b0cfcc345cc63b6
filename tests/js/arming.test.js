// The game-over card's buttons wait a moment after it opens (static/js/arming.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { ARM_MS, pressCounts } from "../../static/js/arming.js";

const opened = 10_000; // performance.now() when the card opened

test("a press begun as the card opens, or during its first moment, does not count", () => {
  for (const after of [0, 1, 250, ARM_MS - 1]) {
    assert.equal(pressCounts({ openedAt: opened, pressedAt: opened + after }), false, `${after} ms`);
  }
});

test("a press begun before the card opened (a slap on the felt) does not count", () => {
  assert.equal(pressCounts({ openedAt: opened, pressedAt: opened - 40 }), false);
  assert.equal(pressCounts({ openedAt: opened, pressedAt: -Infinity }), false);
});

test("a press begun once the moment is over counts", () => {
  for (const after of [ARM_MS, ARM_MS + 1, 60_000]) {
    assert.equal(pressCounts({ openedAt: opened, pressedAt: opened + after }), true, `${after} ms`);
  }
});

test("a key held down (its auto-repeat) never presses a button, however late", () => {
  assert.equal(pressCounts({ openedAt: opened, pressedAt: opened + 5_000, repeat: true }), false);
  assert.equal(pressCounts({ openedAt: opened, pressedAt: opened + 5_000, repeat: false }), true);
});

test("the moment covers the card's rise and a reaction, and stays under a second", () => {
  assert.ok(ARM_MS >= 600 && ARM_MS <= 800, ARM_MS);
});
