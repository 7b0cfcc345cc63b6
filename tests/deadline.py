"""An async test's own deadline. pytest-timeout's signal method never fires while a test sits
idle in uvloop's epoll (a hung test stalled a whole run), and its thread method, the
backstop (pyproject.toml), ends the whole worker, leaving the processes its fixtures started
running: so tests/conftest.py gives every async test an asyncio deadline inside its time
limit, and a hung one fails where it waits, with its traceback, its fixtures torn down, while
the run goes on."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

# What share of a test's time limit is kept for tearing its fixtures down: pytest-timeout's
# limit counts setting them up, the test, and tearing them down. A test whose deadline
# passes still tears down (a cluster's processes stopped); one the backstop ends does not.
TEARDOWN_SHARE = 0.2
LEAST_SHARE = 0.1  # however long the set-up took, the test itself gets this much


def time_left(limit: float, spent: float) -> float:
    """An async test's deadline: what is left of its time limit once `spent` seconds went
    on setting it up, less the share kept for tearing down."""
    return max(limit * LEAST_SHARE, limit * (1 - TEARDOWN_SHARE) - spent)


def within_deadline(test: Callable[..., Any], seconds: Callable[[], float]) -> Callable[..., Any]:
    """`test` (a coroutine function) failing with an AssertionError after `seconds()` (asked
    as it starts); any other error of its own, a TimeoutError of its own wait too, passes
    through unchanged."""

    @functools.wraps(test)
    async def bounded(*args: Any, **kwargs: Any) -> Any:
        allowed = seconds()
        deadline = asyncio.timeout(allowed)
        try:
            async with deadline:
                return await test(*args, **kwargs)
        except TimeoutError as exc:
            if deadline.expired():
                raise AssertionError(f"still waiting after {allowed:.1f} s (where: above)") from exc
            raise

    bounded.deadline = seconds  # type: ignore[attr-defined]
    return bounded
