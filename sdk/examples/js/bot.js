// A Sueca bot in JavaScript (Node, no packages) speaking sueca-exec/1 (docs/any-language.md).
// Its hello says it takes many games at once, so one Node process plays every game.
//
// Strategy: when following, play the cheapest card that takes the trick, unless the partner
// already takes it (then give it the most points that cost no trump); when it cannot take the
// trick, throw its cheapest card; when leading, lead its strongest non-trump card. Never random.
//
// Run: sueca-bot selfplay --bots exec:"node sdk/examples/js/bot.js",random
"use strict";
const readline = require("node:readline");

const RANKS = "23456QJK7A"; // weakest to strongest
const POINTS = [0, 0, 0, 0, 0, 2, 3, 4, 10, 11];
const SUITS = "CDHS";

// A card as { suit, strength, points, text } from its text ("AS").
function parse(text) {
  const strength = RANKS.indexOf(text[0]);
  return { suit: SUITS.indexOf(text[1]), strength, points: POINTS[strength], text };
}

// Whether card a beats card b (already on the table), given the led suit and trump.
function beats(a, b, led, trump) {
  if (a.suit === b.suit) return a.strength > b.strength;
  return a.suit === trump || (a.suit === led && b.suit !== trump);
}

// Sort key: cheapest first (non-trumps before trumps, then fewer points, then weaker).
const cost = (c, trump) => (c.suit === trump) * 1000 + c.points * 10 + c.strength;

function choose(legal, trick, trump) {
  if (trick.length === 0) {
    const plain = legal.filter((c) => c.suit !== trump);
    const pool = plain.length ? plain : legal;
    return pool.reduce((a, b) => (b.strength > a.strength ? b : a));
  }
  const led = trick[0].suit;
  let win = 0;
  for (let i = 1; i < trick.length; i++) if (beats(trick[i], trick[win], led, trump)) win = i;
  const partnerWins = trick.length - win === 2; // the partner played two cards before this seat
  const cheapest = (cards) => cards.reduce((a, b) => (cost(b, trump) < cost(a, trump) ? b : a));
  if (partnerWins) {
    const plain = legal.filter((c) => c.suit !== trump);
    const pool = plain.length ? plain : legal;
    return pool.reduce((a, b) => (b.points > a.points || (b.points === a.points && b.strength < a.strength) ? b : a));
  }
  const winners = legal.filter((c) => beats(c, trick[win], led, trump));
  return cheapest(winners.length ? winners : legal);
}

function answer(msg) {
  if (msg.kind === "redeal") return { game: msg.game, id: msg.id, redeal: false };
  const legal = msg.legal.map(parse);
  const trick = msg.obs.trick.map(parse);
  const trump = parse(msg.obs.trump).suit;
  return { game: msg.game, id: msg.id, card: choose(legal, trick, trump).text };
}

process.stdout.write(JSON.stringify({ type: "hello", protocol: "sueca-exec/1", games: 1024 }) + "\n");
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "turn") process.stdout.write(JSON.stringify(answer(msg)) + "\n");
});
lines.on("close", () => process.exit(0));
