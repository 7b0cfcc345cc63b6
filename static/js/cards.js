// Card text from the server ("10H", "JS") to what a person reads. Display only, no rules.

import { hasMessage, say } from "./messages.js";

const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
const FACE_RANKS = new Set(["J", "Q", "K"]);

export function parseCard(text) {
  const value = String(text).toUpperCase();
  const suit = value.slice(-1);
  return { rank: value.slice(0, -1), suit, symbol: SUIT_SYMBOL[suit] || "?" };
}

export function cardLabel(text) {
  const { rank, symbol } = parseCard(text);
  return `${rank}${symbol}`;
}

export function cardName(text) {
  const { rank, suit } = parseCard(text);
  const word = (kind, value) => (hasMessage(`${kind}.${value}`) ? say(`${kind}.${value}`) : value);
  return say("card.name", { rank: word("rank", rank), suit: word("suit", suit) });
}

function corner(rank, symbol, position) {
  const node = document.createElement("span");
  node.className = `card-corner card-corner--${position}`;
  node.append(rank, document.createElement("br"));
  const pip = document.createElement("small");
  pip.textContent = symbol;
  node.append(pip);
  return node;
}

export function cardElement(text) {
  const { rank, suit, symbol } = parseCard(text);
  const card = document.createElement("div");
  card.className = `card card--${suit}`;
  if (FACE_RANKS.has(rank)) card.classList.add("card--face");
  card.dataset.card = `${rank}${suit}`;
  const face = document.createElement("span");
  face.className = "card-face";
  if (FACE_RANKS.has(rank)) {
    const pip = document.createElement("small");
    pip.textContent = symbol;
    face.append(rank, pip);
  } else {
    face.textContent = symbol;
  }
  card.append(corner(rank, symbol, "top"), face, corner(rank, symbol, "bottom"));
  return card;
}
