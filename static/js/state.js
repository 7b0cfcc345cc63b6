// Read-only questions about a state the server sent (store.js keeps the states).
// Nothing here decides a rule: turn, trigger and freezes are the server's answers.

import { say } from "./messages.js";

// What the change that made `state` caused (its `events`, in order), for narration.js: a state
// carries its own events, so they are told exactly when their state is taken.
export const eventsOf = (state) => (state && Array.isArray(state.events) ? state.events : []);
export const mySeat = (state) => (state && state.you ? state.you.seat ?? null : null);
export const amHost = (state) => Boolean(state && state.you && state.you.host);
export const seatAt = (state, seat) => (state && state.seats ? state.seats[seat] || null : null);
export const seatedCount = (state) => (state && state.seats ? state.seats.filter(Boolean).length : 0);

// A seat's name as the page writes it: a bot's by its level, in the page's language (the
// server's bot names are English), a person's as they typed it.
// Bots have distinct friendly names from the server ("Robo Rita"): names, not words to translate.
export const nameOf = (entry) => entry?.name ?? "";

// "You" for your own seat, else the seat's name (a bot's in the page's language), else the
// name the event carries (someone who has left the seat).
export function eventName(state, event) {
  if (event.seat === mySeat(state)) return say("you");
  if (seatAt(state, event.seat)) return seatName(state, event.seat);
  return event.name || seatName(state, event.seat);
}

// Whether a field of the server's has a value (null and absent are none; 0 and "" are values).
export const given = (value) => value !== null && value !== undefined;

export function seatName(state, seat) {
  const entry = seatAt(state, seat);
  if (!entry) return say("seat.number", { number: Number(seat) + 1 });
  return seat === mySeat(state) ? say("you") : nameOf(entry);
}

export function isMyTurn(state) {
  const seat = mySeat(state);
  return Boolean(state && state.phase === "playing" && seat !== null && state.next === seat);
}

// Why the seat to play may not flip yet, by the server's own state: "frozen" (after a
// wrong slap), "trigger" (one shows and has not lapsed), "collect" (the pause after a
// take), or null when a flip would be accepted.
export function flipWait(state) {
  if (!state) return null;
  if (seatAt(state, state.next)?.frozen_ms > 0) return "frozen";
  if ((state.trigger || state.slap_open) && !state.trigger_lapsed) return "trigger";
  if (state.collect_ms > 0) return "collect";
  return null;
}

// Your turn, and the server would take your flip now: the deck says "Your turn" only then.
export const canFlip = (state) => isMyTurn(state) && flipWait(state) === null;

// Everyone in the room by player id (seated or watching), for names in events.
export function people(state) {
  const byPlayer = new Map();
  for (const person of state?.spectators || []) if (person && person.player) byPlayer.set(person.player, person);
  for (const entry of state?.seats || []) if (entry && entry.player) byPlayer.set(entry.player, entry);
  return byPlayer;
}

// Whom the host may remove for good (`kick`): everyone here but themselves and the table's
// own host (`owner`, who takes the role back on returning: a stand-in host cannot remove them).
export function removableByHost(state) {
  return [...people(state).values()].filter(
    (person) => person.player !== state?.you?.player && person.player !== state?.owner,
  );
}

export function hostName(state) {
  if (!state) return null;
  if (amHost(state)) return say("host.you");
  return people(state).get(state.host)?.name ?? null;
}
