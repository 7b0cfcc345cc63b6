"""Soak run (a script that prints figures, not a test): many tables of bots and a scripted
person each, for minutes, with trouble mixed in: people dropping and coming back with their
token, phones falling silent with their connection open, clients that never read, bursts of
malformed and binary frames. The server runs as `python -m app` does (its own process:
uvloop, httptools), each table's clients from an address of its own (X-Forwarded-For from
loopback, the trusted proxy).

    .venv/bin/python -m bench.soak --tables 50 --minutes 10
    taskset -c 1 .venv/bin/python -m bench.soak --tables 40 --hours 2.3 --churn 20 --empty-minutes 8

Prints: rooms alive at the end, stalls (a table playing with no change for longer than the
autopilot allows), the longest any room lock was held and how often past the watchdog's
1 s, the server's memory at start and end, and tracebacks/errors in its log. All must be
zero or flat.

An evening (`--hours`, `--churn`; docs/performance.md's run is the second command): every
table's people leave after about `--churn` minutes and a new table (a new code, a new
address) opens in its place, as a games night goes; the server's RSS is sampled every
minute. At the end everyone leaves, every room closes (SLAPJACK_ROOM_EXPIRY_SECONDS is 120 s
here) and the server is watched while it sits empty (`--empty-minutes`): the RSS then is
compared with the most the first hour reached (the promise: within 10%).
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
from bench.limits import LIFTED_LIMITS

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
        self.gone = False  # its people left for good (an evening's churn, or the end)
        self.watcher: socketio.AsyncClient | None = None

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
        if self.gone:
            return
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
        while time.monotonic() < until - 20 and not self.gone:
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
        if not self.gone:
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
        if self.phase == "playing":  # a gap up to now counts; none after it
            self.longest_gap = max(self.longest_gap, time.monotonic() - self.last_change)
        self.gone, self.phase = True, "left"
        for client in (self.person, self.watcher):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.disconnect()


async def metric(target: Target, name: str) -> float:
    async with httpx.AsyncClient(base_url=target.url) as http:
        text = (await http.get("/metrics")).text
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


START_SECONDS = 120  # generous: a shared machine may be busy when the server imports
EXPIRY_SECONDS = 120  # SLAPJACK_ROOM_EXPIRY_SECONDS for the soak: rooms close soon after
SAMPLE_SECONDS = 60.0  # the RSS is sampled this often in an evening


class Evening:
    """Tables that come and go: each one's people leave after about `churn` minutes (never
    all at once) and a new table opens in its place; the server's RSS over the run."""

    def __init__(self, target: Target, server_pid: int, churn: float, rng: random.Random):
        self.target, self.pid, self.churn, self.rng = target, server_pid, churn, rng
        self.opened = 0
        self.closed: list[Table] = []
        self.samples: list[tuple[float, float]] = []  # (seconds since start, RSS MB)

    def new_table(self) -> Table:
        self.opened += 1
        return Table(self.target, self.opened, random.Random(self.rng.random()))

    async def seat(self, index: int, everyone: list[Table], until: float) -> None:
        """Slot `index`: a table plays for about `churn` minutes, leaves, a new one opens."""
        while True:
            stay = self.churn * 60 * self.rng.uniform(0.5, 1.5)
            if time.monotonic() + stay >= until - 30:
                return
            await asyncio.sleep(stay)
            leaving, everyone[index] = everyone[index], self.new_table()
            await leaving.close()
            self.closed.append(leaving)
            with contextlib.suppress(Exception):  # a refused open is tried at the next turn
                await everyone[index].open()

    async def sample(self, started: float) -> None:
        while True:
            self.samples.append((time.monotonic() - started, rss_mb(self.pid)))
            await asyncio.sleep(SAMPLE_SECONDS)

    def first_hour_mb(self) -> float:
        return max((mb for at, mb in self.samples if at <= 3600), default=0.0)

    def hourly(self) -> str:
        hours: dict[int, float] = {}
        for at, mb in self.samples:
            hours[int(at // 3600)] = max(hours.get(int(at // 3600), 0.0), mb)
        return ", ".join(f"h{hour + 1} {mb:.1f}" for hour, mb in sorted(hours.items()))


async def all_rooms_closed(target: Target, seconds: float) -> float:
    """Waits (bounded) until the server has no room open; the seconds it took."""
    began = time.monotonic()
    async with asyncio.timeout(seconds):
        while await metric(target, "slapjack_rooms") > 0:
            await asyncio.sleep(5)
    return time.monotonic() - began


async def soak(
    tables: int, minutes: float, seed: int, churn: float = 0.0, empty_minutes: float = 10.0
) -> int:
    port = free_port()
    target = Target(port)
    log_path = Path(f"/tmp/slapjack-soak-{port}.log")
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_LOG_LEVEL": "info",
        "SLAPJACK_BOT_TIME_SCALE": "0.5",
        **LIFTED_LIMITS,
        "SLAPJACK_ROOM_EXPIRY_SECONDS": str(EXPIRY_SECONDS),
    }
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=log
        )
    try:
        async with asyncio.timeout(START_SECONDS):
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    async with httpx.AsyncClient(base_url=target.url) as http:
                        if (await http.get("/healthz")).status_code == 200:
                            break
                await asyncio.sleep(0.2)
        rng = random.Random(seed)
        start_mb = rss_mb(server.pid)
        began = time.monotonic()
        evening = Evening(target, server.pid, churn, rng)
        everyone = [evening.new_table() for _ in range(tables)]
        for table in everyone:
            await table.open()
        opened_mb = rss_mb(server.pid)
        until = time.monotonic() + minutes * 60
        troubles: list[asyncio.Task[None]] = []
        background = [asyncio.create_task(evening.sample(began))]
        if churn > 0:
            background += [
                asyncio.create_task(evening.seat(i, everyone, until)) for i in range(tables)
            ]
        seen: set[int] = set()
        report_every = 10 if minutes <= 30 else SAMPLE_SECONDS * 5
        while time.monotonic() < until:
            for table in everyone:  # tables opened since make their own trouble too
                if id(table) not in seen and table.code:
                    seen.add(id(table))
                    troubles.append(asyncio.create_task(table.trouble(until)))
            await asyncio.sleep(min(report_every, max(0, until - time.monotonic())))
            stalls = sum(t.stalled() for t in everyone + evening.closed)
            print(
                f"  t+{time.monotonic() - began:5.0f}s rss "
                f"{rss_mb(server.pid):6.1f} MB, stalls so far {stalls}, "
                f"tables opened {evening.opened}, "
                f"machine load {os.getloadavg()[0]:.1f}",  # a starved loop holds locks long
                flush=True,
            )
        await asyncio.gather(*troubles, return_exceptions=True)
        for task in background:
            task.cancel()
        end_mb = rss_mb(server.pid)
        async with httpx.AsyncClient(base_url=target.url) as http:
            alive = sum(
                [(await http.get(f"/api/rooms/{t.code}")).status_code == 200 for t in everyone]
            )
        lock_max = await metric(target, "slapjack_room_lock_held_max_seconds")
        lock_long = await metric(target, "slapjack_room_lock_held_long_total")
        connected = await metric(target, "slapjack_connected_players")
        stalled = [t for t in everyone + evening.closed if t.stalled()]
        for table in everyone:
            await table.close()
        empty: dict[str, float] = {}
        if churn > 0:  # an evening's end: everyone gone, every room closed, then watched
            empty["closing_s"] = await all_rooms_closed(target, EXPIRY_SECONDS + 300)
            quiet: list[float] = []
            for _ in range(max(1, round(empty_minutes))):
                await asyncio.sleep(60)
                quiet.append(rss_mb(server.pid))
            empty["rss_mb"] = quiet[-1]
            empty["rss_max_mb"] = max(quiet)
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
    print(f"soak: {tables} tables, {minutes} min, seed {seed}, churn {churn} min")
    print(f"  trouble mixed in: {json.dumps(totals)}")
    print(f"  tables opened: {evening.opened}")
    print(f"  games finished: {sum(t.games for t in everyone + evening.closed)}")
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
    if empty:
        first = evening.first_hour_mb()
        print(f"  RSS by hour (max): {evening.hourly()}")
        print(
            f"  every room closed after {empty['closing_s']:.0f} s; then, empty for "
            f"{empty_minutes:.0f} min: RSS {empty['rss_mb']:.1f} MB"
            f" (max {empty['rss_max_mb']:.1f}),"
            f" {100 * (empty['rss_max_mb'] / first - 1):+.1f}% of the first hour's most"
            f" ({first:.1f} MB)"
        )
        clean = clean and empty["rss_max_mb"] <= first * 1.10
    print("  CLEAN" if clean else "  NOT CLEAN")
    return 0 if clean else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--hours", type=float, default=0.0, help="instead of --minutes")
    parser.add_argument(
        "--churn", type=float, default=0.0, help="minutes a table stays before another replaces it"
    )
    parser.add_argument(
        "--empty-minutes", type=float, default=10.0, help="watched once every room closed"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    minutes = args.hours * 60 if args.hours else args.minutes
    sys.exit(asyncio.run(soak(args.tables, minutes, args.seed, args.churn, args.empty_minutes)))


if __name__ == "__main__":
    main()
