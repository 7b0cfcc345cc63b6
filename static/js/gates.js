// What covers the table when there is no table to show: the name form, a refusal, a drop.
// Also the connection dot and its words in the top bar.

import { byId, setText, show } from "./dom.js";
import { hasMessage, say } from "./messages.js";
import { loadName, saveName } from "./storage.js";

export function setStatus(status) {
  const words = hasMessage(`status.${status}`) ? say(`status.${status}`) : status;
  byId("conn").dataset.status = status;
  // The dot alone does not say what it is: a pointer's hover does ("Connection: connected").
  byId("conn").title = say("status.title", { status: words });
  setText(byId("conn-text"), words);
  // A table we are not connected to may be stale: it is greyed and says so, and taps on it
  // go nowhere, until the connection is back.
  // A paused table (its server cannot reach its store, or its event's organiser paused it:
  // `held`) is shown the same way: nothing it does counts until the server says it goes on.
  const paused = status === "paused" || status === "held";
  const trouble = status === "reconnecting" || status === "restarting" || paused;
  document.body.classList.toggle("is-offline", trouble);
  const why = status === "restarting" || paused ? say(`status.${status}`) : say("offline.reconnecting");
  setText(byId("offline-text"), trouble ? why : "");
  show(byId("offline"), trouble);
}

export function showGate(which) {
  show(byId("name-gate"), which === "name");
  show(byId("fatal"), which === "fatal");
  if (which) show(byId("play"), false);
}

export const gateOpen = () => !byId("fatal").hidden || !byId("name-gate").hidden;

export function fatal(title, message) {
  setText(byId("fatal-title"), title);
  setText(byId("fatal-message"), message);
  showGate("fatal");
}

export function askName(error) {
  showGate("name");
  byId("name-input").value = loadName();
  setText(byId("name-error"), error || "");
  show(byId("name-error"), Boolean(error));
  byId("name-input").focus();
}

// The server's reasons for saying no (docs/protocol.md), each with what the person can do.
export function refused(reason) {
  setStatus("disconnected");
  if (["bad_name", "name_taken", "bad_avatar"].includes(reason.code)) askName(say(`error.${reason.code}`));
  else if (reason.code === "room_locked") fatal(say("refused.room_locked.title"), say("error.room_locked"));
  else if (reason.code === "kicked") fatal(say("refused.kicked.title"), say("error.kicked"));
  else if (reason.code === "no_room") fatal(say("refused.no_room.title"), say("refused.no_room.message"));
  else if (reason.code === "room_full") fatal(say("refused.room_full.title"), say("refused.room_full.message"));
  else if (hasMessage(`error.${reason.code}`)) fatal(say("refused.other.title"), say(`error.${reason.code}`));
  else fatal(say("refused.other.title"), say("refused.other.message"));
}

// The server (or another tab holding our token) closed the connection.
export function closed() {
  setStatus("disconnected");
  fatal(say("closed.title"), say("closed.message"));
}

// The name form (a name is kept on this device, then `named()`) and the refusal's Reconnect
// button (`retry()`).
export function wireNameGate({ named, retry }) {
  byId("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = byId("name-input").value.trim();
    if (!name) {
      askName(say("name.missing"));
      return;
    }
    saveName(name);
    showGate(null);
    named();
  });
  byId("fatal-retry").addEventListener("click", () => {
    showGate(null);
    retry();
  });
}
