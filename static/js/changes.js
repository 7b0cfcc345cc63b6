// Changes visible in the state alone, found by comparing the newest state with the one
// before it: a trigger appearing, your turn coming round, a freeze ending, the phase or the
// house rules changing. Pure: returns effects in narration.js's shape (plus "clearBanner"
// and "dropGameToasts") for feedback.js to carry out.

import { cardName } from "./cards.js";
import { say } from "./messages.js";
import { isMyTurn, mySeat, seatAt } from "./state.js";

const frozenIn = (state) => Boolean(state && seatAt(state, mySeat(state))?.frozen_ms > 0);
const freezeEnded = (state, previous) => frozenIn(previous) && !frozenIn(state);
// Your turn coming round (a freeze still running keeps its "wrong slap" banner).
const turnCame = (state, previous) => isMyTurn(state) && !isMyTurn(previous) && !frozenIn(state);
const triggerIn = (state) => Boolean(state && (state.trigger || state.slap_open));

// A state arrives before the events it led to, so a banner cleared here can be replaced by
// the event's own at once. `bannerAbout` is what the banner on screen is about ("freeze").
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
  const rulesChanged = previous && JSON.stringify(previous.rules) !== JSON.stringify(state.rules);
  if (rulesChanged && !state.you?.host) effects.push(["toast", { text: say("rules.changed"), game: false }]);
  return effects;
}
