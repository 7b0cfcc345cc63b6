"""The fan-out benchmark: tables of four human-paced players against the real server.

    .venv/bin/python -m bench.load                      # or: make bench
    .venv/bin/python -m bench.load --steps 100,200,400,1000 --seconds 20
    .venv/bin/python -m bench.load --steps 200,400 --rounds 3 --idle 0   # the ratio, steadier
    .venv/bin/python -m bench.load --steps 200 --rounds 4 --idle 0 --together  # steadiest
    .venv/bin/python -m bench.load --together --steps 200 --rounds 2 --ablate pings

Starts the app (through bench/serve.py, which times its garbage-collector pauses) pinned
to core 0 with `taskset`, pins itself to core 1, and plays tables of four over the real
wire protocol with cheap raw clients (bench/wire.py). Each player flips 300-500 ms after
its turn comes, slaps a Jack 150-450 ms after it shows, slaps a card that is no Jack with
a 1% chance, and answers the room's lag pings at once, as the page does. The host
rematches a finished game after a second. The number of tables ramps up step by step; each
step is measured after a warm-up and prints:

- inbound messages a second (flip, slap, rematch sent) and outbound (Socket.IO packets
  received: from the app one `state` per player per change, its events inside, and the
  acks; from the relay each message re-sent to the room, and the acks),
- the server's CPU (% of one core, from /proc/PID/stat) and CPU ms per inbound message,
- the flip ack's round trip and the fan-out (from sending a flip to the last of the four
  holding the state version it made), p50/p95/p99/max in ms,
- the server's RSS and its garbage collector in the step: the longest pause (wall time,
  what players wait through, any generation), the CPU time of the longest collection
  (the collector's own work: wall time on a shared core also holds others' work), the
  total pause time and the number of full collections,
- the share of the server's core that other processes used: the step's noise,
- the generator's own CPU and event-loop lag, to show it is not the bottleneck.

Then, in the same run, a bare python-socketio relay (bench/relay.py) is given the same
tables at the same inbound rate per table, and the same figures are printed: the ratio of
CPU ms per inbound message, app to relay, is what holds from one machine to another. With
`--rounds N` the two ramps alternate N times and the ratio's median is printed too: on a
shared machine one ramp's figures move by a fifth from one minute to the next, and a
single pair can land on either side of a goal. With `--together` the two servers run at
once on the server's core, each with the step's tables, measured over the same seconds
(the relay's tables kept to the app's count of messages): what slows the core slows both
alike, and the ratio holds to a few percent (the two CPUs
add up on one core, so keep to steps where both fit). The server started first measures a
few percent dearer than the other, whichever it is, so rounds alternate which goes first:
take an even number of them. No ratio is taken where the relay's
core is saturated (its CPU per message then falls as messages queue).
First of all it measures idle memory: players sitting in lobbies, KB of RSS per player
(and with `--idle-seconds S`, the CPU of a server of their own while they sit, over S
seconds).

With `--together`, a third server can share the core: the app with some of the transport's
overrides switched off (`--ablate`, bench/ablate.py), or the app of another checkout
(`--against DIR`); its ratios to the relay and to the app are printed too. Every limit the
app puts on one address is lifted (bench/limits.py): every player comes from 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.limits import LIFTED_LIMITS
from bench.wire import Wire, http, text_frame

HOST = "127.0.0.1"
# A new room whose first save the store did not finish in time (SQLite's sync on a busy
# disk) is refused with 503 store_unavailable, as a client is told to try again: so many tries.
STORE_TRIES = 5
# Idle players' rooms measure their round trips first (a ping time every 2 s until each has
# three: app/tables/lag.py): the idle CPU is read after this.
IDLE_SETTLE_SECONDS = 8.0
ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(rb'"version":\s*(\d+)')
SEQ = re.compile(rb'"seq":(\d+)')
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


FLIP = b'["flip",{}]'
REMATCH = b'["rematch",{}]'

now = time.perf_counter


# ---- what one step measures ----------------------------------------------------------------


@dataclass
class Stats:
    inbound: int = 0
    outbound: int = 0
    refused_flips: int = 0
    flip_acks: list[float] = field(default_factory=list)
    fanouts: list[float] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)


def percentiles(samples: list[float]) -> tuple[float, float, float, float]:
    """p50, p95, p99, max in ms (nan when there are none)."""
    if not samples:
        nan = float("nan")
        return nan, nan, nan, nan
    ordered = sorted(samples)
    last = len(ordered) - 1

    def at(q: float) -> float:
        return ordered[min(last, round(q * last))] * 1000

    return at(0.50), at(0.95), at(0.99), ordered[-1] * 1000


# ---- players -------------------------------------------------------------------------------


class Player:
    """One person's connection. Parses only what a decision needs: the `state`'s version
    (a regex over its first bytes), the whole state once per version per table, acks by id."""

    __slots__ = ("acks", "index", "last_id", "player_id", "stats", "table", "token", "wire")

    def __init__(self, table: Any, index: int, stats: Stats) -> None:
        self.table, self.index, self.stats = table, index, stats
        self.acks: dict[int, tuple[Callable[[bytes, float], None] | None, float]] = {}
        self.last_id = 0
        self.player_id = ""
        self.token = ""  # the welcome's: what brings this person back to their seat
        self.wire: Wire | None = None

    def on_packet(self, packet: bytes) -> None:
        kind = packet[:1]
        if kind == b"2":
            self.stats.outbound += 1
            if packet.startswith(b'2["state"'):
                self.table.on_state(self, packet)
            elif packet.startswith(b'2["welcome"'):
                welcome = json.loads(packet[1:])[1]
                self.player_id, self.token = welcome["player"], welcome["token"]
                self.table.by_player[self.player_id] = self
            else:
                self.table.on_event(self, packet)
        elif kind == b"3":
            self.stats.outbound += 1
            bracket = packet.find(b"[")
            callback, sent = self.acks.pop(int(packet[1:bracket]), (None, 0.0))
            if callback is not None:
                callback(packet[bracket:], sent)

    def send(self, message: bytes, callback: Callable[[bytes, float], None] | None = None) -> float:
        """Emits `message` (a JSON array: event name and payload) with an ack id; returns
        the time it was sent, which the ack's callback gets back."""
        self.last_id += 1
        sent = now()
        self.acks[self.last_id] = (callback, sent)
        self.stats.inbound += 1
        assert self.wire is not None
        self.wire.write(text_frame(b"42%d" % self.last_id + message))
        return sent

    async def call(self, message: bytes) -> Any:
        """Emits and waits for the ack (set-up only)."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.send(message, lambda body, sent: answer.set_result(json.loads(body)[0]))
        return await asyncio.wait_for(answer, 30)


async def connect(player: Player, port: int, auth: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()

    def protocol() -> Wire:
        wire = Wire(HOST, port, auth)
        wire.on_packet = player.on_packet
        player.wire = wire
        return wire

    await loop.create_connection(protocol, HOST, port)
    assert player.wire is not None
    await asyncio.wait_for(player.wire.connected, 60)


class Fanout:
    """A flip on its way to the four: done when each holds a state at least as new as the
    version the flip made (known from its ack). Until the ack comes, each player's states
    newer than the flipper had seen are noted with their arrival, newest version last, so
    the ack picks each player's first state at or past the flip's version: a state of an
    earlier change that came first does not hide the flip's own."""

    __slots__ = ("after", "seen", "sent", "table", "target", "times")

    def __init__(self, table: Table, sent: float, after: int) -> None:
        self.table, self.sent, self.after = table, sent, after
        self.target: int | None = None
        self.seen: list[list[tuple[int, float]]] = [[], [], [], []]  # before the ack
        self.times: list[float | None] = [None, None, None, None]  # at or past the target

    def arrived(self, index: int, version: int, at: float) -> None:
        if self.target is None:
            seen = self.seen[index]
            if version > self.after and (not seen or version > seen[-1][0]):
                seen.append((version, at))
        elif self.times[index] is None and version >= self.target:
            self.times[index] = at
            self.check()

    def acked(self, version: int) -> None:
        self.target = version
        for index, seen in enumerate(self.seen):
            self.times[index] = next((at for v, at in seen if v >= version), None)
        self.check()

    def check(self) -> None:
        if self.target is not None and all(t is not None for t in self.times):
            last = max(t for t in self.times if t is not None)
            self.table.stats.fanouts.append(last - self.sent)
            self.table.fans.remove(self)


