// The one owner of the room page's state: the newest state the server sent, the one before
// it, and the page's own view state (banner, freeze countdowns, the pile on screen and what
// a slap aims at, animations in flight, the seats' drawn nodes). Modules keep nothing of
// their own: they are handed the store, or the part of its view they draw.

// The page's own state, beside the server's. Every field is described where it is used.
export function createViewState() {
  return {
    // The banner on screen: what it is about ("freeze": it goes when your freeze ends),
    // and the timer that clears it.
    banner: { about: "", timer: 0 },
    // Player id -> name, kept after they leave for "Sam left".
    names: new Map(),
    // Who took the last pile ("You" or a name), for "Too late! Sam was faster".
    lastTaker: null,
    // Freeze countdowns: seat -> performance.now() when its freeze ends, and your seat.
    freeze: { deadlines: new Map(), mine: null, ticking: false },
    // The pile on screen (aim.js): its id, whether a trigger shows, and the pile it replaced.
    pile: { id: null, trigger: false, previousId: null, changedAt: -Infinity, key: "", top: null },
    // The "Slap it!" nudge's timer (changes.js NUDGE_MS).
    nudge: { timer: 0 },
    // Movement in flight (motion.js): taken piles still sliding, and the last flip.
    motion: { sliding: 0, flipSeat: null, flipAt: -Infinity },
    // Seat index -> { node, signature }: seats are redrawn only when they change.
    seats: new Map(),
    // The game-over card (arming.js): performance.now() when it opened and when the last
    // press on it began, and the timer that makes its buttons live.
    over: { openedAt: -Infinity, pressedAt: -Infinity, timer: 0 },
    // At a table of an event (heat.js): where "Back to the event" goes on the big screen
    // (its `back`), and the timer that goes back by itself once the table has a winner.
    back: "",
    heatReturn: 0,
  };
}

export function createStore() {
  let current = null;
  let previous = null;
  let fresh = false; // the next state starts a new connection: taken whatever its version
  const listeners = new Set();
  return {
    view: createViewState(),
    get: () => current,
    previous: () => previous,
    // Returns true when `next` is newer than what we hold (out-of-order states are dropped,
    // and the events they carry with them: listeners hear only states taken).
    receive(next) {
      if (!next || typeof next !== "object") return false;
      const sameRoom = current && current.room === next.room;
      const older = sameRoom && typeof next.version === "number" && next.version < current.version;
      if (older && !fresh) return false;
      fresh = false;
      previous = current;
      current = next;
      for (const listener of listeners) listener(current, previous);
      return true;
    },
    // A new connection (a welcome): its first state is the server's truth even with a
    // lower version. After a crash the table comes back as of its last save, which may be
    // a moment behind what this page saw; states of one connection arrive in order.
    reconnected() {
      fresh = true;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

// Everyone's names, remembered for events about people who have since left.
export function rememberNames(view, people) {
  for (const [player, person] of people) view.names.set(player, person.name);
}
