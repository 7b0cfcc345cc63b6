// The home page: create a table (with optional house rules) or join one by its code.

import { byId, setText, show } from "./dom.js";
import { roomCodeFrom } from "./codes.js";
import { followBrowserLanguage } from "./language.js";
import { errorText, say } from "./messages.js";
import { readRules } from "./rules.js";
import { buildAvatarPicker } from "./avatars.js";
import { loadName, saveName } from "./storage.js";

function fail(id, message) {
  setText(byId(id), message);
  show(byId(id), Boolean(message));
}

// The page's words for the server's error code (messages.js), never its English message.
function refusal(error) {
  return error?.code ? errorText(error) : say("home.create_failed");
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
    if (response.ok && body.url) {
      window.location.assign(body.url);
      return;
    }
    fail("create-error", refusal(body.error));
  } catch {
    fail("create-error", say("home.no_server"));
  }
  button.disabled = false;
  setText(button, say("home.create"));
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

// A first visit whose browser prefers the other language loads the page again in it.
if (!followBrowserLanguage()) {
  byId("create-name").value = loadName();
  buildAvatarPicker(byId("create-avatar"));
  byId("create-form").addEventListener("submit", createRoom);
  byId("join-form").addEventListener("submit", joinRoom);
}
