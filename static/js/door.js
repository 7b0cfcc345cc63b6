// The host's door, in the lobby (below the invitation): lock the table (nobody new gets in), share a fresh invite
// link that lets its holder in anyway, and remove someone for good (`kick`: their seat, the
// room, and their way back in). Everyone sees whether the table is locked; the server decides
// who gets in and who may do this.

import { byId, el, setText, show } from "./dom.js";
import { say } from "./messages.js";
import { amHost, removableByHost } from "./state.js";

// The page's link with an invite in it (`?invite=`), which the room page sends on joining.
export function inviteUrl(shareUrl, invite) {
  const url = new URL(shareUrl, window.location.href);
  url.searchParams.set("invite", invite);
  return url.toString();
}

// The invite this page was opened with, if any (kept for its reconnections).
export const inviteOf = (search) => new URLSearchParams(search).get("invite") || "";

function personRow(person) {
  const row = el("li", "door-person");
  const name = el("span", "door-name", person.name);
  name.dir = "auto";
  const kick = el("button", "btn btn--ghost door-kick", say("door.kick"));
  kick.type = "button";
  kick.dataset.kick = person.player;
  kick.setAttribute("aria-label", say("door.kick.label", { name: person.name }));
  row.append(name, kick);
  return row;
}

export function renderDoor(state) {
  const host = amHost(state);
  const locked = Boolean(state.locked);
  const lobby = state.phase === "lobby";
  show(byId("door"), host && lobby);
  const lock = byId("lock");
  setText(lock, say(locked ? "door.unlock" : "door.lock"));
  lock.setAttribute("aria-pressed", String(locked));
  show(byId("invite"), host && locked);
  if (!locked) show(byId("invite-link"), false);
  setText(byId("locked-note"), locked ? say(host ? "door.locked.host" : "door.locked") : "");
  show(byId("locked-note"), locked && lobby);
  const others = removableByHost(state);
  const signature = JSON.stringify(others.map((person) => [person.player, person.name]));
  const list = byId("door-people");
  if (list.dataset.signature !== signature) {
    list.dataset.signature = signature;
    list.replaceChildren(...others.map(personRow));
  }
  show(byId("door-people-box"), host && others.length > 0);
}

async function copy(input) {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    input.select(); // not a secure context (a LAN address): the old way
    return Boolean(document.execCommand && document.execCommand("copy"));
  }
}

// `act(name, payload)` sends a client event and resolves to its ack (main.js).
export function wireDoor({ act, getState, shareUrl }) {
  byId("lock").addEventListener("click", () => act("lock", { locked: !getState()?.locked }));
  byId("invite").addEventListener("click", async () => {
    const ack = await act("invite", {});
    if (!ack || !ack.ok) return;
    const input = byId("invite-url");
    input.value = inviteUrl(shareUrl, ack.invite);
    show(byId("invite-link"), true);
    input.select();
  });
  byId("copy-invite").addEventListener("click", async () => {
    setText(byId("invite-done"), say((await copy(byId("invite-url"))) ? "share.copied" : "share.copy_by_hand"));
  });
  byId("door-people").addEventListener("click", (event) => {
    const kick = event.target.closest("[data-kick]");
    if (kick) act("kick", { player: kick.dataset.kick });
  });
}
