// The house rules form (home page and the host's lobby) to and from the server's rules
// object, and the words for a room's triggers. Which cards a trigger covers is the
// server's business: these are only names to read.

import { hasMessage, say } from "./messages.js";

// In the order the server names them (docs/protocol.md); their words are messages.js's
// ("trigger.jack.many": plural for a list, "trigger.jack.one" for "when a ... shows").
const TRIGGERS = ["jack", "face", "double", "sandwich"];

// ["jack", "double"] -> "Jacks, doubles" (form "many", joined by ", ") or "a Jack or a
// double" (form "one"). A trigger this page has no words for is shown by its name.
export function triggerWords(triggers, form = "many") {
  const chosen = Array.isArray(triggers) ? triggers : [];
  const known = TRIGGERS.filter((name) => chosen.includes(name));
  const word = (name) => (hasMessage(`trigger.${name}.${form}`) ? say(`trigger.${name}.${form}`) : name);
  const words = [...known, ...chosen.filter((name) => !TRIGGERS.includes(name))].map(word);
  if (form === "many" || words.length < 2) return words.join(say("list.and"));
  return say("list.or", { first: words.slice(0, -1).join(say("list.and")), last: words.at(-1) });
}

// Exactly what the form says: no trigger ticked is sent as none (the server refuses it
// with bad_rules, and the page shows that message).
export function readRules(form) {
  const data = new FormData(form);
  return {
    triggers: data.getAll("trigger"),
    penalty: data.get("penalty"),
    freeze_seconds: Number(data.get("freeze_seconds")),
    empty_deck: data.get("empty_deck"),
    decks: Number(data.get("decks")),
    last_card_jack: data.get("last_card_jack") !== null,
    time_limit: data.get("time_limit") ? Number(data.get("time_limit")) : null,
    collect_seconds: Number(data.get("collect_seconds")),
    trigger_timeout: Number(data.get("trigger_timeout")),
    shuffle_taken: data.get("shuffle_taken") !== null,
    lag_fair: data.get("lag_fair") !== null,
  };
}

function choose(select, value, unit) {
  const text = value === null || value === undefined ? "" : String(value);
  if (![...select.options].some((option) => option.value === text)) {
    select.append(new Option(`${text}${unit}`, text)); // a value set through the API stays visible
  }
  select.value = text;
}

export function writeRules(form, rules) {
  if (!rules) return;
  for (const box of form.querySelectorAll("input[name=trigger]")) {
    box.checked = (rules.triggers || []).includes(box.value);
  }
  form.querySelector("input[name=last_card_jack]").checked = Boolean(rules.last_card_jack);
  form.querySelector("input[name=shuffle_taken]").checked = Boolean(rules.shuffle_taken);
  form.querySelector("input[name=lag_fair]").checked = Boolean(rules.lag_fair);
  const units = { freeze_seconds: " s", time_limit: " s", collect_seconds: " s", trigger_timeout: " s" };
  for (const name of ["penalty", "freeze_seconds", "empty_deck", "decks", "time_limit", "collect_seconds", "trigger_timeout"]) {
    choose(form.querySelector(`select[name=${name}]`), rules[name], units[name] || "");
  }
}
