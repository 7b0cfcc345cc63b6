"""What a browser's connection costs in server memory, with and without the compression it
offers (not a test: it prints figures).

    .venv/bin/python -m bench.compression [--connections 500]

Every browser offers `permessage-deflate` on its WebSocket handshake; the server declines
it (app/realtime/serving.py). This starts `python -m app` (SLAPJACK_STORE=memory) on a free port,
opens N raw WebSocket connections to /socket.io/ that offer it as Chrome does (then, on a
server of its own, N that offer nothing), and prints what the handshake answered and the
server's RSS growth per connection for each. Run from a checkout before commit 12a7a9c
(which declined the offer) to see what accepting it cost.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import subprocess
import sys
from pathlib import Path

from bench.limits import LIFTED_LIMITS

ROOT = Path(__file__).resolve().parents[1]
OFFER = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"


def rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def open_one(port: int, offer: bool) -> tuple[asyncio.StreamWriter, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"{OFFER if offer else ''}\r\n"
        ).encode()
    )
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    agreed = next(
        (line for line in head.split("\r\n") if line.lower().startswith("sec-websocket-ext")),
        "no extension",
    )
    return writer, agreed


async def measure(count: int) -> None:
    for offer in (True, False):  # a server each: a closed connection's memory is reused
        await measure_one(count, offer)


async def measure_one(count: int, offer: bool) -> None:
    port = free_port()
    env = dict(
        os.environ,
        SLAPJACK_PORT=str(port),
        SLAPJACK_STORE="memory",
        **LIFTED_LIMITS,
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                _, probe = await asyncio.open_connection("127.0.0.1", port)
                probe.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        before = rss_kb(server.pid)
        opened = [await open_one(port, offer) for _ in range(count)]
        await asyncio.sleep(2.0)
        grown = rss_kb(server.pid) - before
        print(
            f"{'offering permessage-deflate' if offer else 'offering nothing':28s} "
            f"{count} connections: answered {opened[0][1]!r}, "
            f"RSS +{grown / 1024:.1f} MB, {grown / count:.1f} KB per connection"
        )
        for writer, _ in opened:
            writer.close()
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=500)
    asyncio.run(measure(parser.parse_args().connections))


if __name__ == "__main__":
    main()
