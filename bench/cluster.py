"""The fan-out benchmark against a cluster: N app processes on Redis behind nginx.

    .venv/bin/python -m bench.cluster --processes 1 --steps 100,200,300,400
    .venv/bin/python -m bench.cluster --processes 2 --steps 100,200,300,400

Starts the cluster of deploy/cluster.py (redis-server, N `python -m app` processes with
`SLAPJACK_STORE=redis://...`, nginx with `hash $arg_room consistent`) and plays the tables of
bench/load.py through nginx: four human-paced players a table, each connecting with
`?room=CODE` so that nginx sends a table's players to one process. Nothing is pinned: the
processes, nginx, Redis and this generator share the machine's cores. Per step:

- inbound messages a second (what players send) and outbound (packets they receive),
- the app processes' CPU (their sum, % of one core) and each one's, nginx's and Redis's,
- the flip ack's round trip and the fan-out (a flip's send to the last of the four holding
  the state it made), p50/p95/p99/max in ms,
- the generator's own CPU, and the machine's load average.

Compare `--processes 1` with `--processes 2` at the same steps: where inbound per second stops
following the tables (players wait for their states) is the throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.limits import LIFTED_LIMITS
from bench.load import CLOCK_TICKS, Stats, Table, open_all, percentiles, steps, watch_lag
from deploy.cluster import Cluster

SETTINGS = {
    # Every player comes from 127.0.0.1 (nginx): no per-address limit.
    **LIFTED_LIMITS,
    "SLAPJACK_LOG_LEVEL": "warning",
}


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (and of its children that have exited)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


class Meter:
    """CPU seconds of the cluster's pieces, read from /proc."""

    def __init__(self, cluster: Cluster) -> None:
        self.apps = [process.pid for process in cluster.apps.values()]
        redis = cluster.redis.process if cluster.redis is not None else None
        assert cluster.nginx is not None and redis is not None
        self.nginx = [cluster.nginx.pid, *children(cluster.nginx.pid)]
        self.redis = redis.pid

    def read(self) -> dict[str, Any]:
        return {
            "apps": [cpu_seconds(pid) for pid in self.apps],
            "nginx": sum(cpu_seconds(pid) for pid in self.nginx),
            "redis": cpu_seconds(self.redis),
        }


async def measure(
    meter: Meter, tables: list[Table], seconds: float, bench: dict[str, Stats]
) -> dict[str, Any]:
    stats = Stats()
    bench["stats"] = stats
    for table in tables:
        table.stats = stats
        for player in table.players:
            player.stats = stats
    before, began, own = meter.read(), time.perf_counter(), time.process_time()
    await asyncio.sleep(seconds)
    took = time.perf_counter() - began
    after, own = meter.read(), time.process_time() - own
    apps = [100 * (a - b) / took for a, b in zip(after["apps"], before["apps"], strict=True)]
    return {
        "tables": len(tables),
        "in_per_s": stats.inbound / took,
        "out_per_s": stats.outbound / took,
        "apps_cpu_pct": apps,
        "nginx_cpu_pct": 100 * (after["nginx"] - before["nginx"]) / took,
        "redis_cpu_pct": 100 * (after["redis"] - before["redis"]) / took,
        "ack_ms": percentiles(stats.flip_acks),
        "fan_ms": percentiles(stats.fanouts),
        "gen_cpu_pct": 100 * own / took,
        "load": os.getloadavg()[0],
    }


def ms(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.0f}" if v >= 10 else f"{v:.1f}" for v in values)


def markdown_row(processes: int, row: dict[str, Any]) -> str:
    apps = " + ".join(f"{pct:.0f}" for pct in row["apps_cpu_pct"])
    cells = [
        str(processes),
        f"{row['tables']} ({4 * row['tables']:,})",
        f"{row['in_per_s']:.0f}",
        f"{row['out_per_s']:,.0f}",
        f"{sum(row['apps_cpu_pct']):.0f} ({apps})",
        f"{row['nginx_cpu_pct']:.0f}",
        f"{row['redis_cpu_pct']:.0f}",
        ms(row["ack_ms"]),
        ms(row["fan_ms"]),
        f"{row['gen_cpu_pct']:.0f}",
        f"{row['load']:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


MARKDOWN_HEADER = (
    "| processes | tables (players) | in/s | out/s | app CPU % (each) | nginx CPU % "
    "| Redis CPU % | flip ack p50/p95/p99/max ms | fan-out p50/p95/p99/max ms "
    "| generator CPU % | load |\n" + "| --- " * 11 + "|"
)


async def run(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="slapjack-bench-"))
    with Cluster(processes=args.processes, env=SETTINGS, workdir=workdir) as cluster:
        meter = Meter(cluster)
        bench = {"stats": Stats()}
        lag = asyncio.create_task(watch_lag(lambda: bench["stats"]))
        tables: list[Table] = []
        print(f"# {args.processes} app process(es) behind nginx at {cluster.url}", flush=True)
        print(MARKDOWN_HEADER, flush=True)
        try:
            for count in args.steps:
                new = [Table("", bench["stats"]) for _ in range(count - len(tables))]
                await open_all(new, cluster.port)
                tables += new
                await asyncio.sleep(args.warmup)
                row = await measure(meter, tables, args.seconds, bench)
                print(markdown_row(args.processes, row), flush=True)
        finally:
            lag.cancel()
            for table in tables:
                for player in table.players:
                    if player.wire is not None:
                        player.wire.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--steps", type=steps, default=steps("100,200,300,400"))
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before each step")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds each step measures")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