class Table:
    """Four human-paced players at one room of the app."""

    def __init__(self, code: str, stats: Stats, *, start: bool = True) -> None:
        self.code, self.stats, self.start = code, stats, start
        self.loop = asyncio.get_running_loop()
        self.players = [Player(self, i, stats) for i in range(4)]
        self.by_player: dict[str, Player] = {}
        self.by_seat: dict[int, Player] = {}
        self.version = 0
        self.game = 0
        self.phase = "lobby"
        self.host = ""
        self.next: int | None = None
        self.slap_open = False
        self.flip_for: int | None = None
        self.slapped_pile = -1
        self.last_top: tuple[int, int] | None = None
        self.rematch_pending = False
        self.fans: list[Fanout] = []  # flips on their way: a slow one may overlap the next

    async def open(self, port: int) -> None:
        for _ in range(STORE_TRIES):  # a first save slower than the app waits: asked again
            status, body = await http(HOST, port, "POST", "/api/rooms", b"{}")
            if status != 503 or (body or {}).get("error", {}).get("code") != "store_unavailable":
                break
            await asyncio.sleep(1)
        if status != 201:
            raise RuntimeError(f"POST /api/rooms answered {status}: {body}")
        self.code = body["code"]
        for index, player in enumerate(self.players):  # the first to join is the host
            await connect(player, port, {"room": self.code, "name": f"P{index}"})
        for index, player in enumerate(self.players):
            answer = await player.call(b'["sit",{"seat":%d}]' % index)
            assert answer["ok"], answer
        if self.start:
            answer = await self.players[0].call(b'["start",{}]')
            assert answer["ok"], answer

    def on_event(self, player: Player, packet: bytes) -> None:
        pass  # a change's events are inside its state; the app sends `event` only to restart

    def on_state(self, player: Player, packet: bytes) -> None:
        match = VERSION.search(packet, 0, 160) or VERSION.search(packet)
        assert match is not None
        version = int(match.group(1))
        if self.fans:
            at = now()
            for fan in tuple(self.fans):
                fan.arrived(player.index, version, at)
        if version > self.version:
            self.version = version
            self.decide(json.loads(packet[1:])[1])

    def decide(self, state: dict[str, Any]) -> None:
        self.phase = phase = state["phase"]
        self.host = state["host"]
        if phase == "over" and not self.rematch_pending:
            self.rematch_pending = True
            self.loop.call_later(1.0, self.rematch)
        if phase != "playing":
            return
        self.rematch_pending = False
        seats = state["seats"]
        if state["game"] != self.game:
            self.game = state["game"]
            self.by_seat = {
                seat: self.by_player[entry["player"]]
                for seat, entry in enumerate(seats)
                if entry is not None and entry["player"] in self.by_player
            }
            self.slapped_pile, self.last_top = -1, None
        pile = state["pile"]
        pile_id, top = pile["id"], (pile["id"], pile["count"])
        self.next, self.slap_open = state["next"], state["slap_open"]
        able = [
            seat
            for seat, entry in enumerate(seats)
            if entry is not None and not entry["out"] and not entry["frozen_ms"]
        ]
        if self.slap_open:
            if pile_id != self.slapped_pile:  # a Jack shows: everyone able races for it
                self.slapped_pile = pile_id
                for seat in able:
                    self.loop.call_later(random.uniform(0.15, 0.45), self.slap, seat, pile_id)
        else:
            if top != self.last_top and pile["count"]:
                for seat in able:  # no Jack: a 1% slip of the hand
                    if random.random() < 0.01:
                        self.loop.call_later(random.uniform(0.15, 0.45), self.slap, seat, pile_id)
            if self.next is not None and self.flip_for != self.next:
                self.flip_for = self.next
                self.loop.call_later(random.uniform(0.3, 0.5), self.flip, self.next)
        self.last_top = top

    def flip(self, seat: int) -> None:
        self.flip_for = None
        player = self.by_seat.get(seat)
        if self.phase != "playing" or self.next != seat or self.slap_open or player is None:
            return  # the table moved on; the next state decides again
        self.fans.append(Fanout(self, player.send(FLIP, self.flip_acked), self.version))
        if len(self.fans) > 8:  # a player whose states stopped coming: forget the oldest
            self.fans.pop(0)

    def flip_acked(self, body: bytes, sent: float) -> None:
        self.stats.flip_acks.append(now() - sent)
        fan = next((f for f in self.fans if f.sent == sent), None)
        match = VERSION.search(body) if body.startswith(b'[{"ok":true') else None
        if match is None:
            self.stats.refused_flips += 1
            if fan is not None:
                self.fans.remove(fan)
        elif fan is not None:
            fan.acked(int(match.group(1)))

    def slap(self, seat: int, pile_id: int) -> None:
        player = self.by_seat.get(seat)
        if self.phase == "playing" and player is not None:
            player.send(b'["slap",{"pile_id":%d}]' % pile_id)

    def rematch(self) -> None:
        host = self.by_player.get(self.host)
        if self.phase == "over" and host is not None:
            host.send(REMATCH)


