// The page's ways of telling: the banner under the table, the toasts under the top bar and
// the aria-live announcer for screen readers. They show words; what to say is narration.js's.
// The banner's own state (what it is about, its timer) lives in the store's view.

import { byId, el, setText } from "./dom.js";
import { fitWords } from "./fit.js";

const BANNER_MS = 2600;
const TOAST_MS = 3200;

// Sentences announced in the same moment (a take and someone out) are said together: the
// region is written once per frame with all of them, instead of the last one winning. The
// frame's queue rides on the region itself (data-queued), the page's only announcer.
export function announce(text) {
  const region = byId("announcer");
  const queued = region.dataset.queued;
  region.dataset.queued = queued ? `${queued}\n${text}` : text;
  if (queued) return; // this frame's write is already on its way
  // Clearing first makes screen readers repeat an identical message.
  region.textContent = "";
  requestAnimationFrame(() => {
    setText(region, region.dataset.queued.split("\n").join(" "));
    delete region.dataset.queued;
  });
}

// `bannerView` is store.view.banner. `about: "freeze"`: the banner tells why you are frozen,
// and goes when the freeze ends.
export function showBanner(bannerView, { text, tone = "", about = "" }) {
  bannerView.about = about;
  const node = byId("banner");
  node.className = `banner fit-words banner--fresh${tone ? ` banner--${tone}` : ""}`;
  setText(node, text);
  fitWords(node);
  void node.offsetWidth; // restart the pop animation for back-to-back messages
  clearTimeout(bannerView.timer);
  bannerView.timer = setTimeout(() => clearBanner(bannerView), BANNER_MS);
}

// A banner tells what just happened; once the table has moved on it would only mislead.
export function clearBanner(bannerView) {
  clearTimeout(bannerView.timer);
  bannerView.about = "";
  const node = byId("banner");
  node.className = "banner fit-words";
  setText(node, "");
}

// `game`: a note about the game in progress, dropped as soon as the phase changes.
export function toast(text, { game = false } = {}) {
  announce(text);
  const node = el("div", "toast", text);
  node.dir = "auto";
  if (game) node.dataset.scope = "game";
  byId("toasts").append(node);
  setTimeout(() => node.remove(), TOAST_MS);
}

export function dropGameToasts() {
  for (const node of byId("toasts").querySelectorAll('[data-scope="game"]')) node.remove();
}

// A tap refused because you are frozen: the countdown already says it, so it only nudges
// (a banner would cover the "wrong slap" one).
export function nudgeFreeze() {
  const freeze = byId("freeze");
  freeze.classList.remove("freeze--nudge");
  void freeze.offsetWidth;
  freeze.classList.add("freeze--nudge");
}

export function setFreezeBurn(text) {
  setText(byId("freeze-burn"), text);
}
