// The lint rule that keeps state out of modules (eslint.config.js): it must catch the
// module-level state a page's module could keep, and let constants and the store pass.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Linter } from "eslint";

import config from "../../eslint.config.js";

function problems(code) {
  const linter = new Linter({ configType: "flat" });
  return linter
    .verify(code, config, { filename: "static/js/example.js" })
    .filter((message) => message.ruleId === "slapjack/no-module-state")
    .map((message) => message.line);
}

test("module-level let and var are state", () => {
  assert.deepEqual(problems("export let shownId = null;\nexport var ticking = false;\n"), [1, 2]);
});

test("a module-level constant changed in place is state", () => {
  const code = [
    "const cache = new Map();",
    "const handover = { at: 0 };",
    "const list = [];",
    "export function f(seat, node) {",
    "  cache.set(seat, node);",
    "  handover.at = 1;",
    "  Object.assign(handover, { at: 2 });",
    "  list.push(seat);",
    "  return cache.get(seat);",
    "}",
  ].join("\n");
  assert.deepEqual(problems(code), [5, 6, 7, 8]);
});

test("constants read but never changed, and state inside functions, pass", () => {
  const code = [
    "const NAMES = new Set(['a']);",
    "const WORDS = { a: 'A' };",
    "export function createThing() {",
    "  let count = 0;",
    "  const seen = new Map();",
    "  return { add(x) { count += 1; seen.set(x, WORDS[x]); return NAMES.has(x) && count; } };",
    "}",
  ].join("\n");
  assert.deepEqual(problems(code), []);
});
