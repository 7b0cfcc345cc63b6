// An event's page (static/js/eventview.js) and a table of an event (static/js/heat.js): what
// each says from the server's states.
import assert from "node:assert/strict";
import { test } from "node:test";

import { heading, nextLine, podiumPlaces, recapLines, rulesLine, tableCards, tableToGo, youLine } from "../../static/js/eventview.js";
import { eventHome, heatDecided, heatLine, heatResult } from "../../static/js/heat.js";

const players = [
  { player: "pa", name: "Ana", avatar: "🦊", bot: null, status: "playing", table: "T1" },
  { player: "pb", name: "Bo", avatar: null, bot: null, status: "playing", table: "T1" },
  { player: "b1", name: "Robo Rita", avatar: null, bot: "hard", status: "playing", table: "T2" },
  { player: "pc", name: "Cy", avatar: null, bot: null, status: "playing", table: "T2" },
];

const event = (extra = {}) => ({
  event: "EVT123",
  version: 7,
  name: "Class 2B",
  stage: "playing",
  paused: false,
  ended: false,
  size: 3,
  first_to: 2,
  bots: true,
  players,
  round: 1,
  rounds_to_play: 2,
  rounds: [
    [
      { table: "T1", players: ["pa", "pb"], decided: false, winner: null, progress: { phase: "playing", game: 1, seats: [
        { player: "pa", cards: 30, out: false, wins: 1, here: true },
        { player: "pb", cards: 22, out: false, wins: 0, here: false },
      ] } },
      { table: "T2", players: ["b1", "pc"], decided: true, winner: "pc", progress: null },
    ],
  ],
  final: null,
  next_round_ms: null,
  podium: [],
  recap: { fastest: null, most_piles: null, games: 3 },
  you: { player: "pa", organiser: false, table: "T1", status: "playing" },
  ...extra,
});

test("a player whose table is on is sent to it; nobody else is", () => {
  assert.equal(tableToGo(event()), "T1");
  assert.equal(tableToGo(event({ you: { player: "pa", organiser: false, table: "T1", status: "through" } })), null);
  assert.equal(tableToGo(event({ you: { player: "o1", organiser: true, table: null, status: null } })), null);
  assert.equal(youLine(event()).go.href, "/r/T1");
});

test("a player's own line follows their status, a guest's the event", () => {
  const as = (status) => youLine(event({ you: { player: "pa", organiser: false, table: "T1", status } })).text;
  assert.equal(as("waiting"), "You're in, Ana! Wait for the organiser to start.");
  assert.equal(as("through"), "You're through to the next round! Wait for the other tables.");
  assert.equal(as("champion"), "You won the event!");
  const out = youLine(event({ final: "T9", you: { player: "pa", organiser: false, table: "T1", status: "out" } }));
  assert.equal(out.go.href, "/r/T9");
  assert.equal(youLine(event({ you: { player: null, organiser: false, table: null, status: null } })).text, "The event has started. Follow it here!");
  assert.equal(youLine(event({ you: { player: "o1", organiser: true, table: null, status: null } })), null);
});

test("headings, rules and the next round's countdown", () => {
  assert.equal(rulesLine(event()), "Tables of 3 · first to win 2 games · bots fill empty seats");
  assert.equal(heading(event()), "Round 1 of 2");
  assert.equal(heading(event({ stage: "lobby" })), "4 players are in");
  assert.equal(heading(event({ final: "T9" })), "The final");
  assert.equal(heading(event({ stage: "over", ended: true })), "The organiser ended the event");
  assert.equal(nextLine(event(), 2100), "Next round in 3 seconds");
  assert.equal(nextLine(event({ paused: true }), 2100), "Paused by the organiser");
  assert.equal(nextLine(event(), null), "");
});

test("each table of the round with its players' cards, games won and winner", () => {
  const [first, second] = tableCards(event());
  assert.equal(first.status, "Game 1");
  assert.deepEqual(first.rows.map((row) => [row.name, row.cards, row.wins, row.here, row.you]), [
    ["Ana", 30, 1, true, true],
    ["Bo", 22, 0, false, false],
  ]);
  assert.equal(second.status, "Cy goes through");
  assert.equal(second.rows.find((row) => row.player === "pc").winner, true);
});

test("the podium and the recap", () => {
  const over = event({ stage: "over", round: 2, podium: ["pc", "pa", "b1"], recap: {
    fastest: { player: "pa", name: "Ana", ms: 312.4 }, most_piles: { player: "pc", name: "Cy", takes: 9 }, games: 4 } });
  assert.deepEqual(podiumPlaces(over).map((p) => [p.place, p.name, p.you]), [[1, "Cy", false], [2, "Ana", true], [3, "Robo Rita", false]]);
  assert.deepEqual(recapLines(over), ["2 rounds, 4 games", "Fastest hand: Ana, 312 ms", "Most piles: Cy (9)"]);
});

const heat = (extra = {}) => ({
  phase: "over",
  you: { player: "pa", seat: 0, host: false },
  seats: [{ seat: 0, name: "Ana" }, { seat: 1, name: "Bo" }],
  heat: { event: "EVT123", name: "Class 2B", round: 1, final: false, first_to: 2, winner: null },
  ...extra,
});

test("a table of an event says its round, the next game, and who goes through", () => {
  assert.equal(heatLine(heat()), "Class 2B · Round 1 · first to win 2 games");
  assert.equal(heatResult(heat()), "Next game in a moment: the first to win 2 games goes through");
  assert.equal(heatDecided(heat()), false);
  const won = heat({ heat: { ...heat().heat, winner: 1 } });
  assert.equal(heatResult(won), "Bo wins the table and goes through.");
  assert.equal(heatDecided(won), true);
  const mine = heat({ heat: { ...heat().heat, final: true, winner: 0 } });
  assert.equal(heatResult(mine), "You won the final!");
  assert.equal(heatLine({ phase: "lobby" }), "");
});

test("back to the event: its page, or the big screen's own, never another site", () => {
  assert.equal(eventHome(heat()), "/e/EVT123");
  assert.equal(eventHome(heat(), "/e/EVT123/tv"), "/e/EVT123/tv");
  assert.equal(eventHome(heat(), "//evil.example/e/X"), "/e/EVT123");
  assert.equal(eventHome({ phase: "over" }), null);
});
