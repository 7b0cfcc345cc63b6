// The room page: asks for a name once, connects, and wires state -> render, events ->
// feedback, taps and keys -> actions. Each concern lives in its own module:
//   socket.js   the Socket.IO connection (auth, reconnects, acks)
//   state.js    the newest state by version, and read-only questions about it
//   render.js   draws a state once per frame: seats.js, pile.js, panels.js, freeze.js
//   feedback.js events -> banner, sound.js, vibration, the aria-live announcer; motion.js
//   input.js    pointerdown / Space slap, F / Enter / tap flip
//   gates.js, lobby.js, share.js, preferences.js, wakelock.js, storage.js, rules.js
// No rule of the game is decided here: the server's state says whose turn it is, whether
// a trigger shows and how long a freeze lasts.

import { byId, setText, show } from "./dom.js";
import { handleEvent, handleStateChange, rememberNames, toast } from "./feedback.js";
import { askName, fatal, gateOpen, refused, setStatus, showGate } from "./gates.js";
import { setupInput } from "./input.js";
import { wireLobby } from "./lobby.js";
import { wirePreferences } from "./preferences.js";
import { createRenderer } from "./render.js";
import { setupShare } from "./share.js";
import { openRoomSocket } from "./socket.js";
import { createStore } from "./state.js";
import { loadName, loadToken, saveName, saveToken } from "./storage.js";
import { keepScreenOn } from "./wakelock.js";

const room = document.body.dataset.room;
const store = createStore();
const scheduleRender = createRenderer(store);
const share = setupShare({ url: document.body.dataset.shareUrl, room });
let connection = null;
let leaving = false;

function closed() {
  if (leaving) return; // we asked to leave: the server closing on us is the answer
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

// The server's refusal of a lobby action (too_few_players, bad_rules, ...) in its own
// words, after a few of ours saying what was refused; a rules change's refusal is said
// by the rules, the others under the lobby's buttons.
const LOBBY_LEADS = { start: "Can't start yet", rules: "Those house rules won't work" };

function refusalText(error, action) {
  // The form sends only values it offers: a malformed rules change is no trigger ticked,
  // and the validator's message for it is not for people.
  if (action === "rules" && error.code === "bad_request") return `${LOBBY_LEADS.rules}: tick at least one card to slap on.`;
  const message = error.message || "That didn't work";
  return LOBBY_LEADS[action] ? `${LOBBY_LEADS[action]}: ${message}` : message;
}

function lobbyNote(error, action) {
  for (const id of ["lobby-error", "rules-error"]) show(byId(id), false);
  if (!error) return;
  const note = byId(action === "rules" ? "rules-error" : "lobby-error");
  setText(note, refusalText(error, action));
  show(note, true);
}

// Lobby and game-over actions: the table's banner is hidden there, so a refusal is said
// under the lobby's buttons (or in a toast, after a game).
async function act(name, payload) {
  lobbyNote(null);
  const ack = await send(name, payload);
  if (ack && !ack.ok) {
    if (store.get()?.phase === "lobby") lobbyNote(ack.error, name);
    else toast(ack.error?.message || "That didn't work");
  }
  return ack;
}

async function leave() {
  leaving = true;
  await send("leave", {});
  window.location.assign("/");
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
    connection = null; // a new name needs a new connection (auth is read on connect)
    connect();
  });
  byId("fatal-retry").addEventListener("click", () => {
    showGate(null);
    connect();
  });
}

// A phone waking up or a tab coming back: rejoin now instead of waiting for a backoff.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && connection && !gateOpen()) connection.wake();
});

wireLobby({ act, leave, getState: () => store.get() });
wirePreferences();
wireGates();
setupInput({ getState: () => store.get(), send });
if (loadName()) connect();
else askName();
