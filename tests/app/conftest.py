"""The app tests run on uvloop, the loop `python -m app` serves on: it fires timers up to a
millisecond early, which plain asyncio never does, and a bug hid behind that. `logged`
gives a test the app's log records."""

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import app_harness
import pytest
import uvloop
from app_harness import Logged, Server, serving


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        "transports(*names): run once on each transport named (SLAPJACK_TRANSPORT); "
        "every test marked so, with its module's fixtures, on one, then on the next",
    )


def pytest_generate_tests(metafunc: Any) -> None:
    marker = metafunc.definition.get_closest_marker("transports")
    if marker is not None:
        names = marker.args or app_harness.TRANSPORTS
        metafunc.parametrize("transport", names, indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def transport(request: Any) -> Iterator[str]:
    """The transport the test's servers are made with: `lean` unless marked `transports`."""
    name: str = getattr(request, "param", "lean")
    before, app_harness.transport = app_harness.transport, name
    yield name
    app_harness.transport = before


def pytest_asyncio_loop_factories(config: Any, item: Any) -> Mapping[str, Callable[[], Any]]:
    return {"uvloop": uvloop.new_event_loop}


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with serving() as running:
        yield running


@pytest.fixture
def logged() -> Iterator[Logged]:
    handler = Logged()
    logger = logging.getLogger("app")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)
