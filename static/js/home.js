// The home page: create a table (with optional house rules) or join one by its code.

import { byId, setText, show } from "./dom.js";
import { roomCodeFrom } from "./codes.js";
import { say } from "./messages.js";
import { readRules } from "./rules.js";
import { buildAvatarPicker } from "./avatars.js";
import { loadName, saveName } from "./storage.js";

function fail(id, message) {
  setText(byId(id), message);
  show(byId(id), Boolean(message));
}

function refusal(error) {
  if (!error || !error.message) return say("home.create_failed");
  if (error.code === "bad_rules") return say("lobby.refused.rules", { reason: error.message });
  // The body holds only the rules: a malformed one is a choice the server cannot take
  // (say no card ticked to slap on). Its message is a validator's, not for people.
  if (error.code === "bad_request") return say("home.bad_request");
  return error.message;
}

async function createRoom(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const name = byId("create-name").value.trim();
  if (!name) {
    fail("create-error", say("home.name_missing"));
    byId("create-name").focus();
    return;
  }
  saveName(name);
  fail("create-error", "");
  const button = byId("create-button");
  button.disabled = true;
  setText(button, say("home.creating"));
  try {
    const response = await fetch("/api/rooms", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ rules: readRules(form) }),
    });
    const body = await response.json().catch(() => ({}));
    // Errors come as {"error": {"code", "message"}} (docs/protocol.md).
    if (!response.ok || !body.url) throw new Error(refusal(body.error));
    window.location.assign(body.url);
  } catch (error) {
    fail("create-error", error.message || say("home.no_server"));
    button.disabled = false;
    setText(button, say("home.create"));
  }
}

function joinRoom(event) {
  event.preventDefault();
  const code = roomCodeFrom(byId("join-code").value);
  if (!code) {
    fail("join-error", say("home.bad_code"));
    return;
  }
  window.location.assign(`/r/${code}`);
}

byId("create-name").value = loadName();
buildAvatarPicker(byId("create-avatar"));
byId("create-form").addEventListener("submit", createRoom);
byId("join-form").addEventListener("submit", joinRoom);
