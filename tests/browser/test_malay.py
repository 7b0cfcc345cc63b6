"""The whole product in Bahasa Melayu: two people whose browsers prefer Malay create, share
and play a game (a trigger, a wrong slap, the game over) and meet the 404 page, and none of
a list of English words is ever on their screens. The EN | BM switch changes the language
and the device remembers it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from browser_table import (
    BANNER_LOG,
    DESKTOP,
    PHONE,
    READ_TABLE,
    READY_TO_FLIP,
    WAIT_MS,
    Person,
    whose_turn,
)
from playwright.async_api import Browser, Route, expect
from whole_game import keep_playing

MALAY = {"locale": "ms-MY"}  # Accept-Language and navigator.languages both say Malay
# What the slap call says each time a trigger shows (the call is written as the trigger is).
NOTE_SLAP_CALLS = """() => {
  window.slapCalls = [];
  const note = () => document.body.dataset.trigger
    && window.slapCalls.push(document.getElementById('slap-call').textContent);
  const watched = {attributes: true, attributeFilter: ['data-trigger']};
  new MutationObserver(note).observe(document.body, watched);
  note();
}"""
SHORT_GAME = {"freeze_seconds": "1", "time_limit": "60"}
GAME_MS = 150_000  # an upper bound for the 1-minute game, not a timing expectation
# English a Malay player must never meet on screen (whole words, case-sensitive).
ENGLISH = [
    "Slap",
    "SLAP",
    "Flip",
    "Start",
    "Seat",
    "Join",
    "Leave",
    "Invite",
    "Copy",
    "Close",
    "Waiting",
    "wins",
    "win",
    "Game over",
    "card",
    "cards",
    "House rules",
    "Wrong",
    "pile",
    "Your",
    "You",
    "Take",
    "host",
    "Player",
    "Fastest",
    "Play again",
    "Frozen",
    "frozen",
    "connected",
    "Page not found",
    "No such table",
    "Table",
    "players",
    "turn",
    "Create",
    "name",
    "Decks",
    "Time limit",
    "none",
    "burns",
    "Lobby",
    "Add a bot",
    "Easy",
    "Hard",
    "watching",
    "Sound",
    "the",
    "and",
    "of",
    "to",
]
# What a person reads or hears: the text on screen (the screen reader's announcer included)
# and the labels, hints and titles a screen reader says.
SCREEN_TEXT = """() => [
  document.title,
  document.body.innerText,
  ...[...document.querySelectorAll('[aria-label], [placeholder], [alt], [title]')].flatMap(
    (node) => ['aria-label', 'placeholder', 'alt', 'title'].map((name) => node.getAttribute(name)),
  ).filter(Boolean),
].join('\\n')"""
A_PILE_WITHOUT_TRIGGER = f"""() => {{
  const table = ({READ_TABLE})();
  return table.phase === 'playing' && table.pileCards > 0 && !table.trigger && !table.frozen;
}}"""


async def no_english_on_screen(person: Person, where: str) -> str:
    text: str = await person.page.evaluate(SCREEN_TEXT)
    seen = [word for word in ENGLISH if re.search(rf"\b{re.escape(word)}\b", text)]
    assert seen == [], f"{where}: English on screen: {seen}\n{text}"
    assert await person.page.get_attribute("html", "lang") == "ms", where
    return text


async def photograph(person: Person, shots: Path, name: str) -> None:
    assert await person.fits_the_screen_width(), f"{name}: wider than the screen"
    await person.page.screenshot(path=shots / name, animations="disabled")


@pytest.mark.timeout(300)
async def test_a_malay_speaking_child_creates_shares_and_plays_a_whole_game(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    phone = await Person.open(browser, "phone", {**PHONE, **MALAY})
    desktop = await Person.open(browser, "desktop", {**DESKTOP, **MALAY})
    for person in (phone, desktop):
        await person.context.add_init_script(BANNER_LOG)
    page = phone.page

    # Home, with the house rules open.
    await page.goto(f"{base_url}/")
    await expect(page.locator("#create-form .panel-title")).to_have_text("Mulakan meja")
    await phone.press(".house-rules summary")
    await expect(page.locator("select[name=time_limit]")).to_be_visible()
    await no_english_on_screen(phone, "home")
    assert await phone.fits_the_screen_width(), "home: wider than the screen"
    await page.screenshot(path=screenshots / "ms-home-phone.png", full_page=True)
    await page.click("#create-button")  # no name yet: the page says so, in Malay
    await expect(page.locator("#create-error")).to_contain_text("Tulis nama")
    await page.fill("#create-name", "Siti")
    for select, value in SHORT_GAME.items():
        await page.select_option(f"select[name={select}]", value)
    await phone.press("#create-button")
    await page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}$"), timeout=WAIT_MS)
    await phone.seated()  # the creator sits at once
    link = await page.input_value("#share-url")

    # The invitation: the share panel, then the name gate a friend meets.
    await phone.press("#share-toggle")
    await expect(page.locator("#share-panel")).to_be_visible()
    await expect(page.locator("#share-title")).to_have_text("Jemput kawan")
    await no_english_on_screen(phone, "invite")
    await photograph(phone, screenshots, "ms-invite-phone.png")
    await desktop.page.goto(link)
    await expect(desktop.page.locator("#name-gate h1")).to_contain_text("Kamu dijemput ke meja")
    await no_english_on_screen(desktop, "name gate")
    await desktop.page.fill("#name-input", "Ali")
    await desktop.press("#name-form button[type=submit]")
    await expect(desktop.page.locator("#lobby-status")).not_to_be_empty(timeout=WAIT_MS)
    await desktop.seated()  # an invited friend sits at once

    # The lobby, the host's house rules open, and the summary in Malay.
    await phone.press("#rules-form .house-rules summary")
    await expect(page.locator("#rules-form select[name=penalty]")).to_be_visible()
    await expect(page.locator("#rules-summary")).to_contain_text("Tampar Jack", timeout=WAIT_MS)
    await expect(page.locator("#rules-summary")).to_contain_text("beku 1 s")
    await expect(page.locator("#start")).to_have_text("Mula · 2 pemain", timeout=WAIT_MS)
    await no_english_on_screen(phone, "lobby")
    assert await phone.fits_the_screen_width(), "lobby: wider than the screen"
    await page.screenshot(path=screenshots / "ms-lobby-phone.png", full_page=True)
    await phone.press("#start")
    for person in (phone, desktop):
        await person.wait_phase("playing")
    await page.evaluate(NOTE_SLAP_CALLS)

    # A wrong slap: a card on the pile that is no trigger, and the phone slaps it.
    for _flip in range(20):
        if await page.evaluate(A_PILE_WITHOUT_TRIGGER):
            break
        # Asked of both pages: in the collect pause after a take it is nobody's turn yet.
        flipper = await whose_turn([phone, desktop])
        await flipper.page.wait_for_function(READY_TO_FLIP, timeout=WAIT_MS)
        await flipper.flip()
        await asyncio.sleep(0.2)
        if (await phone.table())["trigger"]:
            await phone.slap()
            await page.wait_for_function("() => !document.body.dataset.trigger", timeout=WAIT_MS)
    # A card on the pile came after any take's collect pause (a slap in the pause is late for
    # the pile taken): this slap is judged on the pile that shows.
    await page.wait_for_function(A_PILE_WITHOUT_TRIGGER, timeout=WAIT_MS)
    await phone.slap()
    await page.wait_for_function(
        "() => window.bannerLog.some((text) => text.startsWith('Salah tampar!'))", timeout=WAIT_MS
    )
    await no_english_on_screen(phone, "wrong slap")
    await photograph(phone, screenshots, "ms-wrong-slap-phone.png")

    # Play on to the end (the minute's time limit ends it). Every trigger of the game was called
    # in Malay (a starved machine may flip too few cards in its last part to show one).
    async with asyncio.timeout(GAME_MS / 1000), asyncio.TaskGroup() as players:
        players.create_task(keep_playing(phone))
        players.create_task(keep_playing(desktop))
    calls = await page.evaluate("() => window.slapCalls")
    assert calls, "no trigger showed in the whole game"
    assert any(re.search("TAMPAR|KEMBAR|GAMBAR|SANDWIC", call) for call in calls), calls
    for person in (phone, desktop):
        await expect(person.page.locator("#over")).to_be_visible(timeout=WAIT_MS)
        await expect(person.page.locator("#over-title")).to_contain_text("menang")
    await expect(desktop.page.locator("#over-wait")).to_contain_text("Menunggu Siti")
    await no_english_on_screen(phone, "game over")
    await no_english_on_screen(desktop, "game over (guest)")
    await photograph(phone, screenshots, "ms-over-phone.png")
    assert phone.problems == [] and desktop.problems == [], (phone.problems, desktop.problems)

    # The 404 pages.
    for path, title in (("/r/ZZZZZZ", "Meja tiada"), ("/no/such/page", "Halaman tidak dijumpai")):
        await page.goto(f"{base_url}{path}")
        await expect(page.locator("h1")).to_have_text(title)
        await no_english_on_screen(phone, path)
    await photograph(phone, screenshots, "ms-404-phone.png")


async def test_the_switch_changes_the_language_and_the_device_remembers_it(
    base_url: str, browser: Browser
) -> None:
    person = await Person.open(browser, "phone", {**PHONE, **MALAY})
    page = person.page
    await page.goto(f"{base_url}/")
    await expect(page.locator("html")).to_have_attribute("lang", "ms")
    await person.press(".lang-switch a[hreflang=en]")
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    await expect(page.locator("#create-form .panel-title")).to_have_text("Start a table")
    await page.goto(f"{base_url}/no/such/page")  # another page, the same choice
    await expect(page.locator("h1")).to_have_text("Page not found")
    await page.reload()
    await expect(page.locator("h1")).to_have_text("Page not found")
    await person.press(".lang-switch a[hreflang=ms]")
    await expect(page.locator("h1")).to_have_text("Halaman tidak dijumpai")
    await page.goto(f"{base_url}/")
    await expect(page.locator("#create-form .panel-title")).to_have_text("Mulakan meja")
    # The scripts speak the page's language too.
    await page.click("#join-form button")
    await expect(page.locator("#join-error")).to_contain_text("Kod meja ada 6 huruf")
    # Chromium logs each 404 document it loads; no other error may appear.
    assert [p for p in person.problems if "status of 404" not in p] == []


async def test_a_first_visit_follows_the_browsers_own_languages(
    base_url: str, browser: Browser
) -> None:
    """A proxy that drops or rewrites Accept-Language: the page still follows the browser's
    own list (navigator.languages) once, and remembers it."""
    person = await Person.open(browser, "phone", {**PHONE, **MALAY})
    page = person.page

    async def english_header(route: Route) -> None:
        await route.continue_(headers={**route.request.headers, "accept-language": "en"})

    await page.route("**/*", english_header)
    first = await page.request.get(f"{base_url}/", headers={"accept-language": "en"})
    assert '<html lang="en">' in await first.text()  # what the server alone would choose
    await page.goto(f"{base_url}/")
    await expect(page.locator("html")).to_have_attribute("lang", "ms", timeout=WAIT_MS)
    await expect(page.locator("#create-form .panel-title")).to_have_text("Mulakan meja")
    cookies = await person.context.cookies()
    assert {"name": "lang", "value": "ms"}.items() <= next(
        cookie for cookie in cookies if cookie["name"] == "lang"
    ).items()
    assert person.problems == []