class RelayTable:
    """Four clients in one room of the bare relay, sending `rate` messages a second between
    them (Poisson), each re-sent to all four: the fan-out is a message's trip to the last."""

    def __init__(self, code: str, stats: Stats, rate: float) -> None:
        self.code, self.stats, self.rate = code, stats, rate
        self.loop = asyncio.get_running_loop()
        self.players = [Player(self, i, stats) for i in range(4)]
        self.by_player: dict[str, Player] = {}
        self.seq = 0
        self.pending: dict[int, list[float]] = {}

    async def open(self, port: int) -> None:
        for player in self.players:
            await connect(player, port, {"room": self.code})
        self.loop.call_later(random.expovariate(self.rate), self.send)

    def send(self) -> None:
        self.seq += 1
        player = self.players[self.seq % 4]
        sent = player.send(b'["flip",{"seq":%d}]' % self.seq, self.acked)
        self.pending[self.seq] = [sent, 0]
        if len(self.pending) > 64:  # a message lost by a closed connection: forget it
            self.pending.pop(next(iter(self.pending)))
        self.loop.call_later(random.expovariate(self.rate), self.send)

    def acked(self, body: bytes, sent: float) -> None:
        self.stats.flip_acks.append(now() - sent)

    def on_event(self, player: Player, packet: bytes) -> None:
        match = SEQ.search(packet)
        if match is None:
            return
        seq = int(match.group(1))
        entry = self.pending.get(seq)
        if entry is not None:
            entry[1] += 1
            if entry[1] == 4:
                self.stats.fanouts.append(now() - entry[0])
                del self.pending[seq]

    def on_state(self, player: Player, packet: bytes) -> None:
        pass


# ---- the server under test -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Variant:
    """A third server for `--together`: the app with overrides switched off (`ablate`,
    bench/ablate.py), or the app of another checkout (`root`)."""

    label: str
    ablate: str = ""
    root: Path = ROOT

    @classmethod
    def of(cls, args: argparse.Namespace) -> Variant | None:
        if args.ablate:
            return cls(f"app-{args.ablate}", ablate=args.ablate)
        if args.against:
            root = Path(args.against).resolve()
            return cls(f"app@{root.name}", root=root)
        return None


