// A finished game's recap, worth sharing: the fastest hand, the closest call (the pile won
// by the smallest margin) and each player's median reaction, from the server's stats.
// recapOf is pure (unit-tested); recapImage draws it as a PNG for the share sheet.

import { countOf, say } from "./messages.js";
import { seatAt, seatName } from "./state.js";
import { isolated, winnerTitle } from "./podium.js";

const given = (ms) => typeof ms === "number";

export function recapOf(state) {
  const stats = (state.stats || []).filter((stat) => seatAt(state, stat.seat));
  const best = (field) => {
    const timed = stats.filter((stat) => given(stat[field]));
    if (!timed.length) return null;
    const top = timed.reduce((a, b) => (b[field] < a[field] ? b : a));
    return { seat: top.seat, name: seatName(state, top.seat), ms: Math.round(top[field]) };
  };
  const medians = stats
    .filter((stat) => given(stat.median_ms))
    .map((stat) => ({ seat: stat.seat, name: seatName(state, stat.seat), ms: Math.round(stat.median_ms) }))
    .sort((a, b) => a.ms - b.ms);
  return { fastest: best("best_ms"), closest: best("closest_win_ms"), medians };
}

const withIsolatedName = (row) => ({ ...row, name: isolated(row.name) });

// The recap's lines, as the card and the picture say them; `isolate`: each name isolated
// (the picture: a canvas has no <bdi>).
export function recapLines(state, { isolate = false } = {}) {
  const recap = recapOf(state);
  const named = isolate ? withIsolatedName : (row) => row;
  const lines = [];
  if (recap.fastest) lines.push(say("recap.fastest", named(recap.fastest)));
  if (recap.closest) lines.push(say("recap.closest", named(recap.closest)));
  return { lines, medians: recap.medians.map((row) => say("recap.median", named(row))) };
}

const SIZE = 1080; // px: a square picture, as chat apps show them
const GOLD = "#f2c94c";

// Wraps `text` to `width` on the canvas, breaking inside a word when it must.
function wrap(context, text, width) {
  const lines = [];
  let line = "";
  for (const char of text) {
    if (context.measureText(line + char).width > width && line) {
      const space = line.lastIndexOf(" ");
      lines.push(space > 0 ? line.slice(0, space) : line);
      line = space > 0 ? line.slice(space + 1) + char : char;
    } else {
      line += char;
    }
  }
  if (line) lines.push(line);
  return lines;
}

// The recap as a PNG file (a Blob), for navigator.share({ files }).
export function recapImage(state, room) {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = SIZE;
  const context = canvas.getContext("2d");
  // The page's own direction for the sentences; each name inside is isolated (`isolated`).
  context.direction = document.documentElement.dir === "rtl" ? "rtl" : "ltr";
  context.fillStyle = "#0f3d2b";
  context.fillRect(0, 0, SIZE, SIZE);
  context.strokeStyle = GOLD;
  context.lineWidth = 12;
  context.strokeRect(24, 24, SIZE - 48, SIZE - 48);
  let y = 120;
  const write = (text, font, colour, gap) => {
    context.font = font;
    context.fillStyle = colour;
    for (const line of wrap(context, text, SIZE - 160)) {
      context.fillText(line, 80, y);
      y += gap;
    }
  };
  write(`Slapjack · ${say("recap.table", { room })}`, "700 40px sans-serif", GOLD, 60);
  write(winnerTitle(state, { isolate: true }), "800 64px sans-serif", "#ffffff", 80);
  const { lines, medians } = recapLines(state, { isolate: true });
  for (const line of lines) write(line, "600 40px sans-serif", "#ffffff", 56);
  y += 12;
  write(say("recap.medians"), "700 36px sans-serif", GOLD, 52);
  for (const line of medians.slice(0, 8)) write(line, "500 34px sans-serif", "#ffffff", 46);
  const played = (state.stats || []).length;
  if (played) write(countOf("recap.players", played), "500 28px sans-serif", "#cfe3d8", 40);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}
