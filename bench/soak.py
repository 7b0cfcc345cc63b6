"""Soak run (a script that prints figures, not a test): many tables of bots and a scripted
person each, for minutes, with trouble mixed in: people dropping and coming back with their
token, phones falling silent with their connection open, clients that never read, bursts of
malformed and binary frames. The server runs as `python -m app` does (its own process:
uvloop, httptools), each table's clients from an address of its own (X-Forwarded-For from
loopback, the trusted proxy).

    .venv/bin/python -m bench.soak --tables 50 --minutes 10

Prints: rooms alive at the end, stalls (a table playing with no change for longer than the
autopilot allows), the longest any room lock was held and how often past the watchdog's
1 s, the server's memory at start and end, and tracebacks/errors in its log. All must be
zero or flat.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import socketio

from bench.harness import RawClient

ROOT = Path(__file__).resolve().parents[1]
IDLE_AUTOFLIP = 10.0  # the server's default: the autopilot flips for a seat idle this long
STALL_SECONDS = IDLE_AUTOFLIP + 5.0  # no change while playing for longer: a stall


class Target:
    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Table:
    """One room: a scripted person (host) with two bots, a spectator watching for stalls."""

    def __init__(self, target: Target, index: int, rng: random.Random) -> None:
        self.target, self.index, self.rng = target, index, rng
        self.address = f"10.{index // 200}.{index % 200}.{rng.randrange(1, 250)}"
        self.code = ""
        self.token: str | None = None
        self.person: socketio.AsyncClient | None = None
        self.longest_gap = 0.0
        self.phase = "lobby"
        self.last_change = time.monotonic()
        self.games = 0
        self.troubles: dict[str, int] = {}

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Forwarded-For": self.address}

    async def open(self) -> None:
        async with httpx.AsyncClient(base_url=self.target.url, headers=self.headers) as http:
            answer = await http.post("/api/rooms", json=None)
            answer.raise_for_status()
            self.code = answer.json()["code"]
        await self.come_back()  # first in: the host
        self.watcher = await self._connect("Watcher", None, self._watch)
        assert self.person is not None
        answers = [await self.person.call("sit", {"seat": 0})]
        for _ in range(2):
            level = self.rng.choice(["normal", "hard"])
            answers.append(await self.person.call("add_bot", {"level": level}))
        answers.append(await self.person.call("start", {}))
        assert all(answer["ok"] for answer in answers), answers

    async def _connect(self, name: str, token: str | None, on_state: Any) -> socketio.AsyncClient:
        client = socketio.AsyncClient(reconnection=False)
        client.on("state", on_state)
        client.on("welcome", self._welcome if name == "Pat" else (lambda data: None))
        auth = {"room": self.code, "name": name, **({"token": token} if token else {})}
        await client.connect(
            self.target.url, auth=auth, transports=["websocket"], headers=self.headers
        )
        return client

    def _welcome(self, data: dict[str, Any]) -> None:
        self.token = data["token"]

    async def come_back(self) -> None:
        self.person = await self._connect("Pat", self.token, self._play)

    async def _watch(self, state: dict[str, Any]) -> None:
        now = time.monotonic()
        if self.phase == "playing":
            self.longest_gap = max(self.longest_gap, now - self.last_change)
        if state["phase"] == "over" and self.phase != "over":
            self.games += 1
        self.phase, self.last_change = state["phase"], now

    async def _play(self, state: dict[str, Any]) -> None:
        with contextlib.suppress(socketio.exceptions.BadNamespaceError):  # dropped meanwhile
            await self._act(state)

    async def _act(self, state: dict[str, Any]) -> None:
        person = self.person
        if person is None or not person.connected:
            return
        me = state["you"]["seat"]
        if state["phase"] == "over" and state["you"]["host"]:
            await asyncio.sleep(self.rng.uniform(0.5, 2.0))
            await person.emit("rematch", {})
        elif state["phase"] == "playing" and me is not None:
            if state["slap_open"] and self.rng.random() < 0.6:
                await asyncio.sleep(self.rng.uniform(0.1, 0.5))
                await person.emit("slap", {"pile_id": state["pile"]["id"]})
            elif state["next"] == me and not state["slap_open"]:
                await asyncio.sleep(self.rng.uniform(0.2, 1.0))
                await person.emit("flip", {})

    def stalled(self) -> bool:
        gap = time.monotonic() - self.last_change if self.phase == "playing" else 0.0
        return max(self.longest_gap, gap) > STALL_SECONDS

    # ---- trouble ---------------------------------------------------------------------

    async def trouble(self, until: float) -> None:
        kinds = [self.drop_and_return, self.silent_phone, self.never_reads, self.junk]
        while time.monotonic() < until - 20:
            await asyncio.sleep(self.rng.uniform(5, 25))
            kind = self.rng.choice(kinds)
            self.troubles[kind.__name__] = self.troubles.get(kind.__name__, 0) + 1
            with contextlib.suppress(Exception):
                await kind()

    async def drop_and_return(self) -> None:
        person, self.person = self.person, None
        if person is not None:
            await person.disconnect()
        await asyncio.sleep(self.rng.uniform(0.5, 8))
        await self.come_back()

    async def silent_phone(self) -> None:
        raw = await RawClient.open(self.target, headers=self.headers)
        await raw.join(self.code, "Sleepy")
        await asyncio.sleep(25)  # answers nothing: the server's ping timeout must notice
        raw.ws.transport.abort()

    async def never_reads(self) -> None:
        raw = await RawClient.open(self.target, headers=self.headers, small_buffer=True)
        await raw.join(self.code, "Stuck")
        for _ in range(40):  # pongs blind for 20 s, reads nothing
            await raw.send("3")
            await asyncio.sleep(0.5)
        raw.ws.transport.abort()

    async def junk(self) -> None:
        raw = await RawClient.open(self.target, headers=self.headers)
        await raw.join(self.code, "Junk")
        frames = ["42[", '42{"a":1}', "4x", '421["connect",{}]', '451-["sit",{}]', b"\x04bin"]
        for frame in frames * 20:
            try:
                await raw.send(frame)
            except Exception:
                break
        await raw.closed()

    async def close(self) -> None:
        for client in (self.person, self.watcher):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.disconnect()


async def metric(target: Target, name: str) -> float:
    async with httpx.AsyncClient(base_url=target.url) as http:
        text = (await http.get("/metrics")).text
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


async def soak(tables: int, minutes: float, seed: int) -> int:
    port = free_port()
    target = Target(port)
    log_path = Path(f"/tmp/slapjack-soak-{port}.log")
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_LOG_LEVEL": "info",
        "SLAPJACK_BOT_TIME_SCALE": "0.5",
        "SLAPJACK_WRONG_CODES_PER_MINUTE": "100000",
        "SLAPJACK_WRONG_CODES_BURST": "100000",
    }
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=log
        )
    try:
        async with asyncio.timeout(30):
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    async with httpx.AsyncClient(base_url=target.url) as http:
                        if (await http.get("/healthz")).status_code == 200:
                            break
                await asyncio.sleep(0.2)
        rng = random.Random(seed)
        start_mb = rss_mb(server.pid)
        everyone = [Table(target, i, random.Random(rng.random())) for i in range(tables)]
        for table in everyone:
            await table.open()
        opened_mb = rss_mb(server.pid)
        until = time.monotonic() + minutes * 60
        troubles = [asyncio.create_task(t.trouble(until)) for t in everyone]
        while time.monotonic() < until:
            await asyncio.sleep(min(10, max(0, until - time.monotonic())))
            stalls = sum(t.stalled() for t in everyone)
            print(
                f"  t+{minutes * 60 - (until - time.monotonic()):5.0f}s rss "
                f"{rss_mb(server.pid):6.1f} MB, stalls so far {stalls}, "
                f"machine load {os.getloadavg()[0]:.1f}",  # a starved loop holds locks long
                flush=True,
            )
        await asyncio.gather(*troubles, return_exceptions=True)
        end_mb = rss_mb(server.pid)
        async with httpx.AsyncClient(base_url=target.url) as http:
            alive = sum(
                [(await http.get(f"/api/rooms/{t.code}")).status_code == 200 for t in everyone]
            )
        lock_max = await metric(target, "slapjack_room_lock_held_max_seconds")
        lock_long = await metric(target, "slapjack_room_lock_held_long_total")
        connected = await metric(target, "slapjack_connected_players")
        stalled = [t for t in everyone if t.stalled()]
        for table in everyone:
            await table.close()
    finally:
        server.terminate()
        server.wait(30)
    lines = log_path.read_text().splitlines()
    tracebacks = sum("Traceback" in line for line in lines)
    errors = [line for line in lines if '"level": "error"' in line]
    not_json = [line for line in lines if line.strip() and not line.lstrip().startswith("{")]
    totals: dict[str, int] = {}
    for table in everyone:
        for kind, count in table.troubles.items():
            totals[kind] = totals.get(kind, 0) + count
    print(f"soak: {tables} tables, {minutes} min, seed {seed}")
    print(f"  trouble mixed in: {json.dumps(totals)}")
    print(f"  games finished: {sum(t.games for t in everyone)}")
    print(f"  rooms alive at the end: {alive}/{tables}")
    print(f"  stalls (playing, no change > {STALL_SECONDS:.0f} s): {len(stalled)}")
    print(f"  longest gap while playing: {max(t.longest_gap for t in everyone):.1f} s")
    print(f"  room lock held, longest: {lock_max * 1000:.1f} ms; past 1 s: {lock_long:.0f}")
    print(f"  players connected at the end (before closing): {connected:.0f}")
    print(f"  server RSS: start {start_mb:.1f} MB, tables open {opened_mb:.1f} MB, ", end="")
    print(f"end {end_mb:.1f} MB")
    print(
        f"  log: {len(lines)} lines, tracebacks {tracebacks}, errors {len(errors)}, "
        f"non-JSON lines {len(not_json)} ({log_path})"
    )
    clean = alive == tables and not stalled and lock_long == 0 and tracebacks == 0 and not errors
    print("  CLEAN" if clean else "  NOT CLEAN")
    return 0 if clean else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(asyncio.run(soak(args.tables, args.minutes, args.seed)))


if __name__ == "__main__":
    main()
