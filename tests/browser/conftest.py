"""Browser tests: a real uvicorn server in a subprocess and Debian's Chromium via Playwright.

One server and one Chromium per pytest process (per xdist worker), each
test in a browser left with no context of its own: a test opens its contexts (a phone, a
desktop) on the shared `browser`, and whatever it leaves open is closed after it. Every
test of this folder runs in the session's event loop, the loop the shared Chromium's
connection lives in."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
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
PAGE_CLOSE_SECONDS = 30.0  # a page of the engine seam closes within this after a test


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

    def __init__(self, log: Path) -> None:
        self.running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}
        # What the server logs (warnings and errors, one JSON line each): a failing test's
        # report shows the lines logged while it ran (`pytest_runtest_makereport`).
        self.log = log

    def url(self) -> str:
        if "app" not in self.running:
            self.running["app"] = self._start()
        return self.running["app"][0]

    def _start(self) -> tuple[str, subprocess.Popen[bytes]]:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            **FAST_SETTINGS,
            "SLAPJACK_HOST": "127.0.0.1",
            "SLAPJACK_PORT": str(port),
        }
        with self.log.open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=log
            )
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
    with tempfile.TemporaryDirectory() as logs:
        started = Servers(Path(logs) / "server.log")
        try:
            yield started
        finally:
            started.stop()


@pytest.fixture
def base_url(servers: Servers, request: pytest.FixtureRequest) -> str:
    """The app on a free loopback port."""
    url = servers.url()
    request.node.stash[SERVER_LOG] = (servers.log, servers.log.stat().st_size)
    return url


SERVER_LOG = pytest.StashKey[tuple[Path, int]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failing test's report ends with what the server logged while it ran (a dropped
    connection, an error): the server runs in a process of its own, whose output no test
    captures."""
    report = yield
    if report.failed and SERVER_LOG in item.stash:
        log, start = item.stash[SERVER_LOG]
        with contextlib.suppress(OSError), log.open("rb") as lines:
            lines.seek(start)
            text = lines.read().decode(errors="replace")
            report.sections.append(("server log", text or "(nothing)"))
    return report


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
            # A deadline: a page stuck after a failed test must not hold its worker (seen: a
            # worker held 15 minutes after a failed test, pytest-timeout never ending it).
            with contextlib.suppress(Exception):
                async with asyncio.timeout(PAGE_CLOSE_SECONDS):
                    await page.close()
