"""One clock: the shell takes time from app/ops/clock.py, read from the syntax tree of every
module of `app/`, and the ManualClock the tests turn keeps time's order.

A module reads or waits on time only through the injected clock; the exceptions below are
real time on purpose, each with its reason.
"""

import ast
import asyncio
from pathlib import Path

import pytest

from app.ops.clock import Clock, ManualClock

ROOT = Path(__file__).resolve().parents[2]
CLOCK = "app.ops.clock"

# What reads or waits on time for itself (`time.monotonic()`, a loop's `time()`, a timer, a
# sleep) besides the clock.
CLOCK_READS = {"monotonic", "monotonic_ns", "time", "time_ns"}
TIMERS = {"call_later", "call_at"}

# Real time on purpose, by module (a package: every module in it) and what it calls.
REAL_TIME: dict[str, dict[str, str]] = {
    # The transport meters the network, not the game: engine.io's pings and their timeouts,
    # frame budgets, request deadlines, the queues' waits for a slow reader. A client's
    # socket is real, so its timeouts are; no room state is timed by them.
    "app.realtime": {
        "monotonic": "frame budgets and pings meter real connections",
        "time": "engine.io's own ping bookkeeping is in wall-clock seconds",
        "call_later": "I/O deadlines on real sockets (request timeouts, queue waits)",
        "sleep": "the transport's ping sweep over real connections",
    },
    # Rate limits meter real clients: a connection's bucket refills in real time, and a
    # cluster's shared limits count per wall-clock minute so that every process agrees on which.
    "app.ops.limits": {
        "monotonic": "a new token bucket starts full at this moment",
        "time": "the shared per-address limits' minute, the same in every process",
    },
    # Per-address limits at the edge: a real client's rate in real time.
    "app.web.api": {"monotonic": "per-address limits on room creation and lookups"},
    "app.web.sockets": {"monotonic": "the per-address connect limit"},
    # Stored times outlive the process: the store's expiry counts wall-clock seconds.
    "app.stores.base": {"time": "wall_clock(): when a table was last seen, across restarts"},
    # A store's batch gathers the saves of one beat before one commit: I/O, not game time.
    "app.stores.sqlite": {"sleep": "the write batch's gathering pause"},
    # The hand-over channel lost with Redis: resubscribe after a pause of real time.
    "app.cluster.ownership": {"sleep": "resubscribing to Redis after the connection dropped"},
    # Leaving: the restart notices get a moment to leave the real sockets.
    "app.__main__": {"sleep": "the drain's last notices leave before connections close"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def allowed(module: str, name: str) -> bool:
    return any(
        (module == owner or module.startswith(owner + ".")) and name in names
        for owner, names in REAL_TIME.items()
    )


def receiver(node: ast.Call) -> str:
    func = node.func
    return ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""


def time_calls(tree: ast.AST) -> list[tuple[int, str, str]]:
    """Every call of the tree that reads or waits on time for itself: (line, the name
    called, the call as written)."""
    found: list[tuple[int, str, str]] = []
    time_names = {"monotonic", "monotonic_ns", "time", "time_ns", "sleep"}
    imported: set[str] = set()  # `from time import monotonic` and the like
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("time", "asyncio"):
            imported |= {a.asname or a.name for a in node.names if a.name in time_names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        text = ast.unparse(node)
        if isinstance(func, ast.Name) and name in imported:
            found.append((node.lineno, "sleep" if name == "sleep" else name, text))
        elif not isinstance(func, ast.Attribute):
            continue
        elif (name in CLOCK_READS and receiver(node) == "time") or (
            name == "time" and not node.args
        ):
            found.append((node.lineno, name, text))  # time.monotonic(), loop.time()
        elif name in TIMERS and not receiver(node).endswith("clock"):
            found.append((node.lineno, name, text))  # a loop's timer, not the clock's
        elif name == "sleep" and receiver(node) in ("asyncio", "time"):
            zero = node.args and isinstance(node.args[0], ast.Constant) and not node.args[0].value
            if not zero:  # sleep(0) lets others run: no time is waited for
                found.append((node.lineno, name, text))
    return found


PATHS = sorted(ROOT.joinpath("app").rglob("*.py"))


@pytest.mark.parametrize("path", PATHS, ids=lambda path: module_name(path))
def test_time_comes_from_the_clock(path: Path) -> None:
    module = module_name(path)
    if module == CLOCK:
        return
    calls = time_calls(ast.parse(path.read_text()))
    wrong = [f"line {line}: {text}" for line, name, text in calls if not allowed(module, name)]
    assert not wrong, f"{module} reads or waits on time itself; take the clock:\n" + "\n".join(
        wrong
    )


def test_the_check_sees_each_way_of_reading_time() -> None:
    """The reader is not blind: each way of reading time is found, and the clock's are not."""
    source = """
import asyncio, time
from time import monotonic
a = time.monotonic()
b = monotonic()
c = asyncio.get_running_loop().time()
d = loop.call_later(1, f)
e = self.loop.call_at(5, f)
await asyncio.sleep(0.5)
await asyncio.sleep(0)
x = self.clock.now()
y = clock.call_at(5, f)
z = self._clock.call_later(1, f)
await self.clock.sleep(1)
"""
    found = [name for _, name, _ in time_calls(ast.parse(source))]
    assert sorted(found) == sorted(
        ["monotonic", "monotonic", "time", "call_later", "call_at", "sleep"]
    )


def test_exceptions_name_modules_that_exist() -> None:
    modules = {module_name(path) for path in PATHS}
    for owner in REAL_TIME:
        assert owner in modules, f"{owner} is gone: drop its exception"


async def test_a_manual_clock_runs_what_is_due_in_time_order() -> None:
    clock = ManualClock()
    start = clock.now()
    ran: list[tuple[str, float]] = []

    def note(what: str) -> None:
        ran.append((what, clock.now()))
        if what == "b":  # a callback may schedule another inside the same advance
            clock.call_later(0.5, note, "b+0.5")

    clock.call_later(2.0, note, "c")
    clock.call_at(start + 1.0, note, "b")
    clock.call_later(0.25, note, "a")
    clock.call_later(1.0, note, "b2")  # due with "b": after it, in the order they were set
    cancelled = clock.call_later(0.5, note, "never")
    cancelled.cancel()
    await clock.advance(1.6)
    assert ran == [
        ("a", start + 0.25),
        ("b", start + 1.0),
        ("b2", start + 1.0),
        ("b+0.5", start + 1.5),
    ]
    assert clock.now() == start + 1.6
    assert clock.next_due() == start + 2.0
    await clock.advance(0.4)
    assert ran[-1] == ("c", start + 2.0)
    assert clock.next_due() is None
    with pytest.raises(ValueError):
        await clock.advance(-1)


async def test_a_manual_clock_lets_the_tasks_a_callback_starts_run() -> None:
    """A timer that starts a task (a room's job) sees it run before the next timer."""
    clock = ManualClock()
    seen: list[str] = []

    async def job(name: str) -> None:
        await asyncio.sleep(0)
        seen.append(name)

    def start(name: str) -> None:
        asyncio.get_running_loop().create_task(job(name))

    clock.call_later(1, start, "first")
    clock.call_later(2, lambda: seen.append(f"second, after {seen}"))
    await clock.advance(2)
    assert seen == ["first", "second, after ['first']"]


async def test_sleeping_on_a_manual_clock_waits_for_advance() -> None:
    clock = ManualClock()
    woke = asyncio.Event()

    async def sleeper() -> None:
        await clock.sleep(5)
        woke.set()

    task = asyncio.get_running_loop().create_task(sleeper())
    await clock.advance(4.9)
    assert not woke.is_set()
    await clock.advance(0.1)
    assert woke.is_set()
    await task


@pytest.mark.realtime
async def test_the_real_clock_is_the_monotonic_clock_and_the_loops_timers() -> None:
    clock = Clock()
    fired = asyncio.Event()
    before = clock.now()
    handle = clock.call_at(before + 0.01, fired.set)
    await asyncio.wait_for(fired.wait(), 5)
    assert clock.now() >= before + 0.009  # uvloop may fire up to a millisecond early
    assert not handle.cancelled()
