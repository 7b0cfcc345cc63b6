"""A games night at hundreds of tables per process, and what a deploy, a crash or an outage
costs each table.

    .venv/bin/python -m bench.gamenight --tables 300 --scenarios kill,deploy,rolling
    .venv/bin/python -m bench.gamenight --tables 300 --scenarios deploy-one,kill-one
    .venv/bin/python -m bench.gamenight --tables 300 --scenarios redis-stopped,redis-hung

The cluster scenarios start deploy/cluster.py's cluster (redis-server with its append-only
file, two `python -m app` processes, nginx with `hash $arg_room consistent`); the `-one`
scenarios one `python -m app` on SQLite, which the pages reach directly. The servers (and
Redis and nginx) are pinned to core 0, this script to core 1. Each table has four players
at a human pace (a flip 0.3-0.5 s after the turn comes, a Jack slapped 0.15-0.45 s after it
shows, a rematch a second after a game ends), over cheap raw clients (bench/wire.py) that
come back as the page does (static/js/socket.js): after a dropped connection on Socket.IO's
own schedule (250 ms doubling to 800 ms, each +-50%; the page retries by long-polling first,
these by a websocket), after a refusal saying the server restarts on the page's (300 ms,
600 ms, 1.2 s, then every 2.5 s), with their token.

Scenarios, each after the tables played a while:
- kill: the process holding more tables is SIGKILLed, and started again once its tables
  played on elsewhere for `--settle` seconds;
- deploy: it is sent SIGTERM and started again once it exited;
- rolling: a deploy of each process in turn, the second once the tables spread again;
- deploy-one, kill-one: the same for the one SQLite process;
- redis-stopped, redis-hung: Redis stopped (SIGTERM, then started on its append-only file) or
  hung (SIGSTOP, SIGCONT) for `--outage` seconds.

Printed per scenario, over the tables it touched (a killed or stopped process's, each process's
at its turn in a rolling restart; every table for a Redis outage):
- pause p50/p90/p99/max: from each table's last move accepted before the fault to its first
  after it (s);
- after answer p50/p99/max: from the moment the restarted process (or Redis) answers to the
  table's first move after the fault, 0 for a table that played on elsewhere before (s);
- failover p50/p99/max (kill): from the kill to each table's first move after it, before
  the killed process starts again (s), and to the moment every page of the table had its
  state again (the first move comes a player's reaction, 0.3-0.5 s, after that);
- lost moves, and lost play: moves accepted before the fault that the store did not hold
  once the process was gone (their versions above the stored table's, read from Redis or
  the SQLite file at that moment), and the longest span from the first of them to the
  fault (s);
- the way home: for each table whose pages were sent to its returning process, the pause
  around that move (from its last move before the drop to its first after it);
- owner changes: leases taken per table during the scenario (`lease_taken`), most and total;
- refused: log lines of a refused or failed store command (save_failed, table_unreachable,
  hand_over_failed, lease_busy, ...), by name;
- shares: each process's share of the tables 10, 30 and 60 s after the last start (rolling,
  deploy, kill).
The machine's load average is printed with each scenario: on a shared machine the figures
move with it. `--trace FILE` writes each touched table's timeline as a JSON line (its moves,
its pages' comebacks and connection attempts, with why one failed, in seconds from the
fault), and the progress lines carry the UTC time to the millisecond, as the servers' logs
do: where a pause went, table by table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.wire import Wire, http, text_frame
from deploy.cluster import SCRIPTED, Cluster, free_port

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
SERVER_CORE, BENCH_CORE = 0, 1
now = time.monotonic

SETTINGS = {
    **SCRIPTED,
    "SLAPJACK_LOG_LEVEL": "info",
    "SLAPJACK_ROOMS_PER_MINUTE": "1000000",
    "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "1000000",
    "SLAPJACK_MAX_ROOMS": "100000",
    # Every player comes from 127.0.0.1: no per-address cap (nginx's limit_conn follows it),
    # and no limit on the sessions it opens a minute (1,200 pages coming back at once).
    "SLAPJACK_OPENS_PER_MINUTE": "1000000",
    "SLAPJACK_CONNECTIONS_PER_ADDRESS": "8000",  # nginx takes at most 65535
    "SLAPJACK_WEBSOCKETS_PER_ADDRESS": "8000",
    # A room a crash lost is a wrong code for its pages: no budget runs out on them.
    "SLAPJACK_WRONG_CODES_PER_MINUTE": "1000000",
    "SLAPJACK_WRONG_CODES_BURST": "1000000",
}
# Events in the processes' logs that mean a store command was refused or failed, or a table
# was left unserved.
REFUSALS = (
    "save_failed",
    "table_unreachable",
    "hand_over_failed",
    "hand_over_unsaved",
    "table_write_failed",
    "lease_busy",
    "lease_release_failed",
    "room_not_written",
    "tables_not_saved",
)
PAGE_RETRY = (0.3, 0.6, 1.2, 2.5)  # static/js/socket.js RESTART_RETRY_MS
# static/js/socket.js RECONNECT_FIRST_MS, RECONNECT_MAX_MS: Socket.IO's reconnectionDelay(Max)
FIRST_DELAY, MAX_DELAY = 0.25, 0.8
FLIP = b'["flip",{}]'
REMATCH = b'["rematch",{}]'


def socketio_backoff(attempt: int) -> float:
    """engine.io-client's Backoff: 250 ms doubling, +-50% (either way), at most 800 ms."""
    delay = FIRST_DELAY * 2.0**attempt
    deviation = random.random() * 0.5 * delay
    delay = delay - deviation if random.random() < 0.5 else delay + deviation
    return min(delay, MAX_DELAY)


