"""Browser tests: a real uvicorn server in a subprocess and Debian's Chromium via Playwright.

One server and one Chromium per pytest process (per xdist worker), each
test in a browser left with no context of its own: a test opens its contexts (a phone, a
desktop) on the shared `browser`, and whatever it leaves open is closed after it. Every
test of this folder runs in the session's event loop, the loop the shared Chromium's
connection lives in."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from browser_server import (
    CHROMIUM_ARGS,
    FAST_SETTINGS,
    ROOT,
    chromium_path,
    free_port,
    wait_until_healthy,
)
from playwright.async_api import Browser, Playwright, async_playwright
from pytest_asyncio import is_async_test

HERE = Path(__file__).resolve().parent
SCREENSHOTS = HERE / "screenshots"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # This hook sees the whole session's items: only this folder's tests are moved.
    session_loop = pytest.mark.asyncio(loop_scope="session")
    for item in items:
        if HERE in item.path.parents and is_async_test(item):
            item.add_marker(session_loop, append=False)


class Servers:
    """`python -m app` as `make run` serves it, started on first use and kept until the
    session ends."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}

    def url(self) -> str:
        if "app" not in self.running:
            self.running["app"] = self._start()
        return self.running["app"][0]

    @staticmethod
    def _start() -> tuple[str, subprocess.Popen[bytes]]:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            **FAST_SETTINGS,
            "SLAPJACK_HOST": "127.0.0.1",
            "SLAPJACK_PORT": str(port),
        }
        process = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env)
        try:
            wait_until_healthy(url, process)
        except BaseException:
            process.kill()
            raise
        return url, process

    def stop(self) -> None:
        for _url, process in self.running.values():
            process.terminate()
        for _url, process in self.running.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    vendor = ROOT / "static" / "vendor" / "socket.io.esm.min.js"
    assert vendor.exists(), "run `make pytest` (or `make run`) to install the Socket.IO client"
    started = Servers()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def base_url(servers: Servers) -> str:
    """The app on a free loopback port."""
    return servers.url()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright() -> AsyncIterator[Playwright]:
    async with async_playwright() as running:
        yield running


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium(playwright: Playwright) -> AsyncIterator[list[Browser]]:
    """The worker's Chromium, in a list so a test can replace one that crashed."""
    launched: list[Browser] = []
    try:
        yield launched
    finally:
        for browser in launched:
            if browser.is_connected():
                await browser.close()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(playwright: Playwright, chromium: list[Browser]) -> AsyncIterator[Browser]:
    """The worker's Chromium (launched on first use, again if it died), with no context open;
    the contexts a test opens are closed after it."""
    if not chromium or not chromium[-1].is_connected():
        chromium.append(
            await playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        )
    shared = chromium[-1]
    for left in shared.contexts:  # a test before this one that could not close its own
        await left.close()
    try:
        yield shared
    finally:
        if shared.is_connected():
            for context in shared.contexts:
                await context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
