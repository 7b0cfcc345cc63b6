"""The app tests run on uvloop, the loop `python -m app` serves on: it fires timers up to a
millisecond early, which plain asyncio never does, and a bug hid behind that. `logged`
gives a test the app's log records."""

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import pytest
import uvloop
from app_harness import Logged, Server, serving


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
