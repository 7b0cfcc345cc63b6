// What just happened, told four ways: a banner on the table, a sound, a buzz, and the
// aria-live announcer for screen readers. Driven by the server's `event` messages.

import { cardLabel, cardName } from "./cards.js";
import { byId, el, setText } from "./dom.js";
import { noteFlip, slidePileTo } from "./motion.js";
import { triggerWords } from "./rules.js";
import { play } from "./sound.js";
import { isMyTurn, mySeat, people, seatAt, seatName } from "./state.js";

const BANNER_MS = 2600;
let bannerTimer = 0;
let bannerAbout = ""; // "freeze": the banner tells why you are frozen, and goes when it ends
let lastTaker = null;
const knownNames = new Map(); // player id -> name, kept after they leave for "Sam left"

export function announce(text) {
  const region = byId("announcer");
  // Clearing first makes screen readers repeat an identical message.
  region.textContent = "";
  requestAnimationFrame(() => setText(region, text));
}

export function banner(text, tone = "", about = "") {
  bannerAbout = about;
  const node = byId("banner");
  node.className = `banner banner--fresh${tone ? ` banner--${tone}` : ""}`;
  setText(node, text);
  void node.offsetWidth; // restart the pop animation for back-to-back messages
  clearTimeout(bannerTimer);
  bannerTimer = setTimeout(clearBanner, BANNER_MS);
}

// A banner tells what just happened; once the table has moved on it would only mislead.
function clearBanner() {
  clearTimeout(bannerTimer);
  bannerAbout = "";
  const node = byId("banner");
  node.className = "banner";
  setText(node, "");
}

// `game`: a note about the game in progress, dropped as soon as the phase changes.
export function toast(text, { game = false } = {}) {
  announce(text);
  const node = el("div", "toast", text);
  node.dir = "auto";
  if (game) node.dataset.scope = "game";
  byId("toasts").append(node);
  setTimeout(() => node.remove(), 3200);
}

function dropGameToasts() {
  for (const node of byId("toasts").querySelectorAll('[data-scope="game"]')) node.remove();
}

// Browsers refuse (and complain about) vibration before the person has touched the page,
// e.g. right after a refresh: only buzz once they have.
function buzz(pattern) {
  const touched = navigator.userActivation ? navigator.userActivation.hasBeenActive : true;
  if (navigator.vibrate && touched) navigator.vibrate(pattern);
}

function name(state, event) {
  if (event.seat === mySeat(state)) return "You";
  return event.name || seatName(state, event.seat);
}

const HANDLERS = {
  flip(state, event) {
    noteFlip(event.seat);
    play("flip");
    if (event.auto && event.seat !== mySeat(state)) toast(`Flipped for ${name(state, event)} (away)`, { game: true });
    else if (event.auto) toast("Flipped for you: it was your turn", { game: true });
    if (!state.trigger && event.card) announce(`${name(state, event)} flipped the ${cardName(event.card)}`);
  },
  take(state, event) {
    const mine = event.seat === mySeat(state);
    slidePileTo(event.seat);
    lastTaker = name(state, event);
    const count = event.count ? `${event.count} card${event.count === 1 ? "" : "s"}` : "the pile";
    const speed = typeof event.reaction_ms === "number" ? ` · ${Math.round(event.reaction_ms)} ms` : "";
    const how = event.reason === "last_card" ? " with a last-card Jack" : "";
    const text = mine ? `You take ${count}${how}!${speed}` : `${lastTaker} takes ${count}${how}${speed}`;
    banner(text, mine ? "good" : "");
    announce(text);
    play(mine ? "take" : "slap");
    if (mine) buzz(40);
  },
  false_slap(state, event) {
    const mine = event.seat === mySeat(state);
    let penalty = "";
    if (event.card) penalty = `${cardLabel(event.card)} burned`;
    else if (event.to !== null && event.to !== undefined) penalty = `a card goes to ${seatName(state, event.to)}`;
    const text = mine ? `Wrong slap! ${penalty}` : `${name(state, event)} slapped wrong: ${penalty}`;
    banner(text, mine ? "bad" : "", mine ? "freeze" : "");
    announce(mine ? `${text}. You are frozen for a moment.` : text);
    if (mine) {
      setText(byId("freeze-burn"), penalty);
      play("wrong");
      buzz([70, 50, 70]);
    }
  },
  late(state, event) {
    if (event.seat !== mySeat(state)) return;
    const text = lastTaker && lastTaker !== "You" ? `Too late! ${lastTaker} was faster. No penalty.` : "Too late! No penalty.";
    banner(text);
    announce(text);
    play("late");
  },
  out(state, event) {
    const mine = event.seat === mySeat(state);
    // The last one out ends the game: the game-over card says the rest.
    if (state.phase !== "playing") return;
    toast(mine ? "You're out of cards. Keep watching!" : `${name(state, event)} is out`, { game: true });
  },
  win(state, event) {
    const mine = event.seat === mySeat(state);
    announce(mine ? "You win the game!" : `${name(state, event)} wins the game`);
    play("win");
    if (mine) buzz([50, 40, 50, 40, 120]);
  },
  start(state, event) {
    // The room's own triggers, as the server lists them: words to read, not a rule to apply.
    const when = triggerWords(state.rules?.triggers, "one");
    const hint = when ? ` Slap when ${when} shows` : "";
    banner(`${event.rematch ? "New game!" : "Cards dealt!"}${hint}`, "good");
    announce(`Game ${event.game ?? ""} starts. ${seatName(state, state.next)} flips first.`);
  },
  join(state, event) {
    if (event.player !== state.you?.player && event.name) toast(`${event.name} joined`);
  },
  leave(state, event) {
    const who = knownNames.get(event.player);
    if (who && event.player !== state.you?.player) toast(`${who} left`);
  },
  disconnect(state, event) {
    const who = knownNames.get(event.player);
    if (who && event.seat !== null && event.seat !== undefined) toast(`${who} lost connection`);
  },
  reconnect(state, event) {
    const who = knownNames.get(event.player);
    if (who && event.player !== state.you?.player && event.seat !== null && event.seat !== undefined) toast(`${who} is back`);
  },
  remove(state, event) {
    if (event.player && event.player === state.you?.player) toast("The host freed your seat: you're watching");
  },
  host(state, event) {
    if (event.player === state.you?.player) toast("You're the host now");
  },
  abandon() {
    toast("The players left, so that game is over. Sit down for the next one.");
  },
  restart(state, event) {
    // The server is shutting down: its text says what happens to this table.
    banner(event.message || "The server is restarting", "bad");
    toast(event.message || "The server is restarting");
  },
};

