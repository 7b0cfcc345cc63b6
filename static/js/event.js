// An event's page (/e/CODE), for its three kinds of visitor: a player's phone (join with a
// name; when the organiser starts, the page sends the phone to its own table, keeping its
// token for that table too), the organiser's screen (Start, bots, lock and invite, remove,
// pause, end) and
// the stage (/e/CODE/tv: who is in with the QR code, the tables' progress, the final at
// full size on the table's own big screen, the podium and the recap). What it shows comes
// from the server's `event_state` (eventview.js says it); no rule is decided here.

import { byId, el, setText, show } from "./dom.js";
import { buildAvatarPicker } from "./avatars.js";
import { fitName } from "./fit.js";
import { copyText, inviteOf, inviteUrl } from "./door.js";
import { askName, closed, fatal, gateOpen, refused, setStatus, showGate, wireNameGate } from "./gates.js";
import { followBrowserLanguage } from "./language.js";
import { countOf, errorText, say } from "./messages.js";
import { heading, isOrganiser, nextLine, podiumPlaces, recapLines, rulesLine, tableCards, tableToGo, youLine } from "./eventview.js";
import { eventRecapImage } from "./eventrecap.js";
import { openRoomSocket } from "./socket.js";
import { sharePicture } from "./recap.js";
import { loadAvatar, loadName, loadToken, saveToken } from "./storage.js";
import { toast } from "./widgets.js";

const TICK_MS = 500; // the next round's countdown is redrawn this often

function avatarOf(row) {
  const face = el("span", "event-avatar", row.avatar || (row.bot ? "🤖" : row.name.slice(0, 1).toUpperCase()));
  face.setAttribute("aria-hidden", "true");
  return face;
}

function nameOf(row) {
  const name = el("span", "event-name", row.name);
  if (row.you) name.append(el("span", "event-you-tag", say("you")));
  return name;
}

// Every name whole: set smaller where its box is too narrow for it (fit.js).
function fitEventNames() {
  for (const name of document.querySelectorAll(".event-name")) fitName(name);
}

function playerChip(row, organiser, stage) {
  const item = el("li", `event-player${row.bot ? " event-player--bot" : ""}`);
  item.append(avatarOf(row), nameOf(row));
  if (organiser && stage === "lobby") {
    const remove = el("button", "event-remove", "✕");
    remove.type = "button";
    remove.dataset.remove = row.player;
    remove.setAttribute("aria-label", say("event.remove", { name: row.name }));
    item.append(remove);
  }
  return item;
}

function tableCard(card, organiser) {
  const item = el("li", `event-table${card.decided ? " event-table--decided" : ""}`);
  const head = el("p", "event-table-head");
  head.append(el("span", "event-table-number", say("event.table.number", { number: card.number })), el("span", "event-table-status", card.status));
  const seats = el("ol", "event-table-seats");
  const most = Math.max(1, ...card.rows.map((row) => row.cards));
  for (const row of card.rows) {
    const seat = el("li", `event-seat${row.winner ? " event-seat--winner" : ""}${row.out ? " event-seat--out" : ""}${row.here ? "" : " event-seat--away"}`);
    seat.append(avatarOf(row), nameOf(row));
    const bar = el("span", "event-bar");
    bar.setAttribute("aria-hidden", "true");
    bar.style.setProperty("--share", String(row.cards / most));
    seat.append(bar, el("span", "event-cards", row.dealt ? countOf("cards", row.cards) : ""));
    if (row.wins) seat.append(el("span", "event-wins", "★".repeat(Math.min(row.wins, 3))));
    if (organiser && !card.decided) {
      const remove = el("button", "event-remove", "✕");
      remove.type = "button";
      remove.dataset.remove = row.player;
      remove.setAttribute("aria-label", say("event.remove", { name: row.name }));
      seat.append(remove);
    }
    seats.append(seat);
  }
  item.append(head, seats);
  return item;
}

// The stage has nobody to scroll it: a round of many tables is drawn smaller until it fits
// the screen (at most by half; past that it is read table by table as the heats end).
const FIT_STEPS = [100, 90, 80, 70, 60, 50];
function fitTables() {
  const tables = byId("tables");
  for (const percent of FIT_STEPS) {
    tables.style.fontSize = `${percent}%`;
    if (document.documentElement.scrollHeight <= window.innerHeight) return;
  }
}

function placeRow(place) {
  const item = el("li", `event-place event-place--${place.place}`);
  item.append(el("span", "event-place-rank", say("over.place", { place: place.place })), avatarOf(place), nameOf(place));
  return item;
}

