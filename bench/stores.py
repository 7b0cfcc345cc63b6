"""Rough figures for the table stores (not a test: no pass or fail).

    .venv/bin/python -m bench.stores [--saves 2000]

For memory, SQLite (a temp file) and Redis (a redis-server started on a free port, no
persistence, then with the append-only file fsynced every second), with a snapshot shaped like
a 4-player table mid-game: saves one after another (saves/s, wall time per save, this
process's CPU per save (all threads: what a save costs the server, and the event loop's
thread alone: what it takes from the game), then 100 rooms saving at once.
"""

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app.stores import open_store
from bench.harness import RedisServer
from engine import Game


def mid_game_table() -> dict[str, object]:
    game = Game.deal(4, seed=7)
    now = 0.0
    for _ in range(40):
        now += 1.1  # past a pile winner's collect pause (1 s)
        seat = game.next_to_play
        if seat is None:  # the game is over
            break
        if game.slap_open:
            game.slap(seat, now=now)
        else:
            game.flip(seat, now=now)
    return {
        "schema": 1,
        "version": 163,
        "code": "K7QX",
        "phase": "playing",
        "first": 0,
        "games_played": 2,
        "people": [
            {
                "id": f"person-{i:02d}",
                "name": f"Player number {i}",
                "token_hash": "9f" * 32,
                "host": i == 0,
                "disconnected_for": None if i else 3.5,
            }
            for i in range(6)
        ],
        "seats": ["person-00", "person-01", "person-02", {"bot": "hard", "name": "Robo"}],
        "game": game.to_dict(),
    }


async def measure(label: str, url: str, snapshot: dict[str, object], saves: int) -> None:
    store = open_store(url)
    await store.open()
    walls: list[float] = []
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    loop_start = time.thread_time()  # this thread runs the event loop: the game's own time
    for i in range(saves):
        snapshot["version"] = i
        began = time.perf_counter()
        await store.save("K7QX", snapshot)
        walls.append(time.perf_counter() - began)
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    loop_cpu = time.thread_time() - loop_start

    rooms = 100
    began = time.perf_counter()
    for _ in range(5):
        await asyncio.gather(*(store.save(f"R{r:03d}", snapshot) for r in range(rooms)))
    burst = (time.perf_counter() - began) / 5
    ms = sorted(w * 1000 for w in walls)
    print(
        f"{label:<22} {saves / wall:8.0f} saves/s"
        f"   per save: median {statistics.median(ms):.3f} ms,"
        f" p95 {ms[int(len(ms) * 0.95)]:.3f} ms, CPU {cpu / saves * 1000:.3f} ms"
        f" (on the loop {loop_cpu / saves * 1000:.3f} ms)"
        f"   {rooms} rooms at once: {burst * 1000:.0f} ms"
    )
    await store.close()


async def main(saves: int) -> None:
    snapshot = mid_game_table()
    size = len(json.dumps(snapshot, separators=(",", ":")))
    print(f"snapshot: {size} bytes of JSON (4 seats, 6 people, mid-game); {saves} saves each")
    with tempfile.TemporaryDirectory() as work:
        await measure("memory", "memory", snapshot, saves)
        await measure("sqlite (WAL, FULL)", f"sqlite:///{work}/tables.db", snapshot, saves)
        with RedisServer(Path(work) / "redis") as server:
            await measure("redis (no persistence)", server.url, snapshot, saves)
        with RedisServer(Path(work) / "redis-aof", append_only=True) as server:
            await measure("redis (AOF everysec)", server.url, snapshot, saves)


if __name__ == "__main__":
    count = int(sys.argv[sys.argv.index("--saves") + 1]) if "--saves" in sys.argv else 2000
    asyncio.run(main(count))
