// The centre pile: the top card big enough to read at arm's length, the two under it fanned.

import { notePileShown } from "./aim.js";
import { cardElement, cardName } from "./cards.js";
import { el, setText } from "./dom.js";
import { say } from "./messages.js";
import { dealIn } from "./motion.js";

// `view` is the store's whole view: the pile on screen is recorded in view.pile (what a
// slap aims at, see aim.js), and a new top card deals in from the flipper's seat.
export function renderPile(view, state, pileNode, countNode) {
  const pileView = view.pile;
  const pile = state.pile || { id: 0, count: 0, top: [] };
  const top = Array.isArray(pile.top) ? pile.top : [];
  notePileShown(pileView, state, performance.now());
  // Shown on the page too, for people and tests reading it; a slap aims from the store.
  pileNode.dataset.pileId = String(pileView.id);
  pileNode.classList.toggle("pile--trigger", pileView.trigger);
  setText(countNode, pile.count > 0 ? say("pile.count", { count: pile.count }) : "");

  const key = `${state.phase}|${pile.id}|${pile.count}|${top.join(",")}`;
  if (key === pileView.key) return;
  pileView.key = key;
  const topCard = top.length ? top[top.length - 1] : null;
  const isNewTop = topCard !== null && topCard !== pileView.top;
  pileView.top = topCard;

  if (!top.length) {
    pileNode.replaceChildren(el("div", "pile-empty", say("pile.empty")));
    pileNode.removeAttribute("data-top");
    pileNode.setAttribute("aria-label", say("pile.empty.label"));
    return;
  }
  const cards = top.map((text) => cardElement(text));
  pileNode.replaceChildren(...cards);
  if (isNewTop) dealIn(view.motion, cards[cards.length - 1]);
  pileNode.dataset.top = topCard;
  pileNode.setAttribute("aria-label", say("pile.top.label", { card: cardName(topCard) }));
}
