"""An event in the browser, from its QR code to its podium: nine players (six people on phones
and three bots the organiser adds) at three tables of three, each phone sent by the event to
its own table, the tables' winners to the final, which the stage (/e/CODE/tv) shows at full
size on the table's own big screen, then the podium and the recap. The stage is read at
1280x720 and 1920x1080, in English and in Malay: every name whole, large enough to read
across a room, on the screen. "More than eight?" on the home page opens an event whose
organiser the page becomes.

The tables' games end at their time limit (10 s, the least the rules allow, set through the
API: the home page's form offers whole minutes), so a round takes seconds, not minutes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from axe_check import axe
from browser_table import DESKTOP, PHONE, WAIT_MS, Person
from crowd import LONG_NAMES
from engines import EnginePage, OpenPage, lan_url
from party import names_whole, settle
from playwright.async_api import Browser, Page, expect

from app.web.qr import qr_svg

TIME_LIMIT = 10
# What a whole event may take on a loaded machine: two rounds of a 10 s game, the pause
# between them and every page's moves.
EVENT_MS = 150_000
STAGE_SIZES = {
    "1280x720": {"width": 1280, "height": 720},
    "1920x1080": {"width": 1920, "height": 1080},
}
# The least size of a name on the stage, read across a room: at 1920x1080 and (scaled to the
# screen) at 1280x720; the podium's larger.
STAGE_NAME_PX = {"1280x720": 18.0, "1920x1080": 27.0}
PODIUM_NAME_PX = {"1280x720": 28.0, "1920x1080": 40.0}
PEOPLE = [
    "Maximiliana Rosewood",
    "Aisyah binti Rahman",
    "Bartholomewsonsmithy",
    "Zhang Wei",
    "Ola",
    "Nur Aleesya Sofea",
]


async def open_event(base_url: str, **options: Any) -> tuple[str, str]:
    body = {
        "name": "Year 2 Sports Day",
        "organiser": "Ms Lee",
        "size": 3,
        "rules": {"time_limit": TIME_LIMIT},
        **options,
    }
    async with httpx.AsyncClient(base_url=base_url) as http:
        answer = await http.post("/api/events", json=body)
    assert answer.status_code == 201, answer.text
    opened = answer.json()
    return opened["code"], opened["token"]


async def as_organiser(
    browser: Browser, base_url: str, code: str, token: str, device: dict[str, Any]
) -> Person:
    """The organiser's screen: the token the home page keeps when it opens an event."""
    person = await Person.open(browser, "organiser", device)
    await person.context.add_init_script(
        f"localStorage.setItem('slapjack.token.{code}', JSON.stringify('{token}'))"
    )
    await person.page.goto(f"{base_url}/e/{code}")
    await expect(person.page.locator("#event-start")).to_be_visible(timeout=WAIT_MS)
    return person


async def stage_problems(page: Page, where: str, size_name: str, podium: bool = False) -> list[str]:
    size = STAGE_SIZES[size_name]
    await page.set_viewport_size(size)
    await settle(page)
    least = PODIUM_NAME_PX[size_name] if podium else STAGE_NAME_PX[size_name]
    selector = ".event-place .event-name" if podium else "#play .event-name"
    problems = await names_whole(page, f"{where} {size_name}", selector, size, min_px=least)
    overflow = await page.evaluate("() => document.documentElement.scrollWidth > innerWidth + 1")
    if overflow:
        problems.append(f"{where} {size_name}: the stage is wider than the screen")
    return problems


async def on_phone(phone: EnginePage, function: str, arg: Any = None, ms: float = WAIT_MS) -> Any:
    """`phone.wait_for`, across the page's own moves from one address to another (a page
    that is leaving has no script to ask: asked again)."""
    async with asyncio.timeout(ms / 1000):
        while True:
            try:
                return await phone.wait_for(function, arg, timeout_ms=ms)
            except TimeoutError:
                raise
            except Exception:  # the page navigated while being asked
                await asyncio.sleep(0.1)


YOU_SAY = "(text) => (document.getElementById('you-text')?.textContent || '').includes(text)"
AT_A_TABLE = """() => /^\\/r\\/[A-Z0-9]{6}$/.test(location.pathname)
  && document.querySelector('.seat--you') !== null
  && (document.getElementById('heat-line')?.textContent || '').includes('Year 2 Sports Day')
  && location.pathname.slice(3)"""
