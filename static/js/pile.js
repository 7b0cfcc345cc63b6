// The centre pile: the top card big enough to read at arm's length, the two under it fanned;
// cards burned under the pile drawn apart, turned and greyed, unless a trigger shows (a
// burned card counts for it like any other: a Jack burned onto an empty pile is one).

import { notePileShown } from "./aim.js";
import { cardElement, cardName } from "./cards.js";
import { el, setText } from "./dom.js";
import { say } from "./messages.js";
import { dealIn } from "./motion.js";

// `view` is the store's whole view: the pile on screen is recorded in view.pile (what a
// slap aims at, see aim.js), and a new top card deals in from the flipper's seat.
export function renderPile(view, state, pileNode, countNode) {
  const pileView = view.pile;
  const pile = state.pile || { id: 0, count: 0, top: [], burned: 0 };
  const top = Array.isArray(pile.top) ? pile.top : [];
  notePileShown(pileView, state, performance.now());
  // Shown on the page too, for people and tests reading it; a slap aims from the store.
  pileNode.dataset.pileId = String(pileView.id);
  pileNode.classList.toggle("pile--trigger", pileView.trigger);
  setText(countNode, pile.count > 0 ? say("pile.count", { count: pile.count }) : "");

  const burned = burnedOnTop(pile, top, state.trigger);
  const key = `${state.phase}|${pile.id}|${pile.count}|${top.join(",")}|${burned}`;
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
  const cards = top.slice(burned).map((text) => cardElement(text));
  const under = burned ? [burnedCards(top.slice(0, burned))] : [];
  pileNode.replaceChildren(...under, ...cards);
  if (isNewTop && cards.length) dealIn(view.motion, cards[cards.length - 1]);
  pileNode.dataset.top = topCard;
  pileNode.setAttribute("aria-label", say("pile.top.label", { card: cardName(topCard) }));
}

// How many of the shown cards (`top`, the pile's last few) to draw apart as burned. A
// burned card goes to the bottom of the pile, so the first `pile.burned` of the pile (the
// server's count: a reload or a late arrival sees them too) are burned and show only while
// the pile is short. None while a `trigger` shows: the server counts burned cards for it
// like any other, and a trigger drawn greyed and apart would look like no card to slap.
export function burnedOnTop(pile, top, trigger = null) {
  if (trigger) return 0;
  const hidden = Math.max(0, (pile.count ?? top.length) - top.length);
  return Math.max(0, Math.min(top.length, (pile.burned ?? 0) - hidden));
}

function burnedCards(texts) {
  const box = el("div", "pile-burned");
  for (const text of texts) {
    const card = cardElement(text);
    card.classList.add("card--burned");
    card.title = say("pile.burned.label", { card: cardName(text) });
    box.append(card);
  }
  box.append(el("span", "pile-burned-tag", say("pile.burned")));
  return box;
}
