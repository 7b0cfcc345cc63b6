// Freeze countdowns. The server says how long each freeze has left (frozen_ms) when it
// sends a state; we count that down locally so people see it tick, and nothing more.

import { byId, setText, show } from "./dom.js";
import { mySeat } from "./state.js";

const deadlines = new Map(); // seat -> performance.now() when its freeze ends
let mine = null;
let ticking = false;

// Called right after the seats are drawn: paints the countdowns at once, so a seat that
// has just frozen (or was just redrawn) never shows an empty frozen avatar for a frame.
export function noteFreezes(state) {
  deadlines.clear();
  mine = mySeat(state);
  const now = performance.now();
  (state.seats || []).forEach((entry, seat) => {
    if (entry && entry.frozen_ms > 0) deadlines.set(seat, now + entry.frozen_ms);
  });
  paint();
}

function seconds(ms) {
  return (Math.max(0, ms) / 1000).toFixed(1);
}

function paint() {
  const now = performance.now();
  for (const [seat, end] of deadlines) {
    const label = document.querySelector(`.seat[data-seat="${seat}"] .seat-freeze`);
    if (label) setText(label, end > now ? seconds(end - now) : "");
    if (end <= now) deadlines.delete(seat);
  }
  const myEnd = mine === null ? undefined : deadlines.get(mine);
  const frozen = myEnd !== undefined;
  show(byId("freeze"), frozen);
  document.body.classList.toggle("is-frozen", frozen);
  if (frozen) setText(byId("freeze-seconds"), seconds(myEnd - now));
  if (deadlines.size > 0 && !ticking) {
    ticking = true;
    requestAnimationFrame(tick);
  }
}

function tick() {
  ticking = false;
  paint();
}
