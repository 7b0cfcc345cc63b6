// The room page: asks for a name once, connects, and wires state (and the events it carries)
// -> render and feedback, taps and keys -> actions. Each concern lives in its own module:
//   store.js     the one owner of the page's state: the newest server state, the one before,
//                and the page's view state (banner, freezes, the pile on screen, motion)
//   state.js     read-only questions about a state
//   socket.js    the Socket.IO connection (auth, reconnects, acks)
//   render.js    draws a state once per frame: seats.js, pile.js, panels.js, freeze.js
//   feedback.js  carries out what narration.js (events) and changes.js (state changes) say,
//                with widgets.js (banner, toasts, announcer), sound.js, vibration, motion.js
//   messages.js  every sentence, and the error texts by code
//   input.js     pointerdown / Space slap (aimed by aim.js), F / Enter / tap flip
//   arming.js    the game-over card's buttons wait a moment, so a slap never presses one
//   gates.js, lobby.js, share.js, preferences.js, wakelock.js, storage.js, rules.js,
//   plainaddress.js (the LAN address's note to the host)
// No rule of the game is decided here: the server's state says whose turn it is, whether
// a trigger shows and how long a freeze lasts.

import { byId, setText, show } from "./dom.js";
import { createFeedback } from "./feedback.js";
import { askName, closed, fatal, gateOpen, refused, setStatus, showGate } from "./gates.js";
import { setupInput } from "./input.js";
import { refitOnResize } from "./fit.js";
import { followBrowserLanguage } from "./language.js";
import { wireLobby } from "./lobby.js";
import { errorText, say } from "./messages.js";
import { winnerTitle } from "./podium.js";
import { wirePreferences } from "./preferences.js";
import { recapImage } from "./recap.js";
import { createRenderer } from "./render.js";
import { setupShare } from "./share.js";
import { openRoomSocket } from "./socket.js";
import { createSound } from "./sound.js";
import { buildAvatarPicker } from "./avatars.js";
import { loadAvatar, loadName, loadToken, saveName, saveToken } from "./storage.js";
import { createStore } from "./store.js";
import { toast } from "./widgets.js";
import { createWakeLock } from "./wakelock.js";
import { createPlainAddressNote } from "./plainaddress.js";
import { inviteOf, wireDoor } from "./door.js";

function lobbyNote(error, action) {
  for (const id of ["lobby-error", "rules-error"]) show(byId(id), false);
  if (!error) return;
  const note = byId(action === "rules" ? "rules-error" : "lobby-error");
  // The page's words for the refusal's code (messages.js): a rules change's refusal is said
  // by the rules, the others under the lobby's buttons.
  setText(note, errorText(error));
  show(note, true);
}

function startRoomPage() {
  const room = document.body.dataset.room;
  // The shared screen (/r/CODE/tv): it watches under its own name, never asks for one,
  // keeps no seat token and takes no keys: the phones play.
  const tv = document.body.dataset.tv === "1";
  const getName = tv ? () => say("tv.name") : loadName;
  // The host's invite, if the link had one: it lets this page in while the table is locked.
  const invite = inviteOf(window.location.search);
  const store = createStore();
  const sound = createSound();
  const feedback = createFeedback({ store, sound });
  const wakeLock = createWakeLock();
  const scheduleRender = createRenderer(store);
  const share = setupShare({ url: document.body.dataset.shareUrl, room, alwaysShown: tv });
  const plainAddress = createPlainAddressNote();
  let connection = null;
  let leaving = false;

  function receiveState(state) {
    if (!store.receive(state)) return;
    showGate(null);
    share.setPhase(state.phase);
    wakeLock.keepScreenOn(state.phase === "playing");
    if (!tv) plainAddress.update(state);
  }

  store.subscribe((state, previous) => {
    feedback.stateChanged(state, previous);
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
      getName,
      getToken: () => (tv ? null : loadToken(room)),
      getAvatar: tv ? () => "" : loadAvatar,
      getInvite: () => invite,
      watch: tv,
      on: {
        status: setStatus,
        transport: (name) => (byId("conn").dataset.transport = name),
        refused,
        // We asked to leave: the server closing on us is the answer.
        closed: () => leaving || closed(),
        welcome: (data) => {
          store.reconnected();
          if (!tv && data && data.token) saveToken(room, data.token);
        },
        state: receiveState,
        event: (event) => {
          // Sent to you alone as the server closes the connection: the host removed you, or
          // the room closed (no game, and nobody did anything, for a while).
          if (event?.kind === "kick" && event.player === store.get()?.you?.player) {
            leaving = true;
            fatal(say("refused.kicked.title"), say("error.kicked"));
          } else if (event?.kind === "closed") {
            leaving = true;
            fatal(say("closed.idle.title"), say("closed.idle.message"));
          } else feedback.event(event);
        },
      },
    });
    connection.connect();
  }

  async function send(name, payload) {
    if (!connection) return { ok: false, error: { code: "offline" } };
    return connection.send(name, payload);
  }

  // Lobby and game-over actions: the table's banner is hidden there, so a refusal is said
  // under the lobby's buttons (or in a toast, after a game).
  async function act(name, payload) {
    lobbyNote(null);
    const ack = await send(name, payload);
    if (ack && !ack.ok) {
      if (store.get()?.phase === "lobby") lobbyNote(ack.error, name);
      else toast(errorText(ack.error));
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
        askName(say("name.missing"));
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

  // A phone waking up, a tab coming back or the network returning: rejoin now instead of
  // waiting for the reconnection back-off (up to seconds) to run out.
  const wake = () => connection && !gateOpen() && connection.wake();
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && wake());
  window.addEventListener("online", wake);

  // The recap as a picture through the system's share sheet; where a browser cannot share
  // files, the picture is saved instead.
  async function shareRecap() {
    const state = store.get();
    if (!state || state.phase !== "over") return;
    const blob = await recapImage(state, room);
    if (!blob) return;
    const file = new File([blob], say("recap.file"), { type: "image/png" });
    const data = { files: [file], title: say("share.title"), text: winnerTitle(state) };
    if (navigator.canShare && navigator.canShare(data)) {
      await navigator.share(data).catch(() => {});
      return;
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = file.name;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    toast(say("recap.saved"));
  }

  wireLobby({ act, leave, getState: () => store.get(), shareRecap, over: store.view.over });
  wireDoor({ act, getState: () => store.get(), shareUrl: document.body.dataset.shareUrl });
  refitOnResize(document.body);
  wirePreferences(sound);
  wireGates();
  buildAvatarPicker(byId("gate-avatar"));
  if (!tv) setupInput({ store, send, feedback, sound });
  if (getName()) connect();
  else askName();
}

// A first visit whose browser prefers the other language loads the page again in it.
if (!followBrowserLanguage()) startRoomPage();