class Server:
    """The app (bench.serve, `kind` "app") or the relay (bench.relay) in its own process,
    on `core`."""

    def __init__(
        self,
        kind: str,
        core: int | None,
        log: Path,
        *,
        gc_watch: bool = True,
        variant: Variant | None = None,
    ) -> None:
        self.kind, self.port, self.core = kind, free_port(), core
        self.label = variant.label if variant else kind
        root = variant.root if variant else ROOT
        self.gc_file = Path(tempfile.mkdtemp(prefix="slapjack-bench-")) / "gc.json"
        env = dict(os.environ, PYTHONPATH=str(root))
        if gc_watch:
            env["BENCH_GC_FILE"] = str(self.gc_file)
        self.gc_watch = gc_watch
        if kind == "app":
            env.update(
                SLAPJACK_HOST=HOST,
                SLAPJACK_PORT=str(self.port),
                SLAPJACK_LOG_LEVEL="warning",
                # The default store (SQLite), in a file of this run's own: a store left by an
                # earlier run would bring its tables back, and their autopilots would play.
                # BENCH_STORE=memory (or a Redis URL) measures another store.
                SLAPJACK_STORE=os.environ.get("BENCH_STORE")
                or f"sqlite:///{self.gc_file.parent / 'tables.db'}",
                # Every player comes from 127.0.0.1: no per-address limit, no cap on rooms.
                **LIFTED_LIMITS,
            )
            if variant and variant.ablate:
                env["BENCH_ABLATE"] = variant.ablate  # bench/ablate.py, in bench/serve.py
            python = root / ".venv" / "bin" / "python"
            command = [str(python if python.exists() else sys.executable), "-m", "bench.serve"]
        else:
            command = [sys.executable, "-m", "bench.relay", "--port", str(self.port)]
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            command, cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        self.gc_dumps = 0

    async def ready(self) -> None:
        for _ in range(300):
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.kind} server exited: see {self.log.name}")
            with contextlib.suppress(OSError):
                status, _ = await http(HOST, self.port, "GET", "/healthz")
                if status == 200:
                    return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"the {self.kind} server did not answer /healthz")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def gc_pauses(self) -> dict[str, Any]:
        """The collector's pauses since the last call (bench/gcwatch.py)."""
        nan = [float("nan")] * 3
        if not self.gc_watch:
            return {"count": [0, 0, 0], "total_ms": nan, "max_ms": nan, "max_cpu_ms": nan}
        self.gc_dumps += 1
        os.kill(self.process.pid, signal.SIGUSR1)
        for _ in range(200):
            with contextlib.suppress(OSError, ValueError):
                report: dict[str, Any] = json.loads(self.gc_file.read_text())
                if report["dump"] >= self.gc_dumps:
                    self.gc_dumps = report["dump"]
                    return report
            await asyncio.sleep(0.01)
        return {"count": [0, 0, 0], "total_ms": nan, "max_ms": nan, "max_cpu_ms": nan}

    def core_busy_seconds(self) -> float:
        """CPU time spent by anything on the server's core (all of them when not pinned)."""
        name = "cpu" if self.core is None else f"cpu{self.core}"
        for line in Path("/proc/stat").read_text().splitlines():
            fields = line.split()
            if fields[0] == name:
                ticks = [int(f) for f in fields[1:8]]
                return (sum(ticks) - ticks[3] - ticks[4]) / CLOCK_TICKS  # less idle, iowait
        return float("nan")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


# ---- the run -------------------------------------------------------------------------------


async def watch_lag(stats_of: Callable[[], Stats]) -> None:
    """The generator's own event-loop lag: how late a 20 ms sleep wakes."""
    while True:
        began = now()
        await asyncio.sleep(0.02)
        stats_of().lags.append(now() - began - 0.02)


PACE_SECONDS = 0.5  # how often `keep_pace` sets the relay's rate


async def keep_pace(
    tables: list[Any], following: Stats, leading: Stats, began: float, seconds: float
) -> None:
    """For `seconds` from `began`: every PACE_SECONDS, sets the rate of `tables` (relay
    tables) to the app's rate so far plus the gap between the messages they sent
    (`following.inbound`) and the app's (`leading.inbound`) spread over the seconds left,
    so the two counts meet to within a few messages a table. A rate measured over the
    warm-up would not hold: the app's tables slow down as their first games end and
    rematches wait, and the relay's then sent 6-14% more than the app's, which flattered
    the relay (a server's CPU per message falls as its rate rises)."""
    end = began + seconds
    while (left := end - now()) > 0:
        await asyncio.sleep(min(PACE_SECONDS, left))
        took, left = now() - began, end - now()
        if took <= 0 or not leading.inbound:
            continue
        pace = leading.inbound / took / len(tables)  # the app's, a table, so far
        behind = (leading.inbound - following.inbound) / len(tables)
        # Plus the difference spread over what is left (a second at least, so the last
        # turns do not swing), and never below a quarter of the app's: a table's next send
        # is drawn at its rate when it sends, and one drawn too slow would be long late.
        rate = max(pace + behind / max(left, 1.0), pace / 4)
        for table in tables:
            table.rate = rate


def hang_up(tables: list[Any]) -> None:
    """Closes every player's connection (the end of a ramp)."""
    for table in tables:
        for player in table.players:
            if player.wire is not None:
                player.wire.close()


async def open_all(tables: list[Any], port: int, at_once: int = 16) -> None:
    gate = asyncio.Semaphore(at_once)

    async def one(table: Any) -> None:
        async with gate:
            await table.open(port)

    await asyncio.gather(*(one(t) for t in tables))


