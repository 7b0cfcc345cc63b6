// The house rules form (home page and the host's lobby) to and from the server's rules
// object, and the words for a room's triggers. Which cards a trigger covers is the
// server's business: these are only names to read.

import { hasMessage, say } from "./messages.js";

// ["jack", "double"] -> "Jacks, doubles" (form "many", joined by ", ") or "a Jack or a
// double" (form "one"), in the order the server names triggers (the schema's choices, the
// engine's TRIGGERS); their words are messages.js's ("trigger.jack.many": plural for a list,
// "trigger.jack.one" for "when a ... shows"). A trigger this page has no words for is shown
// by its name.
export function triggerWords(triggers, form = "many", schema = PAGE_SCHEMA) {
  const order = schema.find((spec) => spec.name === "triggers")?.choices ?? [];
  const chosen = Array.isArray(triggers) ? triggers : [];
  const known = order.filter((name) => chosen.includes(name));
  const word = (name) => (hasMessage(`trigger.${name}.${form}`) ? say(`trigger.${name}.${form}`) : name);
  const words = [...known, ...chosen.filter((name) => !order.includes(name))].map(word);
  if (form === "many" || words.length < 2) return words.join(say("list.and"));
  return say("list.or", { first: words.slice(0, -1).join(say("list.and")), last: words.at(-1) });
}

// The house rules' schema (engine/rules.py RULES_SCHEMA, as app/wire/rules_schema.py hands it
// to the page in <script type="application/json" id="rules-schema">): the form, the
// summary and this module read every rule from it. None outside a page (tests pass theirs).
function pageSchema() {
  const block = globalThis.document?.getElementById("rules-schema");
  try {
    return block ? JSON.parse(block.textContent) : [];
  } catch {
    return [];
  }
}

const PAGE_SCHEMA = pageSchema();
const SECONDS_PER_MINUTE = 60;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// An option's value in the form: null ("no limit") is "" (app/wire/rules_schema.py form_value).
const formValue = (value) => (value === null || value === undefined ? "" : String(value));

function valueOf(spec, text) {
  const option = spec.options.find((choice) => formValue(choice.value) === text);
  if (option) return option.value;
  if (spec.kind !== "number") return text;
  if (text === "" || text === null) return spec.nullable ? null : spec.default;
  return Number(text);
}

// Exactly what the form says: no trigger ticked is sent as none (the server refuses it
// with bad_rules, and the page says so).
export function readRules(form, schema = PAGE_SCHEMA) {
  const data = new FormData(form);
  const rules = {};
  for (const spec of schema) {
    if (spec.kind === "set") rules[spec.name] = data.getAll(spec.name).map((text) => valueOf(spec, text));
    else if (spec.kind === "flag") rules[spec.name] = data.get(spec.name) !== null;
    else rules[spec.name] = valueOf(spec, data.get(spec.name));
  }
  return rules;
}

function choose(select, spec, value) {
  const text = formValue(value);
  if (![...select.options].some((option) => option.value === text)) {
    // A value set through the API stays visible, in its rule's unit.
    const unit = spec.options.some((choice) => choice.label === "rules.milliseconds") ? "rules.milliseconds" : "rules.seconds";
    const label = typeof value === "number" ? say(unit, { seconds: value, number: value }) : text;
    select.append(new Option(label, text));
  }
  select.value = text;
}

export function writeRules(form, rules, schema = PAGE_SCHEMA) {
  if (!rules) return;
  for (const spec of schema) {
    const value = rules[spec.name];
    if (spec.kind === "set") {
      const chosen = (value || []).map(formValue);
      for (const box of form.querySelectorAll(`input[name=${spec.name}]`)) box.checked = chosen.includes(box.value);
    } else if (spec.kind === "flag") {
      const box = form.querySelector(`input[name=${spec.name}]`);
      if (box) box.checked = Boolean(value);
    } else {
      const select = form.querySelector(`select[name=${spec.name}]`);
      if (select) choose(select, spec, value);
    }
  }
}

// One rule's words in the summary: its option's, else the rule's own for the value
// ({seconds} or {number}, or {minutes} for whole minutes; a set's {triggers}; a flag when it
// is not its default: lag-fair judging on, the false-start check off).
function summaryOf(spec, value, schema) {
  if (spec.kind === "set") return spec.summary ? say(spec.summary, { triggers: triggerWords(value, "many", schema) }) : "";
  if (spec.kind === "flag") return Boolean(value) !== Boolean(spec.default) && spec.summary ? say(spec.summary) : "";
  const option = spec.options.find((choice) => same(choice.value, value));
  if (option?.summary) return say(option.summary);
  if (!value || !spec.summary) return ""; // none, zero or a choice with nothing to add
  if (spec.summary_minutes && value % SECONDS_PER_MINUTE === 0) {
    return say(spec.summary_minutes, { minutes: value / SECONDS_PER_MINUTE });
  }
  return say(spec.summary, { seconds: value, number: value });
}

// The house rules in one line, in the schema's order.
export function rulesSummary(rules, schema = PAGE_SCHEMA) {
  if (!rules) return "";
  const parts = [];
  for (const spec of schema) {
    const value = rules[spec.name];
    if (value === undefined || (!spec.summary_default && same(value, spec.default))) continue;
    const text = summaryOf(spec, value, schema);
    if (text) parts.push(text);
  }
  return parts.join(say("summary.joiner"));
}
