// The game-over card's buttons wait a moment before they take a press. The card opens
// over the felt while players are still slapping: a finger tapping the felt, or the slap
// key (Space) or the flip key (Enter) with the focus just moved to "Play again", must not
// become "Play again", "Change players or rules" or "Leave the table". pressCounts is the
// rule (pure, unit-tested); armCard and guardCard apply it to the card.

// ms. The card rises for 300 ms (over.css); a slap already on its way when it appears
// lands within a reaction time after it (some 250-400 ms to see a change and stop the
// hand), so 700 ms covers both. Longer would feel like a dead button to someone who read
// the result and means to play again; people spend more than that reading the podium.
export const ARM_MS = 700;

// Whether a press on one of the card's buttons counts: one that began (finger down, key
// down) once the card had been open ARM_MS, and never a key's auto-repeat (a key held
// down for a slap or a flip as the game ended).
export function pressCounts({ openedAt, pressedAt, repeat = false }) {
  return !repeat && pressedAt - openedAt >= ARM_MS;
}

const buttonsOf = (card) => card.querySelectorAll("button");

// The card has just opened (`now`: performance.now()): its buttons say they are not live
// yet (aria-disabled keeps them focusable, so the focus can land on "Play again" at once;
// `disabled` would throw it out), and come live ARM_MS later.
export function armCard(over, card, now) {
  over.openedAt = now;
  clearTimeout(over.timer);
  for (const button of buttonsOf(card)) button.setAttribute("aria-disabled", "true");
  over.timer = setTimeout(() => {
    for (const button of buttonsOf(card)) button.removeAttribute("aria-disabled");
  }, ARM_MS);
}

const ACTIVATING_KEYS = new Set(["Enter", " ", "Spacebar"]);

// Listens on the card before its buttons do (capture): a press that does not count goes
// no further. `over` is the store's view.over; `now` reads the clock (performance.now).
export function guardCard(over, card, now = () => performance.now()) {
  const onButton = (event) => Boolean(event.target.closest?.("button"));
  card.addEventListener(
    "pointerdown",
    () => {
      over.pressedAt = now();
    },
    { capture: true },
  );
  // A key's press begins on keydown: Enter clicks there, Space on the key's release (and
  // not at all when its keydown was refused), so refusing the keydown is enough for both.
  card.addEventListener(
    "keydown",
    (event) => {
      if (!ACTIVATING_KEYS.has(event.key) || !onButton(event)) return;
      over.pressedAt = now();
      if (!pressCounts({ openedAt: over.openedAt, pressedAt: over.pressedAt, repeat: event.repeat })) event.preventDefault();
    },
    { capture: true },
  );
  card.addEventListener(
    "click",
    (event) => {
      if (!onButton(event)) return;
      // A pointer's click began at its pointerdown; a click with no pointer (a key, a
      // screen reader's activation) begins now.
      const pressedAt = event.detail > 0 ? over.pressedAt : now();
      if (pressCounts({ openedAt: over.openedAt, pressedAt })) return;
      event.preventDefault();
      event.stopPropagation();
    },
    { capture: true },
  );
}
