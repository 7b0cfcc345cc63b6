// Changes visible in the state alone, found by comparing the newest state with the one
// before it: a trigger appearing, your turn coming round, a freeze ending, the phase or the
// house rules changing, a photo finish. Pure: returns effects in narration.js's shape (plus
// "clearBanner", "dropGameToasts" and ["nudge", key]: say "Slap it!" after NUDGE_MS if the
// trigger `key` still shows unslapped, see nudgeDue) for feedback.js to carry out.

import { cardName } from "./cards.js";
import { finishOrder } from "./finish.js";
import { say } from "./messages.js";
import { given, isMyTurn, mySeat, seatAt, seatName } from "./state.js";

// A trigger showing this long unslapped gets a nudge (the server lets it lapse later).
export const NUDGE_MS = 3000;

const frozenIn = (state) => Boolean(state && seatAt(state, mySeat(state))?.frozen_ms > 0);
const freezeEnded = (state, previous) => frozenIn(previous) && !frozenIn(state);
// Your turn coming round (a freeze still running keeps its "wrong slap" banner).
const turnCame = (state, previous) => isMyTurn(state) && !isMyTurn(previous) && !frozenIn(state);
const triggerIn = (state) => Boolean(state && (state.trigger || state.slap_open));

// A state's changes are carried out before its events are told (feedback.js), so a banner
// cleared here can be replaced by an event's own at once. `bannerAbout` is what the banner on screen is about ("freeze").
export function stateChanges(state, previous, bannerAbout = "") {
  const effects = [];
  const triggerNow = triggerIn(state);
  const triggerBefore = triggerIn(previous);
  const phaseChanged = Boolean(previous && previous.phase !== state.phase);
  if (phaseChanged) effects.push(["dropGameToasts"]);
  if (phaseChanged || (triggerNow && !triggerBefore) || turnCame(state, previous)) effects.push(["clearBanner"]);
  else if (bannerAbout === "freeze" && freezeEnded(state, previous)) effects.push(["clearBanner"]);
  if (state.phase === "playing" && triggerNow && !triggerBefore) {
    const top = state.pile?.top?.at(-1);
    effects.push(["announce", top ? say("trigger.said", { card: cardName(top) }) : say("trigger.plain")]);
    effects.push(["sound", "jack"]);
  }
  const mine = mySeat(state);
  const myTurnNow = state.phase === "playing" && mine !== null && state.next === mine;
  const myTurnBefore = previous && previous.phase === "playing" && previous.next === mine;
  if (myTurnNow && !myTurnBefore) {
    effects.push(["sound", "turn"]);
    effects.push(["buzz", 15]); // a nudge for a phone lying on the table
    effects.push(["announce", say("controls.your_turn")]);
  }
  if (state.phase === "playing" && triggerNow && !triggerBefore) effects.push(["nudge", triggerKey(state)]);
  const race = raceNews(state, previous);
  if (race) effects.push(["banner", race], ["announce", race.text]);
  const rulesChanged = previous && JSON.stringify(previous.rules) !== JSON.stringify(state.rules);
  if (rulesChanged && !state.you?.host) effects.push(["toast", { text: say("rules.changed"), game: false }]);
  return effects;
}

// Why the tie rule gave `winner` the pile: it was next to flip (`next`, the race's `tie`),
// or it sits nearest after that seat among the tied ("Sam was next to flip").
export function tieWhy(state, winner, next) {
  const mine = mySeat(state);
  if (winner === next) return winner === mine ? say("tie.next.you") : say("tie.next", { name: seatName(state, winner) });
  const after = seatName(state, next);
  if (winner === mine) return say("tie.after.you", { next: after });
  return say("tie.after", { name: seatName(state, winner), next: after });
}

// "Sam and Priya tied: Sam was next to flip!": a photo finish the tie rule decided (the
// milliseconds say nothing there: a tied slap may even have arrived first).
function tieNews(state, race, loser) {
  const mine = mySeat(state);
  const why = tieWhy(state, race.winner, race.tie);
  if (race.winner === mine) return { text: say("race.you_tie", { loser: seatName(state, loser), why }), tone: "good", about: "" };
  if (loser === mine) return { text: say("race.tie_you", { winner: seatName(state, race.winner), why }), tone: "", about: "" };
  return { text: say("race.tie", { winner: seatName(state, race.winner), loser: seatName(state, loser), why }), tone: "", about: "" };
}

// Which trigger shows: the pile and how many cards are on it (a flip or a burn changes it).
export const triggerKey = (state) => `${state.pile?.id ?? 0}:${state.pile?.count ?? 0}`;

// Whether the nudge for trigger `key` is still due: the same trigger shows, unslapped and
// not lapsed, in a game still on.
export function nudgeDue(state, key) {
  return Boolean(state && state.phase === "playing" && triggerIn(state) && !state.trigger_lapsed && triggerKey(state) === key);
}

// "Sam beat Priya by 38 ms!": the server's photo finish (`race`) for every screen, when the
// first runner-up of a newly won pile arrives; each slower runner-up after it brings the
// whole order, "Photo finish: 1. Sam · 2. Priya +38 ms · 3. Ali +52 ms".
export function raceNews(state, previous) {
  const race = state?.race;
  const runners = race?.runners_up || [];
  const closest = runners[0];
  if (!previous || previous.phase !== "playing" || state.phase === "lobby" || !closest) return null;
  const before = previous.race;
  const known = before && before.pile_id === race.pile_id ? (before.runners_up || []).length : 0;
  if (runners.length <= known) return null;
  const mine = mySeat(state);
  const tone = race.winner === mine ? "good" : "";
  // A tie is told once, by its rule; a slower runner-up adds nothing to it.
  if (given(race.tie)) return known ? null : tieNews(state, race, closest.seat);
  if (runners.length > 1) return { text: say("race.order", { order: finishOrder(state) }), tone, about: "" };
  const ms = Math.round(closest.behind_ms);
  if (race.winner === mine) {
    return { text: say("race.you_beat", { loser: seatName(state, closest.seat), ms }), tone, about: "" };
  }
  if (closest.seat === mine) {
    return { text: say("race.beat_you", { winner: seatName(state, race.winner), ms }), tone, about: "" };
  }
  return { text: say("race.beat", { winner: seatName(state, race.winner), loser: seatName(state, closest.seat), ms }), tone, about: "" };
}
