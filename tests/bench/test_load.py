"""The fan-out benchmark's clients: WebSocket framing by hand, and tables that really play
the app (and the bare relay) over the wire, so a protocol change cannot silently break
`make bench`."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import uvicorn
from app_harness import serving
from played import played_tables

from app.stores.saver import EARLY_SECONDS
from app.tables.views import Views
from app.wire.encoded import Encoded
from app.wire.protocol import PING
from bench import ablate, load
from bench.load import (
    Fanout,
    RelayTable,
    Stats,
    Table,
    keep_pace,
    now,
    open_all,
    percentiles,
    ratio_report,
    run,
)
from bench.relay import create_relay
from bench.wire import PONG, Wire, lag_ping_id, text_frame


class Recorder:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def server_frame(payload: bytes, opcode: int = 0x1, final: bool = True) -> bytes:
    size = len(payload)
    first = (0x80 if final else 0) | opcode
    if size < 126:
        return bytes((first, size)) + payload
    return bytes((first, 126)) + size.to_bytes(2, "big") + payload


async def test_wire_reads_frames_split_anywhere_and_answers_pings() -> None:
    wire = Wire("127.0.0.1", 1, {"room": "X"})
    recorder = Recorder()
    wire.transport = recorder  # type: ignore[assignment]
    packets: list[bytes] = []
    wire.on_packet = packets.append
    big = b'42["state",{"version":7,"pad":"' + b"x" * 300 + b'"}]'
    stream = (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
        + server_frame(b'0{"sid":"a"}')
        + server_frame(b'40{"sid":"b"}')
        + server_frame(big)
        + server_frame(b'42["ev', final=False)
        + server_frame(b'ent",{}]', opcode=0x0)
        + server_frame(b"2")
        + server_frame(b"hi", opcode=0x9)
    )
    for at in range(0, len(stream), 7):  # TCP may cut anywhere
        wire.data_received(stream[at : at + 7])
    assert packets == [b'0{"sid":"b"}', big[1:], b'2["event",{}]']
    assert wire.connected.done()
    assert recorder.written[0] == text_frame(b'40{"room": "X"}')  # namespace join with auth
    assert recorder.written[1] == PONG
    assert recorder.written[2] == b"\x8a\x82\x00\x00\x00\x00hi"  # WebSocket pong, masked


async def test_wire_answers_the_rooms_lag_pings_as_the_page_does() -> None:
    table, _now = next(t for t in played_tables(1, seed=2) if t[0].game is not None)
    person = next(iter(table.people.values()))
    alone = Encoded.of(PING, {"id": "0a1b2c3d"}).text  # the texts the room sends
    riding = Views(table).message(person, 0, ping="4e5f6a7b").text
    plain = Views(table).message(person, 0).text
    wire = Wire("127.0.0.1", 1, {"room": "X"})
    recorder = Recorder()
    wire.transport = recorder  # type: ignore[assignment]
    packets: list[bytes] = []
    wire.on_packet = packets.append
    wire.data_received(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
    for text in (alone, plain, riding):
        wire.data_received(server_frame(text.encode()))
    assert recorder.written == [
        text_frame(b'42["pong",{"id":"0a1b2c3d"}]'),
        text_frame(b'42["pong",{"id":"4e5f6a7b"}]'),  # the plain state is not answered
    ]
    assert len(packets) == 3  # every packet still reaches the player
    assert lag_ping_id(b'2["state",{"name":",\\"ping\\":\\"x\\"}"}]') is None  # a name is no id


def test_frames_carry_their_length() -> None:
    assert text_frame(b"3") == b"\x81\x81\x00\x00\x00\x003"
    long = text_frame(b"y" * 300)
    assert long[:4] == b"\x81\xfe\x01\x2c" and len(long) == 4 + 4 + 300


async def wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_tables_play_the_app_and_time_their_flips() -> None:
    async with serving(rooms_per_minute=1e6, connects_per_minute=1e6) as server:
        stats = Stats()
        tables = [Table("", stats) for _ in range(2)]
        await open_all(tables, server.port)
        await wait_for(lambda: len(stats.fanouts) >= 12 and len(stats.flip_acks) >= 12)
        assert all(t.phase == "playing" for t in tables)
        assert min(stats.fanouts) > 0 and min(stats.flip_acks) > 0
        assert stats.outbound > 4 * stats.inbound  # states and events fan out to four
        p50, p95, p99, longest = percentiles(stats.fanouts)
        assert p50 <= p95 <= p99 <= longest
        for table in tables:
            for player in table.players:
                assert player.wire is not None
                player.wire.close()


async def test_relay_tables_time_the_trip_to_all_four() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_relay(), log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await wait_for(lambda: server.started)
        stats = Stats()
        tables: list[Any] = [RelayTable(f"R{i}", stats, rate=20) for i in range(2)]
        await open_all(tables, port)
        await wait_for(lambda: len(stats.fanouts) >= 20)
        assert stats.outbound >= 4 * len(stats.fanouts)
        for table in tables:
            for player in table.players:
                player.wire.close()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        sock.close()


def test_a_fanout_ends_at_each_players_first_state_of_the_flip_after_an_earlier_one() -> None:
    # Sent after version 10: player 0 first sees version 11 (a change that came before the
    # flip: a tick, a late slap), then 12, the flip's own, which its ack names afterwards.
    table = SimpleNamespace(stats=Stats(), fans=[])
    fan = Fanout(table, 0.0, 10)  # type: ignore[arg-type]
    table.fans.append(fan)
    fan.arrived(0, 11, 1.0)
    for index, at in enumerate((2.0, 2.1, 2.2, 2.3)):
        fan.arrived(index, 12, at)
    assert table.stats.fanouts == []  # nothing is known before the ack
    fan.acked(12)
    assert table.stats.fanouts == [2.3] and table.fans == []


def test_a_fanout_waits_for_players_still_behind_when_the_ack_comes() -> None:
    table = SimpleNamespace(stats=Stats(), fans=[])
    fan = Fanout(table, 0.0, 10)  # type: ignore[arg-type]
    table.fans.append(fan)
    for index in range(3):
        fan.arrived(index, 11, 1.0 + index / 10)
    fan.acked(11)
    fan.arrived(3, 10, 1.5)  # an older state: not the flip's
    assert table.stats.fanouts == []
    fan.arrived(3, 12, 1.7)  # newer than the flip's: it holds the flip
    assert table.stats.fanouts == [1.7]


def _row(
    tables: int, ms_per_in: float, cpu_pct: float, others: float = 0, pinned: bool = True
) -> dict[str, float]:
    return {
        "tables": tables,
        "cpu_ms_per_in": ms_per_in,
        "cpu_pct": cpu_pct,
        "others_pct": others,
        "pinned": pinned,
    }


def test_the_ratio_report_takes_the_median_over_rounds_and_skips_a_saturated_relay() -> None:
    rounds = [
        ([_row(200, 0.40, 20), _row(1000, 0.30, 80)], [_row(200, 0.50, 30), _row(1000, 0.4, 100)]),
        ([_row(200, 0.45, 22), _row(1000, 0.31, 81)], [_row(200, 0.50, 31), _row(1000, 0.4, 99)]),
        ([_row(200, 0.60, 25), _row(1000, 0.32, 82)], [_row(200, 0.50, 29), _row(1000, 0.5, 90)]),
    ]
    report = ratio_report(rounds)  # type: ignore[arg-type]
    assert "  round 2:" in report
    assert "  1000 tables: 0.300 / 0.400: the relay's core is saturated, no ratio" in report
    assert "   200 tables: 0.450 / 0.500 = 0.90" in report
    # the median of 0.80, 0.90 and 1.20; at 1,000 tables one unsaturated round
    assert "   200 tables: 0.90 (0.80-1.20, 3 rounds)" in report
    assert "  1000 tables: 0.64 (0.64-0.64, 1 round)" in report


def test_one_round_prints_its_ratios_without_a_median() -> None:
    report = ratio_report([([_row(200, 0.4, 20)], [_row(200, 0.5, 30)])])  # type: ignore[arg-type]
    assert report.splitlines() == [
        "server CPU ms per inbound message, app / relay:",
        "    200 tables: 0.400 / 0.500 = 0.80",
    ]


def test_a_relay_sharing_a_full_core_is_saturated_too() -> None:
    """With --together the app's CPU is on the relay's core: the two add up."""
    together = [([_row(400, 0.45, 45, 55)], [_row(400, 0.55, 50, 46)])]
    assert "the relay's core is saturated" in ratio_report(together)  # type: ignore[arg-type]
    fits = [([_row(200, 0.55, 28, 33)], [_row(200, 0.62, 33, 28)])]
    assert ratio_report(fits).endswith("= 0.89")  # type: ignore[arg-type]
    # Not pinned (--no-pin, or one core): "others" is every core's work, the generator's
    # own included, and says nothing of the relay's core.
    unpinned = [([_row(200, 0.55, 28, 80, False)], [_row(200, 0.62, 33, 75, False)])]
    assert ratio_report(unpinned).endswith("= 0.89")  # type: ignore[arg-type]


@pytest.mark.timeout(120)  # the default, declared: a long test, run early (tests/conftest.py)
async def test_together_runs_the_app_and_the_relay_at_once_at_the_same_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--together`, end to end on real servers: both measured over the same seconds, the
    relay's tables at the rate the app's played, and the ratio printed; two rounds, the
    second with the relay started first (the first server measures a little dearer)."""
    args = SimpleNamespace(
        steps=[3],
        warmup=1.5,
        seconds=3.0,
        idle=0,
        relay=True,
        rounds=2,
        together=True,
        ablate="",
        against="",
        markdown=False,
        gc_watch=True,
        server_core=None,
        log=str(tmp_path / "bench.log"),
    )
    paced: list[list[Any]] = []
    real_pace = load.keep_pace

    async def spied(tables: list[Any], *rest: Any) -> None:
        paced.append(tables)
        await real_pace(tables, *rest)

    monkeypatch.setattr(load, "keep_pace", spied)
    results = await run(args)  # type: ignore[arg-type]
    # The relay's tables, and only they, kept pace over the measured seconds.
    assert len(paced) == 2 and {type(t).__name__ for t in paced[0] + paced[1]} == {"RelayTable"}
    assert len(paced[0]) == len(paced[1]) == 3
    assert [row["server"] for row in results["app"] + results["relay"]] == ["app"] * 2 + [
        "relay"
    ] * 2
    (app, _), (relay, _) = results["app"], results["relay"]
    assert app["tables"] == relay["tables"] == 3 and app["players"] == relay["players"] == 12
    assert app["in_per_s"] > 0 and relay["in_per_s"] > 0
    # The relay's tables play at the app's rate (a few seconds' counts: within a half).
    assert 0.5 < relay["in_per_s"] / app["in_per_s"] < 1.5, (app, relay)
    assert app["cpu_ms_per_in"] > 0 and relay["cpu_ms_per_in"] > 0
    # The app's saving (bench/savewatch.py): its tables written on beats, a quarter of
    # SLAPJACK_SAVE_SECONDS apart (8 a second at most), each write starting no sooner than
    # the Saver allows (the loop may wake a beat's timer a hair early: EARLY_SECONDS) and
    # landing after it started; the relay saves nothing.
    assert app["saved_per_s"] > 0 and 0 < app["beats_per_s"] <= 8 + 1
    early_ms = -EARLY_SECONDS * 1000
    assert early_ms <= app["save_started_ms"][0] <= app["save_landed_ms"][0] < 1000
    assert "saved_per_s" not in relay
    printed = capsys.readouterr().out
    assert printed.count("saving: ") == 2  # under the app's line
    assert "at once, on any core: app (pid" in printed.split("round 1")[0]
    assert "at once, on any core: relay (pid" in printed
    assert printed.split("app / relay:")[1].count("      3 tables: ") == 3  # 2 rounds, median


