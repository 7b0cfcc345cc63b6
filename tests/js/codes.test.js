// The home page's room-code box (static/js/codes.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { roomCodeFrom } from "../../static/js/codes.js";

test("a code in any case, with spaces or dashes", () => {
  assert.equal(roomCodeFrom("K7PQRX"), "K7PQRX");
  assert.equal(roomCodeFrom("  k7p qrx "), "K7PQRX");
  assert.equal(roomCodeFrom("K7P-QRX"), "K7PQRX");
});

test("a pasted table link, with or without more after the code", () => {
  assert.equal(roomCodeFrom("http://192.168.1.20:8000/r/K7PQRX"), "K7PQRX");
  assert.equal(roomCodeFrom("https://slap.example/r/k7pqrx/tv"), "K7PQRX");
  assert.equal(roomCodeFrom("https://slap.example/r/K7PQRX?utm=x#top"), "K7PQRX");
  assert.equal(roomCodeFrom("Join my Slapjack table K7PQRX http://h/r/K7PQRX"), "K7PQRX");
});

test("nothing like a code is refused", () => {
  for (const text of ["", "abc", "http:/", "http://host/", "K7PQRXY", null]) assert.equal(roomCodeFrom(text), null, text);
});
