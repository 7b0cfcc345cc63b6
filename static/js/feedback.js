// What just happened, told four ways: a banner on the table, a sound, a buzz, and the
// aria-live announcer. This module only carries effects out: narration.js says what an
// event means (a state's `events`, or the `restart` notice), changes.js what a new state
// changed, widgets.js shows the words.

import { NUDGE_MS, nudgeDue } from "./changes.js";
import { errorText, say } from "./messages.js";
import { noteFlip, slidePileTo } from "./motion.js";
import { narrate, tellState } from "./narration.js";
import { rememberNames } from "./store.js";
import { people } from "./state.js";
import { announce, clearBanner, dropGameToasts, nudgeFreeze, setFreezeBurn, showBanner, toast } from "./widgets.js";

// Browsers refuse (and complain about) vibration before the person has touched the page,
// e.g. right after a refresh: only buzz once they have.
function buzz(pattern) {
  const touched = navigator.userActivation ? navigator.userActivation.hasBeenActive : true;
  if (navigator.vibrate && touched) navigator.vibrate(pattern);
}

// `store` is the page's store (store.js), `sound` the page's sounds (sound.js).
export function createFeedback({ store, sound }) {
  const view = store.view;

  function apply(effects) {
    for (const [kind, value] of effects) {
      if (kind === "banner") showBanner(view.banner, value);
      else if (kind === "clearBanner") clearBanner(view.banner);
      else if (kind === "announce") announce(value);
      else if (kind === "toast") toast(value.text, { game: value.game });
      else if (kind === "dropGameToasts") dropGameToasts();
      else if (kind === "sound") sound.play(value);
      else if (kind === "buzz") buzz(value);
      else if (kind === "flipped") noteFlip(view.motion, value, performance.now());
      else if (kind === "slide") slidePileTo(view.motion, value);
      else if (kind === "burn") setFreezeBurn(value);
      else if (kind === "taker") view.lastTaker = value;
      else if (kind === "nudge") nudgeLater(value);
    }
  }

  // "Slap it!" when the trigger `key` still shows unslapped after NUDGE_MS.
  function nudgeLater(key) {
    clearTimeout(view.nudge.timer);
    view.nudge.timer = setTimeout(() => {
      if (nudgeDue(store.get(), key)) showBanner(view.banner, { text: say("trigger.nudge"), tone: "bad", about: "nudge" });
    }, NUDGE_MS);
  }

  return {
    // A notice the server sends on its own, outside any state (`restart`).
    event(event) {
      const state = store.get();
      if (state) apply(narrate(state, event, view));
    },
    // A new state (with the one before it), before it is drawn: what changed, then what the
    // change caused (its `events`), each list carried out before the next is made. The store
    // calls this only for a state it takes: one dropped as older drops its events too.
    stateChanged(state, previous) {
      rememberNames(view, people(state));
      for (const effects of tellState(state, previous, view)) apply(effects);
    },
    // A flip or a slap the server refused (its ack's error).
    actionFailed(error) {
      // A tap that crossed the winning one: the game-over card already says it all.
      if (!error || error.code === "game_over") return;
      if (error.code === "frozen") nudgeFreeze();
      else showBanner(view.banner, { text: errorText(error), tone: "bad" });
    },
  };
}