function startEventPage() {
  const body = document.body;
  const code = body.dataset.event;
  const tv = body.dataset.tv === "1";
  const staying = new URLSearchParams(location.search).has("stay"); // back from a table by hand
  const invite = inviteOf(location.search); // the organiser's invite this link carries, if any
  let current = null;
  let arrivedAt = 0; // when the current state came: the countdown counts from it
  let connection = null;

  function draw() {
    const state = current;
    if (!state) return;
    const organiser = isOrganiser(state) && !tv;
    body.dataset.stage = state.stage;
    body.classList.toggle("is-organiser", organiser);
    show(byId("play"), true);
    const line = tv ? null : youLine(state);
    show(byId("you-card"), Boolean(line));
    if (line) {
      setText(byId("you-text"), line.text);
      const go = byId("you-go");
      show(go, Boolean(line.go));
      if (line.go) {
        go.href = line.go.href;
        setText(go, line.go.label);
      }
    }
    show(byId("invite"), state.stage === "lobby" && (tv || organiser || !state.you?.player));
    setText(byId("players-title"), heading({ ...state, stage: "lobby" }));
    setText(byId("event-rules"), rulesLine(state));
    show(byId("lobby"), state.stage === "lobby");
    byId("players").replaceChildren(...state.players.map((row) => playerChip({ ...row, you: row.player === state.you?.player }, organiser, state.stage)));
    show(byId("lobby-controls"), organiser && state.stage === "lobby");
    drawDoor(state, organiser);
    byId("event-start").disabled = state.players.length < (state.bots ? 1 : 2);
    show(byId("rounds"), state.stage === "playing");
    if (state.stage === "playing") drawRounds(state, organiser);
    show(byId("podium-card"), state.stage === "over");
    if (state.stage === "over") {
      setText(byId("podium-title"), heading(state));
      byId("places").replaceChildren(...podiumPlaces(state).map(placeRow));
      byId("event-recap").replaceChildren(...recapLines(state).map((text) => el("li", "", text)));
    }
    fitEventNames();
  }

  // The organiser's door (lock, invite link), and the note everyone in the lobby sees.
  function drawDoor(state, organiser) {
    const locked = Boolean(state.locked);
    const lock = byId("lock");
    setText(lock, say(locked ? "event.unlock" : "event.lock"));
    lock.setAttribute("aria-pressed", String(locked));
    show(byId("invite-new"), organiser && locked);
    if (!locked) show(byId("invite-link"), false);
    setText(byId("locked-note"), locked ? say(organiser ? "door.locked.host" : "event.locked") : "");
    show(byId("locked-note"), locked && state.stage === "lobby");
  }

  function drawRounds(state, organiser) {
    setText(byId("round-title"), heading(state));
    const left = typeof state.next_round_ms === "number" ? state.next_round_ms - (performance.now() - arrivedAt) : null;
    setText(byId("next-round"), nextLine(state, left));
    const cards = tableCards(state);
    const final = cards.length === 1 && state.final ? cards[0] : null;
    show(byId("final-card"), Boolean(final));
    if (final) {
      setText(byId("final-title"), final.status);
      byId("final-seats").replaceChildren(...tableCard(final, organiser).querySelector("ol").children);
      byId("watch-final").href = tv ? `/r/${final.table}/tv?back=/e/${code}/tv` : `/r/${final.table}${organiser ? "/tv?back=/e/" + code : ""}`;
    }
    byId("tables").replaceChildren(...(final ? [] : cards.map((card) => tableCard(card, organiser))));
    if (tv) fitTables();
    show(byId("play-controls"), organiser);
    setText(byId("event-pause"), say(state.paused ? "event.resume" : "event.pause"));
  }

  // Where the state sends this page: a phone to its table, the stage to the final's big screen.
  // Once: a state that comes while the next page loads must not start its load again (a
  // second assign aborts the first).
  let leavingFor = null;
  function go(url) {
    if (leavingFor !== url) {
      leavingFor = url;
      window.location.assign(url);
    }
    return true;
  }

  function follow(state) {
    const table = tv ? null : tableToGo(state);
    if (table && !staying) {
      saveToken(table, loadToken(code)); // the table knows the player by the event's token
      return go(`/r/${table}`);
    }
    const final = state.final && state.stage === "playing" ? tableCards(state)[0] : null;
    if (tv && final && !final.decided) return go(`/r/${final.table}/tv?back=/e/${code}/tv`);
    return false;
  }
  // Back on this page from the browser's history: it may go again.
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) leavingFor = null;
  });

  let fresh = false; // the next state starts a new connection: taken whatever its version
  function receive(state) {
    if (!state || (current && state.version < current.version && !fresh)) return;
    fresh = false;
    current = state;
    arrivedAt = performance.now();
    showGate(null);
    if (!follow(state)) draw();
  }

  function connect() {
    if (connection) {
      connection.wake();
      return;
    }
    setStatus("connecting");
    connection = openRoomSocket({
      room: code,
      // A returning token is who connects (the organiser may never have typed a name here).
      getName: tv ? () => say("tv.name") : () => loadName() || (loadToken(code) ? say("event.organiser") : ""),
      getToken: () => (tv ? null : loadToken(code)),
      getAvatar: tv ? () => "" : loadAvatar,
      getInvite: () => invite,
      watch: tv,
      on: {
        status: setStatus,
        refused: refusedHere,
        closed,
        welcome: (data) => {
          fresh = true;
          if (!tv && data && data.token) saveToken(code, data.token);
        },
        state: () => {},
        eventState: receive,
        event: () => {},
      },
    });
    connection.connect();
  }

  // A refusal in the event's words (a table's are the room page's).
  function refusedHere(reason) {
    if (reason.code === "name_taken") askName(errorText(reason));
    else if (reason.code === "room_locked") fatal(say("event.refused.locked.title"), say("event.refused.locked"));
    else if (reason.code === "kicked") fatal(say("event.refused.kicked.title"), say("event.refused.kicked"));
    else refused(reason);
  }

  async function act(name, payload = {}) {
    show(byId("event-error"), false);
    if (!connection) return null;
    const ack = await connection.send(name, payload);
    if (ack && !ack.ok) {
      if (current?.stage === "lobby") {
        setText(byId("event-error"), errorText(ack.error));
        show(byId("event-error"), true);
      } else toast(errorText(ack.error));
    }
    return ack;
  }

  wireNameGate({
    named: () => {
      if (connection) connection.socket.disconnect();
      connection = null; // a new name needs a new connection (auth is read on connect)
      connect();
    },
    retry: connect,
  });
  byId("event-start").addEventListener("click", () => act("event_start"));
  byId("event-bots").addEventListener("click", (event) => {
    const level = event.target.closest("[data-bot]")?.dataset.bot;
    if (level) act("event_bot", { level });
  });
  byId("play").addEventListener("click", (event) => {
    const remove = event.target.closest("[data-remove]");
    if (remove) act("event_remove", { player: remove.dataset.remove });
  });
  byId("lock").addEventListener("click", () => act("event_lock", { locked: !current?.locked }));
  byId("invite-new").addEventListener("click", async () => {
    const ack = await act("event_invite");
    if (!ack || !ack.ok) return;
    const input = byId("invite-url");
    input.value = inviteUrl(body.dataset.shareUrl, ack.invite);
    show(byId("invite-link"), true);
    input.select();
  });
  byId("copy-invite").addEventListener("click", async () => {
    setText(byId("invite-done"), say((await copyText(byId("invite-url"))) ? "share.copied" : "share.copy_by_hand"));
  });
  byId("event-pause").addEventListener("click", () => act("event_pause", { paused: !current?.paused }));
  for (const id of ["event-end", "event-end-lobby"]) {
    byId(id).addEventListener("click", () => {
      if (window.confirm(say("event.end_confirm"))) act("event_end");
    });
  }
  byId("copy-link").addEventListener("click", async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(body.dataset.shareUrl);
      copied = true;
    } catch {
      copied = false;
    }
    setText(byId("share-done"), say(copied ? "share.copied" : "share.copy_by_hand"));
  });
  byId("recap-share").addEventListener("click", async () => {
    if (!current) return;
    const about = { file: say("event.recap.file"), title: say("share.title"), text: current.name };
    await sharePicture(await eventRecapImage(current), about, () => toast(say("recap.saved")));
  });
  setInterval(() => current?.stage === "playing" && typeof current.next_round_ms === "number" && draw(), TICK_MS);
  window.addEventListener("resize", () => {
    if (tv) fitTables();
    fitEventNames();
  });
  const wake = () => connection && !gateOpen() && connection.wake();
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" && wake());
  window.addEventListener("online", wake);
  buildAvatarPicker(byId("gate-avatar"));
  if (tv || loadToken(code) || loadName()) connect();
  else askName();
}

// A first visit whose browser prefers the other language loads the page again in it.
if (!followBrowserLanguage()) startEventPage();