# ---- a page ----------------------------------------------------------------------------------


class Page:
    """One player's page: connects with the room in the query and comes back by itself."""

    def __init__(self, table: Table, index: int) -> None:
        self.table, self.index = table, index
        self.name = f"P{index}"
        self.token: str | None = None
        self.player = ""
        self.seat: int | None = None
        self.wire: Wire | None = None
        self.acks: dict[int, Any] = {}
        self.last_id = 0
        self.tries = 0  # the page's refusal retries since it last got in
        self.leaving = False
        self.fresh = False  # connected again: its next state is taken whatever its version

    @property
    def connected(self) -> bool:
        return self.wire is not None and self.wire.connected.done() and not self.wire.closed.done()

    async def connect(self) -> None:
        """Until in (or leaving): a dropped transport on Socket.IO's schedule, a refusal on
        the page's."""
        attempt = 0
        while not self.leaving:
            auth: dict[str, Any] = {"room": self.table.code, "name": self.name}
            if self.token:
                auth["token"] = self.token
            wire: Wire | None = None
            try:
                loop = asyncio.get_running_loop()

                def protocol(given: dict[str, Any] = auth) -> Wire:
                    return self._wire(given)

                _, wire = await loop.create_connection(protocol, HOST, self.table.port)
                await asyncio.wait_for(wire.connected, 60)
            except (OSError, ConnectionError, TimeoutError) as error:
                if wire is not None:
                    wire.close()
                self.table.attempts.append((now(), self.index, str(error)[:80] or repr(error)))
                if "refused:" in str(error):  # the server said no: the page's own retries
                    await asyncio.sleep(PAGE_RETRY[min(self.tries, len(PAGE_RETRY) - 1)])
                    self.tries += 1
                else:  # no transport: Socket.IO's reconnection
                    await asyncio.sleep(socketio_backoff(attempt))
                    attempt += 1
                continue
            self.tries = 0
            self.fresh = True
            self.table.attempts.append((now(), self.index, "in"))
            wire.closed.add_done_callback(lambda _: self._dropped())
            return

    def _wire(self, auth: dict[str, Any]) -> Wire:
        wire = Wire(HOST, self.table.port, auth)
        wire.on_packet = self.on_packet
        self.wire = wire
        self.acks = {}
        return wire

    def _dropped(self) -> None:
        self.table.drops += 1
        self.table.attempts.append((now(), self.index, "dropped"))
        if not self.leaving:
            asyncio.get_running_loop().create_task(self._come_back())

    async def _come_back(self) -> None:
        await asyncio.sleep(socketio_backoff(0))
        await self.connect()

    def on_packet(self, packet: bytes) -> None:
        kind = packet[:1]
        if kind == b"2":
            event, data = json.loads(packet[1:])
            if event == "state":
                self.seat = data["you"]["seat"]
                self.table.on_state(self, data)
            elif event == "welcome":
                self.token, self.player = data["token"], data["player"]
        elif kind == b"3":
            bracket = packet.find(b"[")
            callback = self.acks.pop(int(packet[1:bracket]), None)
            if callback is not None:
                callback(json.loads(packet[bracket:])[0])

    def send(self, message: bytes, callback: Any = None) -> None:
        if not self.connected or self.wire is None:
            return
        self.last_id += 1
        self.acks[self.last_id] = callback
        self.wire.write(text_frame(b"42%d" % self.last_id + message))

    async def call(self, message: bytes) -> dict[str, Any]:
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.send(message, answer.set_result)
        return await asyncio.wait_for(answer, 60)

    def close(self) -> None:
        self.leaving = True
        if self.wire is not None:
            self.wire.close()


