// Everything around the table that is not a seat or the pile: your controls, the lobby, the end.

import { byId, el, setText, show } from "./dom.js";
import { triggerWords, writeRules } from "./rules.js";
import { nameTag } from "./seats.js";
import { amHost, hostName, isMyTurn, mySeat, seatAt, seatName, seatedCount } from "./state.js";

export function renderControls(state) {
  const seat = mySeat(state);
  const me = seatAt(state, seat);
  const flip = byId("flip");
  const myTurn = isMyTurn(state);
  flip.disabled = !myTurn;
  setText(byId("my-count"), me ? (me.out ? "You're out" : `${me.cards} card${me.cards === 1 ? "" : "s"}`) : "");
  let hint = "";
  if (state.phase === "playing" && me && !me.out) {
    hint = myTurn ? "Your turn!" : `${seatName(state, state.next)}'s turn`;
  }
  setText(byId("flip-hint"), hint);
  const out = Boolean(me && me.out);
  document.body.classList.toggle("is-out", out && state.phase === "playing");
  setText(byId("watching"), out ? "You're out of cards. Stay and see who wins!" : "You're watching this game. Take a seat when it ends.");
}

export function rulesSummary(rules) {
  if (!rules) return "";
  const parts = [`Slap ${triggerWords(rules.triggers)}`];
  parts.push(rules.penalty === "give" ? "wrong slap gives a card" : "wrong slap burns a card");
  if (rules.freeze_seconds > 0) parts.push(`${rules.freeze_seconds} s freeze`);
  if (rules.decks === 2) parts.push("2 decks");
  if (rules.empty_deck === "last_chance") parts.push("last chance when empty");
  if (rules.last_card_jack) parts.push("a last-card Jack takes the pile");
  if (rules.time_limit) {
    const limit = rules.time_limit % 60 === 0 ? `${rules.time_limit / 60} min` : `${rules.time_limit} s`;
    parts.push(`${limit} limit`);
  }
  return parts.join(" · ");
}

function lobbyStatus(state, seated, freeSeats) {
  const mine = mySeat(state);
  if (mine === null) {
    return freeSeats ? "Pick a seat to play, or just watch." : "The table is full: you're watching.";
  }
  if (amHost(state)) {
    if (seated === 1) return "It's just you so far: add a bot or invite a friend.";
    return `${seated} players seated. Start when everyone's in.`;
  }
  const host = hostName(state);
  return host ? `Waiting for ${host} to start...` : "Waiting for the host to start...";
}

export function watchersText(state) {
  const names = (state.spectators || []).filter((person) => person.player !== state.you?.player).map((person) => person.name);
  if (!names.length) return "";
  const shown = names.slice(0, 4).join(", ");
  return `Watching: ${shown}${names.length > 4 ? ` and ${names.length - 4} more` : ""}`;
}

export function renderLobby(state) {
  const seated = seatedCount(state);
  const freeSeats = state.seats.length - seated;
  const host = amHost(state);
  const mine = mySeat(state);
  setText(byId("lobby-status"), lobbyStatus(state, seated, freeSeats));
  // Seat first: no Start while nobody sits. Whether enough people sit to deal is the
  // server's call: `start` may come back too_few_players, and the lobby note says so.
  show(byId("start"), host && seated > 0);
  setText(byId("start"), `Start game · ${seated} player${seated === 1 ? "" : "s"}`);
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

function statRow(state, stat, winner, fastest) {
  const row = el("tr");
  const entry = seatAt(state, stat.seat);
  const cell = el("td");
  cell.append(nameTag(entry?.name ?? seatName(state, stat.seat), stat.seat === mySeat(state), "stat-name"));
  row.append(cell);
  row.append(el("td", "", stat.takes ?? 0), el("td", "", stat.false_slaps ?? 0));
  row.append(el("td", "", typeof stat.best_ms === "number" ? `${Math.round(stat.best_ms)} ms` : "–"));
  if (stat.seat === winner) row.classList.add("is-winner");
  if (fastest !== null && stat.best_ms === fastest) row.classList.add("is-fastest");
  return row;
}

export function renderGameOver(state) {
  const over = state.phase === "over";
  const opening = over && byId("over").hidden;
  show(byId("over"), over);
  if (!over) return;
  const winner = state.winner;
  const title = winner === null || winner === undefined
    ? "Game over"
    : winner === mySeat(state) ? "You win!" : `${seatName(state, winner)} wins!`;
  setText(byId("over-title"), title);
  const reasons = { cards: "Last player holding cards.", time: "Most cards when the time ran out." };
  setText(byId("over-reason"), reasons[state.win_reason] || "");
  const stats = (state.stats || []).filter((stat) => seatAt(state, stat.seat));
  const times = stats.map((stat) => stat.best_ms).filter((ms) => typeof ms === "number");
  const fastest = times.length ? Math.min(...times) : null;
  byId("stats-body").replaceChildren(...stats.map((stat) => statRow(state, stat, winner, fastest)));
  show(byId("rematch"), amHost(state));
  show(byId("sit-next"), mySeat(state) === null);
  show(byId("to-lobby"), amHost(state));
  const host = hostName(state);
  setText(byId("over-wait"), amHost(state) ? "" : `Waiting for ${host || "the host"} to deal again...`);
  // Keyboard and screen reader users land on the result, the host on "Play again".
  if (opening) (amHost(state) ? byId("rematch") : byId("over")).focus({ preventScroll: true });
}
