"""The suite's lanes: each test is marked by what it needs, read from where it lives and what
its module imports, so `make check` can run what needs nothing (`-m unit`) and `make test`
everything, spread over pytest-xdist workers.

- browser:  tests/browser (Chromium and a server process)
- cluster:  several app processes and nginx (deploy/cluster.py), or nginx itself
- redis:    a redis-server of its own (deploy/redis.py RedisServer)
- realtime: the app served over real sockets (the `server` fixture, `serving`, a Client, a
            raw client or a server process), waiting on real time
- unit:     none of these: no server, no subprocess, no browser

Every async test fails at a deadline of its own inside its time limit (tests/deadline.py).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from deadline import time_left, within_deadline

from app.tables.views import ViewParts

TESTS = Path(__file__).resolve().parent
# What a test module imports when it serves the app over real sockets.
SERVING = ("serving", "Server", "Client", "RawClient", "Cluster", "App", "subprocess")


def needs(item: pytest.Item) -> set[str]:
    path = item.path
    module = getattr(item, "module", None)
    names = vars(module) if module is not None else {}
    # A mark a test carries itself (say `realtime` on the one test of a module that waits on
    # real time) counts as well.
    found = {name for name in ORDER[:-1] if item.get_closest_marker(name) is not None}
    if TESTS / "browser" in path.parents:
        found.add("browser")
    if "Cluster" in names or "find_binary" in names:  # deploy.cluster: nginx and processes
        found.add("cluster")
    if "RedisServer" in names:
        found.add("redis")
    if "server" in getattr(item, "fixturenames", ()) or any(name in names for name in SERVING):
        found.add("realtime")
    return found


# The slowest kinds first: xdist hands tests out in this order, so a long browser game starts
# early instead of ending the run alone, and the many quick unit tests fill the gaps at the end.
ORDER = ("browser", "cluster", "redis", "realtime", "unit")


def bound(item: pytest.Item) -> float:
    """The time limit a test declares (`@pytest.mark.timeout`), else 0: the whole games
    declare the longest, and within a kind they go first."""
    marker = item.get_closest_marker("timeout")
    return float(marker.args[0]) if marker is not None and marker.args else 0.0


def pytest_configure(config: pytest.Config) -> None:
    """A .po changed since its .mo was compiled (`make messages` without `make catalogs`):
    compile it before any test reads it, once, in the process that starts the workers."""
    if hasattr(config, "workerinput"):
        return
    from tools.catalogs import compile_stale

    compiled = compile_stale()
    if compiled:
        print(f"compiled the stale message catalogs of: {', '.join(compiled)}")


SET_UP_FROM = pytest.StashKey[float]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[SET_UP_FROM] = time.monotonic()


def deadline_of(item: pytest.Item) -> float:
    """The test's own deadline, asked as it starts: inside its time limit, after its set-up."""
    spent = time.monotonic() - item.stash.get(SET_UP_FROM, time.monotonic())
    return time_left(limit(item), spent)


def limit(item: pytest.Item) -> float:
    """The time limit of a test: its own mark, else the configured `timeout` (0: none)."""
    configured = item.config.getoption("timeout", None) or item.config.getini("timeout")
    return bound(item) or float(configured or 0)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank: dict[str, tuple[int, float]] = {}
    for item in items:
        test = getattr(item, "obj", None)
        if inspect.iscoroutinefunction(test) and limit(item) > 0:
            item.obj = within_deadline(test, functools.partial(deadline_of, item))
        found = needs(item) or {"unit"}
        for name in sorted(found):
            item.add_marker(getattr(pytest.mark, name))
        rank[item.nodeid] = (min(ORDER.index(name) for name in found), -bound(item))
    items.sort(key=lambda item: rank[item.nodeid])  # stable: each module's order is kept


@pytest.fixture(autouse=True)
def no_roster_goes_stale() -> Iterator[None]:
    """Every roster a table's view keeps from its last change is compared with one made
    afresh (app/tables/views.py `ViewParts`), on any path (a command, a timer, a bot): a
    change of who is at a table that no commit numbered fails the test it happens in."""
    ViewParts.stale = stale = []
    yield
    ViewParts.stale = None
    assert not stale, f"a view's roster went stale: {stale[0]}"
