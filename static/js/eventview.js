// What an event's page shows, from its `event_state` (docs/protocol.md, Events): the player's
// own line, the headings, the tables of the round with their progress, the podium and the
// recap. Pure (unit-tested in tests/js/eventview.test.js); event.js draws it.

import { countOf, say } from "./messages.js";

const nameOf = (state, player) => state.players.find((p) => p.player === player)?.name ?? "";
const playerOf = (state, player) => state.players.find((p) => p.player === player) || null;
export const isOrganiser = (state) => Boolean(state?.you?.organiser);
export const myStatus = (state) => state?.you?.status ?? null;

// The table the page should send this phone to, or null: a player whose table is on.
export function tableToGo(state) {
  const you = state?.you;
  if (!you || !you.player || you.organiser || you.status !== "playing" || !you.table) return null;
  return you.table;
}

// A player's own line on their phone, and where its button goes (null: no button).
export function youLine(state) {
  const you = state.you || {};
  const final = state.final;
  const watchFinal = final && state.stage === "playing" ? { href: `/r/${final}`, label: say("event.watch_final") } : null;
  if (you.organiser) return null;
  if (!you.player) {
    if (state.stage === "lobby") return null;
    return { text: say(state.stage === "over" ? "event.you.guest_over" : "event.you.guest"), go: watchFinal };
  }
  const name = nameOf(state, you.player);
  switch (you.status) {
    case "waiting":
      return { text: say("event.you.waiting", { name }), go: null };
    case "playing":
      return { text: say("event.you.playing"), go: { href: `/r/${you.table}`, label: say("event.go_to_table") } };
    case "through":
      return { text: say("event.you.through"), go: null };
    case "out":
      return { text: say("event.you.out"), go: watchFinal };
    case "removed":
      return { text: say("event.you.removed"), go: null };
    case "champion":
      return { text: say("event.you.champion"), go: null };
    default:
      return null;
  }
}

// "Tables of 4 · first to 2 wins · bots fill empty seats"
export function rulesLine(state) {
  const parts = [say("event.rules.size", { size: state.size }), countOf("event.rules.first_to", state.first_to)];
  if (state.bots) parts.push(say("event.rules.bots"));
  return parts.join(say("summary.joiner"));
}

export function heading(state) {
  if (state.stage === "lobby") return countOf("event.players_in", state.players.length);
  if (state.stage === "over") return say(state.ended ? "event.ended" : "event.podium");
  if (state.final) return say("event.final");
  if (state.rounds_to_play) return say("event.round_of", { round: state.round, rounds: state.rounds_to_play });
  return say("event.round", { round: state.round });
}

// Under the round's heading: paused, the next round's countdown, or what the tables wait for.
export function nextLine(state, msLeft) {
  if (state.stage !== "playing") return "";
  if (state.paused) return say("event.paused");
  if (typeof msLeft === "number") return countOf("event.next_round_in", Math.max(0, Math.ceil(msLeft / 1000)));
  return "";
}

// The current round's tables: each with its number, its players (their cards, games won,
// whether here) and its winner once it has one. The final is its own card (finalCard).
export function tableCards(state) {
  const heats = state.rounds?.[state.round - 1] || [];
  const you = state.you?.player;
  return heats.map((heat, index) => {
    const progress = heat.progress || { phase: "lobby", game: 0, seats: [] };
    const bySeat = new Map(progress.seats.map((seat) => [seat.player, seat]));
    const rows = heat.players.map((player) => {
      const entry = playerOf(state, player) || {};
      const seat = bySeat.get(player) || {};
      return {
        player,
        name: entry.name ?? "",
        avatar: entry.avatar || null,
        bot: entry.bot || null,
        cards: seat.cards ?? 0,
        out: Boolean(seat.out),
        wins: seat.wins ?? 0,
        here: seat.here !== false,
        dealt: progress.phase !== "lobby",
        winner: heat.winner === player,
        you: player === you,
      };
    });
    let status = say("event.table.gathering");
    if (heat.decided) status = heat.winner ? say("event.table.won", { name: nameOf(state, heat.winner) }) : say("event.table.no_winner");
    else if (progress.phase === "playing") status = say("event.table.game", { game: progress.game });
    else if (progress.phase === "over") status = say("event.table.next_game");
    return { number: index + 1, table: heat.table, final: heats.length === 1, decided: heat.decided, status, rows };
  });
}

export function podiumPlaces(state) {
  const you = state.you?.player;
  return (state.podium || []).map((player, index) => {
    const entry = playerOf(state, player) || {};
    return { place: index + 1, player, name: entry.name ?? "", avatar: entry.avatar || null, bot: entry.bot || null, you: player === you };
  });
}

// The event's recap: its rounds and games, the fastest winning slap, the most piles taken.
export function recapLines(state) {
  const lines = [];
  const recap = state.recap || {};
  lines.push(say("event.recap.rounds", { rounds: countOf("event.recap.round_count", state.round), games: countOf("event.recap.game_count", recap.games ?? 0) }));
  if (recap.fastest) lines.push(say("recap.fastest", { name: recap.fastest.name, ms: Math.round(recap.fastest.ms) }));
  if (recap.most_piles) lines.push(say("event.recap.most_piles", { name: recap.most_piles.name, count: recap.most_piles.takes }));
  return lines;
}
