// The lobby's and the game-over card's buttons: each sends one client event.

import { guardCard } from "./arming.js";
import { byId } from "./dom.js";
import { fitNames } from "./fit.js";
import { readRules, writeRules } from "./rules.js";

// Game over is a dialog: Tab and Shift+Tab go round its buttons, and focus that wanders
// out (a click on the page behind) comes back, until the game-over card closes.
function trapFocus(dialog) {
  const focusable = () =>
    [...dialog.querySelectorAll("button, [href], input")].filter((node) => !node.disabled && node.getClientRects().length > 0);
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const items = focusable();
    const first = items[0];
    const last = items[items.length - 1];
    const at = document.activeElement;
    if (!items.length) event.preventDefault();
    else if (event.shiftKey && (at === first || at === dialog)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && at === last) {
      event.preventDefault();
      first.focus();
    }
  });
  document.addEventListener("focusin", (event) => {
    if (!dialog.hidden && !dialog.contains(event.target)) (focusable()[0] || dialog).focus();
  });
}

// `over` is the store's view.over: the game-over card's buttons wait a moment (arming.js).
export function wireLobby({ act, leave, getState, shareRecap, over }) {
  trapFocus(byId("over"));
  guardCard(over, byId("over"));
  byId("recap-share").addEventListener("click", () => shareRecap());
  // "All stats" opened: its names are fitted now they have room to be measured.
  byId("over").querySelector(".over-stats").addEventListener("toggle", () => fitNames(byId("over")));
  byId("start").addEventListener("click", () => act("start", {}));
  byId("sit").addEventListener("click", () => act("sit", { seat: null }));
  byId("stand").addEventListener("click", () => act("stand", {}));
  byId("rematch").addEventListener("click", () => act("rematch", {}));
  byId("sit-next").addEventListener("click", () => act("sit", { seat: null }));
  // After a game any lobby action reopens the lobby; an empty rules change is the gentlest.
  byId("to-lobby").addEventListener("click", () => act("rules", {}));
  const rulesForm = byId("rules-form");
  rulesForm.addEventListener("change", async () => {
    const ack = await act("rules", readRules(rulesForm));
    // Refused (say no trigger ticked): the note says why, the form shows the room's rules again.
    if (ack && !ack.ok) writeRules(rulesForm, getState()?.rules);
  });
  rulesForm.addEventListener("submit", (event) => event.preventDefault());
  for (const button of document.querySelectorAll("[data-leave]")) button.addEventListener("click", leave);
  byId("bots").addEventListener("click", (event) => {
    const level = event.target.closest("[data-bot]")?.dataset.bot;
    if (level) act("add_bot", { level });
  });
  byId("seats").addEventListener("click", (event) => {
    const sit = event.target.closest("[data-sit]");
    const remove = event.target.closest("[data-remove]");
    if (sit) act("sit", { seat: Number(sit.dataset.sit) });
    if (remove) act("remove", { seat: Number(remove.dataset.remove) });
  });
}
