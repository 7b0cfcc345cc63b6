"""A store that cannot take writes, for real: `python -m app` on SQLite with a file-size limit
(RLIMIT_FSIZE, what a full disk looks like to SQLite: its journal cannot grow). The failing
store shows in /metrics and /healthz, and no room is reported created unless it was written:
every room that got a 201 is there after a crash."""

from __future__ import annotations

import asyncio
import os
import re
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from app_harness import WAIT, Client

ROOT = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 256 * 1024  # the "disk": SQLite's write-ahead log fills it after some rooms
ROOMS_AT_MOST = 400  # far more than fit
SETTINGS = {
    "SLAPJACK_HOST": "127.0.0.1",
    "SLAPJACK_LOG_LEVEL": "warning",
    "SLAPJACK_ROOMS_PER_MINUTE": "100000",
    "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "100000",
    "SLAPJACK_WRONG_CODES_PER_MINUTE": "100000",
    "SLAPJACK_WRONG_CODES_BURST": "100000",
    "SLAPJACK_UNUSED_ROOM_SECONDS": "600",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def full_disk() -> None:
    """In the server's process before it starts: files stop growing at LIMIT_BYTES, and a
    write past it fails (EFBIG) rather than killing the process (SIGXFSZ ignored)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, LIMIT_BYTES))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class Server:
    """`python -m app` on a SQLite file in `workdir`, started again as often as asked."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.runs = 0

    async def start(self, *, disk_full: bool) -> str:
        port = free_port()
        env = {**os.environ, **SETTINGS, "SLAPJACK_PORT": str(port)}
        env["SLAPJACK_STORE"] = f"sqlite:///{self.workdir}/tables.db"
        self.runs += 1
        with (self.workdir / f"app-{self.runs}.log").open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=full_disk if disk_full else None,
            )
        self.url = f"http://127.0.0.1:{port}"
        # A process's start (its imports, the store) is the slowest wait on a loaded machine.
        async with httpx.AsyncClient(base_url=self.url) as http, asyncio.timeout(3 * WAIT):
            while self.process.poll() is None:
                try:
                    await http.get("/livez")
                    return self.url
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
        raise AssertionError("the server exited at start")

    def kill(self) -> None:
        """kill -9: no drain, no last save."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    try:
        yield running
    finally:
        running.kill()


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert match is not None, f"{name} is not in /metrics"
    return float(match.group(1))


async def test_a_full_disk_shows_and_no_room_is_reported_made_unless_written(
    server: Server,
) -> None:
    url = await server.start(disk_full=True)
    made: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        async with asyncio.timeout(WAIT * 3):
            for _ in range(ROOMS_AT_MOST):
                answer = await http.post("/api/rooms")
                if answer.status_code != 201:
                    break
                made.append(answer.json()["code"])
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "store_unavailable"
        assert made  # the disk took some rooms before it was full

        # Rooms that change now cannot be written (a small change may still fit where a new
        # room did not: people come to ten of them at once): they play on, and it shows.
        page = SimpleNamespace(url=url)
        joining = [
            await Client(page, code, "Ann").connect()  # type: ignore[arg-type]
            for code in made[:10]
        ]
        async with asyncio.timeout(WAIT):
            while True:
                text = (await http.get("/metrics")).text
                if metric(text, "slapjack_tables_saves_failing") >= 1:
                    break
                await asyncio.sleep(0.1)
        assert metric(text, "slapjack_saves_failed_total") >= 2  # the room refused, and this
        assert metric(text, "slapjack_unsaved_seconds") > 0
        health = await http.get("/healthz")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
        assert (await http.get("/livez")).status_code == 200
        for person in joining:
            await person.close()

    # A crash, then a start with room on the disk again: every room reported made is there.
    server.kill()
    url = await server.start(disk_full=False)
    async with httpx.AsyncClient(base_url=url, timeout=WAIT) as http:
        found = [(await http.get(f"/api/rooms/{code}")).status_code for code in made]
        assert found == [200] * len(made)
        assert (await http.get("/healthz")).json() == {"status": "ok"}
