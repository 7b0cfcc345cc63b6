"""The log stays bounded whatever clients do: `python -m app` as deployed, one address
reconnecting and being cut off over and over writes a handful of lines, not two or three
per connection."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import app_harness
from hostile import BareWebSocket, frame

ROOT = Path(__file__).resolve().parents[2]
CONNECTIONS = 40


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_reconnecting_clients_cut_off_each_time_write_a_bounded_log(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_STORE": "memory",
    }
    out = (tmp_path / "out.log").open("w+")
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=out)
    try:
        deadline = time.monotonic() + app_harness.START_WAIT
        while not listening(port):
            assert time.monotonic() < deadline and server.poll() is None, "never started"
            await asyncio.sleep(0.1)
        started = len((tmp_path / "out.log").read_text().splitlines())
        begun = time.monotonic()
        for _ in range(CONNECTIONS):
            client = await BareWebSocket.open(port, "127.0.0.2")
            assert client is not None
            client.send(frame(b"4x") * 60)  # malformed, past the cut-off (40 in a row)
            await asyncio.wait_for(client.closed.wait(), 10)
            client.close()
        await asyncio.sleep(0.5)
        lines = (tmp_path / "out.log").read_text().splitlines()[started:]
        # Refusals: a burst of 10, then about one a second for the whole server.
        bound = 10 + (time.monotonic() - begun) + 3
    finally:
        server.terminate()
        server.wait(15)
        out.close()
    assert len(lines) <= bound, f"{len(lines)} lines for {CONNECTIONS} connections:\n" + "\n".join(
        lines[:20]
    )
