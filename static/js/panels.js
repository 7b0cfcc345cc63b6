// Everything around the table that is not a seat or the pile: your controls, the lobby, the end.

import { armCard } from "./arming.js";
import { byId, el, setText, show } from "./dom.js";
import { fitWords } from "./fit.js";
import { countOf, say } from "./messages.js";
import { finishRows } from "./finish.js";
import { matchLine, podiumRows, winnerTitle } from "./podium.js";
import { recapLines, recapOf } from "./recap.js";
import { rulesSummary, writeRules } from "./rules.js";
import { nameTag } from "./seats.js";
import { amHost, canFlip, flipWait, hostName, isMyTurn, mySeat, nameOf, seatAt, seatName, seatedCount } from "./state.js";

export function renderControls(state) {
  const seat = mySeat(state);
  const me = seatAt(state, seat);
  const flip = byId("flip");
  const ready = canFlip(state);
  flip.disabled = !ready;
  setText(byId("my-count"), me ? (me.out ? say("controls.out") : countOf("cards", me.cards)) : "");
  let hint = "";
  if (state.phase === "playing" && me && !me.out) {
    // "Your turn!" only when the server would take the flip; else what it waits for.
    if (ready) hint = say("controls.your_turn");
    else if (isMyTurn(state)) hint = say(`controls.wait.${flipWait(state)}`);
    else hint = say("controls.their_turn", { name: seatName(state, state.next) });
  }
  const hintNode = byId("flip-hint");
  if (hintNode.textContent !== hint) {
    setText(hintNode, hint);
    fitWords(hintNode);
  }
  const out = Boolean(me && me.out);
  document.body.classList.toggle("is-out", out && state.phase === "playing");
  setText(byId("watching"), say(out ? "controls.out.watching" : "controls.watching"));
}

function lobbyStatus(state, seated, freeSeats) {
  const mine = mySeat(state);
  if (mine === null) {
    return say(freeSeats ? "lobby.pick_seat" : "lobby.full");
  }
  if (amHost(state)) {
    if (seated === 1) return say("lobby.alone");
    return say("lobby.seated", { count: seated });
  }
  const host = hostName(state);
  return host ? say("lobby.waiting_for", { name: host }) : say("lobby.waiting");
}

export function watchersText(state) {
  const names = (state.spectators || []).filter((person) => person.player !== state.you?.player).map((person) => person.name);
  if (!names.length) return "";
  const shown = names.slice(0, 4).join(say("list.and"));
  return names.length > 4 ? say("lobby.watchers.more", { names: shown, more: names.length - 4 }) : say("lobby.watchers", { names: shown });
}

export function renderLobby(state) {
  const seated = seatedCount(state);
  const freeSeats = state.seats.length - seated;
  const host = amHost(state);
  const mine = mySeat(state);
  setText(byId("lobby-status"), lobbyStatus(state, seated, freeSeats));
  // Seat first: no Start while nobody sits. How many more must sit to deal is the server's
  // word (players_needed): until then Start says why it cannot start, and is not offered.
  const needed = state.players_needed ?? 0;
  const start = byId("start");
  show(start, host && seated > 0);
  start.disabled = needed > 0;
  setText(start, needed > 0 ? countOf("lobby.start.needs", needed) : countOf("lobby.start", seated));
  show(byId("sit"), mine === null && freeSeats > 0);
  show(byId("stand"), mine !== null);
  show(byId("bots"), host && freeSeats > 0);
  setText(byId("rules-summary"), rulesSummary(state.rules));
  const rulesForm = byId("rules-form");
  show(rulesForm, host);
  // Keep the host's form in step with the room, but never under their fingers.
  if (host && !rulesForm.contains(document.activeElement)) writeRules(rulesForm, state.rules);
  const watchers = watchersText(state);
  setText(byId("watchers"), watchers);
  show(byId("watchers"), Boolean(watchers));
}

function podiumRow(row) {
  const item = el("li", `place${row.place === 1 ? " place--first" : ""}`);
  item.append(el("span", "place-rank", say("over.place", { place: row.place })));
  const avatar = el("span", "place-avatar", row.avatar || "");
  avatar.setAttribute("aria-hidden", "true"); // the name says who it is
  item.append(avatar, nameTag(row.name, row.you, "place-name"), el("span", "place-cards", row.cards));
  if (row.titles.length) {
    const titles = el("span", "place-titles");
    for (const title of row.titles) titles.append(el("span", "place-title", title));
    item.append(titles);
  }
  return item;
}

const msText = (ms) => (typeof ms === "number" ? say("over.ms", { ms: Math.round(ms) }) : say("over.no_time"));