async def sit_in_lobbies(players: int, port: int) -> list[Table]:
    """Tables of four sitting in their lobbies, `players` of them (at least one table),
    opened eight at a time: the idle players (keep them, or they go)."""
    lobbies = [Table("", Stats(), start=False) for _ in range(max(1, players // 4))]
    await open_all(lobbies, port, at_once=8)
    return lobbies


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stats = Stats()
        self.log = Path(args.log)

    async def idle_memory(self, players: int, variant: Variant | None = None) -> dict[str, Any]:
        core, gc_watch = self.args.server_core, self.args.gc_watch
        server = Server("app", core, self.log, gc_watch=gc_watch, variant=variant)
        try:
            await server.ready()
            warm = [Table("", Stats()) for _ in range(2)]
            await open_all(warm, server.port)  # imports and first-use caches
            await asyncio.sleep(1)
            before = server.rss_mb()
            lobbies = await sit_in_lobbies(players, server.port)
            await asyncio.sleep(2)
            after = server.rss_mb()
            count = 4 * len(lobbies)
            return {
                "players": count,
                "rss_before_mb": before,
                "rss_after_mb": after,
                "kb_per_player": (after - before) * 1024 / count,
            }
        finally:
            server.stop()

    async def idle_cpu(self, players: int, variant: Variant | None = None) -> float:
        """The CPU (% of a core) of a server of its own while `players` sit in lobbies and
        nothing else happens, over `--idle-seconds`, once each one's round trip is measured."""
        server = Server("app", self.args.server_core, self.log, gc_watch=False, variant=variant)
        try:
            await server.ready()
            _held = await sit_in_lobbies(players, server.port)  # kept: they stay connected
            await asyncio.sleep(IDLE_SETTLE_SECONDS)
            start, since = server.cpu_seconds(), time.monotonic()
            await asyncio.sleep(self.args.idle_seconds)
            return 100 * (server.cpu_seconds() - start) / (time.monotonic() - since)
        finally:
            server.stop()

    async def ramp(self, kind: str, rates: dict[int, float]) -> list[dict[str, Any]]:
        server = Server(kind, self.args.server_core, self.log, gc_watch=self.args.gc_watch)
        rows: list[dict[str, Any]] = []
        tables: list[Any] = []
        try:
            await server.ready()
            where = "any core" if server.core is None else f"core {server.core}"
            print(f"# {kind} server: pid {server.process.pid} on {where}", flush=True)
            for count in self.args.steps:
                new: list[Any]
                if kind == "app":
                    new = [Table("", self.stats) for _ in range(count - len(tables))]
                else:
                    rate = rates.get(count) or 2.8
                    for table in tables:
                        table.rate = rate
                    new = [
                        RelayTable(f"R{len(tables) + i}", self.stats, rate)
                        for i in range(count - len(tables))
                    ]
                await open_all(new, server.port)
                tables += new
                await asyncio.sleep(self.args.warmup)
                (row,) = await self.measure([(server, tables)], self.args.seconds)
                rows.append(row)
                print(format_row(row), flush=True)
        finally:
            hang_up(tables)
            server.stop()
        return rows

    async def together(
        self, *, relay_first: bool = False, variant: Variant | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """The app and the relay at once, both on the server's core, each with the step's
        tables (the relay's kept to the app's inbound count over the measured seconds by
        `keep_pace`), measured over the same seconds: whatever else slows the core
        then slows both alike, and their ratio holds to a few percent where two ramps one
        after the other move by a fifth. Their CPU adds up on the one core: keep the steps
        where the two together leave it well short of full. With a `variant`, a third server
        beside them: the app with overrides switched off (bench/ablate.py), or another
        checkout of it.

        The server started first, and whose tables open first, measures a few percent
        dearer than the other (two copies of the app side by side: 1.02-1.03), so `run`
        alternates: `relay_first` starts the servers in the opposite order (the relay
        first). Returns each one's rows: "app", "relay" and "variant"."""
        core, gc_watch = self.args.server_core, self.args.gc_watch
        order = ["app", "variant", "relay"] if variant else ["app", "relay"]
        if relay_first:
            order.reverse()
        servers: dict[str, Server] = {}
        rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in order}
        tables: dict[str, list[Any]] = {kind: [] for kind in order}
        rate = 2.8  # the relay's tables' rate a table until the app's is measured
        try:
            for kind in order:
                served = "relay" if kind == "relay" else "app"
                third = variant if kind == "variant" else None
                servers[kind] = Server(served, core, self.log, gc_watch=gc_watch, variant=third)
                await servers[kind].ready()
            pids = ", ".join(f"{servers[k].label} (pid {servers[k].process.pid})" for k in order)
            print(
                f"# at once, on {'any core' if core is None else f'core {core}'}: {pids}",
                flush=True,
            )
            apps = [kind for kind in order if kind != "relay"]
            app, relay = servers["app"], servers["relay"]
            for count in self.args.steps:
                if relay_first:
                    await self.open_relay_tables(tables["relay"], count, rate, relay.port)
                    await asyncio.sleep(self.args.warmup)
                for kind in apps:
                    mine = tables[kind]
                    new: list[Any] = [Table("", self.stats) for _ in range(count - len(mine))]
                    await open_all(new, servers[kind].port)
                    mine += new
                warm = await self.measure([(app, tables["app"])], self.args.warmup)
                rate = warm[0]["in_per_s"] / count or rate  # (an app that sent nothing yet)
                if not relay_first:
                    await self.open_relay_tables(tables["relay"], count, rate, relay.port)
                # The app's rate with both running (its tables' first minute is busier): the
                # relay's tables play at it from here on, so the two count the same traffic.
                warm = await self.measure([(app, tables["app"])], self.args.warmup)
                for table in tables["relay"]:
                    table.rate = warm[0]["in_per_s"] / count or rate
                await asyncio.sleep(2)
                measured = ["app", *(k for k in apps if k != "app"), "relay"]
                step = await self.measure(
                    [(servers[k], tables[k]) for k in measured], self.args.seconds, follow=True
                )
                for kind, row in zip(measured, step, strict=True):
                    rows[kind].append(row)
                    print(format_row(row), flush=True)
        finally:
            hang_up([table for kind in order for table in tables[kind]])
            for server in servers.values():
                server.stop()
        return rows

    async def open_relay_tables(
        self, tables: list[Any], count: int, rate: float, port: int
    ) -> None:
        """Relay tables playing at `rate` a table, added to `tables` up to `count`."""
        new = [
            RelayTable(f"R{len(tables) + i}", self.stats, rate) for i in range(count - len(tables))
        ]
        await open_all(new, port)
        tables.extend(new)

    def rebind(self, table: Any, stats: Stats) -> None:
        table.stats = stats
        for player in table.players:
            player.stats = stats

    async def measure(
        self, served: list[tuple[Server, list[Any]]], seconds: float, *, follow: bool = False
    ) -> list[dict[str, Any]]:
        """Each server's figures over the same `seconds` (its tables counted apart). With
        `follow`, the last server's tables (the relay's) keep to the first's inbound
        count over these seconds (`keep_pace`)."""
        for server, _ in served:
            await server.gc_pauses()  # (each a round trip: all of them before the clock starts)
        kept = []
        for server, tables in served:
            stats = Stats()
            for table in tables:  # every player counts into the step's own stats
                self.rebind(table, stats)
            kept.append((server, tables, stats))
        self.stats = kept[0][2]  # the generator's loop lag goes into the first
        start = [(server.cpu_seconds(), server.core_busy_seconds()) for server, _ in served]
        began, own, load = now(), time.process_time(), os.getloadavg()[0]
        if follow:  # the last server's tables (the relay's) keep to the first's count
            (_, _, leading), (_, relay_tables, following) = kept[0], kept[-1]
            await keep_pace(relay_tables, following, leading, began, seconds)
        else:
            await asyncio.sleep(seconds)
        took = now() - began
        own = time.process_time() - own
        ends = [(server.cpu_seconds(), server.core_busy_seconds()) for server, _ in served]
        after = Stats()  # what comes in from now on counts nowhere: the step is over
        self.stats = after
        for _, tables in served:
            for table in tables:
                self.rebind(table, after)
        rows = []
        for (server, tables, stats), (cpu0, busy0), (cpu1, busy1) in zip(
            kept, start, ends, strict=True
        ):
            pauses = await server.gc_pauses()
            rows.append(
                self.row(
                    server,
                    len(tables),
                    stats,
                    kept[0][2].lags,
                    took,
                    own,
                    load,
                    cpu1 - cpu0,
                    busy1 - busy0,
                    pauses,
                )
            )
        return rows

    def row(
        self,
        server: Server,
        count: int,
        stats: Stats,
        lags: list[float],
        took: float,
        own: float,
        load: float,
        cpu: float,
        busy: float,
        pauses: dict[str, Any],
    ) -> dict[str, Any]:
        return {
            "server": server.label,
            "tables": count,
            "players": count * 4,
            "in_per_s": stats.inbound / took,
            "out_per_s": stats.outbound / took,
            "cpu_pct": 100 * cpu / took,
            "cpu_ms_per_in": 1000 * cpu / max(1, stats.inbound),
            "ack_ms": percentiles(stats.flip_acks),
            "fan_ms": percentiles(stats.fanouts),
            "acks": len(stats.flip_acks),
            "refused_flips": stats.refused_flips,
            "rss_mb": server.rss_mb(),
            "gc_max_ms": max(pauses["max_ms"]),
            "gc_max_cpu_ms": max(pauses["max_cpu_ms"]),
            "gc_total_ms": sum(pauses["total_ms"]),
            "gc_full": pauses["count"][2],
            "gen_cpu_pct": 100 * own / took,
            "lag_ms": percentiles(lags),
            # Others' work on the server's core: the noise in this step's figures.
            "others_pct": 100 * max(0.0, busy - cpu) / took,
            # Pinned: the core is the server's alone but for others'; else every core's work,
            # the generator's own included, is in `others_pct`.
            "pinned": server.core is not None,
            "load": load,
            **saving_figures(pauses.get("saving"), took),
        }


def saving_figures(saving: dict[str, Any] | None, took: float) -> dict[str, Any]:
    """The app's saving in the step (bench/savewatch.py; none for the relay): tables
    written a second, beats a second, and when a beat's write started and landed after its
    time, p50/p95/p99/max ms (what a kill -9 can lose is SLAPJACK_SAVE_SECONDS plus that)."""
    if saving is None:
        return {}
    return {
        "saved_per_s": saving["tables"] / took,
        "beats_per_s": len(saving["landed_s"]) / took,
        "save_started_ms": percentiles(saving["started_s"]),
        "save_landed_ms": percentiles(saving["landed_s"]),
    }


def ms(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.0f}" if v >= 10 else f"{v:.1f}" for v in values)


HEADER = (
    f"{'server':6} {'tables':>6} {'players':>7} {'in/s':>7} {'out/s':>7} {'cpu%':>5} "
    f"{'ms/in':>6} {'flip ack p50/95/99/max ms':>26} {'fan-out p50/95/99/max ms':>26} "
    f"{'rss MB':>6} {'gc max wall/cpu, total ms (fulls)':>38} {'gen cpu%':>8} "
    f"{'gen lag p99/max':>15} {'others%':>7}"
)


def format_row(row: dict[str, Any]) -> str:
    """The step's line, and for the app a second one: its saving."""
    gc_cell = (
        f"{row['gc_max_ms']:.1f}/{row['gc_max_cpu_ms']:.1f}, {row['gc_total_ms']:.0f} "
        f"({row['gc_full']})"
    )
    line = (
        f"{row['server']:6} {row['tables']:>6} {row['players']:>7} {row['in_per_s']:>7.0f} "
        f"{row['out_per_s']:>7.0f} {row['cpu_pct']:>5.0f} {row['cpu_ms_per_in']:>6.3f} "
        f"{ms(row['ack_ms']):>26} {ms(row['fan_ms']):>26} {row['rss_mb']:>6.0f} "
        f"{gc_cell:>38} {row['gen_cpu_pct']:>8.0f} {ms(row['lag_ms'][2:]):>15} "
        f"{row['others_pct']:>7.0f}"
    )
    if "saved_per_s" not in row:
        return line
    return (
        f"{line}\n{'':6} saving: {row['saved_per_s']:.0f} tables written/s in "
        f"{row['beats_per_s']:.1f} beats/s; a beat's write started "
        f"{ms(row['save_started_ms'])} ms and landed {ms(row['save_landed_ms'])} ms "
        "(p50/95/99/max) after the beat's time"
    )


MARKDOWN_HEADER = (
    "| server | tables | players | in/s | out/s | server CPU % | CPU ms / inbound "
    "| flip ack p50/p95/p99/max ms | fan-out p50/p95/p99/max ms | RSS MB "
    "| GC longest pause (wall ms) / longest collection (CPU ms) "
    "| generator CPU % | generator lag p99/max ms "
    "| others on the server's core % |\n" + "| --- " * 14 + "|"
)


def markdown_row(row: dict[str, Any]) -> str:
    cells = [
        row["server"],
        str(row["tables"]),
        str(row["players"]),
        f"{row['in_per_s']:.0f}",
        f"{row['out_per_s']:.0f}",
        f"{row['cpu_pct']:.0f}",
        f"{row['cpu_ms_per_in']:.2f}",
        ms(row["ack_ms"]),
        ms(row["fan_ms"]),
        f"{row['rss_mb']:.0f}",
        f"{row['gc_max_ms']:.0f} / {row['gc_max_cpu_ms']:.0f}",
        f"{row['gen_cpu_pct']:.0f}",
        ms(row["lag_ms"][2:]),
        f"{row['others_pct']:.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


# A relay on a core this busy (its own CPU and others', the app's too with --together) is
# saturated: its messages wait in queues and each wake-up serves many, so its CPU per message
# is no longer what a message costs it. No ratio is taken there.
SATURATED_PCT = 95.0


def ratio_report(
    rounds: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
    names: tuple[str, str] = ("app", "relay"),
) -> str:
    """Server CPU ms per inbound message, app / relay, for each step of each round (an app
    ramp, then the relay's at the same rates; or both at once, `--together`) and, over
    several rounds, their median: alternating the ramps spreads the machine's drift over
    both. `names`: what is compared (a variant of the app to the app: the second's core is
    never taken for saturated)."""
    lines = [f"server CPU ms per inbound message, {names[0]} / {names[1]}:"]
    by_step: dict[int, list[float]] = {}
    for number, (app, relay) in enumerate(rounds, 1):
        if len(rounds) > 1:
            lines.append(f"  round {number}:")
        for mine, theirs in zip(app, relay, strict=True):
            text = (
                f"  {mine['tables']:>5} tables: {mine['cpu_ms_per_in']:.3f} / "
                f"{theirs['cpu_ms_per_in']:.3f}"
            )
            busy = theirs["cpu_pct"] + (theirs["others_pct"] if theirs.get("pinned") else 0.0)
            if busy >= SATURATED_PCT and names[1] == "relay":
                lines.append(f"{text}: the relay's core is saturated, no ratio")
                continue
            ratio = mine["cpu_ms_per_in"] / theirs["cpu_ms_per_in"]
            by_step.setdefault(mine["tables"], []).append(ratio)
            lines.append(f"{text} = {ratio:.2f}")
    if len(rounds) > 1 and by_step:
        lines.append(f"  median of {len(rounds)} rounds (lowest-highest):")
        for count, ratios in by_step.items():
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
            rounds_taken = f"{len(ratios)} round{'s' * (len(ratios) > 1)}"
            lines.append(
                f"  {count:>5} tables: {statistics.median(ratios):.2f} ({spread}, {rounds_taken})"
            )
    return "\n".join(lines)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def steps(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or counts != sorted(counts) or counts[0] < 1:
        raise argparse.ArgumentTypeError("steps: rising table counts, e.g. 25,50,100")
    return counts


async def run(args: argparse.Namespace) -> dict[str, Any]:
    bench = Run(args)
    lag = asyncio.create_task(watch_lag(lambda: bench.stats))
    results: dict[str, Any] = {"args": {k: v for k, v in vars(args).items()}}
    variant = Variant.of(args)
    try:
        for third in ((None, variant) if variant else (None,)) if args.idle else ():
            idle = await bench.idle_memory(args.idle, third)
            if args.idle_seconds > 0:
                idle["cpu_percent"] = await bench.idle_cpu(args.idle, third)
            label = third.label if third else "app"
            results.setdefault("idle", {})[label] = idle
            print(
                f"idle memory, {label}: {idle['players']} players sitting in lobbies: RSS "
                f"{idle['rss_before_mb']:.0f} -> {idle['rss_after_mb']:.0f} MB, "
                f"{idle['kb_per_player']:.1f} KB per player"
                + (
                    f"; alone on a server, {idle['cpu_percent']:.2f}% of a core over "
                    f"{args.idle_seconds:g} s"
                    if "cpu_percent" in idle
                    else ""
                ),
                flush=True,
            )
        print("\n" + HEADER, flush=True)
        # Per server compared with the relay, each round's (its rows, the relay's); and
        # side by side, (variant rows, app rows).
        rounds: dict[str, list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]] = {}
        side_by_side: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        for number in range(args.rounds):
            if args.together:
                served = await bench.together(relay_first=number % 2 == 1, variant=variant)
                app, relay = served["app"], served["relay"]
                results.setdefault("relay", []).extend(relay)
                rounds.setdefault("app", []).append((app, relay))
                if variant:
                    results.setdefault(variant.label, []).extend(served["variant"])
                    rounds.setdefault(variant.label, []).append((served["variant"], relay))
                    side_by_side.append((served["variant"], app))
            else:
                app = await bench.ramp("app", {})
                if args.relay:
                    rates = {row["tables"]: row["in_per_s"] / row["tables"] for row in app}
                    relay = await bench.ramp("relay", rates)
                    results.setdefault("relay", []).extend(relay)
                    rounds.setdefault("app", []).append((app, relay))
            results.setdefault("app", []).extend(app)
        for name, taken in rounds.items():
            print("\n" + ratio_report(taken, (name, "relay")))
        if side_by_side and variant:
            print("\n" + ratio_report(side_by_side, (variant.label, "app")))
        if args.markdown:
            print("\n" + MARKDOWN_HEADER)
            for kind in ("app", *([variant.label] if variant else []), "relay"):
                for row in results.get(kind, []):
                    print(markdown_row(row))
    finally:
        lag.cancel()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=steps, default=steps("25,50,100,200"))
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before each step")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds each step measures")
    parser.add_argument("--idle", type=int, default=2000, help="players for idle memory; 0: skip")
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=0.0,
        help="also the CPU of a server of their own over this many seconds while the idle "
        f"players sit (after {IDLE_SETTLE_SECONDS:g} s, by when each one's round trip is "
        "measured); 0: skip",
    )
    parser.add_argument("--no-relay", dest="relay", action="store_false")
    parser.add_argument(
        "--rounds",
        type=positive,
        default=1,
        help="ramps of each server, alternating app and relay (the ratio's median over them)",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="run the app and the relay at once on the server's core (a steadier ratio; "
        "keep steps where both fit: 200 tables each on this machine)",
    )
    parser.add_argument(
        "--ablate",
        default="",
        metavar="NAME[,NAME...]",
        help="with --together: a third server beside the app and the relay, the app with these "
        "overrides of the transport switched off (bench/ablate.py names them); its ratios "
        "to the relay and to the app are printed too",
    )
    parser.add_argument(
        "--against",
        default="",
        metavar="DIR",
        help="with --together: a third server beside the app and the relay, the app as checked "
        "out in DIR (another commit: `git worktree add DIR COMMIT`, set up with make)",
    )
    parser.add_argument("--no-pin", dest="pin", action="store_false", help="no taskset")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    parser.add_argument(
        "--no-gc-watch",
        dest="gc_watch",
        action="store_false",
        help="no gc.callbacks timing in the servers (it costs them a little CPU)",
    )
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "slapjack-bench.log"))
    args = parser.parse_args()
    if (args.ablate or args.against) and not args.together:
        parser.error("--ablate and --against need --together")
    if args.ablate and args.against:
        parser.error("--ablate or --against, not both")
    args.server_core = None
    cores = sorted(os.sched_getaffinity(0))
    if args.pin and len(cores) >= 2:
        args.server_core = cores[0]
        os.sched_setaffinity(0, {cores[1]})  # the generator: the other core
        print(f"server on core {cores[0]}, generator on core {cores[1]}")
    else:
        print("not pinned: server and generator share the cores")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"load average {os.getloadavg()[0]:.1f} (other work on the machine skews every figure)")
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    results = asyncio.run(run(args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
