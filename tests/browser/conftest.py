"""Browser tests: a real uvicorn server in a subprocess and Debian's Chromium via Playwright."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, async_playwright

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Game timings scaled down so a whole game fits in the suite; people's own timings stay.
FAST_SETTINGS = {
    # No slapjack.db in the repo: the restart test names its own SQLite file.
    "SLAPJACK_STORE": "memory",
    "SLAPJACK_BOT_TIME_SCALE": "0.25",
    "SLAPJACK_AUTOFLIP_PAUSE_SECONDS": "0",
    # The tests press every flip a person makes: the server's idle autopilot (covered in
    # tests/app) must not flip for someone while a test sets up a moment on a busy machine.
    "SLAPJACK_IDLE_AUTOFLIP_SECONDS": "600",
    # Every page of every test connects from 127.0.0.1: no per-address connection limit.
    "SLAPJACK_CONNECTS_PER_MINUTE": "100000",
    "SLAPJACK_LOG_LEVEL": "warning",
}


def chromium_path() -> str | None:
    """SLAPJACK_CHROMIUM, else Debian's /usr/bin/chromium, else Playwright's own browser."""
    configured = os.environ.get("SLAPJACK_CHROMIUM")
    if configured:
        return configured
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not answer /healthz in 30 s")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "transports(*names): run once on a server of each transport named"
    )


def pytest_generate_tests(metafunc: Any) -> None:
    marker = metafunc.definition.get_closest_marker("transports")
    if marker is not None and "base_url" in metafunc.fixturenames:
        metafunc.parametrize("base_url", marker.args, indirect=True, scope="session")


@pytest.fixture(scope="session")
def base_url(request: Any) -> Iterator[str]:
    """The app served as `make run` serves it (`python -m app`) on a free loopback port, on
    the transport (SLAPJACK_TRANSPORT) a test marked `transports` asks for, else `lean`."""
    vendor = ROOT / "static" / "vendor" / "socket.io.esm.min.js"
    assert vendor.exists(), "run `make pytest` (or `make run`) to install the Socket.IO client"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **FAST_SETTINGS, "SLAPJACK_HOST": "127.0.0.1", "SLAPJACK_PORT": str(port)}
    env["SLAPJACK_TRANSPORT"] = getattr(request, "param", "lean")
    command = [sys.executable, "-m", "app"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        wait_until_healthy(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