async def test_the_relay_keeps_pace_with_the_apps_count_over_the_window() -> None:
    """`keep_pace` steers the relay's tables so that they send, over the measured seconds,
    as many messages as the app's did, though the rate set at the warm-up was twice the
    app's and the app slows down halfway (as its first games end). Both sides send by the
    clock (a slow machine makes fewer turns, not fewer messages)."""
    leading, following = Stats(), Stats()
    tables = [SimpleNamespace(rate=2.0) for _ in range(100)]  # the app sends 1.0 a table
    began, seconds = now(), 4.0
    owed = {"app": 0.0, "relay": 0.0}

    async def play() -> None:  # both sides' sends since the last turn
        last = began
        while (at := now()) < began + seconds:
            gap, last = at - last, at
            app_rate = 100.0 if at - began < seconds / 2 else 60.0
            owed["app"] += app_rate * gap
            owed["relay"] += sum(table.rate for table in tables) * gap
            for side, stats in (("app", leading), ("relay", following)):
                whole = int(owed[side])
                stats.inbound += whole
                owed[side] -= whole
            await asyncio.sleep(0.02)

    player = asyncio.create_task(play())
    await keep_pace(tables, following, leading, began, seconds)
    await player
    assert leading.inbound > 200  # about 320
    assert abs(following.inbound - leading.inbound) <= 0.1 * leading.inbound, (
        following.inbound,
        leading.inbound,
    )


