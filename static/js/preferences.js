// The top bar's switches: sound on/off and the four-colour deck, remembered on this device.

import { byId } from "./dom.js";
import { isMuted, setMuted } from "./sound.js";
import { load, save } from "./storage.js";

export function wirePreferences() {
  const sound = byId("sound-toggle");
  const colours = byId("colours-toggle");
  const applyColours = (on) => {
    document.body.classList.toggle("four-colour", on);
    colours.setAttribute("aria-pressed", String(on));
  };
  sound.setAttribute("aria-pressed", String(!isMuted()));
  sound.addEventListener("click", () => {
    setMuted(!isMuted());
    sound.setAttribute("aria-pressed", String(!isMuted()));
  });
  applyColours(load("fourColour", false));
  colours.addEventListener("click", () => {
    const on = !document.body.classList.contains("four-colour");
    save("fourColour", on);
    applyColours(on);
  });
}
