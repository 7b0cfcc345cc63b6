"""Hostile clients against `python -m app` with default settings, each attack in a process
of its own on loopback, and what an honest user on 127.0.0.1 gets meanwhile. Prints figures,
asserts nothing.

    .venv/bin/python bench/hostile.py [--repo DIR] [--scenario NAME ...]

Scenarios: idle-websockets (bare websockets that never join, answering pings), slowloris
(trickled requests re-opened as the server cuts them), frame-flood (websocket pings and
Engine.IO pongs/noops, as fast as eight connections can send), polling (malformed
long-polling bodies), hoarding (rooms opened from 35 addresses through the trusted proxy).
`--repo` serves another checkout (a worktree of an older commit) with this script's clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "app"))
from hostile import BareWebSocket, frame, http_success, trickle

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(repo: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_STORE": "memory",
        "PYTHONPATH": str(repo),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=repo,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,  # python-engineio logged to stderr
    )
    for _ in range(1800):  # a loaded machine takes its time to start
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.1)
    server.kill()
    raise SystemExit("the server never listened")


# ---- attacks: each runs in a child process until killed -----------------------------------


def attack(name: str, port: int) -> None:
    asyncio.run(ATTACKS[name](port))


async def idle_websockets(port: int) -> None:
    """~2,050 bare websockets from one address, then 300 more from each of 12 others,
    re-opened when closed."""
    held: list[BareWebSocket] = []
    plan = [("127.0.0.2", 2050)] + [(f"127.0.1.{n}", 300) for n in range(1, 13)]
    while True:
        held = [w for w in held if not w.closed.is_set()]
        for source, count in plan:
            mine = sum(1 for w in held if w.writer.get_extra_info("sockname")[0] == source)
            for start in range(0, count - mine, 100):
                batch = min(100, count - mine - start)
                opened = await asyncio.gather(
                    *(BareWebSocket.open(port, source) for _ in range(batch))
                )
                held.extend(w for w in opened if w is not None)
        await asyncio.sleep(1.0)


async def slowloris(port: int) -> None:
    """2,100 trickled requests from one address, each re-opened when cut."""
    await asyncio.gather(*(trickle(port, "127.0.0.3") for _ in range(2100)))


async def frame_flood(port: int) -> None:
    """Eight joined-or-not websockets sending websocket pings and Engine.IO pongs and
    noops as fast as they can, reconnecting when cut."""

    async def one(n: int) -> None:
        burst = (frame(b"", opcode=0x9) + frame(b"3") + frame(b"6")) * 200
        while True:
            ws = await BareWebSocket.open(port, f"127.0.2.{n}")
            if ws is None:
                await asyncio.sleep(0.1)
                continue
            while not ws.closed.is_set():
                ws.send(burst)
                try:
                    await asyncio.wait_for(ws.writer.drain(), 5)
                except (OSError, TimeoutError):
                    break
                await asyncio.sleep(0)
            ws.close()

    await asyncio.gather(*(one(n) for n in range(1, 9)))


async def polling(port: int) -> None:
    """Long-polling sessions posting the body `x` and 17-packet bodies, re-opened when cut."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
        while True:
            opened = await http.get("/socket.io/?EIO=4&transport=polling")
            sid = json.loads(opened.content[1:])["sid"]
            for body in ["x", "\x1e".join(["3"] * 17)] * 500:
                answer = await http.post(
                    f"/socket.io/?EIO=4&transport=polling&sid={sid}", content=body
                )
                if answer.status_code == 400 and b"Invalid session" in answer.content:
                    break


async def hoarding(port: int) -> None:
    """35 addresses (through the trusted proxy) opening rooms as fast as they may, then
    keeping them: a person joins each and leaves."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:

        async def hoarder(n: int) -> None:
            while True:
                answer = await http.post(
                    "/api/rooms", headers={"X-Forwarded-For": f"203.0.113.{n}"}
                )
                if answer.status_code != 201:
                    await asyncio.sleep(0.5)

        await asyncio.gather(*(hoarder(n) for n in range(1, 36)))


ATTACKS = {
    "idle-websockets": idle_websockets,
    "slowloris": slowloris,
    "frame-flood": frame_flood,
    "polling": polling,
    "hoarding": hoarding,
}


# ---- what an honest user gets --------------------------------------------------------------


async def honest_acks(port: int, count: int = 100) -> float | None:
    """The median ack time (ms) of a joined player's sit/stand, from 127.0.0.1."""
    import socketio

    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            made = await http.post("/api/rooms", headers={"X-Forwarded-For": "198.51.100.9"})
    except httpx.HTTPError as error:
        print(f"    honest player: no room ({error!r})")
        return None
    if made.status_code != 201:
        print(f"    honest player: no room ({made.status_code})")
        return None
    sio = socketio.AsyncClient(reconnection=False)
    try:
        await sio.connect(
            url,
            auth={"room": made.json()["code"], "name": "Honest"},
            transports=["websocket"],
            wait_timeout=20,
        )
        times = []
        for n in range(count):
            begun = time.perf_counter()
            await sio.call(
                "sit" if n % 2 == 0 else "stand", {"seat": 3} if n % 2 == 0 else {}, timeout=30
            )
            times.append(1000 * (time.perf_counter() - begun))
        return statistics.median(times)
    except Exception as error:  # refused, timed out: no figure
        print(f"    honest player: {error!r}")
        return None
    finally:
        await sio.disconnect()


async def honest_rooms(port: int, tries: int = 10) -> int:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
        made = 0
        for _ in range(tries):
            try:
                answer = await http.post("/api/rooms", headers={"X-Forwarded-For": "198.51.100.7"})
            except httpx.HTTPError:
                continue
            made += answer.status_code == 201
        return made


def run(repo: Path, name: str, hold: float) -> None:
    port = free_port()
    log = Path(f"/tmp/hostile-bench-{name}.log")
    server = start_server(repo, port, log)
    child = multiprocessing.Process(target=attack, args=(name, port), daemon=True)
    try:
        started = log.stat().st_size
        begun = time.monotonic()
        child.start()
        time.sleep(hold)
        url = f"http://127.0.0.1:{port}"
        good, tried = asyncio.run(http_success(url, 30))
        ack = asyncio.run(honest_acks(port))
        rooms = asyncio.run(honest_rooms(port)) if name == "hoarding" else None
        text = log.read_text(errors="replace")[started:]
        elapsed = time.monotonic() - begun
        lines = text.splitlines()
        figures = [
            f"HTTP {good}/{tried} answered",
            f"honest ack p50 {ack:.1f} ms" if ack is not None else "honest player: no figure",
            f"log {len(lines)} lines, {len(text) / 1024:.0f} KB, "
            f"{sum('Traceback' in line for line in lines)} tracebacks in {elapsed:.0f} s",
        ]
        if rooms is not None:
            figures.append(f"honest rooms {rooms}/10")
        print(f"  {name:16} " + "; ".join(figures), flush=True)
    finally:
        if child.is_alive():
            child.kill()
        server.terminate()
        server.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--scenario", action="append", choices=sorted(ATTACKS))
    parser.add_argument("--hold", type=float, default=12.0, help="seconds of attack first")
    args = parser.parse_args()
    print(f"serving {args.repo} (python -m app, default settings, store memory)")
    for name in args.scenario or list(ATTACKS):
        run(args.repo, name, args.hold)


if __name__ == "__main__":
    main()
