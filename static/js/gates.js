// What covers the table when there is no table to show: the name form, a refusal, a drop.
// Also the connection dot and its words in the top bar.

import { byId, setText, show } from "./dom.js";
import { loadName } from "./storage.js";

const STATUS_WORDS = { connected: "connected", reconnecting: "reconnecting...", connecting: "connecting..." };

export function setStatus(status) {
  byId("conn").dataset.status = status;
  setText(byId("conn-text"), STATUS_WORDS[status] || status);
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
  if (reason.code === "bad_name") askName(reason.message);
  else if (reason.code === "no_room") fatal("This table is closed", "It may have closed after everyone left. Start a new one from the home page.");
  else if (reason.code === "room_full") fatal("This table is full", reason.message || "Too many people are in this room right now.");
  else fatal("Could not join", reason.message || "The server refused the connection.");
}
