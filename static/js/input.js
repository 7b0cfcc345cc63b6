// Taps and keys become actions. Slaps fire on pointerdown (not click): no 300 ms wait,
// no double-tap zoom (touch-action: manipulation in the CSS). Space slaps; F or Enter flips.

import { aimedPileId } from "./aim.js";
import { byId, el } from "./dom.js";
import { mySeat } from "./state.js";

const TYPING = new Set(["INPUT", "SELECT", "TEXTAREA"]);
const ACTIVATES_ON_ENTER = new Set(["BUTTON", "A", "SUMMARY", ...TYPING]);

function markSlap(x, y) {
  const felt = byId("felt");
  const box = felt.getBoundingClientRect();
  const mark = el("span", "slap-mark");
  mark.style.left = `${(x ?? box.left + box.width / 2) - box.left}px`;
  mark.style.top = `${(y ?? box.top + box.height / 2) - box.top}px`;
  mark.addEventListener("animationend", () => mark.remove());
  felt.append(mark);
  const button = byId("slap");
  button.classList.add("is-hit");
  setTimeout(() => button.classList.remove("is-hit"), 120);
}

// `store` is the page's store, `send` sends a client event and resolves to its ack,
// `feedback` says why one was refused, `sound` plays the slap at once.
export function setupInput({ store, send, feedback, sound }) {
  const playing = () => {
    const state = store.get();
    return Boolean(state && state.phase === "playing" && mySeat(state) !== null);
  };

  async function slap(x, y) {
    if (!playing()) return;
    // The pile on screen: if it is gone by the time the tap arrives, the server says late.
    const pileId = aimedPileId(store.view.pile);
    markSlap(x, y);
    sound.play("slap");
    const ack = await send("slap", { pile_id: pileId });
    if (ack && !ack.ok) feedback.actionFailed(ack.error);
  }

  async function flip() {
    if (!playing()) return;
    if (navigator.vibrate) navigator.vibrate(8); // a tick under the thumb
    const ack = await send("flip", {});
    if (ack && !ack.ok) feedback.actionFailed(ack.error);
  }

  const primary = (event) => event.isPrimary !== false && (event.pointerType !== "mouse" || event.button === 0);

  byId("felt").addEventListener("pointerdown", (event) => {
    if (primary(event) && !event.target.closest("button")) slap(event.clientX, event.clientY);
  });
  byId("slap").addEventListener("pointerdown", (event) => {
    if (primary(event)) slap(event.clientX, event.clientY);
  });
  byId("flip").addEventListener("pointerdown", (event) => {
    if (primary(event) && !byId("flip").disabled) flip();
  });
  // Keyboard activation of the buttons themselves (detail 0: no pointer was involved).
  byId("slap").addEventListener("click", (event) => event.detail === 0 && slap());
  byId("flip").addEventListener("click", (event) => event.detail === 0 && flip());

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || TYPING.has(event.target.tagName)) return;
    const key = event.key;
    if (key === " " || key === "Spacebar") {
      if (!playing()) return;
      event.preventDefault(); // no page scroll, no click on a focused button
      if (!event.repeat) slap();
    } else if (key === "f" || key === "F") {
      if (!event.repeat) flip();
    } else if (key === "Enter" && !ACTIVATES_ON_ENTER.has(event.target.tagName)) {
      if (!event.repeat) flip();
    }
  });

  // A switch clicked with a pointer (sound, four colours) gives the focus back to the page:
  // Enter then flips, as everywhere else, instead of pressing the switch again. Keyboard
  // users who tab to a switch keep it (their click has detail 0).
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest?.("button[aria-pressed]");
    if (toggle && event.detail > 0) toggle.blur();
  });

  // Audio may only start after a gesture: the first tap or key unlocks it.
  for (const type of ["pointerdown", "keydown"]) {
    document.addEventListener(type, () => sound.unlock(), { capture: true, passive: true });
  }
}
