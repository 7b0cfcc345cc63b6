// Whom the host's door offers to remove for good (static/js/state.js removableByHost): never
// yourself, never the table's own host (who takes the role back on returning), else anyone
// here, seated or watching.
import assert from "node:assert/strict";
import { test } from "node:test";

import { removableByHost } from "../../static/js/state.js";

const table = (you, extra = {}) => ({
  host: you,
  owner: "pann",
  you: { player: you, seat: null, host: true },
  seats: [
    { player: "pann", name: "Ann" },
    { player: "pbob", name: "Bob" },
    null,
    { player: null, name: "Bleep" },
  ],
  spectators: [{ player: "pcat", name: "Cat" }],
  ...extra,
});

const names = (people) => people.map((person) => person.name).sort();

test("the table's own host may remove anyone here but themselves", () => {
  assert.deepEqual(names(removableByHost(table("pann"))), ["Bob", "Cat"]);
});

test("a stand-in host may not remove the table's own host", () => {
  assert.deepEqual(names(removableByHost(table("pbob"))), ["Cat"]);
});

test("with no own host known, everyone but you", () => {
  assert.deepEqual(names(removableByHost(table("pbob", { owner: null }))), ["Ann", "Cat"]);
});
