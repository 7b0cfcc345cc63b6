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
// within a reaction time of the pile being taken was aimed at the taken pile, so it is
// sent with that id and the server calls it late (free), not a slap on the new pile.
const REACTION_MS = 250;
export function aimedPileId(pileNode, now = performance.now()) {
  const onScreen = Number(pileNode.dataset.pileId);
  return now - handover.at < REACTION_MS && handover.previousId !== null ? handover.previousId : onScreen;
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
