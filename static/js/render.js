// Draws the latest state on the next animation frame: at most one render per frame,
// always of the newest state (older ones in between are simply skipped).

import { byId, setText, show } from "./dom.js";
import { fitName, fitNames } from "./fit.js";
import { noteFreezes } from "./freeze.js";
import { hasMessage, say } from "./messages.js";
import { renderControls, renderFinish, renderGameOver, renderLobby } from "./panels.js";
import { renderPile } from "./pile.js";
import { renderSeats } from "./seats.js";
import { canFlip, mySeat } from "./state.js";
import { renderDoor } from "./door.js";

// What the table shouts when a trigger shows (the server names the trigger): "call.jack"...
const call = (trigger) => say(hasMessage(`call.${trigger}`) ? `call.${trigger}` : "call.slap");

function renderPage(state) {
  const body = document.body;
  body.dataset.phase = state.phase;
  // "mine" lights the deck: only while the server would take a flip from you.
  body.dataset.turn = canFlip(state) ? "mine" : "other";
  const trigger = state.trigger || (state.slap_open ? "slap" : "");
  if (trigger) body.dataset.trigger = trigger;
  else delete body.dataset.trigger;
  setText(byId("slap-call"), call(trigger));
  body.classList.toggle("spectating", mySeat(state) === null);
  show(byId("play"), true);
}

// `view` is the store's view state: the seats' nodes, the pile on screen, the freezes.
export function draw(state, view) {
  renderPage(state);
  const stage = document.body.dataset.tv === "1";
  for (const seat of renderSeats(view.seats, state, byId("seats"), { stage })) {
    for (const name of seat.querySelectorAll(".name-text")) fitName(name);
  }
  renderPile(view, state, byId("pile"), byId("pile-count"));
  renderControls(state);
  if (renderFinish(state, stage)) fitNames(byId("finish"));
  if (state.phase === "lobby") renderLobby(state);
  renderDoor(state); // the host's door: the lobby's only, hidden in every other phase
  if (renderGameOver(state, view.over)) fitNames(byId("over"));
  noteFreezes(view.freeze, state);
}

export function createRenderer(store) {
  let pending = false;
  function frame() {
    pending = false;
    const state = store.get();
    if (state) draw(state, store.view);
  }
  return function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(frame);
  };
}
