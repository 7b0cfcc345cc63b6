// The seats around the table: placed on an ellipse with you at the bottom, like a real table.

import { el } from "./dom.js";
import { countOf, say } from "./messages.js";
import { amHost, mySeat, nameOf } from "./state.js";

// Avatar colours (tokens.css --avatar-0 ... --avatar-7): none of them green on the green
// felt, each dark enough for a white letter.
const AVATAR_COLOURS = 8;

function colourOf(name) {
  let hash = 0;
  for (const char of String(name)) hash = (hash * 31 + char.codePointAt(0)) % 9973;
  return hash % AVATAR_COLOURS;
}

function initialOf(name) {
  const first = String(name).trim().match(/\p{L}|\p{N}/u);
  return first ? first[0].toUpperCase() : "?";
}

// Which seats to draw, in ring order starting from yours.
function ringOrder(state) {
  const indexes = state.seats.map((_, index) => index);
  const shown = state.phase === "lobby" ? indexes : indexes.filter((i) => state.seats[i]);
  const mine = mySeat(state);
  const start = Math.max(0, shown.indexOf(mine === null ? shown[0] : mine));
  return shown.slice(start).concat(shown.slice(0, start));
}

function emptySeat(index, canSit) {
  const parts = [el("span", "seat-empty", "+")];
  if (canSit) {
    const sit = el("button", "seat-sit", say("seat.sit"));
    sit.type = "button";
    sit.dataset.sit = String(index);
    sit.setAttribute("aria-label", say("seat.sit.label", { number: index + 1 }));
    parts.push(sit);
  } else {
    parts.push(el("span", "seat-name", say("seat.number", { number: index + 1 })));
  }
  return parts;
}

// The name keeps all the room it can; your own seat adds a small "you" tag after it. The
// text still reads "Sam (you)" (screen readers, copy and paste): the brackets are hidden.
export function nameTag(name, you, className = "seat-name") {
  const tag = el("span", className);
  const text = el("span", "name-text", name);
  text.dir = "auto"; // names in right-to-left scripts read correctly
  tag.append(text);
  if (you) {
    const mark = el("span", "you-tag");
    mark.append(el("span", "visually-hidden", " ("), say("seat.you.tag"), el("span", "visually-hidden", ")"));
    tag.append(mark);
  }
  return tag;
}

function takenSeat(state, entry, flags) {
  const name = nameOf(entry);
  // The person's emoji if they picked one (in a box of its own that clips it to the circle:
  // the tags on the rim stay outside it), else their initial.
  const avatar = el("span", entry.avatar ? "seat-avatar seat-avatar--emoji" : "seat-avatar", entry.avatar ? null : initialOf(name));
  if (entry.avatar) avatar.append(el("span", "avatar-emoji", entry.avatar));
  avatar.style.setProperty("--avatar", `var(--avatar-${colourOf(entry.name)})`);
  if (entry.bot) avatar.append(el("span", "seat-tag seat-tag--bot", say("seat.bot")));
  else if (flags.host) avatar.append(el("span", "seat-tag", say("seat.host")));
  // The countdown is painted by freeze.js; until it is, the initial shows (see the CSS).
  if (flags.frozen) avatar.append(el("span", "seat-freeze"));
  // Lag-fair judging: how much earlier this seat's slaps count (its measured round trip).
  if (state.rules?.lag_fair && typeof entry.lag_ms === "number") {
    const badge = el("span", "seat-lag", say("seat.lag", { ms: entry.lag_ms }));
    badge.title = say("seat.lag.label", { ms: entry.lag_ms });
    avatar.append(badge);
  }
  const tag = nameTag(name, flags.you);
  tag.dataset.away = say("seat.away"); // shown while the person is away (seats.css)
  const parts = [avatar, tag];
  if (state.phase !== "lobby") {
    const label = entry.out ? say("seat.out") : countOf("cards", entry.cards);
    parts.push(el("span", "seat-cards", label));
  }
  if (flags.removable) {
    const remove = el("button", "seat-remove", "×");
    remove.type = "button";
    remove.dataset.remove = String(entry.seat);
    remove.setAttribute("aria-label", say("seat.remove.label", { name }));
    parts.push(remove);
  }
  return parts;
}

