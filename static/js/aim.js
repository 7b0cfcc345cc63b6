// Which pile a slap aims at, from the store's record of the pile on screen (never read back
// out of the page). Pure: `pileView` is store.view.pile.

// A tap is sent with the id of the pile on screen when it lands, and nothing else: the
// server decides what it was. A tap a moment after someone took the pile reaches the
// server during the collect pause, when no flip can have covered the empty pile, and the
// server counts it late for the pile just taken (free, in that pile's photo finish); a tap
// at a pile already taken is late too. No time window lives here.

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

export function aimedPileId(pileView) {
  return pileView.id ?? 0;
}
