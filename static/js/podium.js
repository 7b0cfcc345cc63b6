// Game over's podium: the seats in the server's order (state.places: the winner, then most
// cards, then who went out last), each with its final count and the titles it earned, and
// the match score across this room's games. podiumRows and matchLine are pure (unit-tested).

import { countOf, say } from "./messages.js";
import { mySeat, seatAt, seatName } from "./state.js";

// The titles of a finished game, by seat: fastest hand, most takes, most wrong slaps. A
// title needs something to show for it (a take, a wrong slap) and one holder: a tie
// gives it to nobody ("Most wrong slaps (1)" to six of eight players says nothing).
export function gameTitles(stats) {
  const titles = new Map();
  const give = (seat, text) => titles.set(seat, [...(titles.get(seat) || []), text]);
  const times = stats.filter((s) => typeof s.best_ms === "number");
  if (times.length) {
    const best = Math.min(...times.map((s) => s.best_ms));
    const holders = times.filter((s) => s.best_ms === best);
    if (holders.length === 1) give(holders[0].seat, say("title.fastest", { ms: Math.round(best) }));
  }
  for (const [field, id] of [["takes", "title.takes"], ["false_slaps", "title.false_slaps"]]) {
    const most = Math.max(0, ...stats.map((s) => s[field] ?? 0));
    const holders = stats.filter((s) => (s[field] ?? 0) === most);
    if (most > 0 && holders.length === 1) give(holders[0].seat, say(id, { count: most }));
  }
  return titles;
}

export function podiumRows(state) {
  const titles = gameTitles(state.stats || []);
  const places = state.places && state.places.length ? state.places : state.seats.map((_, seat) => seat);
  return places
    .filter((seat) => seatAt(state, seat))
    .map((seat, index) => {
      const entry = seatAt(state, seat);
      return {
        seat,
        place: index + 1,
        name: entry.name,
        avatar: entry.avatar || null,
        you: seat === mySeat(state),
        cards: entry.out ? say("seat.out") : countOf("cards", entry.cards ?? 0),
        titles: titles.get(seat) || [],
      };
    });
}

// "Match: Sam 3, Priya 2" once this room has played more than one game, else "".
export function matchLine(state) {
  const scores = (state.match || []).filter((score) => typeof score.wins === "number");
  if ((state.game ?? 0) < 2 || !scores.length) return "";
  const you = state.you?.player;
  const parts = scores.map((score) => say("match.score", { name: score.player && score.player === you ? say("you") : score.name, wins: score.wins }));
  return say("match.line", { scores: parts.join(say("list.and")) });
}

// A name set apart from the sentence around it (U+2068 FIRST STRONG ISOLATE ... U+2069 POP
// DIRECTIONAL ISOLATE): a right-to-left name keeps its own order, and the words and figures
// around it keep theirs, where text is drawn with no element to isolate it (the recap's canvas).
export const isolated = (name) => `\u2068${name}\u2069`;

// `isolate`: the winner's name `isolated`, for the recap picture.
export const winnerTitle = (state, { isolate = false } = {}) => {
  const winner = state.winner;
  if (winner === null || winner === undefined) return say("over.title");
  const name = seatName(state, winner);
  return winner === mySeat(state) ? say("over.you_win") : say("over.wins", { name: isolate ? isolated(name) : name });
};
