// Movement that tells a story: the taken pile sliding to the winner's seat.
// Web Animations keep it off the main render path; reduced motion keeps only the pulse.

import { byId } from "./dom.js";

// `motionView` is store.view.motion: taken piles still on their way, and the last flip.

const calm = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;
const FLIP_FRESH_MS = 600;

// While a taken pile flies off, the pile stays marked: the CSS hides the "Empty pile"
// outline there, which would otherwise show through the card as it leaves.
function markSliding(motionView, change) {
  motionView.sliding = Math.max(0, motionView.sliding + change);
  byId("pile").classList.toggle("pile--sliding", motionView.sliding > 0);
}

// The taken pile slides to the taker's seat, so everyone sees who won the slap.
export function slidePileTo(motionView, seat) {
  const seatNode = document.querySelector(`.seat[data-seat="${seat}"]`);
  if (!seatNode) return;
  seatNode.classList.remove("seat--took");
  void seatNode.offsetWidth;
  seatNode.classList.add("seat--took");
  const top = byId("pile").lastElementChild;
  if (calm() || !top || !top.classList.contains("card")) return;
  const from = top.getBoundingClientRect();
  const to = seatNode.querySelector(".seat-avatar").getBoundingClientRect();
  const flying = top.cloneNode(true);
  flying.classList.add("flying-card");
  flying.setAttribute("aria-hidden", "true"); // a moment's motion: the pile's label says it
  flying.classList.remove("card--new");
  Object.assign(flying.style, { left: `${from.left}px`, top: `${from.top}px`, width: `${from.width}px`, height: `${from.height}px` });
  document.body.append(flying);
  markSliding(motionView, 1);
  const dx = to.left + to.width / 2 - (from.left + from.width / 2);
  const dy = to.top + to.height / 2 - (from.top + from.height / 2);
  const motion = flying.animate(
    [{ transform: "none", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) scale(0.25) rotate(20deg)`, opacity: 0.2 }],
    { duration: 380, easing: "cubic-bezier(.4,0,.6,1)" },
  );
  let landed = false;
  motion.onfinish = motion.oncancel = () => {
    if (landed) return;
    landed = true;
    flying.remove();
    markSliding(motionView, -1);
  };
}

export function noteFlip(motionView, seat, now) {
  motionView.flipSeat = seat;
  motionView.flipAt = now;
}

// A new top card flies in from the seat that flipped it (or simply drops in).
export function dealIn(motionView, card) {
  if (calm()) return;
  const fresh = performance.now() - motionView.flipAt < FLIP_FRESH_MS;
  const avatar = fresh && document.querySelector(`.seat[data-seat="${motionView.flipSeat}"] .seat-avatar`);
  if (!avatar) {
    card.classList.add("card--new");
    return;
  }
  const to = card.getBoundingClientRect();
  const from = avatar.getBoundingClientRect();
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  card.animate(
    [{ transform: `translate(${dx}px, ${dy}px) scale(0.3) rotate(-25deg)`, opacity: 0.7 }, { transform: "rotate(2deg)", opacity: 1 }],
    { duration: 220, easing: "cubic-bezier(.2,.7,.3,1)" },
  );
}
