// Events -> words, sounds and buzzes (static/js/narration.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { narrate, tellState } from "../../static/js/narration.js";
import { eventsOf } from "../../static/js/state.js";
import { createViewState } from "../../static/js/store.js";

// Ana (you) in seat 0, Sam in seat 1, Bo in seat 2.
const table = (extra = {}) => ({
  phase: "playing",
  next: 1,
  you: { player: "pa", seat: 0, host: true },
  seats: [
    { player: "pa", name: "Ana", cards: 10 },
    { player: "ps", name: "Sam", cards: 10 },
    { player: "pb", name: "Bo", cards: 10 },
  ],
  rules: { triggers: ["jack", "double"] },
  ...extra,
});
const kinds = (effects) => effects.map(([kind]) => kind);
const find = (effects, kind) => effects.find(([name]) => name === kind)?.[1];

test("you taking the pile: your words, a cheer, a buzz, the pile slides to you", () => {
  const effects = narrate(table(), { kind: "take", seat: 0, count: 7, reaction_ms: 231.6 }, createViewState());
  assert.deepEqual(find(effects, "banner"), { text: "You take 7 cards! · 232 ms", tone: "good", about: "" });
  assert.equal(find(effects, "announce"), "You take 7 cards! · 232 ms");
  assert.equal(find(effects, "sound"), "take");
  assert.equal(find(effects, "buzz"), 40);
  assert.equal(find(effects, "slide"), 0);
  assert.equal(find(effects, "taker"), "You");
});

test("someone else taking one card with a last-card Jack", () => {
  const effects = narrate(table(), { kind: "take", seat: 1, count: 1, reason: "last_card" }, createViewState());
  assert.equal(find(effects, "banner").text, "Sam takes 1 card with a last-card Jack");
  assert.equal(find(effects, "sound"), "slap");
  assert.equal(find(effects, "buzz"), undefined);
  assert.equal(find(effects, "taker"), "Sam");
});

test("your wrong slap: the banner stays while you are frozen, the burned card is shown", () => {
  const effects = narrate(table(), { kind: "false_slap", seat: 0, card: "10H" }, createViewState());
  assert.deepEqual(find(effects, "banner"), { text: "Wrong slap! 10♥ burned", tone: "bad", about: "freeze" });
  assert.equal(find(effects, "announce"), "Wrong slap! 10♥ burned. You are frozen for a moment.");
  assert.equal(find(effects, "burn"), "10♥ burned");
  assert.deepEqual(kinds(effects), ["banner", "announce", "burn", "sound", "buzz"]);
});

test("someone else's wrong slap that gives a card", () => {
  const effects = narrate(table(), { kind: "false_slap", seat: 2, to: 1 }, createViewState());
  assert.deepEqual(effects, [
    ["banner", { text: "Bo slapped wrong: a card goes to Sam", tone: "", about: "" }],
    ["announce", "Bo slapped wrong: a card goes to Sam"],
  ]);
});

test("too late: names who was faster, unless it was you", () => {
  const memory = createViewState();
  memory.lastTaker = "Sam";
  assert.equal(find(narrate(table(), { kind: "late", seat: 0 }, memory), "banner").text, "Too late! Sam was faster. No penalty.");
  memory.lastTaker = "You";
  assert.equal(find(narrate(table(), { kind: "late", seat: 0 }, memory), "banner").text, "Too late! No penalty.");
  assert.deepEqual(narrate(table(), { kind: "late", seat: 1 }, memory), []);
});

test("a flip is heard and said, and an automatic one is noted for the game", () => {
  const effects = narrate(table(), { kind: "flip", seat: 1, card: "QS", auto: true }, createViewState());
  assert.deepEqual(effects, [
    ["flipped", 1],
    ["sound", "flip"],
    ["toast", { text: "Flipped for Sam (away)", game: true }],
  ]); // not announced: flips one by one would bury "Jack! Slap!"
  const mine = narrate(table(), { kind: "flip", seat: 0, auto: true }, createViewState());
  assert.deepEqual(find(mine, "toast"), { text: "Flipped for you: it was your turn", game: true });
});

test("a game starting names the room's own triggers", () => {
  const effects = narrate(table(), { kind: "start", game: 2, rematch: true }, createViewState());
  assert.equal(find(effects, "banner").text, "New game! Slap when a Jack or a double shows");
  assert.equal(find(effects, "announce"), "Game 2 starts. Sam flips first.");
});

test("your own first flip is said in good grammar", () => {
  const effects = narrate(table({ next: 0 }), { kind: "start", game: 1 }, createViewState());
  assert.equal(find(effects, "announce"), "Game 1 starts. You flip first.");
});

