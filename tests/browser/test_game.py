"""A whole game in a real browser: a phone and two desktops, plus a bot, on a real server,
played to its end with real taps and key presses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_table import WAIT_MS, XSS_NAME, Person, open_three, start_the_game
from crowd import open_room
from playwright.async_api import Browser, expect
from whole_game import SHORT_GAME, SHORT_GAME_SUMMARY, play_to_the_end


async def seat_the_guests(link: str, guests: list[tuple[Person, str]]) -> None:
    for person, name in guests:
        await person.join(link, name)
        await person.seated()


async def names_are_plain_text(people: list[Person]) -> None:
    """A name made of markup is shown as plain text, everywhere, and runs nothing."""
    for person in people:
        await expect(person.page.locator(".seat-name", has_text=XSS_NAME)).to_have_count(1)
        assert await person.page.locator("#seats img, #seats svg").count() == 0


async def photograph_the_lobby(phone: Person, desktop: Person, shots: Path) -> None:
    assert await phone.fits_the_screen_width()
    await phone.page.screenshot(
        path=shots / "lobby-phone.png", full_page=True, animations="disabled"
    )
    await desktop.page.screenshot(path=shots / "lobby-desktop.png", animations="disabled")


async def everyone_sees_the_summary(host: Person, guests: list[Person], host_name: str) -> None:
    for person in (host, *guests):
        await expect(person.page.locator("#over")).to_be_visible(timeout=WAIT_MS)
        await expect(person.page.locator("#over-title")).to_contain_text(re.compile(r"wins?!"))
        await expect(person.page.locator("#over-reason")).not_to_be_empty()
        await expect(person.page.locator("#podium li")).to_have_count(4)
    await expect(host.page.locator("#rematch")).to_be_visible()
    for guest in guests:
        await expect(guest.page.locator("#rematch")).to_be_hidden()
        await expect(guest.page.locator("#over-wait")).to_contain_text(f"Waiting for {host_name}")


@pytest.mark.timeout(300)
async def test_a_phone_and_two_desktops_play_a_whole_game_with_a_bot(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    people = phone, bob, cy = await open_three(browser)

    link = f"{base_url}/r/{await open_room(base_url, SHORT_GAME)}"
    await phone.join(link, "Ann")
    await phone.seated()  # the first to come is the host
    summary = phone.page.locator("#rules-summary")
    await expect(summary).to_contain_text(SHORT_GAME_SUMMARY, timeout=WAIT_MS)
    await phone.press("[data-bot=easy]")
    await expect(phone.page.locator(".seat-tag--bot")).to_have_count(1, timeout=WAIT_MS)
    await seat_the_guests(link, [(bob, "Bob"), (cy, XSS_NAME)])
    await names_are_plain_text(people)
    await expect(phone.page.locator("#start")).to_have_text("Start game · 4 players")
    await photograph_the_lobby(phone, bob, screenshots)

    await start_the_game(phone, people, players=4)
    await play_to_the_end(people)

    await everyone_sees_the_summary(phone, [bob, cy], "Ann")
    await phone.page.screenshot(path=screenshots / "over-phone.png", animations="disabled")
    await bob.page.screenshot(path=screenshots / "over-desktop.png", animations="disabled")

    await phone.press("#rematch")
    for person in people:
        await person.wait_phase("playing")

    for person in people:
        assert person.problems == [], f"{person.label}: {person.problems}"
