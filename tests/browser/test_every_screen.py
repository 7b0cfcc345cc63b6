"""Every screen a table is seen on, in each engine (Chromium, Firefox, WebKit), on the LAN
address: phones, a tablet, laptops and televisions, with twenty-letter names (and single
twenty-letter words) on every seat, your own too, and a bot's BOT tag in the top seat.
Every name whole (wrapped only between words, shrunk, never broken inside a word, never an
ellipsis), the seats on the felt, clear of each other, of the pile and of the top bar, and
the controls on the screen. The big screen (/r/CODE/tv) with 2, 5 and 8 seats at every
television size. The screenshots are there to be looked at:
tests/browser/screenshots/ENGINE-*.png."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from crowd import LONG_NAMES, Guest, leave_all, open_room, seat_guests
from engines import EnginePage, OpenPage, lan_url
from party import names_whole
from screen_checks import (
    EVERY_SCREEN,
    PHONES,
    TABLET,
    TVS,
    in_sight,
    page_height,
    seats_apart,
)

# Your own name on your own seat: two words, the first one long.
MY_NAME = "Chromebook Christine"
SEAT_NAMES = "#seats .name-text"
# The lobby (it scrolls: the host's controls and the invitation, the table under them) on the
# phones, the tablet and a laptop: the larger screens lay it out as the laptop does.
LOBBY_SCREENS = {**PHONES, **TABLET, "1366x768": (1366, 768)}
PLAYING_WITH = (
    "(n) => document.body.dataset.phase === 'playing'"
    " && document.querySelectorAll('#seats .seat-cards').length === n"
)
CONNECTED = "() => document.getElementById('conn').dataset.status === 'connected'"


async def sit_at(page: EnginePage, link: str, name: str) -> None:
    await page.goto(link)
    await page.type("#name-input", name)
    await page.click("#name-form button[type=submit]")
    await page.wait_for("() => document.querySelector('.seat--you') !== null")


async def photograph(page: EnginePage, shots: Path, name: str) -> None:
    await page.screenshot(shots / f"{page.engine}-{name}.png")


@pytest.mark.engines
@pytest.mark.timeout(240)
async def test_eight_long_names_fit_every_screen(
    base_url: str, open_page: OpenPage, engine: str, screenshots: Path
) -> None:
    code = await open_room(base_url)
    page = await open_page(engine, 360, 740)
    await sit_at(page, lan_url(f"{base_url}/r/{code}"), MY_NAME)
    # Seats 1-3, a bot in the top seat (its BOT tag nearest the top bar), seats 5-7.
    guests: list[Guest] = await seat_guests(base_url, code, LONG_NAMES[1:4])
    await page.click("[data-bot=easy]")
    await page.wait_for("() => document.querySelectorAll('.seat-tag--bot').length === 1")
    guests += await seat_guests(base_url, code, LONG_NAMES[5:])
    problems: list[str] = []
    try:
        await page.wait_for("() => document.querySelectorAll('#seats .seat--empty').length === 0")
        for screen, (width, height) in LOBBY_SCREENS.items():
            size = {"width": width, "height": height}
            await page.set_viewport(width, height)
            await page.next_frame()
            where = f"{engine} lobby {screen}"
            problems += await names_whole(page, where, SEAT_NAMES, size, scrolls=True)
            problems += await seats_apart(page, where, size, scrolls=True)
            problems += await in_sight(page, where, size, ["#start"])
            await photograph(page, screenshots, f"lobby-8-{screen}")

        await page.click("#start")
        await page.wait_for(PLAYING_WITH, 8)
        for screen, (width, height) in EVERY_SCREEN.items():
            size = {"width": width, "height": height}
            await page.set_viewport(width, height)
            await page.next_frame()
            where = f"{engine} playing {screen}"
            problems += await names_whole(page, where, SEAT_NAMES, size)
            problems += await seats_apart(page, where, size)
            problems += await in_sight(page, where, size, ["#flip", ".topbar", "#pile"])
            problems += await page_height(page, where, size)
            await photograph(page, screenshots, f"table-8-{screen}")
        problems += await page.errors()
    finally:
        await leave_all(guests)
    assert problems == [], "\n".join(problems)


async def tv_table(base_url: str, seats: int) -> tuple[str, list[Guest]]:
    """A table of `seats` long-named people playing (the first is the host)."""
    code = await open_room(base_url)
    guests = await seat_guests(base_url, code, LONG_NAMES[:seats])
    reply = await guests[0].call("start")
    assert reply["ok"], reply
    return code, guests


@pytest.mark.engines
@pytest.mark.timeout(240)
async def test_the_big_screen_fits_every_television(
    base_url: str, open_page: OpenPage, engine: str, screenshots: Path
) -> None:
    tv = await open_page(engine, 1280, 720, touch=False)
    problems: list[str] = []
    for seats in (2, 5, 8):
        code, guests = await tv_table(base_url, seats)
        try:
            await tv.goto(lan_url(f"{base_url}/r/{code}/tv"))
            await tv.wait_for(CONNECTED)
            await tv.wait_for(PLAYING_WITH, seats)
            for screen, (width, height) in TVS.items():
                size = {"width": width, "height": height}
                await tv.set_viewport(width, height)
                await tv.next_frame()
                where = f"{engine} tv {seats} seats {screen}"
                problems += await names_whole(tv, where, SEAT_NAMES, size)
                problems += await seats_apart(tv, where, size)
                problems += await page_height(tv, where, size)
                await photograph(tv, screenshots, f"tv-{seats}-{screen}")
        finally:
            await asyncio.gather(leave_all(guests))
    problems += await tv.errors()
    assert problems == [], "\n".join(problems)
