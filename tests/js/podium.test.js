// Game over's podium (static/js/podium.js): the server's places, counts, titles, the match.
import assert from "node:assert/strict";
import { test } from "node:test";

import { gameTitles, matchLine, podiumRows } from "../../static/js/podium.js";

// Ana (you, seat 0) won; Sam (seat 1) went out last; Bo (seat 2) first.
const over = (extra = {}) => ({
  phase: "over",
  game: 1,
  winner: 0,
  you: { player: "pa", seat: 0, host: true },
  seats: [
    { player: "pa", name: "Ana", avatar: "🦊", cards: 52, out: false },
    { player: "ps", name: "Sam", avatar: null, cards: 0, out: true },
    { player: null, name: "Bleep", avatar: null, cards: 0, out: true },
  ],
  places: [0, 1, 2],
  stats: [
    { seat: 0, takes: 5, false_slaps: 0, best_ms: 310.4 },
    { seat: 1, takes: 2, false_slaps: 3, best_ms: 290 },
    { seat: 2, takes: 5, false_slaps: 1, best_ms: null },
  ],
  match: [
    { player: "pa", name: "Ana", wins: 1 },
    { player: "ps", name: "Sam", wins: 0 },
    { player: null, name: "Bleep", wins: 0 },
  ],
  ...extra,
});

test("the podium follows the server's places with final counts and avatars", () => {
  const rows = podiumRows(over({ places: [0, 2, 1] }));
  assert.deepEqual(rows.map((r) => [r.place, r.name, r.cards]), [[1, "Ana", "52 cards"], [2, "Bleep", "out"], [3, "Sam", "out"]]);
  assert.equal(rows[0].avatar, "🦊");
  assert.equal(rows[0].you, true);
});

test("a time-limit win keeps everyone's final count", () => {
  const state = over({ win_reason: "time", places: [1, 0], seats: [{ name: "Ana", cards: 20, out: false }, { name: "Sam", cards: 32, out: false }] });
  assert.deepEqual(podiumRows(state).map((r) => r.cards), ["32 cards", "20 cards"]);
});

test("titles: fastest hand, most takes, most wrong slaps; a tie gives the title to nobody", () => {
  const titles = gameTitles(over().stats);
  assert.deepEqual(titles.get(1), ["Fastest hand · 290 ms", "Most wrong slaps (3)"]);
  assert.equal(titles.get(0), undefined); // five takes each for Ana and Bleep
  assert.equal(titles.get(2), undefined);
  assert.equal(gameTitles([{ seat: 0, takes: 0, false_slaps: 0, best_ms: null }]).size, 0);
  const sixWrong = [0, 1, 2, 3, 4, 5].map((seat) => ({ seat, takes: seat, false_slaps: 1, best_ms: 300 }));
  const tied = gameTitles(sixWrong);
  assert.deepEqual([...tied.entries()], [[5, ["Most takes (5)"]]]);
});

test("the match score shows from the second game, you named as you", () => {
  assert.equal(matchLine(over()), "");
  const second = over({ game: 2, match: [{ player: "ps", name: "Sam", wins: 1 }, { player: "pa", name: "Ana", wins: 1 }] });
  assert.equal(matchLine(second), "Match: Sam 1, You 1");
});
