"""What guessing room codes takes against `python -m app` with the deployed budget of wrong
codes (SLAPJACK_WRONG_CODES_PER_MINUTE, _BURST, SLAPJACK_GUESS_WAVE_PER_MINUTE at their
defaults): one address guessing as fast as it may, then a botnet of many addresses at once,
while a person with a right code keeps opening their table. Prints figures, asserts nothing;
docs/operations.md ("What one address, and a botnet, can do") quotes them.

    .venv/bin/python -m bench.guessing [--seconds 120] [--bots 200] [--rooms 1000] [--no-pin]

The server is pinned to core 0 and this script to core 1 (`--no-pin`: neither). Guessers
are addresses of their own through the trusted proxy (X-Forwarded-For from loopback), as
nginx hands them to the app; every guess is `GET /api/rooms/CODE` with a random code
(every other way to test a code spends the same budget: tests/app/test_strangers.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from app.ops.config import Settings
from app.tables.registry import CODE_ALPHABET, CODE_LENGTH

ROOT = Path(__file__).resolve().parents[1]
CODES = len(CODE_ALPHABET) ** CODE_LENGTH
MINUTES_A_YEAR = 365.25 * 24 * 60
WINDOW = 10.0  # seconds: the botnet's answers are counted per window
REFUSED_PAUSE = 1.0  # seconds a refused guesser waits before trying again


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(port: int, pin: bool) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "SLAPJACK_HOST": "127.0.0.1",
        "SLAPJACK_PORT": str(port),
        "SLAPJACK_STORE": "memory",
        "SLAPJACK_LOG_LEVEL": "warning",
        # The bench opens its live rooms from a few addresses, and they must outlast it.
        "SLAPJACK_ROOMS_PER_MINUTE": "100000",
        "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "100000",
        "SLAPJACK_UNUSED_ROOM_SECONDS": "3600",
    }
    command = [sys.executable, "-m", "app"]
    if pin:
        command = ["taskset", "-c", "0", *command]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def random_code(rng: random.Random) -> str:
    return "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@dataclass
class Tally:
    """What a set of guessers got: statuses, and when each wrong code was answered."""

    statuses: Counter[int] = field(default_factory=Counter)
    answered_at: list[float] = field(default_factory=list)  # a 404: a wrong code answered
    hits: list[str] = field(default_factory=list)


async def guess(
    http: httpx.AsyncClient, address: str, until: float, tally: Tally, rng: random.Random
) -> None:
    headers = {"X-Forwarded-For": address}
    while time.monotonic() < until:
        code = random_code(rng)
        try:
            answer = await http.get(f"/api/rooms/{code}", headers=headers)
        except httpx.TransportError:  # a keep-alive connection the server closed meanwhile
            tally.statuses[0] += 1
            continue
        tally.statuses[answer.status_code] += 1
        if answer.status_code == 404:
            tally.answered_at.append(time.monotonic())
        elif answer.status_code == 200:
            tally.hits.append(code)
        elif answer.status_code == 429:
            # Refused: the guesser polls for its budget back (a flood of requests is another
            # matter: nginx's limits, docs/operations.md).
            await asyncio.sleep(REFUSED_PAUSE)


async def honest(url: str, codes: list[str], until: float) -> list[tuple[int, float]]:
    """A person opening their table (a right code) twice a second, on a connection of their
    own: each answer's status and seconds."""
    seen: list[tuple[int, float]] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                answer = await http.get(f"/r/{codes[len(seen) % len(codes)]}", headers=HONEST)
                status = answer.status_code
            except httpx.TransportError:  # counted as no answer: 0
                status = 0
            seen.append((status, time.monotonic() - started))
            await asyncio.sleep(0.5)
    return seen


HONEST = {"X-Forwarded-For": "192.0.2.200"}


async def open_rooms(http: httpx.AsyncClient, count: int) -> list[str]:
    codes = []
    for n in range(count):
        headers = {"X-Forwarded-For": f"192.0.2.{n % 100}"}
        answer = await http.post("/api/rooms", headers=headers)
        answer.raise_for_status()
        codes.append(answer.json()["code"])
    return codes


