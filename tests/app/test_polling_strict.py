"""Long-polling is as strict as a websocket: a malformed or oversized body is one JSON line
at most (rate-limited), never a traceback, and the connection is cut off past its budget."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import httpx
import pytest
from app_harness import Logged, serving
from hostile import REAL_LIMITS

from app.ops.logs import THROTTLE_BURST, THROTTLE_RATE

POLLING = "/socket.io/?EIO=4&transport=polling"


@pytest.fixture
def records() -> Iterator[Logged]:
    handler = Logged()
    watched = [logging.getLogger(), logging.getLogger("app"), logging.getLogger("engineio")]
    for logger in watched:
        logger.addHandler(handler)
    yield handler
    for logger in watched:
        logger.removeHandler(handler)


async def open_polling(http: httpx.AsyncClient) -> str:
    opened = await http.get(POLLING)
    assert opened.status_code == 200, opened.text
    sid: str = httpx.Response(200, content=opened.content[1:]).json()["sid"]
    return sid


@pytest.mark.parametrize("body", ["x", "\x1e".join(["3"] * 17), "4\x1e\x1e4", "b" + "A" * 8])
async def test_a_malformed_polling_body_is_never_a_traceback(records: Logged, body: str) -> None:
    begun = time.monotonic()
    async with serving(**REAL_LIMITS) as server, httpx.AsyncClient(base_url=server.url) as http:
        sid = await open_polling(http)
        answers = []
        for _ in range(200):
            answer = await http.post(f"{POLLING}&sid={sid}", content=body)
            answers.append(answer.status_code)
            if sid not in server.app.engineio_server.eio.sockets:
                break  # cut off: the session is gone
        assert len(answers) <= REAL_LIMITS["flood_cutoff"] + 1, "never cut off"
        assert 200 not in answers, "a malformed body was taken"
    assert not [r for r in records.records if r.exc_info], "a traceback was logged"
    lines = [r for r in records.records if r.levelno >= logging.WARNING]
    # A burst of 10, then about one a second for the whole server, however many bodies.
    bound = THROTTLE_BURST + THROTTLE_RATE * (time.monotonic() - begun) + 1
    assert len(lines) <= bound, [r.getMessage() for r in lines]
