"""A server restart in the middle of a game, seen from the browser: the page says the server
is restarting, reconnects by itself (no refresh) and shows the same table, which plays on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_check import axe
from browser_server import FAST_SETTINGS, ROOT, free_port, wait_until_healthy
from browser_table import WAIT_MS, Person, start_the_game
from crowd import open_room
from playwright.async_api import Browser, expect
from whole_game import SHORT_GAME, play_to_the_end

RESTARTING = "Server restarting: back in a moment"
# Long enough for a few flips, the restart's drain and a game played on after it on a busy
# machine (the table's clock stands still while no process holds it).
RESTART_GAME = {**SHORT_GAME, "time_limit": 30}
# What every page shows of the table itself (each shows its own seat, cards and turn).
PILE = ("phase", "trigger", "pileCount", "pileId", "top")
SHUTDOWN_BOUND = 30  # seconds: drain (2 s) + closing connections (8 s) + exit, generously
# The browser's own lines about a server that is away: expected here, and nothing else.
AWAY = ("WebSocket connection", "Failed to load resource", "net::ERR_CONNECTION_REFUSED")


class App:
    """`python -m app` on one loopback port with a SQLite store, started and stopped again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            **FAST_SETTINGS,
            "SLAPJACK_HOST": "127.0.0.1",
            "SLAPJACK_PORT": str(self.port),
            "SLAPJACK_STORE": f"sqlite:///{workdir}/tables.db",  # an absolute path
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=self.env)
        wait_until_healthy(self.url, self.process)

    def stop(self) -> None:
        """SIGTERM, as `docker stop` sends it, and the process's end."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=SHUTDOWN_BOUND) in (0, -signal.SIGTERM)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=SHUTDOWN_BOUND)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    running = App(tmp_path)
    running.start()
    try:
        yield running
    finally:
        running.kill()


async def what_everyone_sees(people: list[Person]) -> dict[str, dict[str, object]]:
    """Each page's table, once every page has drawn the newest pile (a page may be a state
    behind the last flip for a moment)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        tables = {person.label: await person.table() for person in people}
        piles = {tuple(table[key] for key in PILE) for table in tables.values()}
        if len(piles) == 1:
            return tables
        assert time.monotonic() < deadline, tables
        await asyncio.sleep(0.1)


async def same_table(person: Person, before: dict[str, object]) -> None:
    """Waits until the page shows the table it showed before the restart."""
    page = person.page
    await expect(page.locator("#conn")).to_have_attribute(
        "data-status", "connected", timeout=WAIT_MS
    )
    await expect(page.locator("#fatal")).to_be_hidden()
    deadline = time.monotonic() + WAIT_MS / 1000
    while (now := await person.table()) != before:
        assert time.monotonic() < deadline, (person.label, before, now)
        await page.wait_for_timeout(100)


@pytest.mark.timeout(300)
async def test_a_game_survives_a_server_restart_with_the_page_reconnecting_by_itself(
    app: App, browser: Browser
) -> None:
    phone = await Person.open(
        browser, "phone", {"viewport": {"width": 390, "height": 844}, "bypass_csp": True}
    )
    bob = await Person.open(browser, "desktop Bob", {"viewport": {"width": 1280, "height": 800}})
    people = [phone, bob]
    link = f"{app.url}/r/{await open_room(app.url, RESTART_GAME)}"
    await phone.join(link, "Ann")
    await phone.seated()  # the first to come is the host
    await bob.join(link, "Bob")
    await bob.seated()  # an invited friend sits at once
    await start_the_game(phone, people, players=2)
    for _ in range(3):  # a few cards on the pile, each flipped by its player
        for person in people:
            if (await person.table())["myTurn"] and not (await person.table())["trigger"]:
                await person.flip()
    before = await what_everyone_sees(people)
    assert before["phone"]["pileCount"] > 0
    for person in people:  # marks this very document: a reload would lose it
        await person.page.evaluate("() => { window.sameDocument = true; }")

    stopping = asyncio.create_task(asyncio.to_thread(app.stop))
    for person in people:  # said once: the offline notice, no banner, no toast
        await expect(person.page.locator("#offline-text")).to_have_text(RESTARTING, timeout=WAIT_MS)
        assert RESTARTING not in await person.page.locator("#banner, #toasts").all_inner_texts()
    assert await axe(phone.page, "restarting") == []  # the dimmed table behind the notice
    await stopping
    for person in people:  # the old process is gone: the page says so and waits, no gate
        await expect(person.page.locator("#conn-text")).to_have_text(RESTARTING)
        await expect(person.page.locator("#fatal")).to_be_hidden()
    await asyncio.to_thread(app.start)

    for person in people:
        await same_table(person, before[person.label])
        assert await person.page.evaluate("() => window.sameDocument === true")
    await play_to_the_end(people)
    for person in people:
        await person.wait_phase("over")
        unexpected = [p for p in person.problems if not any(away in p for away in AWAY)]
        assert unexpected == [], f"{person.label}: {unexpected}"
