"""A hung async test fails at its own deadline, on uvloop as the app tests run, instead of
stalling the run (tests/deadline.py); a test's own errors pass through unchanged."""

from __future__ import annotations

import asyncio
import time

import pytest
from deadline import time_left, within_deadline


async def test_a_test_waiting_for_what_never_comes_fails_at_its_deadline() -> None:
    async def hangs() -> None:
        await asyncio.Event().wait()

    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"still waiting after 0\.2 s"):
        await within_deadline(hangs, lambda: 0.2)()
    assert time.monotonic() - started < 10  # generous: it ends at its deadline, not never


async def test_a_tests_own_timeout_and_result_pass_through() -> None:
    async def waits_too_little() -> None:
        await asyncio.wait_for(asyncio.Event().wait(), 0.01)

    async def answers(value: int) -> int:
        return value

    with pytest.raises(TimeoutError):
        await within_deadline(waits_too_little, lambda: 60)()
    assert await within_deadline(answers, lambda: 60)(value=7) == 7


async def test_an_async_test_runs_within_its_deadline(request: pytest.FixtureRequest) -> None:
    """tests/conftest.py gave this very test its deadline: inside its time limit, less what
    its set-up took and a share for its tear-down."""
    configured = float(
        request.config.getoption("timeout", None) or request.config.getini("timeout")
    )
    deadline = request.node.obj.deadline()  # type: ignore[attr-defined]
    assert configured * 0.7 < deadline <= configured * 0.8


def test_a_long_set_up_leaves_the_test_less_but_never_nothing() -> None:
    assert time_left(120, 0) == 96
    assert time_left(120, 30) == 66
    assert time_left(120, 200) == 12
