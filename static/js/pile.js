// The centre pile: the top card big enough to read at arm's length, the two under it fanned.

import { cardElement, cardName } from "./cards.js";
import { el, setText } from "./dom.js";

let shownKey = "";
let shownTop = null;

export function renderPile(state, pileNode, countNode) {
  const pile = state.pile || { id: 0, count: 0, top: [] };
  const top = Array.isArray(pile.top) ? pile.top : [];
  // The pile id on screen is the one a slap aims at (see input.js).
  pileNode.dataset.pileId = String(pile.id ?? 0);
  pileNode.classList.toggle("pile--trigger", Boolean(state.trigger || state.slap_open));
  setText(countNode, pile.count > 0 ? `${pile.count} in the pile` : "");

  const key = `${pile.id}|${pile.count}|${top.join(",")}`;
  if (key === shownKey) return;
  shownKey = key;
  const topCard = top.length ? top[top.length - 1] : null;
  const isNewTop = topCard !== null && topCard !== shownTop;
  shownTop = topCard;

  if (!top.length) {
    const hint = state.phase === "lobby" ? "Cards land here" : "Empty pile";
    pileNode.replaceChildren(el("div", "pile-empty", hint));
    pileNode.removeAttribute("data-top");
    return;
  }
  const cards = top.map((text) => cardElement(text));
  if (isNewTop) cards[cards.length - 1].classList.add("card--new");
  pileNode.replaceChildren(...cards);
  pileNode.dataset.top = topCard;
  pileNode.setAttribute("aria-label", `Top card: ${cardName(topCard)}`);
}
