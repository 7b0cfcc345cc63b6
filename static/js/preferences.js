// The top bar's switches: sound on/off and the four-colour deck, remembered on this device.

import { byId } from "./dom.js";
import { load, save } from "./storage.js";

// `sound` is the page's sounds (sound.js).
export function wirePreferences(sound) {
  const soundToggle = byId("sound-toggle");
  const colours = byId("colours-toggle");
  const applyColours = (on) => {
    document.body.classList.toggle("four-colour", on);
    colours.setAttribute("aria-pressed", String(on));
  };
  soundToggle.setAttribute("aria-pressed", String(!sound.isMuted()));
  soundToggle.addEventListener("click", () => {
    sound.setMuted(!sound.isMuted());
    soundToggle.setAttribute("aria-pressed", String(!sound.isMuted()));
  });
  applyColours(load("fourColour", false));
  colours.addEventListener("click", () => {
    const on = !document.body.classList.contains("four-colour");
    save("fourColour", on);
    applyColours(on);
  });
}
