// Every sentence the room and home pages' scripts show or say, keyed by id, with the error
// texts keyed by the server's error codes (docs/protocol.md), in English: the source the
// message catalogs are extracted from (`make messages`, babel.cfg). Each id is a catalog
// entry (its msgctxt); `x.one` + `x.other` together are one counted entry `x`. The page
// gets its language's sentences from the catalog as JSON (the template's
// <script type="application/json" id="page-messages">); English here is the fallback.
// `{name}` marks a value filled in by say(): never build a sentence by joining pieces.

const MESSAGES = {
  // What the server refused, by error code (docs/protocol.md): an action's ack, a refused
  // connection or an HTTP answer. The server's own `message` is English, for developers.
  "error.bad_request": "The server did not understand that. Try again.",
  "error.unknown_event": "The server did not understand that. Try again.",
  "error.rate_limited": "Whoa, easy! Too many taps",
  "error.not_host": "Only the host can do that.",
  "error.wrong_phase": "Not right now",
  "error.not_seated": "Take a seat to play",
  "error.seat_taken": "Someone just took that seat.",
  "error.no_free_seat": "Every seat is taken.",
  "error.too_few_players": "At least two players need a seat to start.",
  "error.bad_rules": "Those house rules won't work: tick at least one card to slap on.",
  "error.internal_error": "Something went wrong on the server. Try again.",
  "error.bad_seat": "That seat is not at this table.",
  "error.game_over": "The game is over.",
  "error.out": "You're out of this game",
  "error.frozen": "You're frozen for a moment!",
  "error.not_your_turn": "Not your turn yet",
  "error.slap_pending": "Slap first! The pile is up for grabs",
  "error.no_cards": "No cards left to flip",
  "error.bad_auth": "This seat's key did not fit. Join again with your name.",
  "error.no_room": "There is no table with that code.",
  "error.bad_name": "That name won't work: 1 to 20 letters or digits, and not a bot's name. Try another one.",
  "error.room_full": "Too many people are in this room right now.",
  "error.shutting_down": "The server is restarting. Try again in a moment.",
  "error.too_many_rooms": "The server is full of tables right now. Try again later.",
  "error.store_unavailable": "The server cannot save new tables right now. Try again in a minute.",
  "error.too_large": "That was too much to send.",
  "error.collecting": "Wait: the pile is being collected",
  "error.paused": "The table is paused for a moment. Try again when it goes on.",
  // The page's own: no answer, or no code at all.
  "error.offline": "Not connected, retrying...",
  "error.timeout": "The server did not answer.",
  "error.unknown": "That didn't work",
  // Refusals of a connection: a title and what the person can do.
  "refused.no_room.title": "This table is closed",
  "refused.no_room.message": "It may have closed after everyone left. Start a new one from the home page.",
  "refused.room_full.title": "This table is full",
  "refused.room_full.message": "Too many people are in this room right now.",
  "refused.other.title": "Could not join",
  "refused.other.message": "The server refused the connection.",
  "closed.title": "Disconnected",
  "closed.message": "This seat is open in another tab or window, or the server closed the connection.",
  "name.missing": "Type a name so the table knows who you are.",
  // The avatar picker (avatars.js).
  "avatar.legend": "Your avatar (optional)",
  "avatar.none": "None",
  // Home page.
  "home.name_missing": "Type your name first: it's how the table knows you.",
  "home.bad_code": "Room codes have 6 letters and digits, like K7PQRX.",
  "home.no_server": "Could not reach the server.",
  "home.create_failed": "The server could not open a table.",
  "home.creating": "Creating...",
  "home.create": "Create a table",
  "home.event_name_missing": "Give the event a name: the stage shows it.",
  "home.event_failed": "The server could not open the event.",
  "home.opening": "Opening...",
  "home.open_event": "Open the event",
  // The connection's words in the top bar.
  "status.connected": "connected",
  "status.reconnecting": "reconnecting...",
  "status.connecting": "connecting...",
  "status.disconnected": "disconnected",
  "status.title": "Connection: {status}",
  "offline.reconnecting": "Connection lost, reconnecting...",
  "status.restarting": "Server restarting: back in a moment",
  "status.paused": "Table paused: the server is reaching its store. Play goes on by itself.",
  "status.held": "Paused by the organiser. Play goes on when they say.",
  // What just happened at the table (narration.js).
  "you": "You",
  "cards.one": "{count} card",
  "cards.other": "{count} cards",
  "flip.auto.other": "Flipped for {name} (away)",
  "flip.auto.mine": "Flipped for you: it was your turn",
  "take.the_pile": "the pile",
  "take.speed": " · {ms} ms",
  "take.last_card": " with a last-card Jack",
  "take.mine": "You take {count}{how}!{speed}",
  "take.other": "{name} takes {count}{how}{speed}",
  "false_slap.burned": "{card} burned",
  "false_slap.given": "a card goes to {name}",
  "false_slap.mine": "Wrong slap! {penalty}",
  "false_slap.mine.said": "Wrong slap! {penalty}. You are frozen for a moment.",
  "false_slap.other": "{name} slapped wrong: {penalty}",
  "late.beaten": "Too late! {name} was faster. No penalty.",
  "late.plain": "Too late! No penalty.",
  "late.by": "Too late by {ms} ms! {name} was faster. No penalty.",
  // Your slap tied with the winner's and the tie rule gave them the pile ({why}: a tie.* line).
  "late.tie": "A tie with {name}, and {why}. No penalty.",
  // The photo finish of a take, on every screen (changes.js): the closest runner-up.
  "race.beat": "{winner} beat {loser} by {ms} ms!",
  "race.you_beat": "You beat {loser} by {ms} ms!",
  "race.beat_you": "{winner} beat you by {ms} ms!",
  // A photo finish the tie rule decided ({why}: a tie.* line).
  "race.tie": "{winner} and {loser} tied: {why}!",
  "race.you_tie": "You and {loser} tied: {why}!",
  "race.tie_you": "{winner} and you tied: {why}!",
  // Why the tie rule gave the winner the pile: next to flip, or nearest after that seat.
  "tie.next": "{name} was next to flip",
  "tie.next.you": "you were next to flip",
  "tie.after": "{name} sits nearest after {next}, who was next to flip",
  "tie.after.you": "you sit nearest after {next}, who was next to flip",
  // The whole photo finish once a second runner-up arrives (finish.js): "1. Sam · 2. Priya +38 ms".
  "race.order": "Photo finish: {order}",
  "race.first": "{place}. {name}",
  "race.behind": "{place}. {name} +{ms} ms",
  "race.title": "Photo finish",
  "finish.behind": "+{ms} ms",
  // A trigger nobody slapped: a nudge after a few seconds, then the server lets it lapse.
  "trigger.nudge": "Slap it!",
  "lapse": "Nobody slapped the {card}: flipping goes on",
  "lapse.plain": "Nobody slapped: flipping goes on",
  "out.mine": "You're out of cards. Keep watching!",
  "out.other": "{name} is out",
  "win.mine": "You win the game!",
  "win.other": "{name} wins the game",
  "start.rematch": "New game!",
  "start.first": "Cards dealt!",
  "start.hint": " Slap when {when} shows",
  "start.said": "Game {game} starts. {name} flips first.",
  "start.said.mine": "Game {game} starts. You flip first.",
  "join": "{name} joined",
  "leave": "{name} left",
  "disconnect": "{name} lost connection",
  "reconnect": "{name} is back",
  // You, back after being away (narration.js): what happened meanwhile.
  "away.missed_deal": "A game was dealt while you were away: you're watching this one",
  "away.flipped.one": "While you were away, {count} card was flipped for you",
  "away.flipped.other": "While you were away, {count} cards were flipped for you",
  "remove.mine": "The host freed your seat: you're watching",
  "host.mine": "You're the host now",
  "abandon": "The players left, so that game is over. Sit down for the next one.",
  "trigger.said": "{card}! Slap!",
  "trigger.plain": "Slap!",
  "rules.changed": "The host changed the house rules",
  // Cards (cards.js): ranks and suits as a person reads them.
  "card.name": "{rank} of {suit}",
  "rank.A": "Ace",
  "rank.J": "Jack",
  "rank.Q": "Queen",
  "rank.K": "King",
  "suit.S": "spades",
  "suit.H": "hearts",
  "suit.D": "diamonds",
  "suit.C": "clubs",
  // A room's triggers (rules.js): "many" for a list, "one" for "when a ... shows".
  "trigger.jack.many": "Jacks",
  "trigger.jack.one": "a Jack",
  "trigger.face.many": "face cards",
  "trigger.face.one": "a face card",
  "trigger.double.many": "doubles",
  "trigger.double.one": "a double",
  "trigger.sandwich.many": "sandwiches",
  "trigger.sandwich.one": "a sandwich",
  "list.and": ", ",
  "list.or": "{first} or {last}",
  // What the table shouts when a trigger shows (render.js).
  "call.jack": "SLAP!",
  "call.face": "FACE! SLAP!",
  "call.double": "DOUBLE!",
  "call.sandwich": "SANDWICH!",
  "call.slap": "SLAP!",
  // The seats (seats.js, state.js).
  "seat.number": "Seat {number}",
  "seat.sit": "Sit here",
  "seat.sit.label": "Sit here, seat {number}",
  "seat.empty.label": "Seat {number}: empty",
  "seat.you.label": "{name}, you",
  "seat.you.tag": "you",
  "seat.bot": "bot",
  "seat.host": "host",
  "seat.to_flip": "to flip",
  "seat.out": "out",
  "seat.frozen": "frozen",
  "seat.away": "away",
  // Lag-fair judging: the seat's slaps count this much earlier (its measured round trip).
  "seat.lag": "{ms} ms",
  "seat.lag.label": "Lag-fair: slaps count {ms} ms earlier for this player's connection",
  "seat.remove.label": "Remove {name} from the table",
  "host.you": "you",
  // The pile (pile.js).
  "pile.count": "{count} in the pile",
  "pile.empty": "Empty pile",
  "pile.empty.label": "The pile is empty",
  "pile.top.label": "Top card: {card}",
  "pile.burned": "burned",
  "pile.burned.label": "Burned under the pile: {card}",
  // Your controls (panels.js).
  "controls.out": "You're out",
  "controls.your_turn": "Your turn!",
  "controls.their_turn": "{name}'s turn",
  // Your turn, but the server would not take a flip yet (state.js flipWait).
  "controls.wait.frozen": "Frozen: flip when it ends",
  "controls.wait.trigger": "Slap first!",
  "controls.wait.collect": "Collecting the pile...",
  "controls.out.watching": "You're out of cards. Stay and see who wins!",
  "controls.watching": "You're watching this game. Take a seat when it ends.",
  // The house-rules form (templates/_rules.html, built from app/wire/rule_words.py).
  "rules.triggers": "Slap on:",
  "rules.triggers.jack": "Jacks",
  "rules.triggers.jack.help": "(the classic)",
  "rules.triggers.double": "Doubles",
  "rules.triggers.double.help": "(7 on a 7)",
  "rules.triggers.sandwich": "Sandwiches",
  "rules.triggers.sandwich.help": "(7, 2, 7)",
  "rules.triggers.face": "Any face card",
  "rules.triggers.face.help": "(J, Q, K)",
  "rules.last_card_jack": "A Jack as your last card takes the pile",
  "rules.penalty": "Wrong slap",
  "rules.penalty.burn": "burns a card",
  "rules.penalty.give": "gives a card to the last flipper",
  "rules.freeze_seconds": "Freeze after a wrong slap",
  "rules.none": "none",
  "rules.seconds": "{seconds} s",
  "rules.empty_deck": "Out of cards",
  "rules.empty_deck.out": "you're out",
  "rules.empty_deck.last_chance": "one last chance to slap back in",
  "rules.decks": "Decks",
  "rules.decks.one": "1 deck (52)",
  "rules.decks.two": "2 decks (104)",
  "rules.time_limit": "Time limit",
  "rules.time_limit.none": "none: play to the last card",
  "rules.minutes.one": "{count} minute",
  "rules.minutes.other": "{count} minutes",
  "rules.collect_seconds": "After a pile is taken, nobody flips for",
  "rules.collect_seconds.none": "no pause",
  "rules.trigger_timeout": "A card nobody slaps lapses after",
  "rules.trigger_timeout.none": "never: wait for a slap",
  "rules.shuffle_taken": "Shuffle a won pile into the winner's deck",
  "rules.after_take": "After a pile is taken, the next to flip is",
  "rules.after_take.winner": "the winner",
  "rules.after_take.left_of_winner": "the player on the winner's left",
  "rules.tie_window_ms": "Slaps this close are a tie",
  "rules.tie_window_ms.none": "never: the first slap wins",
  "rules.tie_window_ms.help": "(the tied player next to flip takes the pile)",
  "rules.milliseconds": "{number} ms",
  "rules.lag_fair": "Lag-fair judging",
  "rules.lag_fair.help": "(a slow connection's slaps count up to 50 ms earlier)",
  "rules.false_starts": "Catch false starts",
  "rules.false_starts.help": "(a slap faster than anyone can react takes nothing)",
  // The house rules in one line (panels.js), by the same schema.
  "summary.slap": "Slap {triggers}",
  "summary.give": "wrong slap gives a card",
  "summary.burn": "wrong slap burns a card",
  "summary.freeze": "{seconds} s freeze",
  "summary.two_decks": "2 decks",
  "summary.last_chance": "last chance when empty",
  "summary.last_card_jack": "a last-card Jack takes the pile",
  "summary.minutes": "{minutes} min limit",
  "summary.seconds": "{seconds} s limit",
  "summary.collect": "{seconds} s to collect a pile",
  "summary.no_collect": "no pause after a take",
  "summary.lapse": "an unslapped card lapses after {seconds} s",
  "summary.no_lapse": "the table waits for every slap",
  "summary.shuffle": "won piles are shuffled",
  "summary.left_of_winner": "the winner's left flips next",
  "summary.tie_window": "slaps within {number} ms tie: the next to flip takes it",
  "summary.lag_fair": "lag-fair judging",
  "summary.no_false_starts": "no false-start check",
  "summary.joiner": " · ",
  // The lobby (panels.js).
  "lobby.pick_seat": "Pick a seat to play, or just watch.",
  "lobby.full": "The table is full: you're watching.",
  "lobby.alone": "It's just you so far: add a bot or invite a friend.",
  "lobby.seated": "{count} players seated. Start when everyone's in.",
  "lobby.waiting_for": "Waiting for {name} to start...",
  "lobby.waiting": "Waiting for the host to start...",
  "lobby.start.one": "Start game · {count} player",
  "lobby.start.other": "Start game · {count} players",
  "lobby.start.needs.one": "Start: {count} more player, or add a bot",
  "lobby.start.needs.other": "Start: {count} more players, or add bots",
  "lobby.watchers": "Watching: {names}",
  "lobby.watchers.more": "Watching: {names} and {more} more",
  // The game-over card (panels.js).
  "over.title": "Game over",
  "over.you_win": "You win!",
  "over.wins": "{name} wins!",
  "over.reason.cards": "Last player holding cards.",
  "over.reason.time": "Most cards when the time ran out.",
  "over.no_time": "–",
  "over.ms": "{ms} ms",
  "over.waiting_for": "Waiting for {name} to deal again...",
  "over.the_host": "the host",
  "over.place": "{place}.",
  // The podium's titles and the match score (podium.js).
  "title.fastest": "Fastest hand · {ms} ms",
  "title.takes": "Most takes ({count})",
  "title.false_slaps": "Most wrong slaps ({count})",
  // The recap at game over (recap.js), on the card, the big screen and the shared picture.
  "recap.title": "Recap",
  "recap.fastest": "Fastest hand: {name}, {ms} ms",
  "recap.closest": "Closest call: {name} won a pile by {ms} ms",
  "recap.median": "{name}: {ms} ms",
  "recap.medians": "Median reaction",
  "recap.share": "Share the recap",
  "recap.saved": "Recap picture saved",
  "recap.table": "table {room}",
  "recap.file": "slapjack-recap.png",
  "recap.players.one": "{count} player",
  "recap.players.other": "{count} players",
  "match.score": "{name} {wins}",
  "match.line": "Match: {scores}",
  // The shared screen's name among the watchers (/r/CODE/tv).
  "tv.name": "Big screen",
  // An event's page (event.js, eventview.js): a player's own line, the stage's words.
  "event.organiser": "Organiser",
  "event.watch_final": "Watch the final",
  "event.go_to_table": "Go to your table",
  "event.you.guest": "The event has started. Follow it here!",
  "event.you.guest_over": "The event is over.",
  "event.you.waiting": "You're in, {name}! Wait for the organiser to start.",
  "event.you.playing": "Your table is ready!",
  "event.you.through": "You're through to the next round! Wait for the other tables.",
  "event.you.out": "You're out. Well played! Follow the event here.",
  "event.you.removed": "The organiser took you out of this event.",
  "event.you.champion": "You won the event!",
  "event.rules.size": "Tables of {size}",
  "event.rules.first_to.one": "first to win {count} game",
  "event.rules.first_to.other": "first to win {count} games",
  "event.rules.bots": "bots fill empty seats",
  "event.players_in.one": "{count} player is in",
  "event.players_in.other": "{count} players are in",
  "event.ended": "The organiser ended the event",
  "event.podium": "The podium",
  "event.final": "The final",
  "event.round_of": "Round {round} of {rounds}",
  "event.round": "Round {round}",
  "event.paused": "Paused by the organiser",
  "event.next_round_in.one": "Next round in {count} second",
  "event.next_round_in.other": "Next round in {count} seconds",
  "event.table.number": "Table {number}",
  "event.table.gathering": "Waiting for players",
  "event.table.game": "Game {game}",
  "event.table.next_game": "Next game soon",
  "event.table.won": "{name} goes through",
  "event.table.no_winner": "Nobody goes through",
  "event.recap.rounds": "{rounds}, {games}",
  "event.recap.round_count.one": "{count} round",
  "event.recap.round_count.other": "{count} rounds",
  "event.recap.game_count.one": "{count} game",
  "event.recap.game_count.other": "{count} games",
  "event.recap.most_piles": "Most piles: {name} ({count})",
  "event.recap.file": "slapjack-event.png",
  "event.remove": "Remove {name}",
  "event.pause": "Pause",
  "event.resume": "Go on",
  "event.end_confirm": "End the event for everyone?",
  // The organiser's door on an event's page (event.js), as a table's host's.
  "event.lock": "Lock the event",
  "event.unlock": "Unlock the event",
  "event.locked": "The organiser locked the event: nobody new can join.",
  "event.refused.locked.title": "This event is locked",
  "event.refused.locked": "The organiser locked this event. Ask them for an invite link.",
  "event.refused.kicked.title": "You can't join this event",
  "event.refused.kicked": "The organiser removed you from this event.",
  // At a table of an event (heat.js).
  "heat.gathering": "Waiting for everyone at this table: the game starts when all are here.",
  "heat.next_game.one": "Next game in a moment: the first to win {count} game goes through",
  "heat.next_game.other": "Next game in a moment: the first to win {count} games goes through",
  "heat.you_through": "You win the table: you're through!",
  "heat.through": "{name} wins the table and goes through.",
  "heat.you_won_final": "You won the final!",
  "heat.won_final": "{name} won the final!",
  // The share panel (share.js).
  "share.copied": "Link copied!",
  "share.copy_by_hand": "Select the link and copy it.",
  "share.title": "Slapjack",
  "share.text": "Join my Slapjack table {room}",
  // Refusals of people the table will not take (docs/protocol.md): a name like someone's
  // here, an avatar that is not one emoji, a locked table, the host's removal.
  "error.name_taken": "Someone here already has that name, or one that looks just like it. Pick another.",
  "error.bad_avatar": "That avatar can't be used. Pick one of these.",
  "error.room_locked": "The host locked this table. Ask them for an invite link.",
  "error.kicked": "The host removed you from this table.",
  "refused.room_locked.title": "This table is locked",
  "refused.kicked.title": "You can't join this table",
  // The room closed with you in it: no game was dealt and nobody did anything for a while.
  "closed.idle.title": "This table closed",
  "closed.idle.message": "Nobody started a game for a while, so the table closed. Open a new one from the home page.",
  // The host's door (door.js): who may come in, and removing someone for good.
  "door.lock": "Lock the table",
  "door.unlock": "Unlock the table",
  "door.invite": "New invite link",
  "door.invite.label": "Invite link",
  "door.locked.host": "Locked: nobody new can join, but with your newest invite link.",
  "door.locked": "The host locked this table: nobody new can join.",
  "door.people": "People here",
  "door.kick": "Remove",
  "door.kick.label": "Remove {name} from this table for good",
  "kick.other": "{name} was removed from the table",
  "lock.on": "The host locked the table: nobody new can join",
  "lock.off": "The host unlocked the table",
  // A slap faster than a person can react after the trigger reached them: it takes nothing,
  // and that seat cannot take this pile (narration.js; the ack's error.false_start after).
  "false_start.mine": "Too soon! Nobody reacts that fast: this pile is not yours.",
  "false_start.other": "{name} slapped too soon ({ms} ms): no pile for them",
  "error.false_start": "Too soon: this pile is not yours.",
};