async def metric(http: httpx.AsyncClient, name: str) -> str:
    text = (await http.get("/metrics")).text
    found = re.findall(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
    return ", ".join(found)


def years(guesses_a_minute: float, rooms: int) -> float:
    """Years, on average, to hit one of `rooms` live rooms at this many wrong codes a minute:
    a guesser that never tries a code twice needs (codes + 1) / (rooms + 1) guesses."""
    return float((CODES + 1) / (rooms + 1) / guesses_a_minute / MINUTES_A_YEAR)


def per_minute(times: list[float], start: float, end: float) -> float:
    inside = [t for t in times if start <= t < end]
    return len(inside) / max(end - start, 1e-9) * 60


async def run(seconds: float, bots: int, rooms: int, pin: bool) -> None:
    settings = Settings()
    port = free_port()
    server = start_server(port, pin)
    if pin:
        os.sched_setaffinity(0, {1})
    print(f"load average before: {os.getloadavg()}")
    print(
        f"budget: {settings.wrong_codes_per_minute:g} wrong code a minute, burst "
        f"{settings.wrong_codes_burst}, wave above {settings.guess_wave_per_minute:g} a minute; "
        f"{CODES:,} codes ({len(CODE_ALPHABET)}^{CODE_LENGTH})"
    )
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=30, limits=limits
        ) as http:
            codes = await open_rooms(http, rooms)
            print(f"{len(codes)} live rooms")
            rng = random.Random(1)

            # One address, as fast as it may.
            one = Tally()
            start = time.monotonic()
            await guess(http, "203.0.113.1", start + seconds, one, rng)
            end = time.monotonic()
            steady = per_minute(one.answered_at, start + 1, end)
            print(
                f"one address, {seconds:g} s: {len(one.answered_at)} wrong codes answered "
                f"({per_minute(one.answered_at, start, start + 1) / 60:.0f} in its first second), "
                f"{one.statuses[429]} refused, {len(one.hits)} hits; after the burst "
                f"{steady:.2f} a minute"
            )
            rate = settings.wrong_codes_per_minute
            print(
                f"  at {rate:g} a minute: one of {rooms} rooms in {years(rate, rooms):.2f} years "
                f"on average ({(CODES + 1) / (rooms + 1):,.0f} guesses)"
            )

            # A botnet: many addresses at once, and a person with a right code meanwhile.
            net = Tally()
            start = time.monotonic()
            until = start + seconds
            addresses = [f"198.51.{n // 250}.{n % 250 + 1}" for n in range(bots)]
            person = asyncio.ensure_future(honest(f"http://127.0.0.1:{port}", codes, until))
            await asyncio.gather(
                *(guess(http, a, until, net, random.Random(n)) for n, a in enumerate(addresses))
            )
            end = time.monotonic()
            windows = [
                round(per_minute(net.answered_at, start + w, start + w + WINDOW))
                for w in range(0, int(seconds), int(WINDOW))
            ]
            # What the same addresses would have been answered with no wave: each its
            # burst, then its rate (a guesser that never stops).
            plain = bots * (settings.wrong_codes_burst + rate * seconds / 60)
            tail = per_minute(net.answered_at, max(start, end - 60), end)
            cost = float(await metric(http, "slapjack_wrong_code_cost") or 1)
            print(
                f"a botnet of {bots} addresses, {seconds:g} s: {len(net.answered_at)} wrong codes "
                f"answered (with no wave: {plain:,.0f}, {plain / max(len(net.answered_at), 1):.1f}"
                f" times as many), {net.statuses[429]} refused, {len(net.hits)} hits"
            )
            print(f"  answered a minute, per {WINDOW:g} s: {windows}")
            print(
                f"  the last 60 s: {tail:.1f} a minute ({tail / bots:.3f} per address; with no "
                f"wave {bots * rate:g}); the last wrong code cost {cost:.2f}"
            )
            seen = await person
            ok = sum(1 for status, _ in seen if status == 200)
            waits = sorted(took for _, took in seen)
            print(
                f"a person with the link, meanwhile: {ok}/{len(seen)} answered 200, median "
                f"{statistics.median(waits) * 1000:.1f} ms, slowest {waits[-1] * 1000:.1f} ms"
            )
            counted = await metric(http, "slapjack_code_lookups_total")
            print(f"look-ups counted: {counted} (found, missing, refused)")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"load average after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--no-pin", dest="pin", action="store_false")
    args = parser.parse_args()
    asyncio.run(run(args.seconds, args.bots, args.rooms, args.pin))


if __name__ == "__main__":
    main()
