// An event's recap as a picture to share, like a table's (recap.js): the event's name, its
// podium, its rounds and games, the fastest hand and the most piles.

import { say } from "./messages.js";
import { podiumPlaces, recapLines } from "./eventview.js";

const SIZE = 1080; // px: a square picture, as chat apps show them
const GOLD = "#f2c94c";
const MEDALS = ["🥇", "🥈", "🥉"];

export function eventRecapImage(state) {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = SIZE;
  const context = canvas.getContext("2d");
  context.fillStyle = "#0f3d2b";
  context.fillRect(0, 0, SIZE, SIZE);
  context.strokeStyle = GOLD;
  context.lineWidth = 12;
  context.strokeRect(24, 24, SIZE - 48, SIZE - 48);
  let y = 130;
  const write = (text, font, colour, gap) => {
    context.font = font;
    context.fillStyle = colour;
    let line = text;
    while (context.measureText(line).width > SIZE - 160 && line.length > 4) line = `${line.slice(0, -2)}…`;
    context.fillText(line, 80, y);
    y += gap;
  };
  write(`Slapjack · ${state.name}`, "700 44px sans-serif", GOLD, 90);
  write(say(state.ended ? "event.ended" : "event.podium"), "800 64px sans-serif", "#ffffff", 100);
  for (const place of podiumPlaces(state)) {
    write(`${MEDALS[place.place - 1] || ""} ${place.name}`, "700 56px sans-serif", "#ffffff", 84);
  }
  y += 30;
  for (const line of recapLines(state)) write(line, "600 38px sans-serif", "#cfe3d8", 60);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}
