// The centre pile: the top card big enough to read at arm's length, the two under it fanned.

import { cardElement, cardName } from "./cards.js";
import { el, setText } from "./dom.js";
import { dealIn } from "./motion.js";

let shownKey = "";
let shownTop = null;
let shownId = null;
// When the pile on screen last changed hands, and which pile it was before.
const handover = { previousId: null, at: -Infinity };

// The pile a slap aims at. A person reacts to what they saw a moment ago: a tap landing
// within a slow reaction time of the pile being taken, with no new trigger showing, was
// aimed at the taken pile (a Jack someone else won first). It is sent with that pile's id
// and the server calls it late: free, not a wrong slap on the new pile. With a trigger
// showing, the tap is for that trigger. The server judges either way.
const REACTION_MS = 700;
export function aimedPileId(pileNode, now = performance.now()) {
  const onScreen = Number(pileNode.dataset.pileId);
  const justTaken = handover.previousId !== null && now - handover.at < REACTION_MS;
  const triggerShowing = pileNode.classList.contains("pile--trigger");
  return justTaken && !triggerShowing ? handover.previousId : onScreen;
}

export function renderPile(state, pileNode, countNode) {
  const pile = state.pile || { id: 0, count: 0, top: [] };
  const top = Array.isArray(pile.top) ? pile.top : [];
  // The pile id on screen is the one a slap aims at (see input.js).
  const id = pile.id ?? 0;
  if (shownId !== null && id !== shownId) Object.assign(handover, { previousId: shownId, at: performance.now() });
  shownId = id;
  pileNode.dataset.pileId = String(id);
  pileNode.classList.toggle("pile--trigger", Boolean(state.trigger || state.slap_open));
  setText(countNode, pile.count > 0 ? `${pile.count} in the pile` : "");

  const key = `${state.phase}|${pile.id}|${pile.count}|${top.join(",")}`;
  if (key === shownKey) return;
  shownKey = key;
  const topCard = top.length ? top[top.length - 1] : null;
  const isNewTop = topCard !== null && topCard !== shownTop;
  shownTop = topCard;

  if (!top.length) {
    pileNode.replaceChildren(el("div", "pile-empty", "Empty pile"));
    pileNode.removeAttribute("data-top");
    pileNode.setAttribute("aria-label", "The pile is empty");
    return;
  }
  const cards = top.map((text) => cardElement(text));
  pileNode.replaceChildren(...cards);
  if (isNewTop) dealIn(cards[cards.length - 1]);
  pileNode.dataset.top = topCard;
  pileNode.setAttribute("aria-label", `Top card: ${cardName(topCard)}`);
}
