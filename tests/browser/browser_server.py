"""The app as the browser tests serve it: `python -m uvicorn` (or `python -m app`) in its own
process on a free loopback port, with game timings scaled down; and how Chromium is run."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A LAN name for this machine (engines.py LAN_HOST): an address that is no secure
    # context, as a phone at a party reaches `make run`.
    "--host-resolver-rules=MAP party.test 127.0.0.1",
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
    # ...and opens its rooms from there, many of them tried by one person alone, on a server
    # a worker keeps for all its tests: no per-address limit on rooms either.
    "SLAPJACK_ROOMS_PER_MINUTE": "100000",
    "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "100000",
    # ...and try codes that do not exist (404 pages) far more often than people mistype one.
    "SLAPJACK_WRONG_CODES_PER_MINUTE": "100000",
    "SLAPJACK_WRONG_CODES_BURST": "100000",
    # A test clicks the moment a Jack shows: a script's reflexes (a false start for a person).
    "SLAPJACK_FALSE_START_MS": "0",
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


START_SECONDS = 60  # a bound, not an expectation: a loaded 2-core machine starts it in seconds


def wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not answer /healthz in {START_SECONDS} s")
