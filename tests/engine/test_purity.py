"""The engine is pure: standard library only, no clock, no global random, no I/O."""

import ast
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest
from engine_helpers import all_cards

import engine
from engine import Game, Rules
from engine.views import player_view

ENGINE_DIR = Path(engine.__file__).parent
# The simulator is a driver, not the engine: it may time itself and print.
MODULES = sorted(p for p in ENGINE_DIR.glob("*.py") if p.name != "simulate.py")
FORBIDDEN_IMPORTS = {"time", "datetime", "os", "socket", "asyncio", "threading", "secrets", "io"}
GLOBAL_RANDOM = {"random", "shuffle", "choice", "choices", "randint", "randrange", "sample"}
GLOBAL_RANDOM |= {"seed", "uniform", "getrandbits"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_import_only_the_standard_library_and_no_clock(path):
    names = imported_modules(path) - {"engine", "__future__"}
    assert names <= set(sys.stdlib_module_names), names - set(sys.stdlib_module_names)
    assert not names & FORBIDDEN_IMPORTS


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_never_call_the_global_random_or_print(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "random":
                assert node.func.attr not in GLOBAL_RANDOM, f"random.{node.func.attr}()"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"print", "open", "input"}, node.func.id
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            assert {a.name for a in node.names} <= {"Random"}


def test_a_whole_game_runs_with_the_clock_and_the_global_random_switched_off():
    def boom(*args, **kwargs):
        raise AssertionError("the engine touched the clock or the global random")

    import random

    with ExitStack() as stack:
        for name in ["time", "monotonic", "perf_counter", "time_ns", "monotonic_ns"]:
            stack.enter_context(mock.patch.object(time, name, boom))
        for name in ["random", "shuffle", "choice", "randint", "randrange", "seed", "sample"]:
            stack.enter_context(mock.patch.object(random, name, boom))
        rules = Rules(
            penalty="give",
            time_limit=500.0,
            triggers=frozenset({"jack", "double"}),
            shuffle_taken=True,
            trigger_timeout=2.0,
        )
        g = Game.deal(3, seed=8, rules=rules)
        start = all_cards(g)
        now, step = 0.0, 0
        while g.winner is None and now < 1000.0:
            now, step = now + 0.5, step + 1
            ready = [s for s in range(3) if not g.is_out(s) and g.frozen_until(s) <= now]
            if step % 29 == 0:
                g.tick(now + 2.0)  # nobody slaps for a while: a showing trigger lapses
                now += 2.0
            elif (g.slap_open or step % 7 == 0) and ready:
                g.slap(ready[step % len(ready)], now)
            elif not g.slap_open and g.next_to_play in ready and g.collect_until <= now:
                g.flip(g.next_to_play, now)
            else:
                g.tick(now)
            player_view(g, None)
            g = Game.from_dict(g.to_dict())
        assert g.winner is not None
        assert all_cards(g) == start
