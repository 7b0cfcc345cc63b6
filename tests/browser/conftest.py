"""Browser tests: a real uvicorn server in a subprocess and Debian's Chromium via Playwright.

One server and one Chromium per pytest process (per xdist worker), each
test in a browser left with no context of its own: a test opens its contexts (a phone, a
desktop) on the shared `browser`, and whatever it leaves open is closed after it. Every
test of this folder runs in the session's event loop, the loop the shared Chromium's
connection lives in."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

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
from engines import (
    ENGINES,
    ChromiumPage,
    EnginePage,
    FirefoxBrowser,
    FirefoxPage,
    OpenPage,
    WebKitBrowser,
    WebKitPage,
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


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "engines: run once in each engine (engines.py ENGINES)")
    config.addinivalue_line(
        "markers",
        "network_drop: waits out a long network drop, idle: `make test` runs it beside the "
        "other browser tests, in a process of its own",
    )


def pytest_generate_tests(metafunc: Any) -> None:
    if metafunc.definition.get_closest_marker("engines") is not None:
        metafunc.parametrize("engine", ENGINES)


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


class Engines:
    """The worker's Firefox and WebKit, each started on first use (again if it died) and
    kept for the worker's session; Chromium is the `chromium` fixture's."""

    def __init__(self, playwright: Playwright, chromium: list[Browser]) -> None:
        self.playwright, self.chromium = playwright, chromium
        self.firefox: FirefoxBrowser | None = None
        self.webkit: WebKitBrowser | None = None

    async def chromium_browser(self) -> Browser:
        if not self.chromium or not self.chromium[-1].is_connected():
            self.chromium.append(
                await self.playwright.chromium.launch(
                    executable_path=chromium_path(), args=CHROMIUM_ARGS
                )
            )
        return self.chromium[-1]

    async def open(self, engine: str, width: int, height: int, touch: bool) -> EnginePage:
        if engine == "chromium":
            return await ChromiumPage.open(await self.chromium_browser(), width, height, touch)
        if engine == "firefox":
            if self.firefox is None or not self.firefox.alive():
                self.firefox = await FirefoxBrowser().start()
            return await FirefoxPage.open(self.firefox, width, height)
        if self.webkit is None or not self.webkit.alive():
            self.webkit = await WebKitBrowser().start()
        return await WebKitPage.open(self.webkit, width, height)

    async def close(self) -> None:
        for running in (self.firefox, self.webkit):
            if running is not None:
                await running.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def engines(playwright: Playwright, chromium: list[Browser]) -> AsyncIterator[Engines]:
    started = Engines(playwright, chromium)
    try:
        yield started
    finally:
        await started.close()


@pytest_asyncio.fixture(loop_scope="session")
async def open_page(engines: Engines) -> AsyncIterator[OpenPage]:
    """Opens a page in an engine (a new context, user context or window: a new phone),
    `open_page(engine, width, height, touch=True)`; each is closed after the test."""
    opened: list[EnginePage] = []

    async def open_one(
        engine: str, width: int = 390, height: int = 844, touch: bool = True
    ) -> EnginePage:
        page = await engines.open(engine, width, height, touch)
        opened.append(page)
        return page

    try:
        yield open_one
    finally:
        for page in opened:
            with contextlib.suppress(Exception):
                await page.close()
