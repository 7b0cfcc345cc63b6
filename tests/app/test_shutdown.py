"""The `python -m app` process: SIGTERM drains and exits; bad settings stop it at start."""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import httpx
from app_harness import START_WAIT, WAIT, Client

ROOT = Path(__file__).resolve().parents[2]
# Drain (2 s) + closing connections (5 s) + exit, generously: a hang fails, slowness does not.
SHUTDOWN_BOUND = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient(base_url=url) as http, asyncio.timeout(START_WAIT):
        while process.poll() is None:
            try:
                if (await http.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise AssertionError("the server exited before it was healthy")


async def test_sigterm_tells_every_room_closes_connections_and_exits() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_DRAIN_SECONDS": "2",
        "SLAPJACK_SHUTDOWN_SECONDS": "5",
        "SLAPJACK_STORE": "memory",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        await wait_healthy(url, process)
        async with httpx.AsyncClient(base_url=url) as http:
            code = (await http.post("/api/rooms")).json()["code"]
        server = SimpleNamespace(url=url)
        clients = [await Client(server, code, name).connect() for name in ("Ann", "Bob")]

        process.send_signal(signal.SIGTERM)
        for client in clients:
            await client.wait_for(lambda c=client: any(e["kind"] == "restart" for e in c.events))
            await asyncio.wait_for(client.disconnected.wait(), WAIT)
        output, _ = await asyncio.to_thread(process.communicate, timeout=SHUTDOWN_BOUND)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode in (0, -signal.SIGTERM), output.decode()
    logged = [json.loads(line) for line in output.decode().splitlines() if line.startswith("{")]
    draining = [line for line in logged if line["event"] == "draining"]
    assert draining and draining[0]["connected"] == 2


def test_bad_settings_stop_the_server_at_start_with_the_variable_named() -> None:
    env = {
        **os.environ,
        "SLAPJACK_PORT": "eighty",
        "SLAPJACK_DRAIN_SECONDS": "-1",
        "SLAPJACK_STORE": "memory",
    }
    finished = subprocess.run(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert finished.returncode != 0
    assert "SLAPJACK_PORT" in finished.stderr
    assert "SLAPJACK_DRAIN_SECONDS" in finished.stderr
    assert "Traceback" not in finished.stderr
