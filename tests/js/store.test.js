// The store: the one owner of the page's state (static/js/store.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { eventsOf } from "../../static/js/state.js";
import { createStore, createViewState, rememberNames } from "../../static/js/store.js";

const state = (version, extra = {}) => ({ room: "ABCDEF", version, phase: "lobby", ...extra });

test("keeps the newest state and the one before it", () => {
  const store = createStore();
  assert.equal(store.get(), null);
  assert.equal(store.receive(state(1)), true);
  assert.equal(store.receive(state(2)), true);
  assert.equal(store.get().version, 2);
  assert.equal(store.previous().version, 1);
});

test("drops a state older than the one it holds", () => {
  const store = createStore();
  store.receive(state(5));
  assert.equal(store.receive(state(4)), false);
  assert.equal(store.get().version, 5);
  assert.equal(store.previous(), null);
});

test("takes any version from another room (a new table starts counting again)", () => {
  const store = createStore();
  store.receive(state(9));
  assert.equal(store.receive({ room: "ZZZZZZ", version: 1 }), true);
  assert.equal(store.get().room, "ZZZZZZ");
});

test("refuses what is not a state", () => {
  const store = createStore();
  assert.equal(store.receive(null), false);
  assert.equal(store.receive("state"), false);
});

test("tells listeners the new state and the previous one, until they unsubscribe", () => {
  const store = createStore();
  const heard = [];
  const stop = store.subscribe((current, previous) => heard.push([current.version, previous?.version ?? null]));
  store.receive(state(1));
  store.receive(state(2));
  stop();
  store.receive(state(3));
  assert.deepEqual(heard, [[1, null], [2, 1]]);
});

test("each store has its own view state", () => {
  const one = createStore();
  const two = createStore();
  one.view.lastTaker = "Sam";
  one.view.names.set("p1", "Sam");
  assert.equal(two.view.lastTaker, null);
  assert.equal(two.view.names.size, 0);
  assert.deepEqual(Object.keys(createViewState()).sort(), ["back", "banner", "freeze", "heatReturn", "lastTaker", "motion", "names", "nudge", "over", "pile", "seats"]);
});

test("remembers names, keeping those who have left", () => {
  const view = createViewState();
  rememberNames(view, new Map([["p1", { name: "Sam" }]]));
  rememberNames(view, new Map([["p2", { name: "Ana" }]]));
  assert.equal(view.names.get("p1"), "Sam");
  assert.equal(view.names.get("p2"), "Ana");
});

test("after a reconnect takes the first state whatever its version (a restored table may be behind)", () => {
  const store = createStore();
  store.receive(state(12));
  assert.equal(store.receive(state(10)), false);
  store.reconnected();
  assert.equal(store.receive(state(10)), true);
  assert.equal(store.get().version, 10);
  assert.equal(store.receive(state(9)), false); // within one connection, order holds again
});

// A state carries the events of the change that made it (`events`): listeners (feedback.js)
// tell them when they hear the state, so a state the store drops drops its events too.
test("events are heard with their state, once, and never from a state dropped as older", () => {
  const store = createStore();
  const told = [];
  store.subscribe((current) => told.push(...eventsOf(current).map((event) => `${current.version}:${event.kind}`)));
  store.receive(state(3, { events: [{ kind: "flip", version: 3 }] }));
  store.receive(state(4, { events: [{ kind: "take", version: 4 }, { kind: "late", version: 4 }] }));
  store.receive(state(2, { events: [{ kind: "flip", version: 2 }] })); // older: dropped
  store.receive(state(5, { events: [] })); // a tick: a fresh state, nothing happened
  assert.deepEqual(told, ["3:flip", "4:take", "4:late"]);
  store.reconnected(); // a new connection's first state is told whatever its version
  store.receive(state(4, { events: [{ kind: "reconnect", version: 4 }] }));
  assert.deepEqual(told.at(-1), "4:reconnect");
});
