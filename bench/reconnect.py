"""How soon a phone's page is back at its table after a network drop, in each engine.

    .venv/bin/python -m bench.reconnect --rounds 5 --seconds 40

Serves the app (`python -m app`, pinned to core 0) and opens one page in each of the three
engines the players' phones run (Chromium, Firefox, WebKit: tests/browser/engines.py, this
process and the browsers pinned to core 1), each at a table of its own on the LAN address
(http://party.test:PORT/, no secure context). Each round cuts every page's network at once
for `--seconds` (Chromium and Firefox told they are offline, as a phone losing its Wi-Fi;
WebKit's connections reset and refused by the tests' LAN proxy, with no word from the
browser), restores it, and times each page from the network's return to its connection's,
as the page itself saw both (tests/browser/reconnect.py). Prints, per engine, the seconds
of each round, their median and maximum, and the transport that brought each page back.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_server import (  # noqa: E402
    CHROMIUM_ARGS,
    FAST_SETTINGS,
    chromium_path,
    wait_until_healthy,
)
from engines import (  # noqa: E402
    ENGINES,
    ChromiumPage,
    EnginePage,
    FirefoxBrowser,
    FirefoxPage,
    WebKitBrowser,
    WebKitPage,
    free_port,
)
from playwright.async_api import async_playwright  # noqa: E402
from reconnect import Return, drop_and_return, seated_page  # noqa: E402

SERVER_CORE, BENCH_CORE = 0, 1


async def measure(base_url: str, rounds: int, seconds: float) -> dict[str, list[Return]]:
    firefox, webkit = await FirefoxBrowser().start(), await WebKitBrowser().start()
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        pages: list[EnginePage] = [
            await ChromiumPage.open(chromium, 390, 844, touch=True),
            await FirefoxPage.open(firefox, 390, 844),
            await WebKitPage.open(webkit, 390, 844),
        ]
        try:
            for page in pages:
                await seated_page(page, base_url, "Ann")
            found: dict[str, list[Return]] = {engine: [] for engine in ENGINES}
            for number in range(1, rounds + 1):
                returns = await asyncio.gather(*(drop_and_return(p, seconds) for p in pages))
                for back in returns:
                    found[back.engine].append(back)
                said = ", ".join(f"{b.engine} {b.seconds:.3f} s" for b in returns)
                print(f"round {number}: {said}", flush=True)
            return found
        finally:
            for page in pages:
                await page.close()
            await chromium.close()
            await firefox.close()
            await webkit.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=40.0, help="each drop's length")
    args = parser.parse_args()
    port = free_port()
    env = {**os.environ, **FAST_SETTINGS, "SLAPJACK_HOST": "127.0.0.1", "SLAPJACK_PORT": str(port)}
    server = subprocess.Popen(
        ["taskset", "-c", str(SERVER_CORE), sys.executable, "-m", "app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    os.sched_setaffinity(0, {BENCH_CORE})  # the browsers this process starts inherit it
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_until_healthy(base_url, server)
        found = asyncio.run(measure(base_url, args.rounds, args.seconds))
    finally:
        server.terminate()
        server.wait(10)
    print(f"\n{args.rounds} drops of {args.seconds:g} s; load average {os.getloadavg()}")
    print("| engine | back after the network returns, each drop (s) | median | max | by |")
    print("| --- | --- | --- | --- | --- |")
    for engine, returns in found.items():
        times = [r.seconds for r in returns]
        each = ", ".join(f"{t:.2f}" for t in times)
        by = ", ".join(sorted({r.transport for r in returns}))
        print(f"| {engine} | {each} | {statistics.median(times):.2f} | {max(times):.2f} | {by} |")


if __name__ == "__main__":
    main()