@pytest.mark.timeout(180)  # three servers: a long test, run early (tests/conftest.py)
async def test_the_app_with_every_override_switched_off_still_plays(tmp_path: Path) -> None:
    """`--ablate` with every group of bench/ablate.py at once: the third server still plays
    its tables (each group puts the libraries' own path back, which must still work), and
    its ratio to the app is printed."""
    args = SimpleNamespace(
        steps=[2],
        warmup=1.5,
        seconds=3.0,
        idle=0,
        relay=True,
        rounds=1,
        together=True,
        ablate=",".join(ablate.GROUPS),
        against="",
        markdown=False,
        gc_watch=False,
        server_core=None,
        log=str(tmp_path / "bench.log"),
    )
    results = await run(args)  # type: ignore[arg-type]
    (variant,) = results[f"app-{args.ablate}"]
    assert variant["in_per_s"] > 0 and variant["acks"] > 0, variant
    assert "ablated" in (tmp_path / "bench.log").read_text()  # bench/ablate.py's line


@pytest.mark.timeout(120)  # the default, declared: a long test, run early (tests/conftest.py)
async def test_idle_seconds_reads_the_cpu_of_a_server_of_the_idle_players_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--idle-seconds`: players sit in lobbies on a server of their own, and its CPU over
    that window is read from /proc (the figure a script prints, not judged here); the
    server is gone after."""
    monkeypatch.setattr(load, "IDLE_SETTLE_SECONDS", 0.5)
    started: list[Any] = []
    real_server = load.Server

    def spied(*args: Any, **kwargs: Any) -> Any:
        started.append(real_server(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(load, "Server", spied)
    args = SimpleNamespace(idle_seconds=1.0, server_core=None, log=str(tmp_path / "bench.log"))
    cpu = await load.Run(args).idle_cpu(8)  # type: ignore[arg-type]
    (server,) = started
    assert 0.0 <= cpu < 100.0
    assert server.process.poll() is not None  # stopped
