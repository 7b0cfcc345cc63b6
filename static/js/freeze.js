// Freeze countdowns. The server says how long each freeze has left (frozen_ms) when it
// sends a state; we count that down locally so people see it tick, and nothing more.

import { byId, setText, show } from "./dom.js";
import { mySeat } from "./state.js";

// `freezeView` is store.view.freeze: seat -> performance.now() when its freeze ends
// (`deadlines`), your seat (`mine`), and whether a frame is already asked for (`ticking`).

// Called right after the seats are drawn: paints the countdowns at once, so a seat that
// has just frozen (or was just redrawn) never shows an empty frozen avatar for a frame.
export function noteFreezes(freezeView, state) {
  const { deadlines } = freezeView;
  deadlines.clear();
  freezeView.mine = mySeat(state);
  const now = performance.now();
  (state.seats || []).forEach((entry, seat) => {
    if (entry && entry.frozen_ms > 0) deadlines.set(seat, now + entry.frozen_ms);
  });
  paint(freezeView);
}

// 1234 ms -> "1.2": the countdown's text.
export function seconds(ms) {
  return (Math.max(0, ms) / 1000).toFixed(1);
}

function paint(freezeView) {
  const { deadlines, mine } = freezeView;
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
  if (deadlines.size > 0 && !freezeView.ticking) {
    freezeView.ticking = true;
    requestAnimationFrame(() => {
      freezeView.ticking = false;
      paint(freezeView);
    });
  }
}