function statRow(state, stat, winner, fastest) {
  const row = el("tr");
  const entry = seatAt(state, stat.seat);
  const cell = el("td");
  cell.append(nameTag(entry ? nameOf(entry) : seatName(state, stat.seat), stat.seat === mySeat(state), "stat-name"));
  row.append(cell);
  row.append(el("td", "", stat.takes ?? 0), el("td", "", stat.false_slaps ?? 0));
  for (const field of ["best_ms", "median_ms", "closest_win_ms", "closest_loss_ms"]) row.append(el("td", "", msText(stat[field])));
  // Each number says its column's name where a phone shows the rows as cards (over.css).
  const headings = [...document.querySelectorAll(".stats thead th")].map((th) => th.textContent);
  [...row.children].forEach((td, index) => index > 0 && headings[index] && (td.dataset.label = headings[index]));
  if (stat.seat === winner) row.classList.add("is-winner");
  if (fastest !== null && stat.best_ms === fastest) row.classList.add("is-fastest");
  return row;
}

// One player's median reaction: place, name (whole, wrapping) and time, each in its own
// column so long names never run into the times, and the times line up. Your own row has
// your name and the "you" tag, as the podium's ("You" and the tag read "You YOU").
function medianRow(state, row, index, you) {
  const item = el("li", "recap-median");
  const place = el("span", "recap-place", say("over.place", { place: index + 1 }));
  place.setAttribute("aria-hidden", "true"); // the list numbers its items for screen readers
  const mine = row.seat === you;
  const name = mine ? nameOf(seatAt(state, row.seat)) || row.name : row.name;
  item.append(place, nameTag(name, mine, "recap-name"), el("span", "recap-ms", say("over.ms", { ms: row.ms })));
  return item;
}

// `overCard` is the store's view.over: the card's buttons wait a moment after it opens.
export function renderGameOver(state, overCard) {
  const over = state.phase === "over";
  const opening = over && byId("over").hidden;
  show(byId("over"), over);
  if (!over) return false;
  setText(byId("over-title"), winnerTitle(state));
  const reason = ["cards", "time"].includes(state.win_reason) ? say(`over.reason.${state.win_reason}`) : "";
  setText(byId("over-reason"), reason);
  byId("podium").replaceChildren(...podiumRows(state).map(podiumRow));
  // Every number behind the podium, in "All stats" (folded away under it).
  const stats = (state.stats || []).filter((stat) => seatAt(state, stat.seat));
  const times = stats.map((stat) => stat.best_ms).filter((ms) => typeof ms === "number");
  const fastest = times.length ? Math.min(...times) : null;
  byId("stats-body").replaceChildren(...stats.map((stat) => statRow(state, stat, state.winner, fastest)));
  const recap = recapLines(state);
  show(byId("recap"), recap.lines.length > 0 || recap.medians.length > 0);
  byId("recap-lines").replaceChildren(...recap.lines.map((line) => el("li", "", line)));
  const you = mySeat(state);
  byId("recap-medians").replaceChildren(...recapOf(state).medians.map((row, index) => medianRow(state, row, index, you)));
  const match = matchLine(state);
  setText(byId("match"), match);
  show(byId("match"), Boolean(match));
  show(byId("rematch"), amHost(state));
  show(byId("sit-next"), mySeat(state) === null);
  show(byId("to-lobby"), amHost(state));
  const host = hostName(state);
  setText(byId("over-wait"), amHost(state) ? "" : say("over.waiting_for", { name: host || say("over.the_host") }));
  // Keyboard and screen reader users land on the result, the host on "Play again" (not
  // live for a moment: arming.js).
  if (opening) {
    armCard(overCard, byId("over"), performance.now());
    (amHost(state) ? byId("rematch") : byId("over")).focus({ preventScroll: true });
  }
  return true;
}

// The big screen's photo finish: the last pile won by a slap, 1st, 2nd, 3rd ... with how
// far behind each came, until the next pile is won (phones say it in the banner). True
// when it drew the list (its names are then fitted).
export function renderFinish(state, stage) {
  const rows = stage && state.phase === "playing" ? finishRows(state) : [];
  show(byId("finish"), rows.length > 0);
  if (!rows.length) return false;
  byId("finish-list").replaceChildren(
    ...rows.map((row) => {
      const item = el("li", row.place === 1 ? "stage-place stage-place--first" : "stage-place");
      item.append(el("span", "stage-place-rank", say("over.place", { place: row.place })), nameTag(row.name, false, "stage-place-name"));
      item.append(el("span", "stage-place-ms", row.behindMs === null ? "" : say("finish.behind", { ms: row.behindMs })));
      return item;
    }),
  );
  return true;
}
