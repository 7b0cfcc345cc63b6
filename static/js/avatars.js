// The optional avatar: one emoji picked on the home page or the name form, kept with the
// name on this device and sent with it when joining (the server keeps one emoji or none).

import { el } from "./dom.js";
import { say } from "./messages.js";
import { loadAvatar, saveAvatar } from "./storage.js";

export const AVATARS = ["🦊", "🐼", "🐸", "🦄", "🐙", "🐯", "🐧", "🦖", "🤖", "👻", "🌵", "🍕"];

// A radio group inside `holder` (an empty [data-avatar-picker] element of the form):
// "none" and the emoji, the device's choice ticked. Changing it saves it at once.
export function buildAvatarPicker(holder) {
  if (!holder) return;
  const group = el("fieldset", "avatars");
  group.append(el("legend", "field-label", say("avatar.legend")));
  const chosen = loadAvatar();
  const name = `avatar-${holder.id || "pick"}`;
  for (const value of ["", ...AVATARS]) {
    const label = el("label", "avatar-choice");
    const input = el("input");
    input.type = "radio";
    input.name = name;
    input.value = value;
    input.checked = value === chosen || (!value && !AVATARS.includes(chosen));
    input.addEventListener("change", () => input.checked && saveAvatar(value));
    const face = el("span", value ? "avatar-face" : "avatar-face avatar-face--none", value || say("avatar.none"));
    label.append(input, face);
    group.append(label);
  }
  holder.replaceChildren(group);
}
