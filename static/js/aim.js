// Which pile a slap aims at, from the store's record of the pile on screen (never read back
// out of the page). Pure: `pileView` is store.view.pile and `now` is performance.now().

// A person reacts to what they saw a moment ago: a tap landing within a slow reaction time
// of the pile being taken, with no new trigger showing, was aimed at the taken pile (a Jack
// someone else won first). It is sent with that pile's id and the server calls it late:
// free, not a wrong slap on the new pile. With a trigger showing, the tap is for that
// trigger. The server judges either way.
export const REACTION_MS = 700;

// Called when a state is drawn: the pile now on screen, and whether a trigger shows on it.
export function notePileShown(pileView, state, now) {
  const id = state.pile?.id ?? 0;
  if (pileView.id !== null && id !== pileView.id) {
    pileView.previousId = pileView.id;
    pileView.changedAt = now;
  }
  pileView.id = id;
  pileView.trigger = Boolean(state.trigger || state.slap_open);
}

export function aimedPileId(pileView, now) {
  const justTaken = pileView.previousId !== null && now - pileView.changedAt < REACTION_MS;
  return justTaken && !pileView.trigger ? pileView.previousId : pileView.id ?? 0;
}
