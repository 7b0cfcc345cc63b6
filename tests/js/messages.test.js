// The page's sentences and error texts (static/js/messages.js).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { countOf, errorText, hasMessage, say, speaker } from "../../static/js/messages.js";
import { hasChosen, preferredLanguage } from "../../static/js/language.js";

test("fills in the named values", () => {
  assert.equal(say("take.other", { name: "Sam", count: "3 cards", how: "", speed: "" }), "Sam takes 3 cards");
  assert.equal(say("join", {}), "{name} joined"); // a missing value stays visible
  assert.equal(say("no.such.id"), "no.such.id");
});

test("counts take the plural the language wants", () => {
  assert.equal(countOf("cards", 1), "1 card");
  assert.equal(countOf("cards", 0), "0 cards");
  assert.equal(countOf("cards", 12), "12 cards");
});

test("error texts: ours by code, else the server's message, else a plain one", () => {
  assert.equal(errorText({ code: "rate_limited", message: "too many events" }), "Whoa, easy! Too many taps");
  assert.equal(errorText({ code: "offline" }), "Not connected, retrying...");
  assert.equal(errorText({ code: "seat_taken", message: "That seat is taken" }), "Someone just took that seat.");
  assert.equal(errorText({ code: "new_code", message: "That seat is taken" }), "That seat is taken");
  assert.equal(errorText({ code: "mystery" }), "That didn't work");
  assert.equal(errorText(undefined), "That didn't work");
});

test("every error code with a text is one the protocol documents (or the page's own)", () => {
  const protocol = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");
  const section = protocol.slice(protocol.indexOf("## Error codes"), protocol.indexOf("## Server events"));
  const documented = new Set([...section.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]));
  const pageOwn = new Set(["offline", "timeout", "unknown"]); // no answer, or no code at all
  const source = readFileSync(new URL("../../static/js/messages.js", import.meta.url), "utf8");
  const codes = [...source.matchAll(/"error\.([a-z_]+)"/g)].map((match) => match[1]);
  assert.ok(codes.length > 5);
  for (const code of codes) assert.ok(documented.has(code) || pageOwn.has(code), `error.${code} is not in docs/protocol.md`);
  assert.ok(hasMessage("error.rate_limited"));
});

test("every sentence id the page's scripts name exists", () => {
  const folder = new URL("../../static/js/", import.meta.url);
  const ids = new Set();
  for (const name of readdirSync(folder)) {
    if (!name.endsWith(".js")) continue;
    const source = readFileSync(new URL(name, folder), "utf8");
    for (const match of source.matchAll(/\bsay\(\s*"([^"]+)"/g)) ids.add(match[1]);
    for (const match of source.matchAll(/\bcountOf\(\s*"([^"]+)"/g)) ids.add(`${match[1]}.one`).add(`${match[1]}.other`);
  }
  assert.ok(ids.size > 50, `only ${ids.size} ids found`);
  const missing = [...ids].filter((id) => !hasMessage(id));
  assert.deepEqual(missing, []);
});

test("a catalog's sentences win over English; counts take the catalog's forms", () => {
  const malay = speaker({ lang: "ms", messages: { join: "{name} masuk", cards: { other: "{count} kad" }, "error.out": "Kamu terkeluar" } });
  assert.equal(malay.say("join", { name: "Siti" }), "Siti masuk");
  assert.equal(malay.countOf("cards", 1), "1 kad"); // Malay has one form for every count
  assert.equal(malay.countOf("cards", 7), "7 kad");
  assert.equal(malay.errorText({ code: "out", message: "you are out" }), "Kamu terkeluar");
  assert.equal(malay.say("leave", { name: "Siti" }), "Siti left"); // missing in the catalog: English
  const english = speaker({ lang: "en", messages: { cards: { one: "{count} card", other: "{count} cards" } } });
  assert.equal(english.countOf("cards", 1), "1 card");
  assert.equal(english.countOf("cards", 2), "2 cards");
});

test("the browser's first language we have, and whether the device chose one", () => {
  assert.equal(preferredLanguage(["ms-MY", "en-GB"]), "ms");
  assert.equal(preferredLanguage(["fr-FR", "en-US"]), "en");
  assert.equal(preferredLanguage(["fr"]), null);
  assert.equal(hasChosen("a=1; lang=ms"), true);
  assert.equal(hasChosen("language=ms; slang=en"), false);
});