# ---- a table ---------------------------------------------------------------------------------


@dataclass
class Table:
    """Four players at one room, and every move the server accepted."""

    port: int
    code: str = ""
    pages: list[Page] = field(default_factory=list)
    version: int = -1
    state: dict[str, Any] | None = None
    accepted: list[tuple[float, int]] = field(default_factory=list)  # (when, version)
    # (when, version, page) of each page's first state after it connected again
    comebacks: list[tuple[float, int, int]] = field(default_factory=list)
    drops: int = 0
    # (when, page, what) of each page's connection: dropped, refused (and why), or in
    attempts: list[tuple[float, int, str]] = field(default_factory=list)
    flip_for: int | None = None
    slapped_pile: int = -1
    rematch_pending: bool = False

    async def open(self) -> None:
        status, body = await http(HOST, self.port, "POST", "/api/rooms", b"{}")
        if status != 201:
            raise RuntimeError(f"POST /api/rooms answered {status}: {body}")
        self.code = body["code"]
        self.pages = [Page(self, index) for index in range(4)]
        for page in self.pages:
            await page.connect()
        for index, page in enumerate(self.pages):
            answer = await page.call(b'["sit",{"seat":%d}]' % index)
            assert answer["ok"], answer
        answer = await self.pages[0].call(b'["start",{}]')
        assert answer["ok"], answer

    def on_state(self, page: Page, state: dict[str, Any]) -> None:
        version = state["version"]
        if page.fresh:  # back after a drop: look at the table afresh, as a person would
            page.fresh = False
            self.comebacks.append((now(), version, page.index))
            self.flip_for, self.slapped_pile = None, -1
            if version < self.version:
                self.version = version - 1  # the table came back from an older save
        if version <= self.version:
            return
        self.version, self.state = version, state
        self.decide(state)

    def by_seat(self, seat: int | None) -> Page | None:
        return next((p for p in self.pages if p.seat == seat and p.connected), None)

    def decide(self, state: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        phase = state["phase"]
        if phase == "over" and not self.rematch_pending:
            self.rematch_pending = True
            loop.call_later(1.0, self.rematch)
        if phase != "playing":
            return
        self.rematch_pending = False
        pile = state["pile"]
        able = [
            seat
            for seat, entry in enumerate(state["seats"])
            if entry is not None and not entry["out"] and not entry["frozen_ms"]
        ]
        if state["slap_open"]:
            if pile["id"] != self.slapped_pile:
                self.slapped_pile = pile["id"]
                for seat in able:
                    loop.call_later(random.uniform(0.15, 0.45), self.slap, seat, pile["id"])
        elif state["next"] is not None and self.flip_for != state["next"]:
            self.flip_for = state["next"]
            loop.call_later(random.uniform(0.3, 0.5), self.flip, state["next"], self.version)

    def flip(self, seat: int, version: int) -> None:
        self.flip_for = None
        state = self.state
        page = self.by_seat(seat)
        if state is None or page is None or state["next"] != seat or state["slap_open"]:
            if version == self.version and page is None:  # its page is away: look again soon
                asyncio.get_running_loop().call_later(0.3, self.retry_decide)
            return
        page.send(FLIP, self.acked)

    def retry_decide(self) -> None:
        if self.state is not None:
            self.decide(self.state)

    def slap(self, seat: int, pile_id: int) -> None:
        page = self.by_seat(seat)
        if page is not None and self.state is not None and self.state["phase"] == "playing":
            page.send(b'["slap",{"pile_id":%d}]' % pile_id, self.acked)

    def rematch(self) -> None:
        self.rematch_pending = False
        host = next((p for p in self.pages if p.connected and p.seat == 0), None)
        if self.state is not None and self.state["phase"] == "over" and host is not None:
            host.send(REMATCH, self.acked)

    def acked(self, answer: dict[str, Any]) -> None:
        if answer.get("ok"):
            versions = [e.get("version", 0) for e in answer.get("events", [])]
            self.accepted.append((now(), max(versions, default=self.version)))
        elif self.state is not None:  # refused (paused, moving): look again a moment later
            self.flip_for, self.slapped_pile = None, -1
            asyncio.get_running_loop().call_later(0.3, self.retry_decide)

    def close(self) -> None:
        for page in self.pages:
            page.close()


# ---- what a fault cost each table -----------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Cost:
    pause: float
    after_answer: float
    since_fault: float
    lost_moves: int
    lost_seconds: float
    served_after_answer: float  # every page of the table had its state again
    longest_gap: float  # between two accepted moves, from the fault to the end
    interruptions: int  # the table's connections dropped (all four at once counts once)
    # From the last move before the table's first dropped connection after the answer (the
    # way home: its pages sent to its returning process) to the first move after it.
    home_pause: float | None


def cost(table: Table, fault: float, answered: float, stored: int | None) -> Cost | None:
    """What the fault at `fault` cost the table; `answered`: when the restarted process (or
    Redis) answered; `stored`: the version the store held once the process was gone (None:
    not read). None if the table did not play again."""
    before = [(t, v) for t, v in table.accepted if t <= fault]
    # After a process went away, a move counts once its pages are back (an ack the old
    # process sent just before the fault may arrive just after it).
    back = min((t for t, _, _ in table.comebacks if t > fault), default=fault)
    after = [t for t, _ in table.accepted if t > back]
    if not after or not before:
        return None
    lost = [(t, v) for t, v in before if stored is not None and v > stored]
    firsts: dict[int, float] = {}
    for when, _, index in table.comebacks:
        if when > fault:
            firsts.setdefault(index, when)
    served = max(firsts.values()) if len(firsts) == len(table.pages) else after[0]
    home_pause = None
    if sent_home := [t for t, _, why in table.attempts if why == "dropped" and t > answered]:
        around = [t for t, _ in table.accepted]
        before_home = [t for t in around if t <= sent_home[0]]
        after_home = [t for t in around if t > sent_home[0]]
        if before_home and after_home:
            home_pause = after_home[0] - before_home[-1]
    moves = [before[-1][0], *after]
    return Cost(
        pause=after[0] - before[-1][0],
        after_answer=max(0.0, after[0] - answered),
        since_fault=after[0] - fault,
        lost_moves=len(lost),
        lost_seconds=(fault - lost[0][0]) if lost else 0.0,
        served_after_answer=max(0.0, served - answered),
        longest_gap=max(b - a for a, b in itertools.pairwise(moves)),
        interruptions=-(-table.drops // len(table.pages)),
        home_pause=home_pause,
    )


def row(name: str, costs: list[Cost], touched: int, extra: dict[str, Any]) -> str:
    pauses = [c.pause for c in costs]
    answers = [c.after_answer for c in costs]
    served = [c.served_after_answer for c in costs]
    gaps = [c.longest_gap for c in costs]
    interrupted = Counter(c.interruptions for c in costs)
    lines = [
        f"## {name}: {len(costs)} of {touched} tables played again"
        f" (load average {os.getloadavg()[0]:.1f})",
        f"  pause p50/p90/p99/max: {percentile(pauses, 0.5):.2f} / {percentile(pauses, 0.9):.2f}"
        f" / {percentile(pauses, 0.99):.2f} / {max(pauses, default=float('nan')):.2f} s",
        f"  after answer p50/p99/max: {percentile(answers, 0.5):.2f} /"
        f" {percentile(answers, 0.99):.2f} / {max(answers, default=float('nan')):.2f} s"
        f" (every page back: {percentile(served, 0.5):.2f} / {percentile(served, 0.99):.2f} /"
        f" {max(served, default=float('nan')):.2f} s)",
        f"  longest gap per table after the fault p50/p99/max: {percentile(gaps, 0.5):.2f} /"
        f" {percentile(gaps, 0.99):.2f} / {max(gaps, default=float('nan')):.2f} s",
        f"  interruptions per table: {dict(sorted(interrupted.items()))} (tables)",
        f"  lost moves: {sum(c.lost_moves for c in costs)} over"
        f" {sum(1 for c in costs if c.lost_moves)} tables; lost play at most"
        f" {max((c.lost_seconds for c in costs), default=0.0):.2f} s",
    ]
    homes = [c.home_pause for c in costs if c.home_pause is not None]
    if homes and name in ("kill", "deploy", "rolling"):  # one of two came back: tables go home
        lines.append(
            f"  the way home ({len(homes)} tables), pause p50/p99/max: {percentile(homes, 0.5):.2f}"
            f" / {percentile(homes, 0.99):.2f} / {max(homes):.2f} s"
        )
    for key, value in extra.items():
        lines.append(f"  {key}: {value}")
    return "\n".join(lines)


# ---- the servers ------------------------------------------------------------------------------


class Lag:
    """This script's own event-loop lag: a generator that falls behind makes pauses longer
    than the server did."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            asked = now()
            await asyncio.sleep(0.05)
            self.worst = max(self.worst, now() - asked - 0.05)

    def reset(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    def stop(self) -> None:
        self._task.cancel()


def pin(pid: int, core: int) -> None:
    with contextlib.suppress(OSError):
        os.sched_setaffinity(pid, {core})
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            os.sched_setaffinity(int(child), {core})


def log_lines(paths: list[Path]) -> list[dict[str, Any]]:
    lines = []
    for path in paths:
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                if line.startswith("{"):
                    with contextlib.suppress(ValueError):
                        lines.append(json.loads(line))
    return lines


class Single:
    """One `python -m app` on SQLite, reached directly."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir, self.port = workdir, free_port()
        self.env = {
            **os.environ,
            **SETTINGS,
            **env,
            "SLAPJACK_HOST": HOST,
            "SLAPJACK_PORT": str(self.port),
            "SLAPJACK_STORE": f"sqlite:///{workdir}/tables.db",
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.runs = 0

    @property
    def logs(self) -> list[Path]:
        return [self.workdir / f"app-{run}.log" for run in range(1, self.runs + 1)]

    async def start(self) -> float:
        self.runs += 1
        with (self.workdir / f"app-{self.runs}.log").open("wb") as log:
            self.process = subprocess.Popen(
                ["taskset", "-c", str(SERVER_CORE), sys.executable, "-m", "app"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return await answering(self.port)

    def stop(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(120)


async def answering(port: int, seconds: float = 120.0) -> float:
    """Waits until /healthz answers at `port`; when it did."""
    async with asyncio.timeout(seconds):
        while True:
            with contextlib.suppress(OSError, IndexError, ValueError):
                status, _ = await http(HOST, port, "GET", "/healthz")
                if status in (200, 503):
                    return now()
            await asyncio.sleep(0.05)


def redis_versions(cluster: Cluster, codes: list[str]) -> dict[str, int]:
    """Each table's version as Redis holds it now."""
    import redis as sync_redis

    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as client:
        pipe = client.pipeline(transaction=False)
        for code in codes:
            pipe.hget(f"slapjack:table:{code}", "snapshot")
        found = zip(codes, pipe.execute(), strict=True)
        return {code: int(json.loads(text)["version"]) for code, text in found if text}


def sqlite_versions(path: Path) -> dict[str, int]:
    """Each table's version as the SQLite file holds it now (its write-ahead log read too)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT code, snapshot FROM tables").fetchall()
    return {code: int(json.loads(text)["version"]) for code, text in rows}


def shares(cluster: Cluster, codes: list[str]) -> dict[str, int]:
    import redis as sync_redis

    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as client:
        pipe = client.pipeline(transaction=False)
        for code in codes:
            pipe.hget(f"slapjack:lease:{code}", "node")
        return dict(Counter(str(node) for node in pipe.execute()))


def holder(cluster: Cluster, code: str) -> str | None:
    import redis as sync_redis

    with sync_redis.Redis(port=cluster.redis_port, decode_responses=True) as client:
        node: str | None = client.hget(f"slapjack:lease:{code}", "node")
        return node


OPEN_SECONDS = 120.0  # a table not open and started by then is left out (said so)


async def open_tables(port: int, count: int, at_once: int = 8) -> list[Table]:
    """`count` tables opened and started, `at_once` at a time; those that could not be
    within OPEN_SECONDS (a machine too busy) are closed and left out."""
    tables = [Table(port) for _ in range(count)]
    gate = asyncio.Semaphore(at_once)

    async def one(table: Table) -> bool:
        async with gate:
            try:
                async with asyncio.timeout(OPEN_SECONDS):
                    await table.open()
                return True
            except (TimeoutError, OSError, RuntimeError, AssertionError) as error:
                progress(f"a table left out: {error!r}"[:200])
                table.close()
                return False

    opened = await asyncio.gather(*(one(table) for table in tables))
    progress(f"{sum(opened)} of {count} tables open")
    return [table for table, ok in zip(tables, opened, strict=True) if ok]


def progress(line: str) -> None:
    stamp = time.time()
    clock = time.strftime("%H:%M:%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1000):03d}"
    print(f"  [{clock} UTC] {line}", file=sys.stderr, flush=True)


TRACE: Path | None = None  # --trace: each touched table's timeline, as JSON lines


def trace(name: str, tables: list[Table], fault: float, answered: float) -> None:
    """Writes each table's accepted moves, comebacks and connection attempts, in seconds
    from `fault` (with the answer's time), to --trace's file: where a pause went."""
    if TRACE is None:
        return
    with TRACE.open("a") as out:
        for table in tables:
            line = {
                "scenario": name,
                "code": table.code,
                "answered": round(answered - fault, 3),
                "accepted": [round(t - fault, 3) for t, _ in table.accepted if t > fault - 2],
                "comebacks": [
                    (round(t - fault, 3), v, i) for t, v, i in table.comebacks if t > fault
                ],
                "attempts": [
                    (round(t - fault, 3), i, w) for t, i, w in table.attempts if t > fault
                ],
            }
            out.write(json.dumps(line) + "\n")


def owner_changes(lines: list[dict[str, Any]], codes: set[str], since_wall: float) -> Counter[str]:
    taken: Counter[str] = Counter()
    for line in lines:
        if line.get("event") != "lease_taken" or line.get("room") not in codes:
            continue
        stamp = time.mktime(time.strptime(line["ts"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        if stamp >= since_wall - 1:
            taken[line["room"]] += 1
    return taken


def refusals(lines: list[dict[str, Any]], since_wall: float) -> dict[str, int]:
    found: Counter[str] = Counter()
    for line in lines:
        stamp = time.mktime(time.strptime(line["ts"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        if line.get("event") in REFUSALS and stamp >= since_wall - 1:
            found[line["event"]] += 1
    return dict(found)


# ---- scenarios --------------------------------------------------------------------------------


async def cluster_scenario(name: str, args: argparse.Namespace) -> str:
    env = {**SETTINGS, "SLAPJACK_LEASE_SECONDS": str(args.lease)}
    workdir = Path(tempfile.mkdtemp(prefix=f"slapjack-{name}-"))
    cluster = Cluster(processes=2, env=env, workdir=workdir)
    try:
        await asyncio.to_thread(cluster.start)
        pin_cluster(cluster)
        progress(f"{name}: cluster up in {workdir}")
        tables = await open_tables(cluster.port, args.tables)
        codes = [t.code for t in tables]
        await asyncio.sleep(args.warmup)
        lag = Lag()
        placed = shares(cluster, codes)
        victim_node = max(placed, key=lambda node: placed[node])
        victim = int(victim_node.removeprefix("node-")) - 1
        touched = [t for t in tables if holder(cluster, t.code) == victim_node]
        wall, fault = time.time(), now()
        progress(f"{name}: the fault, at {victim_node} holding {len(touched)} tables")
        extra: dict[str, Any] = {"placed before": placed}
        answered = fault
        stored: dict[str, int] = {}
        failover: list[Cost] = []
        if name == "kill":
            await asyncio.to_thread(cluster.kill, victim, signal.SIGKILL)
            stored = redis_versions(cluster, codes)
            await asyncio.sleep(args.settle)  # the failover, nobody starting the process again
            failover = [c for t in touched if (c := cost(t, fault, fault, stored.get(t.code)))]
            progress(f"{name}: {len(failover)} tables played again; the killed process starts")
            await restart_app(cluster, victim)
            answered = now()
            progress(f"{name}: {victim_node} answers again")
        elif name in ("deploy", "rolling"):
            await asyncio.to_thread(cluster.kill, victim, signal.SIGTERM)
            stored = redis_versions(cluster, codes)
            progress(f"{name}: {victim_node} stopped")
            await restart_app(cluster, victim)
            answered = now()
            progress(f"{name}: {victim_node} answers again")
        elif name.startswith("redis-"):
            touched = tables
            stopped = name == "redis-stopped"
            await asyncio.to_thread(cluster.stop_redis if stopped else cluster.hang_redis)
            await asyncio.sleep(args.outage)
            await asyncio.to_thread(cluster.start_redis if stopped else cluster.wake_redis)
            pin_cluster(cluster)
            answered = now()
        if name in ("kill", "deploy", "rolling"):
            extra["shares after the start (10/30/60 s)"] = await watch_shares(
                cluster, codes, answered
            )
        # Each table's cost against the stop of the process that held it and that process's
        # answer again (a rolling restart: each process's tables at its own turn).
        turns = [(touched, fault, answered, stored)]
        if name == "rolling":
            other = 1 - victim
            second = [t for t in tables if holder(cluster, t.code) == f"node-{other + 1}"]
            second_fault = now()
            progress(f"{name}: the second fault, at node-{other + 1} holding {len(second)} tables")
            await asyncio.to_thread(cluster.kill, other, signal.SIGTERM)
            second_stored = redis_versions(cluster, codes)
            progress(f"{name}: node-{other + 1} stopped")
            await restart_app(cluster, other)
            second_answered = now()
            progress(f"{name}: node-{other + 1} answers again")
            turns.append((second, second_fault, second_answered, second_stored))
            extra["shares after the second start (10/30/60 s)"] = await watch_shares(
                cluster, codes, second_answered
            )
        else:
            await asyncio.sleep(args.settle)
        for turn, at, back, _ in turns:
            trace(name, turn, at, back)
        costs = [
            c
            for turn, at, back, held in turns
            for t in turn
            if (c := cost(t, at, back, held.get(t.code))) is not None
        ]
        touched_count = sum(len(turn) for turn, _, _, _ in turns)
        if name == "rolling":
            touched = tables
        lines = log_lines(list(workdir.glob("app-*.log")))
        changes = owner_changes(lines, {t.code for t in touched}, wall)
        extra["owner changes per table (most; total)"] = (
            f"{max(changes.values(), default=0)}; {sum(changes.values())}"
        )
        if name == "kill":
            since = [c.since_fault for c in failover]
            served = [c.served_after_answer for c in failover]  # answered: the kill itself
            extra["failover p50/p99/max (from the kill)"] = (
                f"{percentile(since, 0.5):.2f} / {percentile(since, 0.99):.2f} /"
                f" {max(since, default=float('nan')):.2f} s (lease {args.lease:g} s; every page"
                f" back: {percentile(served, 0.5):.2f} / {percentile(served, 0.99):.2f} /"
                f" {max(served, default=float('nan')):.2f} s)"
            )
        extra["refused or failed store commands"] = refusals(lines, wall) or "none"
        extra["drops"] = sum(t.drops for t in touched)
        extra["this script's longest loop lag"] = f"{lag.reset():.2f} s"
        lag.stop()
        for table in tables:
            table.close()
        return row(name, costs, touched_count, extra)
    finally:
        await asyncio.to_thread(cluster.stop)


def pin_cluster(cluster: Cluster) -> None:
    for process in cluster.apps.values():
        pin(process.pid, SERVER_CORE)
    if cluster.nginx is not None:
        pin(cluster.nginx.pid, SERVER_CORE)
    if cluster.redis is not None and cluster.redis.process is not None:
        pin(cluster.redis.process.pid, SERVER_CORE)


async def restart_app(cluster: Cluster, index: int) -> None:
    cluster.launch_app(index)
    pin(cluster.apps[index].pid, SERVER_CORE)
    await asyncio.to_thread(cluster.wait_for_app, index)


async def watch_shares(cluster: Cluster, codes: list[str], since: float) -> str:
    seen = []
    for mark in (10, 30, 60):
        await asyncio.sleep(max(0.0, since + mark - now()))
        counts = shares(cluster, codes)
        seen.append("/".join(f"{counts.get(f'node-{i}', 0)}" for i in (1, 2)))
    return ", ".join(seen)


async def single_scenario(name: str, args: argparse.Namespace) -> str:
    workdir = Path(tempfile.mkdtemp(prefix=f"slapjack-{name}-"))
    server = Single(workdir, {})
    try:
        await server.start()
        progress(f"{name}: server up in {workdir}")
        tables = await open_tables(server.port, args.tables)
        await asyncio.sleep(args.warmup)
        lag = Lag()
        wall, fault = time.time(), now()
        server.stop(signal.SIGKILL if name == "kill-one" else signal.SIGTERM)
        stopped = now()
        progress(f"{name}: stopped")
        stored = sqlite_versions(workdir / "tables.db")
        answered = await server.start()
        progress(f"{name}: answering again")
        await asyncio.sleep(args.settle)
        trace(name, tables, fault, answered)
        costs = [
            c for t in tables if (c := cost(t, fault, answered, stored.get(t.code))) is not None
        ]
        lines = log_lines(server.logs)
        extra = {
            "stopped, then answering again after": f"{stopped - fault:.2f} s, "
            f"{answered - stopped:.2f} s",
            "refused or failed store commands": refusals(lines, wall) or "none",
            "drops": sum(t.drops for t in tables),
            "this script's longest loop lag": f"{lag.reset():.2f} s",
        }
        lag.stop()
        for table in tables:
            table.close()
        return row(name, costs, len(tables), extra)
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop(signal.SIGTERM)


SCENARIOS = ("kill", "deploy", "rolling", "deploy-one", "kill-one", "redis-stopped", "redis-hung")


async def main() -> None:
    # SIGTERM (a `timeout`, Ctrl-C's cousin) ends the run through its `finally`s: the
    # servers it started stop with it.
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--scenarios", default="kill,deploy,rolling")
    parser.add_argument("--lease", type=float, default=5.0, help="SLAPJACK_LEASE_SECONDS")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds of play first")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after the fault")
    parser.add_argument("--outage", type=float, default=10.0, help="a Redis outage's seconds")
    parser.add_argument("--trace", type=Path, help="each touched table's timeline (JSON lines)")
    args = parser.parse_args()
    global TRACE
    TRACE = args.trace
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {BENCH_CORE})
    for name in args.scenarios.split(","):
        if name not in SCENARIOS:
            raise SystemExit(f"unknown scenario {name}: one of {', '.join(SCENARIOS)}")
        run = single_scenario if name.endswith("-one") else cluster_scenario
        print(await run(name, args), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
