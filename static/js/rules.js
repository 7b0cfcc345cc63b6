// The house rules form (home page and the host's lobby) to and from the server's rules object.

export function readRules(form) {
  const data = new FormData(form);
  const rules = {
    triggers: ["jack", ...data.getAll("trigger")],
    penalty: data.get("penalty"),
    freeze_seconds: Number(data.get("freeze_seconds")),
    empty_deck: data.get("empty_deck"),
    decks: Number(data.get("decks")),
    last_card_jack: data.get("last_card_jack") !== null,
    time_limit: data.get("time_limit") ? Number(data.get("time_limit")) : null,
  };
  return rules;
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
  const units = { freeze_seconds: " s", time_limit: " s" };
  for (const name of ["penalty", "freeze_seconds", "empty_deck", "decks", "time_limit"]) {
    choose(form.querySelector(`select[name=${name}]`), rules[name], units[name] || "");
  }
}
