// The photo finish of the last pile won by a slap (the server's `race`), for every screen:
// the taker first, then each other seat that slapped it in time, in arrival order, with
// how far behind the taker's slap it came. Pure (unit-tested).

import { say } from "./messages.js";
import { seatName } from "./state.js";

export function finishRows(state) {
  const race = state?.race;
  if (!race || !Array.isArray(race.runners_up) || !race.runners_up.length) return [];
  const rows = [{ place: 1, seat: race.winner, name: seatName(state, race.winner), behindMs: null }];
  race.runners_up.forEach((runner, index) => {
    rows.push({ place: index + 2, seat: runner.seat, name: seatName(state, runner.seat), behindMs: Math.round(runner.behind_ms) });
  });
  return rows;
}

// "1. Sam · 2. Priya +38 ms · 3. You +52 ms"
export function finishOrder(state) {
  return finishRows(state)
    .map((row) => (row.behindMs === null ? say("race.first", row) : say("race.behind", { ...row, ms: row.behindMs })))
    .join(say("summary.joiner"));
}