AT_THE_PODIUM = """(code) => location.pathname === `/e/${code}`
  && !document.getElementById('podium-card').hidden
  && document.getElementById('you-text').textContent"""


@pytest.mark.timeout(300)
async def test_nine_players_from_the_qr_code_to_the_podium(
    browser: Browser, base_url: str, open_page: OpenPage, screenshots: Path
) -> None:
    """The six people are phones of the engine seam (engines.py: Chromium here, on the LAN
    address, no secure context); the organiser's laptop and the stage are Playwright's."""
    code, token = await open_event(base_url)
    # axe-core is injected into these pages (bypass_csp: the pages refuse inline scripts).
    organiser = await as_organiser(browser, base_url, code, token, {**DESKTOP, "bypass_csp": True})
    stage = await Person.open(
        browser, "stage", {"viewport": STAGE_SIZES["1920x1080"], "bypass_csp": True}
    )
    await stage.page.goto(f"{base_url}/e/{code}/tv")

    # The QR code on the organiser's screen is the event's link, as shown beside it.
    link = (await organiser.page.locator("#event-url").text_content() or "").strip()
    assert link.endswith(f"/e/{code}")
    async with httpx.AsyncClient(base_url=base_url) as http:
        shown = (await http.get(f"/e/{code}/qr.svg")).content
    assert shown == qr_svg(link)

    phones: dict[str, EnginePage] = {}
    for name in PEOPLE:  # each scans it: the link, on the Wi-Fi's address
        phone = await open_page("chromium", 390, 844)
        await phone.goto(lan_url(link))
        await phone.type("#name-input", name)
        await phone.click("#name-form [type=submit]")
        await on_phone(phone, YOU_SAY, name)
        phones[name] = phone
    for _ in range(3):
        await organiser.page.click("[data-bot=hard]")
    await expect(stage.page.locator("#players li")).to_have_count(9, timeout=WAIT_MS)
    await stage.page.screenshot(path=screenshots / "event-lobby-1920x1080.png")
    first = phones[PEOPLE[0]]
    problems = await axe(organiser.page, "organiser's lobby") + await axe(stage.page, "stage")
    problems += await axe(first, "a phone in the lobby")
    problems += await stage_problems(stage.page, "lobby", "1920x1080")
    problems += await stage_problems(stage.page, "lobby", "1280x720")
    await stage.page.screenshot(path=screenshots / "event-lobby-1280x720.png")
    await stage.page.set_viewport_size(STAGE_SIZES["1920x1080"])

    await organiser.page.click("#event-start")
    # Paused at once, as an organiser may: the heats are held while every screen is read (a
    # heat's 10 s game could end before a loaded machine got round to the stage); a phone
    # reaching its held table is seated there and told why nothing moves.
    pause = organiser.page.locator("#event-pause")
    await expect(pause).to_have_text("Pause", timeout=WAIT_MS)
    await pause.click()
    await expect(pause).to_have_text("Go on", timeout=WAIT_MS)
    tables = set()
    for phone in phones.values():  # each phone goes straight to its own table, seated there
        tables.add(await on_phone(phone, AT_A_TABLE))
        if phone is first:
            said = "(t) => document.getElementById('offline-text')?.textContent.startsWith(t)"
            await on_phone(first, said, "Paused by the organiser")  # held, and says why
            problems += await axe(first, "a heat")
            await first.screenshot(screenshots / "event-phone-heat.png")
    assert 1 <= len(tables) <= 3  # three tables, one of which may be all bots
    await expect(stage.page.locator("#tables .event-table")).to_have_count(3, timeout=WAIT_MS)
    await pause.click()  # the heats are dealt as they go on, and held again for the stage
    await expect(pause).to_have_text("Pause", timeout=WAIT_MS)
    await expect(stage.page.locator(".event-cards").first).not_to_be_empty(timeout=WAIT_MS)
    await pause.click()
    await expect(pause).to_have_text("Go on", timeout=WAIT_MS)
    await stage.page.screenshot(path=screenshots / "event-heats-1920x1080.png")
    problems += await axe(stage.page, "the stage's heats")
    problems += await stage_problems(stage.page, "heats", "1920x1080")
    problems += await stage_problems(stage.page, "heats", "1280x720")
    await stage.page.screenshot(path=screenshots / "event-heats-1280x720.png")
    await stage.page.set_viewport_size(STAGE_SIZES["1920x1080"])
    await pause.click()  # the heats go on
    await expect(pause).to_have_text("Pause", timeout=WAIT_MS)

    # The final: the stage goes to the final table's own big screen, then back to the podium.
    await stage.page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}/tv\?back="), timeout=EVENT_MS)
    await expect(stage.page.locator("#heat-line")).to_contain_text("The final", timeout=WAIT_MS)
    await expect(stage.page.locator("body")).to_have_attribute(
        "data-phase", "playing", timeout=WAIT_MS
    )
    await stage.page.screenshot(path=screenshots / "event-final-1920x1080.png")
    await stage.page.wait_for_url(re.compile(rf"/e/{code}/tv$"), timeout=EVENT_MS)
    await expect(stage.page.locator("#podium-card")).to_be_visible(timeout=WAIT_MS)
    await expect(stage.page.locator("#places li")).to_have_count(3)
    recap = await stage.page.locator("#event-recap li").all_text_contents()
    assert recap[0] == "2 rounds, 4 games"  # then the fastest hand and the most piles, if any
    assert all(line.startswith(("Fastest hand: ", "Most piles: ")) for line in recap[1:])
    await stage.page.screenshot(path=screenshots / "event-podium-1920x1080.png")
    problems += await axe(stage.page, "the podium")
    problems += await stage_problems(stage.page, "podium", "1920x1080", podium=True)
    problems += await stage_problems(stage.page, "podium", "1280x720", podium=True)
    await stage.page.screenshot(path=screenshots / "event-podium-1280x720.png")

    # Every phone ends on the event's page, told how it went for them.
    champion = (await stage.page.locator("#places li").first.text_content()) or ""
    for name, phone in phones.items():
        line = await on_phone(phone, AT_THE_PODIUM, code, EVENT_MS)
        assert line == (
            "You won the event!"
            if name in champion
            else "You're out. Well played! Follow the event here."
        )
        problems += await phone.errors()
    await first.screenshot(screenshots / "event-phone-podium.png")
    problems += await axe(first, "a phone at the podium")
    for person in (organiser, stage):
        problems += person.problems
    assert problems == []


