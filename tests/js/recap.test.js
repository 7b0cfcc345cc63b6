// The recap (static/js/recap.js) as its picture says it: a canvas has no element to isolate
// a right-to-left name, so each name goes between U+2068 and U+2069, and "279 :123 שלום ms"
// (the words around the name drawn in the name's direction) cannot happen.
import assert from "node:assert/strict";
import { test } from "node:test";

import { isolated, winnerTitle } from "../../static/js/podium.js";
import { recapLines } from "../../static/js/recap.js";

const SHALOM = "שלום 123"; // a right-to-left name that ends in digits

const over = () => ({
  phase: "over",
  game: 1,
  winner: 1,
  you: { player: "pa", seat: 0, host: true },
  seats: [
    { player: "pa", name: "Ana", avatar: null, cards: 0, out: true },
    { player: "ps", name: SHALOM, avatar: null, cards: 52, out: false },
  ],
  places: [1, 0],
  stats: [
    { seat: 0, takes: 1, false_slaps: 0, best_ms: 412, median_ms: 455, closest_win_ms: null },
    { seat: 1, takes: 5, false_slaps: 0, best_ms: 279, median_ms: 301, closest_win_ms: 38 },
  ],
  match: [],
});

test("the picture's lines isolate every name, and the card's do not need to", () => {
  const drawn = recapLines(over(), { isolate: true });
  assert.equal(drawn.lines[0], `Fastest hand: ${isolated(SHALOM)}, 279 ms`);
  assert.equal(drawn.lines[1], `Closest call: ${isolated(SHALOM)} won a pile by 38 ms`);
  assert.deepEqual(drawn.medians, [`${isolated(SHALOM)}: 301 ms`, "\u2068You\u2069: 455 ms"]);
  assert.equal(winnerTitle(over(), { isolate: true }), `${isolated(SHALOM)} wins!`);
  // On the page each name is its own element (dir="auto"): the words as they are.
  assert.equal(recapLines(over()).lines[0], `Fastest hand: ${SHALOM}, 279 ms`);
  assert.equal(isolated("x"), "\u2068x\u2069");
});

test("each player's reaction figures are shown as the server measured them", () => {
  // A script's 1 ms median is shown as 1 ms, beside a person's 301 ms: nothing is rounded
  // away or left out, so a reflex no person has is there for everyone to see.
  const state = over();
  state.stats[0].median_ms = 1;
  state.stats[0].best_ms = 1;
  const { lines, medians } = recapLines(state);
  assert.deepEqual(medians, ["You: 1 ms", `${SHALOM}: 301 ms`]);
  assert.equal(lines[0], "Fastest hand: You, 1 ms");
});
