// A table of an event (its `state.heat`): the event's name and the round above the table,
// what the game-over card says instead of "Play again" (the event deals the next game, and
// sends the winner on), and the way back to the event. Pure but `renderHeat`.

import { byId, setText, show } from "./dom.js";
import { countOf, say } from "./messages.js";
import { mySeat, seatName } from "./state.js";

export const heatOf = (state) => state?.heat || null;

// "{event} · Round {round} · first to win {n} games", or "{event} · The final · ..."
export function heatLine(state) {
  const heat = heatOf(state);
  if (!heat) return "";
  const round = heat.final ? say("event.final") : say("event.round", { round: heat.round });
  return [heat.name, round, countOf("event.rules.first_to", heat.first_to)].join(say("summary.joiner"));
}

// What the game-over card says at a heat: who won the table (and goes through), or that the
// next game comes.
export function heatResult(state) {
  const heat = heatOf(state);
  if (!heat || state.phase !== "over") return "";
  if (heat.winner === null || heat.winner === undefined) return countOf("heat.next_game", heat.first_to);
  const mine = heat.winner === mySeat(state);
  if (heat.final) return mine ? say("heat.you_won_final") : say("heat.won_final", { name: seatName(state, heat.winner) });
  return mine ? say("heat.you_through") : say("heat.through", { name: seatName(state, heat.winner) });
}

// Where "Back to the event" goes: the event's page, or for the big screen the page it came
// from (`back`, a path of this site's events only).
export function eventHome(state, back = "") {
  const heat = heatOf(state);
  if (!heat) return null;
  if (/^\/e\/[A-Za-z0-9]+(\/tv)?$/.test(back)) return back;
  return `/e/${heat.event}`;
}

export const heatDecided = (state) => Boolean(heatOf(state) && state.phase === "over" && heatOf(state).winner !== null && heatOf(state).winner !== undefined);

export function renderHeat(state, back) {
  const heat = heatOf(state);
  document.body.classList.toggle("is-heat", Boolean(heat));
  show(byId("heat-line"), Boolean(heat));
  if (!heat) return;
  setText(byId("heat-line"), heatLine(state));
  if (state.phase === "lobby") setText(byId("lobby-status"), say("heat.gathering"));
  const result = heatResult(state);
  setText(byId("heat-result"), result);
  show(byId("heat-result"), Boolean(result));
  const toEvent = byId("to-event");
  show(toEvent, heatDecided(state));
  toEvent.href = eventHome(state, back) || "/";
}