@pytest.mark.timeout(240)
async def test_the_stage_reads_in_malay_at_both_sizes(
    browser: Browser, base_url: str, screenshots: Path
) -> None:
    """The lobby with the longest names there are, its tables waiting for their players, and
    a podium (an event of bots alone, at one table: its final), in Malay."""
    code, token = await open_event(base_url, size=4)
    stage = await Person.open(
        browser, "stage", {"viewport": STAGE_SIZES["1920x1080"], "locale": "ms-MY"}
    )
    await stage.context.add_cookies([{"name": "lang", "value": "ms", "url": base_url}])
    await stage.page.goto(f"{base_url}/e/{code}/tv")
    organiser = await as_organiser(browser, base_url, code, token, {**DESKTOP, "locale": "ms-MY"})
    phones = []
    for name in LONG_NAMES:
        phone = await Person.open(browser, name, PHONE)
        await phone.context.add_cookies([{"name": "lang", "value": "ms", "url": base_url}])
        await phone.page.goto(f"{base_url}/e/{code}")
        await phone.page.fill("#name-input", name)
        await phone.page.click("#name-form [type=submit]")
        await expect(phone.page.locator("#you-card")).to_be_visible(timeout=WAIT_MS)
        phones.append(phone)
    await expect(stage.page.locator("#players li")).to_have_count(len(LONG_NAMES), timeout=WAIT_MS)
    await expect(stage.page.locator("#players-title")).to_contain_text("pemain", timeout=WAIT_MS)
    problems = []
    for size_name in STAGE_SIZES:
        problems += await stage_problems(stage.page, "ms lobby", size_name)
        await stage.page.screenshot(path=screenshots / f"event-ms-lobby-{size_name}.png")
    for phone in phones:  # they stay on the event's page: their tables wait for them
        await phone.context.add_init_script("window.location.assign = () => {}")
    await organiser.page.click("#event-start")
    await expect(stage.page.locator("#tables .event-table")).to_have_count(2, timeout=WAIT_MS)
    await expect(stage.page.locator("#round-title")).to_contain_text("Pusingan", timeout=WAIT_MS)
    for size_name in STAGE_SIZES:
        problems += await stage_problems(stage.page, "ms heats", size_name)
        await stage.page.screenshot(path=screenshots / f"event-ms-heats-{size_name}.png")
    for person in (organiser, *phones):
        await person.context.close()

    bots_only, bots_token = await open_event(base_url, size=3)
    await stage.page.goto(f"{base_url}/e/{bots_only}/tv")
    organiser = await as_organiser(
        browser, base_url, bots_only, bots_token, {**DESKTOP, "locale": "ms-MY"}
    )
    for _ in range(3):
        await organiser.page.click("[data-bot=hard]")
    await organiser.page.click("#event-start")
    await stage.page.wait_for_url(re.compile(rf"/e/{bots_only}/tv$"), timeout=EVENT_MS)
    await expect(stage.page.locator("#podium-card")).to_be_visible(timeout=EVENT_MS)
    await expect(stage.page.locator("#podium-title")).to_have_text("Para juara")
    for size_name in STAGE_SIZES:
        problems += await stage_problems(stage.page, "ms podium", size_name, podium=True)
        await stage.page.screenshot(path=screenshots / f"event-ms-podium-{size_name}.png")
    problems += stage.problems + organiser.problems
    assert problems == []


