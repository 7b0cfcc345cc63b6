"""The simulator: runs whole games, prints its figures, and every game ends.

Speed is never asserted: the machine is shared.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def simulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.simulate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def wins_by_seat(out: str) -> dict[int, int]:
    (line,) = [x for x in out.splitlines() if x.lower().startswith("wins by seat")]
    return {int(s): int(n) for s, n in re.findall(r"(\d+):(\d+)", line.split(":", 1)[1])}


def untimed(out: str) -> list[str]:
    """The lines of the report that do not depend on the speed of the machine."""
    return [x for x in out.splitlines() if "/s" not in x]


@pytest.fixture(scope="module")
def four_players():
    return simulate("--players", "4", "--games", "20", "--seed", "1")


def test_simulate_exits_cleanly(four_players):
    assert four_players.returncode == 0, four_players.stderr


def test_simulate_prints_games_and_actions_per_second(four_players):
    out = four_players.stdout
    assert re.search(r"[\d,.]+ games/s", out)
    assert re.search(r"[\d,.]+ actions/s", out)
    assert re.search(r"\b20\b", out.splitlines()[0])


def test_simulate_prints_a_length_distribution(four_players):
    out = four_players.stdout.lower()
    assert re.search(r"min \d+", out)
    assert re.search(r"median \d+", out)
    assert re.search(r"max \d+", out)


def test_every_simulated_game_ends_with_a_winner(four_players):
    wins = wins_by_seat(four_players.stdout)
    assert set(wins) <= {0, 1, 2, 3}
    assert sum(wins.values()) == 20


def test_simulate_reports_how_often_the_time_limit_decides(four_players):
    m = re.search(r"time limit:\s*(\d+) of 20 games", four_players.stdout)
    assert m
    assert 0 <= int(m.group(1)) <= 20


def test_simulate_is_the_same_for_the_same_seed(four_players):
    again = simulate("--players", "4", "--games", "20", "--seed", "1")
    assert untimed(again.stdout) == untimed(four_players.stdout)


def test_simulate_big_table_with_two_decks_ends_every_game():
    run = simulate("--players", "8", "--decks", "2", "--games", "4", "--seed", "3")
    assert run.returncode == 0, run.stderr
    assert sum(wins_by_seat(run.stdout).values()) == 4


def test_simulate_with_a_short_time_limit_ends_games_by_it():
    run = simulate("--players", "3", "--games", "5", "--seed", "2", "--time-limit", "30")
    assert run.returncode == 0, run.stderr
    assert sum(wins_by_seat(run.stdout).values()) == 5
    m = re.search(r"time limit:\s*(\d+) of 5 games", run.stdout)
    assert m
    assert int(m.group(1)) > 0


def test_simulate_calls_main_with_argv(capsys):
    from engine.simulate import main

    assert main(["--players", "2", "--games", "3", "--seed", "5"]) == 0
    assert "games/s" in capsys.readouterr().out


def test_simulated_players_wait_out_the_collect_pause_and_keep_every_card(monkeypatch):
    import random

    from engine import Game, IllegalAction, Rules
    from engine import simulate as sim

    games: list[Game] = []
    refusals: list[str] = []
    real_deal, real_flip = Game.deal, Game.flip

    def deal(*args, **kwargs):
        games.append(real_deal(*args, **kwargs))
        return games[-1]

    def flip(self, seat, now):
        try:
            return real_flip(self, seat, now)
        except IllegalAction as exc:
            refusals.append(str(exc.code))
            raise

    monkeypatch.setattr(Game, "deal", deal)
    monkeypatch.setattr(Game, "flip", flip)
    rules = Rules(collect_seconds=2.0, trigger_timeout=2.0, shuffle_taken=True)
    results = [sim.play_one(3, rules, random.Random(seed)) for seed in range(30)]
    assert "collecting" not in refusals
    assert "slap_pending" not in refusals
    assert sum(r.lapses for r in results) > 0
    assert sum(r.late_slaps for r in results) > 0
    for game in games:
        assert game.winner is not None
        assert sum(game.hand_sizes) + len(game.pile) == 52


def test_simulate_reports_lapses_and_late_slaps(four_players):
    m = re.search(r"lapsed triggers: (\d+), late slaps: (\d+)", four_players.stdout)
    assert m
    assert int(m.group(2)) > 0


def test_simulate_takes_the_new_house_rules_and_refuses_bad_ones():
    run = simulate(
        "--players", "3", "--games", "5", "--seed", "4",
        "--collect-seconds", "0", "--trigger-timeout", "2", "--shuffle-taken",
        "--after-take", "left_of_winner",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert sum(wins_by_seat(run.stdout).values()) == 5
    bad = simulate("--games", "1", "--trigger-timeout", "1")
    assert bad.returncode == 2
    assert "trigger_timeout" in bad.stderr