function seatFlags(state, index, entry) {
  const you = index === mySeat(state);
  return {
    you,
    host: Boolean(entry && entry.player && entry.player === state.host),
    turn: state.phase === "playing" && state.next === index,
    frozen: Boolean(entry && entry.frozen_ms > 0),
    removable: Boolean(entry && !you && state.phase === "lobby" && amHost(state)),
  };
}

function seatClass(entry, flags) {
  const names = ["seat"];
  if (!entry) names.push("seat--empty");
  if (flags.you) names.push("seat--you");
  if (flags.turn) names.push("seat--turn");
  if (flags.frozen) names.push("seat--frozen");
  if (entry && entry.out) names.push("seat--out");
  if (entry && !entry.bot && entry.connected === false) names.push("seat--offline");
  return names.join(" ");
}

function describeSeat(entry, flags, index) {
  if (!entry) return say("seat.empty.label", { number: index + 1 });
  const bits = [flags.you ? say("seat.you.label", { name: nameOf(entry) }) : nameOf(entry)];
  if (entry.bot) bits.push(say("seat.bot"));
  if (flags.host) bits.push(say("seat.host"));
  if (flags.turn) bits.push(say("seat.to_flip"));
  if (entry.out) bits.push(say("seat.out"));
  else if (typeof entry.cards === "number") bits.push(countOf("cards", entry.cards));
  if (flags.frozen) bits.push(say("seat.frozen"));
  if (!entry.bot && entry.connected === false) bits.push(say("seat.away"));
  return bits.join(say("list.and"));
}

function updateSeat(cache, state, index, list, stage) {
  const entry = state.seats[index];
  const flags = seatFlags(state, index, entry);
  // The big screen is a stage, never a seat: it offers none.
  const canSit = !stage && !entry && state.phase === "lobby" && mySeat(state) === null;
  // frozen_ms changes with every state during a freeze: the countdown ticks in freeze.js, so
  // only being frozen or not rebuilds the seat (a rebuilt seat would lose its countdown).
  const lagFair = Boolean(state.rules?.lag_fair); // the lag badges show only under the rule
  const signature = JSON.stringify([entry && { ...entry, frozen_ms: undefined }, flags, canSit, state.phase, lagFair]);
  let record = cache.get(index);
  if (!record) {
    record = { node: el("li"), signature: "" };
    record.node.dataset.seat = String(index);
    record.node.addEventListener("animationend", () => record.node.classList.remove("seat--took"));
    cache.set(index, record);
  }
  if (record.signature !== signature) {
    record.signature = signature;
    const celebrating = record.node.classList.contains("seat--took"); // keep a running pulse
    record.node.className = seatClass(entry, flags) + (celebrating ? " seat--took" : "");
    record.node.setAttribute("aria-label", describeSeat(entry, flags, index));
    record.node.replaceChildren(...(entry ? takenSeat(state, entry, flags) : emptySeat(index, canSit)));
    record.fresh = true;
  }
  if (record.node.parentNode !== list) list.append(record.node);
  return record.node;
}

// `cache` is store.view.seats: seat index -> { node, signature, fresh }, so a seat is
// rebuilt only when what it shows changes. `stage`: the big screen, which offers no seat.
// Returns the seats rebuilt (their names are fitted once they are in place).
export function renderSeats(cache, state, list, { stage = false } = {}) {
  const order = ringOrder(state);
  const visible = new Set(order);
  const rebuilt = [];
  order.forEach((index, position) => {
    const node = updateSeat(cache, state, index, list, stage);
    if (cache.get(index).fresh) {
      cache.get(index).fresh = false;
      rebuilt.push(node);
    }
    // Position 0 (you) at the bottom, then clockwise round the ellipse.
    const angle = Math.PI / 2 + (position * 2 * Math.PI) / order.length;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    node.style.setProperty("--cos", cos.toFixed(4));
    node.style.setProperty("--sin", sin.toFixed(4));
    // The same direction on a rectangle's rim: phones' tall tables seat people in the corners
    // too (three across the top, three across the bottom with eight), where an ellipse
    // would crowd them together at the bottom.
    const reach = Math.max(Math.abs(cos), Math.abs(sin));
    node.style.setProperty("--square-cos", (cos / reach).toFixed(4));
    node.style.setProperty("--square-sin", (sin / reach).toFixed(4));
  });
  for (const [index, record] of cache) {
    if (!visible.has(index) || index >= state.seats.length) record.node.remove();
  }
  return rebuilt;
}
