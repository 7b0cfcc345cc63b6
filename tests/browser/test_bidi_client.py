"""The tests' WebDriver BiDi client (tests/browser/engines.py) against a stand-in Firefox
that answers each command late: a command given up on (a wait that timed out while its
question was on the way) must not stop the client answering the commands after it. A late
answer to a cancelled command once ended the reader, and every later command of that
browser waited out its 60 s: a whole game "timed out" in Firefox on a loaded machine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import websockets
from engines import FirefoxBrowser

LATE_SECONDS = 0.2


async def late_answers(socket: Any) -> None:
    async for raw in socket:
        command = json.loads(raw)
        await asyncio.sleep(LATE_SECONDS)
        await socket.send(json.dumps({"id": command["id"], "type": "success", "result": {}}))


async def test_a_command_given_up_on_leaves_the_next_ones_answered() -> None:
    async with websockets.serve(late_answers, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        browser = FirefoxBrowser()
        browser.socket = await websockets.connect(f"ws://127.0.0.1:{port}")
        reader = browser._reader = asyncio.create_task(browser._read())
        try:
            try:
                async with asyncio.timeout(LATE_SECONDS / 4):
                    await browser.send("script.callFunction", {})
            except TimeoutError:
                pass
            async with asyncio.timeout(10 * LATE_SECONDS):
                assert await browser.send("script.callFunction", {}) == {}
                assert await browser.send("script.callFunction", {}) == {}
            assert browser._answers == {}
        finally:
            reader.cancel()
            await browser.socket.close()
            browser.profile.rmdir()