test("people leaving are named from memory", () => {
  const memory = createViewState();
  memory.names.set("px", "Cy");
  assert.deepEqual(narrate(table(), { kind: "leave", player: "px" }, memory), [["toast", { text: "Cy left", game: false }]]);
  assert.deepEqual(narrate(table(), { kind: "leave", player: "unknown" }, memory), []);
  assert.deepEqual(narrate(table(), { kind: "disconnect", player: "px", seat: 3 }, memory), [["toast", { text: "Cy lost connection", game: false }]]);
});

test("the last one out ends the game: no toast then", () => {
  assert.deepEqual(narrate(table({ phase: "over" }), { kind: "out", seat: 1 }, createViewState()), []);
  assert.deepEqual(narrate(table(), { kind: "out", seat: 1 }, createViewState()), [["toast", { text: "Sam is out", game: true }]]);
});

test("an event of a kind the page does not know says nothing", () => {
  assert.deepEqual(narrate(table(), { kind: "something_new" }, createViewState()), []);
  assert.deepEqual(narrate(table(), null, createViewState()), []);
});

test("a server restart is said once, by the offline notice (gates.js), not by a banner or a toast", () => {
  const event = { kind: "restart", message: "The server is restarting: this table will close." };
  assert.deepEqual(narrate(table(), event, createViewState()), []);
});

test("a state's events are read in the order the change caused them, none when it has none", () => {
  const take = { kind: "take", seat: 1, count: 3, version: 7 };
  const late = { kind: "late", seat: 0, pile_id: 2, behind_ms: 12, winner: 1, version: 7 };
  assert.deepEqual(eventsOf(table({ version: 7, events: [take, late] })), [take, late]);
  assert.deepEqual(eventsOf(table({ events: [] })), []);
  assert.deepEqual(eventsOf(table()), []); // no `events` at all: nothing to tell
  assert.deepEqual(eventsOf(null), []);
});

// feedback.js carries out each list before asking for the next, as this does with "taker".
function tellAll(state, previous, memory) {
  const lists = [];
  for (const effects of tellState(state, previous, memory)) {
    lists.push(effects);
    for (const [kind, value] of effects) if (kind === "taker") memory.lastTaker = value;
  }
  return lists;
}

test("a state is told as it changed the table, then each of its events, in order", () => {
  const memory = createViewState();
  const before = table({ version: 6, pile: { id: 2, count: 4, top: ["3C"] } });
  const flipped = { kind: "flip", seat: 1, card: "JH", auto: false, version: 7 };
  const now = table({ version: 7, next: 2, slap_open: true, trigger: "jack", pile: { id: 2, count: 5, top: ["3C", "JH"] }, events: [flipped] });
  const [changes, flip, ...rest] = tellAll(now, before, memory);
  assert.deepEqual(rest, []);
  assert.equal(find(changes, "announce"), "Jack of hearts! Slap!"); // the trigger, from the state
  assert.equal(find(changes, "sound"), "jack");
  assert.deepEqual(flip, narrate(now, flipped, createViewState())); // then the flip it caused
});

test("an event is told with what the events before it in the same state left behind", () => {
  const memory = createViewState();
  const events = [
    { kind: "take", seat: 1, count: 3, pile_id: 3, version: 8 },
    { kind: "late", seat: 0, pile_id: 2, behind_ms: null, winner: null, version: 8 },
  ];
  const lists = tellAll(table({ version: 8, events }), table({ version: 7 }), memory);
  assert.equal(lists.length, 3);
  assert.equal(find(lists[2], "banner").text, "Too late! Sam was faster. No penalty.");
});

test("a state with no events (a tick) is told only as it changed the table", () => {
  const lists = tellAll(table({ version: 9, events: [] }), table({ version: 8 }), createViewState());
  assert.equal(lists.length, 1);
});

test("a false start: the table is told who started too soon, and you are told it is not yours", () => {
  const theirs = narrate(table(), { kind: "false_start", seat: 1, pile_id: 3, reaction_ms: 4 }, createViewState());
  assert.equal(find(theirs, "banner").text, "Sam slapped too soon (4 ms): no pile for them");
  assert.equal(find(theirs, "announce"), "Sam slapped too soon (4 ms): no pile for them");
  const mine = narrate(table(), { kind: "false_start", seat: 0, pile_id: 3, reaction_ms: 12 }, createViewState());
  assert.deepEqual(find(mine, "banner"), { text: "Too soon! Nobody reacts that fast: this pile is not yours.", tone: "bad", about: "" });
  assert.equal(find(mine, "sound"), "wrong");
});

test("the host's door: a removal and the lock are said to everyone else", () => {
  const memory = createViewState();
  memory.names.set("ps", "Sam");
  assert.equal(find(narrate(table(), { kind: "kick", player: "ps", seat: 1 }, memory), "toast").text, "Sam was removed from the table");
  assert.equal(find(narrate(table(), { kind: "lock", locked: true }, memory), "toast").text, "The host locked the table: nobody new can join");
  assert.equal(find(narrate(table(), { kind: "lock", locked: false }, memory), "toast").text, "The host unlocked the table");
});
