"""axe-core (pinned in package-lock.json, injected from node_modules: no network) on every
state a person meets: home, the invitation, the lobby, the table playing, with a trigger
showing and frozen, game over, a spectator's table, the big screen (lobby, playing, game
over) and the 404 page. Any violation fails, whatever axe rates its impact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from axe_check import axe
from browser_table import WAIT_MS, Person
from crowd import Guest
from playwright.async_api import Browser, expect

ROOT = Path(__file__).resolve().parents[2]
# The page's Content-Security-Policy refuses inline scripts, and axe arrives as one.
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "has_touch": True,
    "is_mobile": True,
    "color_scheme": "dark",
    "bypass_csp": True,
}
DESKTOP = {"viewport": {"width": 1366, "height": 768}, "color_scheme": "light", "bypass_csp": True}
COLLECT_MS = 1000  # engine/rules.py: the default collect pause after a take


async def open_room(base_url: str, rules: dict[str, Any]) -> str:
    async with httpx.AsyncClient(base_url=base_url) as http:
        answer = await http.post("/api/rooms", json={"rules": rules})
        answer.raise_for_status()
        code: str = answer.json()["code"]
        return code


async def seat_me(person: Person, link: str, name: str) -> None:
    """Opens the table (giving a name if asked: the device may remember one) and sits."""
    await person.page.goto(link)
    gate, lobby = person.page.locator("#name-gate"), person.page.locator("#lobby-status")
    await person.page.wait_for_function(
        "() => !document.getElementById('name-gate').hidden"
        " || document.getElementById('lobby-status').textContent !== ''",
        timeout=WAIT_MS,
    )
    if await gate.is_visible():
        await person.join(link, name)
    await expect(lobby).not_to_be_empty(timeout=WAIT_MS)
    await person.seated()
    await expect(person.page.locator(".seat--you")).to_have_count(1, timeout=WAIT_MS)


async def flip_until_a_trigger(host: Person, guest: Guest) -> None:
    """Flips in turn (the host with F, the guest through its socket) until one shows."""
    page = host.page
    for _ in range(200):
        table = await host.table()
        if table["trigger"]:
            return
        if table["myTurn"]:
            await host.flip()
        else:
            before = await page.text_content("#pile-count")
            reply = await guest.call("flip")
            if not reply["ok"]:  # the page had not drawn the newest turn yet: wait for it
                assert reply["error"]["code"] == "not_your_turn", reply
                await expect(page.locator("body")).to_have_attribute(
                    "data-turn", "mine", timeout=WAIT_MS
                )
                continue
            # The guest's card reached the host's page: the pile grew (or a trigger shows).
            await page.wait_for_function(
                "(count) => document.body.dataset.trigger"
                " || document.getElementById('pile-count').textContent !== count",
                arg=before,
                timeout=WAIT_MS,
            )
    raise AssertionError("no trigger in 200 flips")


@pytest.mark.timeout(240)  # about a minute on a quiet machine; past 120 s at a load average of 40
async def test_axe_finds_nothing_serious_in_any_state(base_url: str, browser: Browser) -> None:
    problems: list[str] = []
    person = await Person.open(browser, "phone", PHONE, flip_key="f")
    page = person.page
    await page.goto(f"{base_url}/")
    problems += await axe(page, "home")
    await page.goto(f"{base_url}/r/ZZZZZZ")
    problems += await axe(page, "404")

    # Game over: a table with the shortest time limit there is, on the big screen too. Its
    # game starts first and runs out while the other table's states are checked.
    timed = await Person.open(browser, "phone at the timed table", PHONE)
    timed_code = await open_room(base_url, {"time_limit": 10})
    timed_link = f"{base_url}/r/{timed_code}"
    await seat_me(timed, timed_link, "Ann")
    screen_context = await browser.new_context(
        viewport={"width": 1920, "height": 1080}, bypass_csp=True
    )
    tv = await screen_context.new_page()
    await tv.goto(f"{timed_link}/tv")
    await expect(tv.locator("#conn")).to_have_attribute("data-status", "connected")
    problems += await axe(tv, "big screen, lobby")
    leaver = await Guest(base_url, timed_code, "Bob").connect()
    try:
        await leaver.sit()
        await timed.page.click("[data-bot=easy]")
        await expect(timed.page.locator(".seat-tag--bot")).to_have_count(1, timeout=WAIT_MS)
        problems += await axe(timed.page, "lobby with a bot")
        await timed.page.click("#start")
        await timed.wait_phase("playing")
    finally:
        # Bob's connection goes: his seat greys ("away") beside the bot's, behind game over.
        await leaver.close()
    await expect(timed.page.locator(".seat--offline")).to_have_count(1, timeout=WAIT_MS)
    problems += await axe(timed.page, "playing, a player away")

    # A long freeze: the frozen table stays long enough to be checked.
    code = await open_room(base_url, {"freeze_seconds": 10})
    link = f"{base_url}/r/{code}"
    await page.goto(link)
    await expect(page.locator("#name-gate")).to_be_visible()
    problems += await axe(page, "invite")
    await seat_me(person, link, "Ann")
    guest = await Guest(base_url, code, "Bob").connect()
    await guest.sit()
    await expect(page.locator("#start")).to_be_visible(timeout=WAIT_MS)
    problems += await axe(page, "lobby")

    watcher = await Person.open(browser, "desktop", DESKTOP)
    try:
        await watcher.join(link, "Cat")
        await watcher.seated()  # a free seat: seated on arrival; she stands up to watch
        await watcher.press("#stand")
        await expect(watcher.page.locator("[data-sit]").first).to_be_visible(timeout=WAIT_MS)
        problems += await axe(watcher.page, "lobby, watching")  # with the free seats' buttons
        await page.click("#start")
        await person.wait_phase("playing")
        await watcher.wait_phase("playing")
        problems += await axe(page, "playing")
        problems += await axe(watcher.page, "spectator")
        screen = await watcher.context.new_page()
        await screen.goto(f"{link}/tv")
        await expect(screen.locator("body")).to_have_attribute("data-phase", "playing")
        problems += await axe(screen, "big screen")
        await screen.close()
        await flip_until_a_trigger(person, guest)
        problems += await axe(page, "trigger")
        await page.keyboard.press("Space")
        await page.wait_for_function("() => !document.body.dataset.trigger", timeout=WAIT_MS)
        # A tap during the collect pause after a take counts as late for the taken pile
        # (free): wait that pause out, then slap a pile with nothing to slap on.
        await page.wait_for_timeout(COLLECT_MS + 300)
        await page.keyboard.press("Space")
        await expect(page.locator("#freeze")).to_be_visible(timeout=WAIT_MS)
        problems += await axe(page, "frozen")
    finally:
        await guest.close()

    timed_page = timed.page
    await expect(timed_page.locator("body")).to_have_attribute("data-phase", "over", timeout=60_000)
    problems += await axe(timed_page, "game over")
    await timed_page.locator(".over-stats summary").click()
    problems += await axe(timed_page, "game over, all stats")
    await expect(tv.locator("body")).to_have_attribute("data-phase", "over")
    problems += await axe(tv, "big screen, game over")
    assert problems == [], "\n".join(problems)
    assert [p for p in person.problems if "status of 404" not in p] == []
    assert timed.problems == []