async def test_more_than_eight_on_the_home_page_opens_an_event_run_by_its_opener(
    browser: Browser, base_url: str, screenshots: Path
) -> None:
    organiser = await Person.open(browser, "organiser", DESKTOP)
    page = organiser.page
    await page.goto(base_url)
    await page.click("#event-panel summary")
    await expect(page.locator("#event-rules select[name=time_limit]")).to_have_count(1)
    await page.fill("#event-name", "Aisyah's birthday")
    await page.fill("#event-organiser", "Mak Cik Ros")
    await page.select_option("#event-size", "5")
    await page.click("#event-button")
    await page.wait_for_url(re.compile(r"/e/[A-Z0-9]{6}$"), timeout=WAIT_MS)
    await expect(page.locator(".event-title-name")).to_have_text("Aisyah's birthday")
    await expect(page.locator("#event-start")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("#event-rules")).to_contain_text("Tables of 5")
    code = page.url.rsplit("/", 1)[1]
    async with httpx.AsyncClient(base_url=base_url) as http:
        summary = (await http.get(f"/api/events/{code}")).json()
    assert summary["name"] == "Aisyah's birthday" and summary["stage"] == "lobby"
    # The organiser's door, as a table's host's: locked, a stranger is refused; the invite
    # link lets its holder in.
    await page.click("#lock")
    await expect(page.locator("#locked-note")).to_be_visible(timeout=WAIT_MS)
    await page.click("#invite-new")
    await expect(page.locator("#invite-url")).to_have_value(re.compile(r"\?invite="))
    invite = urlsplit(await page.locator("#invite-url").input_value())
    stranger = await Person.open(browser, "stranger", PHONE)
    await stranger.page.goto(f"{base_url}/e/{code}")
    await stranger.page.fill("#name-input", "Eve")
    await stranger.page.click("#name-form [type=submit]")
    await expect(stranger.page.locator("#fatal-title")).to_have_text(
        "This event is locked", timeout=WAIT_MS
    )
    await stranger.page.screenshot(path=screenshots / "event-phone-locked.png")
    await stranger.page.goto(f"{base_url}{invite.path}?{invite.query}")
    await expect(stranger.page.locator("#you-text")).to_contain_text("Eve", timeout=WAIT_MS)
    await expect(page.locator("#players li")).to_have_count(1, timeout=WAIT_MS)
    await page.screenshot(path=screenshots / "event-organiser-locked.png")
    await stranger.page.screenshot(path=screenshots / "event-phone-lobby.png")
    assert organiser.problems == []
    await asyncio.sleep(0)
