"""The pages around the game: home, unknown rooms, the name gate, sharing, preferences and
the connection indicator, each in a real browser against the real server."""

from __future__ import annotations

import re
from pathlib import Path

from browser_table import DESKTOP, PHONE, WAIT_MS, Person
from playwright.async_api import Browser, expect


async def test_home_page_joins_by_code_and_unknown_rooms_get_a_friendly_page(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    person = await Person.open(browser, "phone", PHONE)
    page = person.page
    answer = await page.goto(f"{base_url}/")
    assert answer is not None
    assert "default-src 'self'" in answer.headers["content-security-policy"]
    await page.tap(".house-rules summary")
    await expect(page.locator("select[name=time_limit]")).to_be_visible()
    assert await person.fits_the_screen_width()
    await page.screenshot(path=screenshots / "home-phone.png", full_page=True)

    await page.fill("#join-code", "abc")
    await page.tap("#join-form button")
    await expect(page.locator("#join-error")).to_contain_text("6 letters")

    await page.fill("#join-code", "zzzzzz")
    await page.tap("#join-form button")
    await page.wait_for_url(re.compile(r"/r/ZZZZZZ$"))
    await expect(page.locator("h1")).to_have_text("No such table")
    answer = await page.goto(f"{base_url}/r/ZZZZZZ")
    assert answer is not None and answer.status == 404
    answer = await page.goto(f"{base_url}/no/such/page")
    assert answer is not None and answer.status == 404
    await expect(page.locator("h1")).to_have_text("Page not found")
    # Chromium logs each 404 document it loads; no other error may appear.
    assert [p for p in person.problems if "status of 404" not in p] == []


async def test_a_newcomer_names_themselves_once_shares_the_table_and_sees_reconnecting(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    host = await Person.open(browser, "desktop", DESKTOP)
    await host.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = host.page
    await page.goto(f"{base_url}/")
    await page.fill("#create-name", "Dee")
    await page.click("#create-button")
    await page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}$"))
    link = page.url

    # The share panel: a QR code drawn by the server, and a link that copies.
    qr_width = await page.eval_on_selector(".share-qr", "img => img.naturalWidth")
    assert qr_width > 0
    await page.click("#copy-link")
    await expect(page.locator("#share-done")).to_have_text("Link copied!")
    assert await page.evaluate("navigator.clipboard.readText()") == link

    # A friend on a phone is asked for a name once; a refresh remembers it.
    friend = await Person.open(browser, "phone", PHONE)
    await friend.page.goto(link)
    await expect(friend.page.locator("#name-gate")).to_be_visible()
    await friend.page.screenshot(path=screenshots / "name-phone.png")
    await friend.join(link, "Eve")
    # Seated at once (a seat was free); she stands up to watch instead.
    await friend.seated()
    await friend.press("#stand")
    await expect(page.locator("#watchers")).to_have_text("Watching: Eve", timeout=WAIT_MS)
    # The host changes a house rule in the lobby; everyone's summary follows.
    await page.click("#rules-form summary")
    await page.check("#rules-form input[value=double]")
    await expect(friend.page.locator("#rules-summary")).to_contain_text("Slap Jacks, doubles")
    await expect(friend.page.locator("#rules-form")).to_be_hidden()

    await friend.page.reload()
    await expect(friend.page.locator("#name-gate")).to_be_hidden()
    await expect(friend.page.locator("#lobby-status")).not_to_be_empty()

    # Preferences stick: the four-colour deck and the mute switch.
    await page.click("#colours-toggle")
    await page.click("#sound-toggle")
    await page.reload()
    await expect(page.locator("body")).to_have_class(re.compile(r"\bfour-colour\b"))
    await expect(page.locator("#sound-toggle")).to_have_attribute("aria-pressed", "false")

    # A dropped network shows "reconnecting..." and comes back by itself.
    await expect(page.locator("#conn")).to_have_attribute("data-status", "connected")
    await host.context.set_offline(True)
    await expect(page.locator("#conn")).to_have_attribute(
        "data-status", "reconnecting", timeout=WAIT_MS
    )
    await expect(page.locator("#conn-text")).to_have_text("reconnecting...")
    await host.context.set_offline(False)
    await expect(page.locator("#conn")).to_have_attribute(
        "data-status", "connected", timeout=WAIT_MS
    )
    await expect(page.locator("#lobby-status")).not_to_be_empty()
    # Chromium itself logs a reconnection tried while the network was down, a websocket's
    # or a long-poll's ("Failed to load resource: net::ERR_INTERNET_DISCONNECTED"; the
    # page's own retries are quiet): those lines are the outage the test made, nothing else
    # is excused.
    offline = "net::ERR_INTERNET_DISCONNECTED"
    host.problems = [p for p in host.problems if not p.endswith(offline)]

    # Leaving on purpose takes the friend home and out of the host's room.
    await friend.page.tap("#lobby [data-leave]")
    await friend.page.wait_for_url(f"{base_url}/")
    await expect(page.locator("#watchers")).to_be_hidden(timeout=WAIT_MS)

    assert friend.problems == []
    assert host.problems == []


async def test_lag_fair_judging_is_a_house_rule_and_each_seat_shows_its_compensation(
    base_url: str, browser: Browser
) -> None:
    """Ticked on the home page, lag-fair judging is in the room's rules summary, and every
    seated person's measured round trip shows as a small badge (the page answers the
    server's pings by itself)."""
    host = await Person.open(browser, "desktop", DESKTOP)
    guest = await Person.open(browser, "phone", PHONE)
    page = host.page
    await page.goto(f"{base_url}/")
    await page.fill("#create-name", "Dee")
    await page.click(".house-rules summary")
    await page.check("input[name=lag_fair]")
    await page.click("#create-button")
    await page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}$"), timeout=WAIT_MS)
    await host.seated()
    await expect(page.locator("#rules-summary")).to_contain_text("lag-fair judging")
    await expect(page.locator("#rules-form input[name=lag_fair]")).to_be_checked()
    await guest.join(page.url, "Eli")
    await guest.seated()
    for person in (host, guest):
        badges = person.page.locator(".seat .seat-lag")
        await expect(badges).to_have_count(2, timeout=WAIT_MS)
        for text in await badges.all_text_contents():
            assert re.fullmatch(r"\d+ ms", text), text
    # Off again: no badge.
    await page.click("#rules-form .house-rules summary")
    await page.uncheck("#rules-form input[name=lag_fair]")
    await expect(guest.page.locator(".seat .seat-lag")).to_have_count(0, timeout=WAIT_MS)
    for person in (host, guest):
        assert person.problems == [], f"{person.label}: {person.problems}"
