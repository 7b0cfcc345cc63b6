// The room page: asks for a name once, connects, and wires state -> render, events ->
// feedback, taps and keys -> actions. Each concern lives in its own module.

import { byId, setText, show } from "./dom.js";
import { handleEvent, handleStateChange, rememberNames, toast } from "./feedback.js";
import { setupInput } from "./input.js";
import { createRenderer } from "./render.js";
import { readRules } from "./rules.js";
import { setupShare } from "./share.js";
import { openRoomSocket } from "./socket.js";
import { isMuted, setMuted } from "./sound.js";
import { createStore } from "./state.js";
import { load, loadName, loadToken, save, saveName, saveToken } from "./storage.js";
import { keepScreenOn } from "./wakelock.js";

const room = document.body.dataset.room;
const shareUrl = document.body.dataset.shareUrl;
const store = createStore();
const scheduleRender = createRenderer(store);
const share = setupShare({ url: shareUrl, room });
let connection = null;

function setStatus(status) {
  const conn = byId("conn");
  conn.dataset.status = status;
  const words = { connected: "connected", reconnecting: "reconnecting...", connecting: "connecting..." };
  setText(byId("conn-text"), words[status] || status);
}

function showGate(which) {
  show(byId("name-gate"), which === "name");
  show(byId("fatal"), which === "fatal");
  if (which) show(byId("play"), false);
}

function fatal(title, message) {
  setText(byId("fatal-title"), title);
  setText(byId("fatal-message"), message);
  showGate("fatal");
}

function askName(error) {
  showGate("name");
  byId("name-input").value = loadName();
  setText(byId("name-error"), error || "");
  show(byId("name-error"), Boolean(error));
  byId("name-input").focus();
}

function refused(reason) {
  setStatus("disconnected");
  if (reason.code === "bad_name") askName(reason.message);
  else if (reason.code === "no_room") fatal("This table is closed", "It may have closed after everyone left. Start a new one from the home page.");
  else if (reason.code === "room_full") fatal("This table is full", reason.message || "Too many people are in this room right now.");
  else fatal("Could not join", reason.message || "The server refused the connection.");
}

let leaving = false;

function closed() {
  if (leaving) return;
  setStatus("disconnected");
  fatal("Disconnected", "This seat is open in another tab or window, or the server closed the connection.");
}

function receiveState(state) {
  if (!store.receive(state)) return;
  showGate(null);
  share.setPhase(state.phase);
  keepScreenOn(state.phase === "playing");
}

store.subscribe((state, previous) => {
  rememberNames(state);
  handleStateChange(state, previous);
  scheduleRender();
});

function connect() {
  if (connection) {
    connection.wake();
    return;
  }
  setStatus("connecting");
  connection = openRoomSocket({
    room,
    getName: loadName,
    getToken: () => loadToken(room),
    on: {
      status: setStatus,
      refused,
      closed,
      welcome: (data) => data && data.token && saveToken(room, data.token),
      state: receiveState,
      event: (event) => handleEvent(store.get(), event),
    },
  });
  connection.connect();
}

async function send(name, payload) {
  if (!connection) return { ok: false, error: { code: "offline", message: "Not connected" } };
  return connection.send(name, payload);
}

async function act(name, payload) {
  const ack = await send(name, payload);
  // Lobby actions: the table's banner is hidden there, so say it in a note.
  if (ack && !ack.ok) toast(ack.error?.message || "That didn't work");
  return ack;
}

function wireLobby() {
  byId("start").addEventListener("click", () => act("start", {}));
  byId("sit").addEventListener("click", () => act("sit", { seat: null }));
  byId("stand").addEventListener("click", () => act("stand", {}));
  byId("rematch").addEventListener("click", () => act("rematch", {}));
  byId("sit-next").addEventListener("click", () => act("sit", { seat: null }));
  // After a game any lobby action reopens the lobby; an empty rules change is the gentlest.
  byId("to-lobby").addEventListener("click", () => act("rules", {}));
  byId("rules-form").addEventListener("change", () => act("rules", readRules(byId("rules-form"))));
  byId("rules-form").addEventListener("submit", (event) => event.preventDefault());
  for (const button of document.querySelectorAll("[data-leave]")) {
    button.addEventListener("click", async () => {
      leaving = true; // the server closes the connection next: that is no error
      await send("leave", {});
      window.location.assign("/");
    });
  }
  byId("bots").addEventListener("click", (event) => {
    const level = event.target.closest("[data-bot]")?.dataset.bot;
    if (level) act("add_bot", { level });
  });
  byId("seats").addEventListener("click", (event) => {
    const sit = event.target.closest("[data-sit]");
    const remove = event.target.closest("[data-remove]");
    if (sit) act("sit", { seat: Number(sit.dataset.sit) });
    if (remove) act("remove", { seat: Number(remove.dataset.remove) });
  });
}

function wirePreferences() {
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

function wireGates() {
  byId("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = byId("name-input").value.trim();
    if (!name) {
      askName("Type a name so the table knows who you are.");
      return;
    }
    saveName(name);
    showGate(null);
    if (connection) connection.socket.disconnect();
    connection = null;
    connect();
  });
  byId("fatal-retry").addEventListener("click", () => {
    showGate(null);
    connect();
  });
}

// A phone waking up or a tab coming back: rejoin now instead of waiting for a backoff.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && connection && byId("fatal").hidden && byId("name-gate").hidden) {
    connection.wake();
  }
});

wireLobby();
wirePreferences();
wireGates();
setupInput({ getState: () => store.get(), send });
if (loadName()) connect();
else askName();
