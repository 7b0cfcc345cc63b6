// An event's recap as a picture to share, like a table's (recap.js): the event's name, its
// podium, its rounds and games, the fastest hand and the most piles.

import { say } from "./messages.js";
import { podiumPlaces, recapLines } from "./eventview.js";
import { pictureCard } from "./recap.js";

const GOLD = "#f2c94c";
const MEDALS = ["🥇", "🥈", "🥉"];

export function eventRecapImage(state) {
  const { write, skip, png } = pictureCard(130);
  write(`Slapjack · ${state.name}`, "700 44px sans-serif", GOLD, 90);
  write(say(state.ended ? "event.ended" : "event.podium"), "800 64px sans-serif", "#ffffff", 100);
  for (const place of podiumPlaces(state)) {
    write(`${MEDALS[place.place - 1] || ""} ${place.name}`, "700 56px sans-serif", "#ffffff", 84);
  }
  skip(30);
  for (const line of recapLines(state)) write(line, "600 38px sans-serif", "#cfe3d8", 60);
  return png();
}