export function rememberNames(state) {
  for (const [player, person] of people(state)) knownNames.set(player, person.name);
}

// One `event` message is one object with a `kind` (docs/protocol.md).
export function handleEvent(state, event) {
  const handler = event && HANDLERS[event.kind];
  if (handler) handler(state, event);
}

const frozenIn = (state) => Boolean(state && seatAt(state, mySeat(state))?.frozen_ms > 0);
const freezeEnded = (state, previous) => frozenIn(previous) && !frozenIn(state);
// Your turn coming round (a freeze still running keeps its "wrong slap" banner).
const turnCame = (state, previous) => isMyTurn(state) && !isMyTurn(previous) && !frozenIn(state);

// Changes visible in the state alone: a trigger appearing, your turn coming round.
// A state arrives before the events it led to, so a banner cleared here can be replaced
// by the event's own at once.
export function handleStateChange(state, previous) {
  const triggerNow = Boolean(state.trigger || state.slap_open);
  const triggerBefore = Boolean(previous && (previous.trigger || previous.slap_open));
  const phaseChanged = Boolean(previous && previous.phase !== state.phase);
  if (phaseChanged) dropGameToasts();
  if (phaseChanged || (triggerNow && !triggerBefore) || turnCame(state, previous)) clearBanner();
  else if (bannerAbout === "freeze" && freezeEnded(state, previous)) clearBanner();
  if (state.phase === "playing" && triggerNow && !triggerBefore) {
    const top = state.pile?.top?.at(-1);
    announce(top ? `${cardName(top)}! Slap!` : "Slap!");
    play("jack");
  }
  const mine = mySeat(state);
  const myTurnNow = state.phase === "playing" && mine !== null && state.next === mine;
  const myTurnBefore = previous && previous.phase === "playing" && previous.next === mine;
  if (myTurnNow && !myTurnBefore) {
    play("turn");
    buzz(15); // a nudge for a phone lying on the table
  }
  const rulesChanged = previous && JSON.stringify(previous.rules) !== JSON.stringify(state.rules);
  if (rulesChanged && !state.you?.host) toast("The host changed the house rules");
}

const ERROR_TEXT = {
  out: "You're out of this game",
  no_cards: "No cards left to flip",
  rate_limited: "Whoa, easy! Too many taps",
  wrong_phase: "Not right now",
  not_seated: "Take a seat to play",
  not_your_turn: "Not your turn yet",
  slap_pending: "Slap first! The pile is up for grabs",
  offline: "Not connected, retrying...",
};

export function actionFailed(error) {
  // A tap that crossed the winning one: the game-over card already says it all.
  if (!error || error.code === "game_over") return;
  if (error.code === "frozen") {
    // The countdown already says it; a nudge keeps the "wrong slap" banner readable.
    const freeze = byId("freeze");
    freeze.classList.remove("freeze--nudge");
    void freeze.offsetWidth;
    freeze.classList.add("freeze--nudge");
    return;
  }
  const text = ERROR_TEXT[error.code] || error.message || "That didn't work";
  banner(text, "bad");
}
