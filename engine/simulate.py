"""Plays whole games with simple bot policies and prints how fast the engine runs.

    python -m engine.simulate --players 4 --games 1000 --seed 1

Each simulated player has a reflex speed; on a trigger the seats that may slap race, a
faster one is likelier to win and the losers' slaps arrive late, aimed at the pile they saw;
now and then someone slaps a card that is no trigger, and now and then nobody sees a trigger
until it lapses. Flips wait out the collect pause after a take, as the room's bots do. Time
moves on a simulated clock, so a run is the same for the same seed on any machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.errors import IllegalAction
from engine.game import Game
from engine.rules import AFTER_TAKE, TRIGGERS, Rules

FLIP_SECONDS = 0.6  # a steady human rhythm between flips
FALSE_SLAP_CHANCE = 0.02  # per flip, someone slaps a card that is no trigger
MISSED_TRIGGER_CHANCE = 0.01  # per trigger, nobody sees it and it lapses
LATE_SLAP_SECONDS = 0.5  # a loser this far behind the winner still slaps the pile it saw
REACTION_SECONDS = 0.2  # the quickest a hand moves; a seat's speed adds a random delay
DEFAULT_TIME_LIMIT = 30 * 60.0


@dataclass
class Result:
    actions: int
    flips: int
    winner: int
    by_time: bool
    lapses: int
    late_slaps: int


def play_one(players: int, rules: Rules, rng: random.Random, first: int = 0) -> Result:
    """One game to its end; every engine call (flip, slap, tick) counts as an action."""
    game = Game.deal(players, rules=rules, seed=rng.getrandbits(64), first=first)
    speed = [rng.uniform(0.5, 1.5) for _ in range(players)]
    now = 0.0
    actions = flips = lapses = late_slaps = 0
    while game.winner is None:
        now += FLIP_SECONDS
        actions += 1
        lapse_at = game.lapse_at
        if lapse_at is not None and rng.random() < MISSED_TRIGGER_CHANCE:
            now = max(now, lapse_at)  # nobody saw it: the room's timer ticks at the lapse
            lapses += sum(e.kind == "lapse" for e in game.tick(now))
            continue
        holding = game.slap_open and not game.trigger_lapsed
        if holding or rng.random() < FALSE_SLAP_CHANCE:
            racers = _racers(game, speed, now, rng)
            if not racers:
                lapses += sum(e.kind == "lapse" for e in game.tick(now))
                continue
            aimed = game.pile_id
            (first_at, slapper), *losers = racers
            events = game.slap(slapper, now, aimed)
            lapses += sum(e.kind == "lapse" for e in events)
            if any(e.kind == "take" for e in events):
                # The others saw the same trigger: their slaps arrive late, aimed at it.
                for at, loser in losers:
                    if at - first_at > LATE_SLAP_SECONDS or game.winner is not None:
                        break
                    now += at - first_at
                    first_at = at
                    actions += 1
                    try:
                        game.slap(loser, now, aimed)
                        late_slaps += 1
                    except IllegalAction:  # out of the game by now
                        pass
            continue
        seat = game.next_to_play
        assert seat is not None
        now = max(now, game.collect_until)  # the winner of a pile gathers it first
        try:
            events = game.flip(seat, now)
            lapses += sum(e.kind == "lapse" for e in events)
            flips += 1
        except IllegalAction:  # frozen after a false slap: time passes instead
            lapses += sum(e.kind == "lapse" for e in game.tick(now))
    return Result(actions, flips, game.winner, game.win_reason == "time", lapses, late_slaps)


def _racers(
    game: Game, speed: Sequence[float], now: float, rng: random.Random
) -> list[tuple[float, int]]:
    """The seats allowed to slap, with when their slap lands (seconds after the first
    sight), fastest first; a faster seat is likelier to land first."""
    racers = []
    for seat in range(game.players):
        if game.is_out(seat) or game.frozen_until(seat) > now:
            continue
        if not game.hand_sizes[seat] and game.rules.empty_deck == "out":
            continue
        racers.append((REACTION_SECONDS + rng.expovariate(4 * speed[seat]), seat))
    return sorted(racers)


def run(players: int, games: int, seed: int, rules: Rules) -> list[Result]:
    rng = random.Random(seed)
    return [play_one(players, rules, rng, first=i % players) for i in range(games)]


def report(results: list[Result], elapsed: float) -> str:
    actions = sum(r.actions for r in results)
    lengths = sorted(r.flips for r in results)
    by_time = sum(r.by_time for r in results)
    deciles = statistics.quantiles(lengths, n=10) if len(lengths) > 1 else lengths
    wins = Counter(r.winner for r in results)
    lines = [
        f"games:          {len(results)} in {elapsed:.2f} s "
        f"({len(results) / elapsed:,.0f} games/s)",
        f"engine actions: {actions:,} ({actions / elapsed:,.0f} actions/s, driver included)",
        f"flips per game: min {lengths[0]}, median {statistics.median(lengths):.0f}, "
        f"mean {statistics.fmean(lengths):.0f}, max {lengths[-1]}",
        "flip deciles:   " + " ".join(f"{d:.0f}" for d in deciles),
        f"time limit:     {by_time} of {len(results)} games "
        f"({100 * by_time / len(results):.1f}%) ended by it",
        "wins by seat:   " + " ".join(f"{s}:{wins[s]}" for s in sorted(wins)),
        f"lapsed triggers: {sum(r.lapses for r in results)}, "
        f"late slaps: {sum(r.late_slaps for r in results)}",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.simulate", description=__doc__)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        help="simulated seconds before the time-limit rule decides (0: none)",
    )
    parser.add_argument(
        "--triggers", default="jack", help=f"comma-separated, from {','.join(TRIGGERS)}"
    )
    parser.add_argument("--decks", type=int, default=1)
    parser.add_argument(
        "--collect-seconds", type=float, default=Rules.collect_seconds, help="0: no pause"
    )
    parser.add_argument(
        "--trigger-timeout", type=float, default=Rules.trigger_timeout, help="0: never lapse"
    )
    parser.add_argument("--shuffle-taken", action="store_true")
    parser.add_argument(
        "--after-take", choices=AFTER_TAKE, default=Rules.after_take, help="who flips after a take"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        rules = Rules(
            time_limit=args.time_limit or None,
            triggers=frozenset(args.triggers.split(",")),
            decks=args.decks,
            collect_seconds=args.collect_seconds,
            trigger_timeout=args.trigger_timeout,
            shuffle_taken=args.shuffle_taken,
            after_take=args.after_take,
        )
        if args.games < 1:
            raise ValueError("games must be at least 1")
        start = time.perf_counter()
        results = run(args.players, args.games, args.seed, rules)
    except ValueError as error:
        print(f"simulate: {error}", file=sys.stderr)
        return 2
    print(report(results, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
