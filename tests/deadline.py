"""An async test's own deadline. pytest-timeout's signal method never fires while a test sits
idle in uvloop's epoll (a hung test stalled a whole run), and its thread method, the
backstop (pyproject.toml), ends the whole worker: so tests/conftest.py gives every async test
an asyncio deadline inside its time limit, and a hung one fails where it waits, with its
traceback, while the run goes on."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

# The share of a test's time limit its own deadline takes: pytest-timeout's limit counts the
# fixtures' setting up and tearing down too.
DEADLINE_SHARE = 0.8


def within_deadline(test: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    """`test` (a coroutine function) failing with an AssertionError after `seconds`; any
    other error of its own, a TimeoutError of its own wait too, passes through unchanged."""

    @functools.wraps(test)
    async def bounded(*args: Any, **kwargs: Any) -> Any:
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                return await test(*args, **kwargs)
        except TimeoutError as exc:
            if deadline.expired():
                raise AssertionError(f"still waiting after {seconds:g} s (where: above)") from exc
            raise

    bounded.deadline = seconds  # type: ignore[attr-defined]
    return bounded
