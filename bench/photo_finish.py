"""Photo-finish margins: how far behind the winner the runner-up's slap lands, as the engine
records them (`late` events' `behind_ms`), in games between the bots' reaction models
(app/tables/bots.py SKILLS). What a lag-fair cap buys a player who holds back pongs: every
race closer than the cap. Prints figures, asserts nothing.

    .venv/bin/python bench/photo_finish.py [--games 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.tables.bots import SKILLS, Level
from engine import IllegalAction, Rules
from engine.events import Late
from engine.game import Game

FLIP_SECONDS = 0.6
TABLES: dict[str, tuple[Level, ...]] = {
    "4 hard": ("hard",) * 4,
    "4 normal": ("normal",) * 4,
    "4 easy": ("easy",) * 4,
    "mixed": ("hard", "normal", "normal", "easy"),
}
CAPS_MS = (25, 50, 75, 100, 150)


def reaction(level: Level, rng: random.Random) -> float:
    skill = SKILLS[level]
    seconds = rng.uniform(*skill.reaction)
    return seconds * 3 if rng.random() < skill.miss_chance else seconds


def margins(levels: tuple[Level, ...], games: int, rng: random.Random) -> list[int]:
    found: list[int] = []
    for number in range(games):
        game = Game.deal(len(levels), rules=Rules(), seed=rng.getrandbits(64), first=number % 4)
        now = 0.0
        for _ in range(3000):
            if game.winner is not None:
                break
            now += FLIP_SECONDS
            if game.slap_open and not game.trigger_lapsed:
                aimed = game.pile_id
                racers = sorted(
                    (now + reaction(level, rng), racer)
                    for racer, level in enumerate(levels)
                    if not game.is_out(racer) and game.frozen_until(racer) <= now
                )
                for at, racer in racers:
                    try:
                        events = game.slap(racer, at, aimed)
                    except IllegalAction:
                        continue
                    late = [e.behind_ms for e in events if isinstance(e, Late)]
                    margin = next((ms for ms in late if ms is not None), None)
                    if margin is not None:
                        found.append(margin)
                        break  # the runner-up: the photo finish's margin
                now = max(now, racers[-1][0] if racers else now, game.collect_until)
                continue
            turn = game.next_to_play
            if turn is None:
                break
            now = max(now, game.collect_until)
            try:
                game.flip(turn, now)
            except IllegalAction:
                game.tick(now)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{args.games} games a table; margin = runner-up's behind_ms (engine `late` events)")
    print(
        f"{'table':10} {'races':>6} {'p10':>5} {'p25':>5} {'p50':>5}  "
        + "  ".join(f"<{cap} ms" for cap in CAPS_MS)
    )
    for name, levels in TABLES.items():
        found = sorted(margins(levels, args.games, rng))
        if len(found) < 10:
            print(f"{name:10} too few races ({len(found)})")
            continue
        p10, p25, p50 = (found[int(len(found) * q)] for q in (0.10, 0.25, 0.50))
        shares = "  ".join(
            f"{100 * sum(m < cap for m in found) / len(found):5.1f}%" for cap in CAPS_MS
        )
        print(f"{name:10} {len(found):6} {p10:5} {p25:5} {p50:5}  {shares}")


if __name__ == "__main__":
    main()