// The page's language and its sentences, as the template handed them over (none in tests).
function pageCatalog() {
  const block = globalThis.document?.getElementById("page-messages");
  if (!block) return { lang: "en", messages: {} };
  try {
    const catalog = JSON.parse(block.textContent);
    return { lang: catalog.lang || "en", messages: catalog.messages || {} };
  } catch {
    return { lang: "en", messages: {} };
  }
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, key) => (key in params ? String(params[key]) : whole));
}

// The sentences of one catalog ({lang, messages}, as the page's JSON block holds them:
// id -> text, or id -> {plural category: text}), with English as the fallback.
export function speaker({ lang = "en", messages = {} } = {}) {
  const plurals = new Intl.PluralRules(lang);
  const englishPlurals = new Intl.PluralRules("en");
  const sentence = (id) => (typeof messages[id] === "string" ? messages[id] : MESSAGES[id]);
  const hasMessage = (id) => sentence(id) !== undefined;

  // The sentence for `id`, with each {name} replaced by params[name]. An unknown id is
  // shown as itself, so a missing sentence is visible rather than silent.
  const say = (id, params = {}) => fill(sentence(id) ?? id, params);

  // "1 card", "3 cards" (Malay: "1 kad", "3 kad"): the catalog's form for the plural
  // category this count falls in, in the page's language.
  function countOf(prefix, count) {
    const forms = messages[prefix];
    if (forms && typeof forms === "object") {
      const text = forms[plurals.select(count)] ?? forms.other;
      if (typeof text === "string") return fill(text, { count });
    }
    const id = `${prefix}.${englishPlurals.select(count)}`;
    return fill(MESSAGES[id] ?? id, { count });
  }

  // The words for an error the server (or the connection) gave: ours for every code we
  // know; the server's own (English) message only for a code this page has no words for.
  function errorText(error) {
    const code = error?.code;
    if (code && hasMessage(`error.${code}`)) return say(`error.${code}`);
    return error?.message || say("error.unknown");
  }

  return { lang, say, countOf, errorText, hasMessage };
}

const page = speaker(pageCatalog());

export const { say, countOf, errorText, hasMessage } = page;
