// The home page: create a table (with optional house rules) or join one by its code.

import { byId, setText, show } from "./dom.js";
import { roomCodeFrom } from "./codes.js";
import { followBrowserLanguage } from "./language.js";
import { errorText, say } from "./messages.js";
import { readRules } from "./rules.js";
import { buildAvatarPicker } from "./avatars.js";
import { loadName, saveName, saveToken } from "./storage.js";

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

// "More than eight?": an event, whose organiser this page becomes (its token is kept as a
// seat's is), then its page.
async function openEvent(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const name = byId("event-name").value.trim();
  if (!name) {
    fail("event-error", say("home.event_name_missing"));
    byId("event-name").focus();
    return;
  }
  const organiser = byId("event-organiser").value.trim();
  if (organiser) saveName(organiser);
  fail("event-error", "");
  const button = byId("event-button");
  button.disabled = true;
  setText(button, say("home.opening"));
  try {
    const response = await fetch("/api/events", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        name,
        organiser: organiser || null,
        size: Number(byId("event-size").value),
        first_to: Number(byId("event-first-to").value),
        bots: byId("event-bots").checked,
        rules: readRules(form),
      }),
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok && body.url) {
      saveToken(body.code, body.token);
      window.location.assign(body.url);
      return;
    }
    fail("event-error", body.error?.code ? errorText(body.error) : say("home.event_failed"));
  } catch {
    fail("event-error", say("home.no_server"));
  }
  button.disabled = false;
  setText(button, say("home.open_event"));
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
  byId("event-organiser").value = loadName();
  byId("event-form").addEventListener("submit", openEvent);
  // The event's house rules, made when its panel first opens (the table's form holds the
  // page's only set of rule fields until then).
  byId("event-panel").addEventListener("toggle", () => {
    const holder = byId("event-rules");
    if (byId("event-panel").open && !holder.children.length) {
      holder.append(byId("event-rules-template").content.cloneNode(true));
    }
  });
}
