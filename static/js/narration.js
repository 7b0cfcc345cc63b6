// What the server's events mean to a person (those a state carries in `events`, and the
// `restart` notice, an `event` message of its own): each event becomes a list of
// effects (words for the banner, a toast or the screen reader, a sound, a buzz, a pile
// sliding to its taker). Pure: feedback.js carries the effects out, and tests read them.
//
// Effects are [kind, value] pairs, in the order they happen:
//   ["banner", {text, tone, about}]  the line under the table ("about: freeze" ends with the freeze)
//   ["announce", text]               the aria-live announcer only
//   ["toast", {text, game}]          a short note (also announced); `game` ones go when the phase changes
//   ["sound", name] ["buzz", pattern] ["flipped", seat] ["slide", seat] ["burn", text]
//   ["taker", name]                  remember who took the last pile, for "Too late! Sam was faster"

import { cardLabel, cardName } from "./cards.js";
import { stateChanges, tieWhy } from "./changes.js";
import { countOf, say } from "./messages.js";
import { triggerWords } from "./rules.js";
import { eventName, eventsOf, given, mySeat, seatName } from "./state.js";

const HANDLERS = {
  flip(state, event) {
    const effects = [["flipped", event.seat], ["sound", "flip"]];
    if (event.auto && event.seat !== mySeat(state)) {
      effects.push(["toast", { text: say("flip.auto.other", { name: eventName(state, event) }), game: true }]);
    } else if (event.auto) {
      effects.push(["toast", { text: say("flip.auto.mine"), game: true }]);
    }
    // Flips are not announced one by one: a screen reader would queue "Jack! Slap!" behind
    // them. The pile's label says the top card; your turn, triggers, takes, wrong slaps,
    // someone out and the win are announced.
    return effects;
  },
  take(state, event) {
    const mine = event.seat === mySeat(state);
    const taker = eventName(state, event);
    const count = event.count ? countOf("cards", event.count) : say("take.the_pile");
    const speed = typeof event.reaction_ms === "number" ? say("take.speed", { ms: Math.round(event.reaction_ms) }) : "";
    const how = event.reason === "last_card" ? say("take.last_card") : "";
    const text = mine ? say("take.mine", { count, how, speed }) : say("take.other", { name: taker, count, how, speed });
    const effects = [["slide", event.seat], ["taker", taker], ["banner", { text, tone: mine ? "good" : "", about: "" }]];
    effects.push(["announce", text], ["sound", mine ? "take" : "slap"]);
    if (mine) effects.push(["buzz", 40]);
    return effects;
  },
  false_slap(state, event) {
    const mine = event.seat === mySeat(state);
    let penalty = "";
    if (event.card) penalty = say("false_slap.burned", { card: cardLabel(event.card) });
    else if (given(event.to)) penalty = say("false_slap.given", { name: seatName(state, event.to) });
    const text = mine ? say("false_slap.mine", { penalty }) : say("false_slap.other", { name: eventName(state, event), penalty });
    const effects = [["banner", { text, tone: mine ? "bad" : "", about: mine ? "freeze" : "" }]];
    effects.push(["announce", mine ? say("false_slap.mine.said", { penalty }) : text]);
    if (mine) effects.push(["burn", penalty], ["sound", "wrong"], ["buzz", [70, 50, 70]]);
    return effects;
  },
  late(state, event, memory) {
    if (event.seat !== mySeat(state)) return [];
    let text;
    if (given(event.tie) && given(event.winner)) {
      // The tie rule decided it: a dead heat, so no "by N ms", but why the pile went there.
      text = say("late.tie", { name: seatName(state, event.winner), why: tieWhy(state, event.winner, event.tie) });
    } else if (typeof event.behind_ms === "number" && given(event.winner)) {
      // The server's photo finish: how far behind the winning slap this one arrived.
      text = say("late.by", { ms: Math.round(event.behind_ms), name: seatName(state, event.winner) });
    } else {
      const beaten = memory.lastTaker && memory.lastTaker !== say("you");
      text = beaten ? say("late.beaten", { name: memory.lastTaker }) : say("late.plain");
    }
    return [["banner", { text, tone: "", about: "" }], ["announce", text], ["sound", "late"]];
  },
  lapse(state) {
    // The trigger stays on the pile (still slappable), but flipping goes on.
    const top = state.pile?.top?.at(-1);
    const text = top ? say("lapse", { card: cardName(top) }) : say("lapse.plain");
    return [["banner", { text, tone: "", about: "" }], ["announce", text]];
  },
  out(state, event) {
    // The last one out ends the game: the game-over card says the rest.
    if (state.phase !== "playing") return [];
    const mine = event.seat === mySeat(state);
    const text = mine ? say("out.mine") : say("out.other", { name: eventName(state, event) });
    return [["toast", { text, game: true }]];
  },
  win(state, event) {
    const mine = event.seat === mySeat(state);
    const effects = [["announce", mine ? say("win.mine") : say("win.other", { name: eventName(state, event) })], ["sound", "win"]];
    if (mine) effects.push(["buzz", [50, 40, 50, 40, 120]]);
    return effects;
  },
  start(state, event) {
    // The room's own triggers, as the server lists them: words to read, not a rule to apply.
    const when = triggerWords(state.rules?.triggers, "one");
    const hint = when ? say("start.hint", { when }) : "";
    const text = `${say(event.rematch ? "start.rematch" : "start.first")}${hint}`;
    return [
      ["banner", { text, tone: "good", about: "" }],
      // "You flip first", never "You flips first": your own turn has its own sentence.
      state.next === mySeat(state)
        ? ["announce", say("start.said.mine", { game: event.game ?? "" })]
        : ["announce", say("start.said", { game: event.game ?? "", name: seatName(state, state.next) })],
    ];
  },
  join(state, event) {
    if (event.player === state.you?.player || !event.name) return [];
    return [["toast", { text: say("join", { name: event.name }), game: false }]];
  },
  leave(state, event, memory) {
    const who = memory.names.get(event.player);
    if (!who || event.player === state.you?.player) return [];
    return [["toast", { text: say("leave", { name: who }), game: false }]];
  },
  disconnect(state, event, memory) {
    const who = memory.names.get(event.player);
    if (!who || !given(event.seat)) return [];
    return [["toast", { text: say("disconnect", { name: who }), game: false }]];
  },
  reconnect(state, event, memory) {
    if (event.player && event.player === state.you?.player) {
      // Back: what happened while away, once ("14 cards flipped for you").
      const effects = [];
      if (event.missed_deal) effects.push(["toast", { text: say("away.missed_deal"), game: false }]);
      if (event.flipped > 0) effects.push(["toast", { text: countOf("away.flipped", event.flipped), game: false }]);
      return effects;
    }
    const who = memory.names.get(event.player);
    if (!who || !given(event.seat)) return [];
    return [["toast", { text: say("reconnect", { name: who }), game: false }]];
  },
  false_start(state, event) {
    const mine = event.seat === mySeat(state);
    const ms = Math.round(event.reaction_ms ?? 0);
    const text = mine ? say("false_start.mine") : say("false_start.other", { name: eventName(state, event), ms });
    const effects = [["banner", { text, tone: mine ? "bad" : "", about: "" }], ["announce", text]];
    if (mine) effects.push(["sound", "wrong"], ["buzz", [70, 50, 70]]);
    return effects;
  },
  kick(state, event, memory) {
    const who = memory.names.get(event.player);
    if (!who || event.player === state.you?.player) return [];
    return [["toast", { text: say("kick.other", { name: who }), game: false }]];
  },
  lock(state, event) {
    return [["toast", { text: say(event.locked ? "lock.on" : "lock.off"), game: false }]];
  },
  remove(state, event) {
    if (!event.player || event.player !== state.you?.player) return [];
    return [["toast", { text: say("remove.mine"), game: false }]];
  },
  host(state, event) {
    if (event.player !== state.you?.player) return [];
    return [["toast", { text: say("host.mine"), game: false }]];
  },
  abandon() {
    return [["toast", { text: say("abandon"), game: false }]];
  },
  restart() {
    // The server is restarting: the table is saved and the page comes back by itself. Said
    // in one place, the table's "offline" notice (gates.js, a role=alert the screen reader
    // speaks), not again in a banner and a toast.
    return [];
  },
};

// An event is one object with a `kind` (docs/protocol.md). `memory` is the
// page's view state: names of people who have left, and who took the last pile.
export function narrate(state, event, memory) {
  const handler = event && HANDLERS[event.kind];
  return handler ? handler(state, event, memory) : [];
}

// Everything a state the store took means, in order, one list of effects at a time: first
// what changed since `previous` (changes.js), then each event the change caused, as the
// state carries them. Lazy, so the caller carries out each list before the next is made:
// an event is told with the memory the ones before it left (a take's taker, for a `late`).
// `memory` is the page's view state (its banner says what it is about).
export function* tellState(state, previous, memory) {
  yield stateChanges(state, previous, memory.banner.about);
  for (const event of eventsOf(state)) yield narrate(state, event, memory);
}
