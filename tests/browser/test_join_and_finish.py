"""Joining in seconds and a finish worth a rematch, on a small Android (360x740): a pasted
link joins, the newcomer is seated at once with the emoji they picked, the lobby's first
screen holds the code, the QR code, Share and Copy, Start says why it cannot start yet, and
game over is a dialog with a podium and the match score across rematches."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from browser_table import WAIT_MS, Person
from crowd import Guest, open_room
from playwright.async_api import Browser, Page, expect
from playwright.async_api import Error as PlaywrightError

SMALL_PHONE = {
    "viewport": {"width": 360, "height": 740},
    "has_touch": True,
    "is_mobile": True,
    "color_scheme": "dark",
}
GAME_OVER_MS = 60_000  # a 10-second time limit on a loaded machine
# The game-over card's buttons take no press for this long after it opens (arming.js).
ARM_MS = 700
# The page's record, in its own clock (performance.now()): each phase as the page shows it
# and each press (pointer or key) with the button it began on, seen before the page's own
# listeners see it.
CARD_LOG = """
window.cardLog = {phases: [], presses: []};
const notePress = (event) => window.cardLog.presses.push({
  type: event.type, key: event.key || '', t: performance.now(),
  on: event.target.closest ? (event.target.closest('button')?.id || event.target.id || '') : '',
});
window.addEventListener('pointerdown', notePress, {capture: true});
window.addEventListener('keydown', notePress, {capture: true});
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver(() => {
    const phase = document.body.dataset.phase;
    const last = window.cardLog.phases.at(-1);
    if (!last || last.phase !== phase) window.cardLog.phases.push({phase, t: performance.now()});
  }).observe(document.body, {attributes: true, attributeFilter: ['data-phase']});
});
"""
# Game over once it is drawn (looked at after each frame): how Play again looks and
# stands then.
CARD_OPENED = """() => {
  if (document.body.dataset.phase !== 'over') return false;
  const button = document.getElementById('rematch');
  if (!button.getBoundingClientRect().width) return false;
  return {inactive: button.getAttribute('aria-disabled'),
          opacity: parseFloat(getComputedStyle(button).opacity),
          focused: document.activeElement === button};
}"""

# Where Play again is once the card's opening animation is over: its first frame is the
# animation's first keyframe (some 40 px lower), even with reduced motion (a 1 ms rise).
WHERE_PLAY_AGAIN_STOPS = """async () => {
  const over = document.getElementById('over');
  await Promise.all(over.getAnimations({subtree: true}).map((a) => a.finished.catch(() => null)));
  const r = document.getElementById('rematch').getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""


async def box(page: Page, selector: str) -> dict[str, float]:
    found = await page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


async def test_a_pasted_link_seats_you_at_once_and_the_lobby_opens_on_the_invitation(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    code = await open_room(base_url)
    person = await Person.open(browser, "small phone", SMALL_PHONE)
    page = person.page
    await page.goto(f"{base_url}/")
    # A code with spaces, then a whole link (with more after the code), both accepted.
    await page.fill("#join-code", f" {code[:3].lower()} {code[3:]} ")
    await page.tap("#join-form button")
    await page.wait_for_url(f"{base_url}/r/{code}")
    await page.goto(f"{base_url}/")
    await page.fill("#join-code", f"{base_url}/r/{code}/tv?from=chat")
    await page.tap("#join-form button")
    await page.wait_for_url(f"{base_url}/r/{code}")

    await expect(page.locator("#name-gate")).to_be_visible()
    await page.tap("#gate-avatar label:has-text('🦊')")
    await person.join(page.url, "Ann")
    await person.seated()
    await expect(page.locator(".seat--you .seat-avatar")).to_have_text(re.compile("^🦊"))

    # Alone: Start says why it cannot start, and is not offered until it can.
    start = page.locator("#start")
    await expect(start).to_have_text("Start: 1 more player, or add a bot")
    await expect(start).to_be_disabled()
    # The first screen: the big code, the QR code, Copy (and Share where the phone has it).
    for selector in (".share-code", ".share-qr", "#copy-link"):
        found = await box(page, selector)
        assert found["y"] >= 0 and found["y"] + found["height"] <= 740, (selector, found)
    await expect(page.locator(".share-code")).to_have_text(code)
    assert await person.fits_the_screen_width()
    await page.screenshot(path=screenshots / "lobby-alone-360x740.png")

    await page.tap("[data-bot=easy]")
    await expect(start).to_have_text("Start game · 2 players", timeout=WAIT_MS)
    await expect(start).to_be_enabled()
    assert person.problems == []


async def flip_once(person: Person, guest: Guest) -> None:
    """A time-limited game ends on the first seat holding the most cards: one flip does."""
    await person.wait_phase("playing")
    if (await person.table())["myTurn"]:
        await person.flip()
    else:
        reply = await guest.call("flip")
        assert reply["ok"], reply


async def stand_still(page: Page) -> None:
    """Pauses the page's clock a moment ahead of its now: on a loaded machine that moment
    may have gone by before the pause reaches the page (Playwright refuses a time in the
    past), and then a later one is tried."""
    for ahead_ms in (1, 20, 100, 500):
        now_ms = await page.evaluate("() => Date.now()")
        try:
            await page.clock.pause_at((now_ms + ahead_ms) / 1000)  # Playwright takes seconds
            return
        except PlaywrightError as error:
            if "to the past" not in str(error):
                raise
    raise AssertionError("the page's clock ran past every moment it was to stand still at")


async def press_as_it_opens(page: Page, guest: Guest) -> float:
    """As game over is drawn, a tap on Play again, then Space (the slap key) and Enter (the
    flip key, with the focus on Play again): none of them changes anything, and the buttons
    come live ARM_MS later. Returns when the card opened (the page's clock).

    The page's clock (Playwright's, installed before the page loaded) stands still from
    before the game ends until the presses are made: the card opens, and is pressed, at
    one moment of the page's time however long a loaded machine takes to press three
    times. Its frames are drawn as the test moves the clock on; the card does not rise
    (reduced motion), and the tap aims at where Play again stops."""
    await stand_still(page)
    assert await page.evaluate("() => document.body.dataset.phase") == "playing", (
        "the game ended before the page's clock stood still"
    )
    async with asyncio.timeout(GAME_OVER_MS / 1000):  # the server's game over has gone out
        while guest.state["phase"] != "over":
            await asyncio.sleep(0.05)
    for _frame in range(600):
        card = await page.evaluate(CARD_OPENED)
        if card:
            break
        await page.clock.run_for(16)  # a frame: the state that came in is drawn
    assert card, "game over was never drawn"
    assert card["inactive"] == "true" and card["opacity"] < 1 and card["focused"], card
    at = await page.evaluate(WHERE_PLAY_AGAIN_STOPS)
    await page.touchscreen.tap(at["x"], at["y"])
    await page.keyboard.press("Space")
    await page.keyboard.press("Enter")
    log = await page.evaluate("() => window.cardLog")
    over_at: float = log["phases"][-1]["t"]
    assert log["phases"][-1]["phase"] == "over", log["phases"]  # no press played again
    early = [p for p in log["presses"] if p["t"] >= over_at]
    assert [(p["type"], p["key"]) for p in early] == [
        ("pointerdown", ""),
        ("keydown", " "),
        ("keydown", "Enter"),
    ], early
    assert all(p["t"] - over_at < 20 for p in early), early  # in the frame that drew it
    assert {p["on"] for p in early} == {"rematch"}, early
    assert await page.locator("#rematch").get_attribute("aria-disabled") == "true"
    await page.clock.run_for(ARM_MS)
    await expect(page.locator("#rematch")).not_to_have_attribute("aria-disabled", "true")
    await page.clock.resume()
    log = await page.evaluate("() => window.cardLog")
    assert log["phases"][-1]["phase"] == "over", log["phases"]  # nor after the card came live
    return over_at


async def focus_stays_in(page: Page, dialog: str, presses: int) -> list[Any]:
    """Where the focus is after each of `presses` Tab presses: all inside `dialog`?"""
    inside = []
    for _ in range(presses):
        await page.keyboard.press("Tab")
        inside.append(await page.evaluate(f"() => !!document.activeElement.closest('{dialog}')"))
    return inside


async def test_game_over_is_a_dialog_with_a_podium_and_the_match_score_after_two_games(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    code = await open_room(base_url, {"time_limit": 10})
    # The card does not rise 40 px as it opens (reduced motion: CSS animations run on real
    # time, not the page's clock the test turns), so a tap aimed at Play again lands on it.
    person = await Person.open(browser, "small phone", {**SMALL_PHONE, "reduced_motion": "reduce"})
    page = person.page
    await page.clock.install()  # runs as time does until the test stops it
    await page.add_init_script(CARD_LOG)
    await person.join(f"{base_url}/r/{code}", "Ann")
    await person.seated()
    guest = await Guest(base_url, code, "Bob").connect()
    try:
        await guest.sit()
        await expect(page.locator("#start")).to_be_enabled(timeout=WAIT_MS)
        await page.tap("#start")
        await flip_once(person, guest)

        # The moment game over opens, a tap on Play again and the slap and flip keys change
        # nothing: the buttons are not live yet, and say so. The focus lands on Play again.
        over_at = await press_as_it_opens(page, guest)

        over = page.locator("#over")
        await expect(over).to_be_visible()
        await expect(over).to_have_attribute("role", "dialog")
        await expect(over).to_have_attribute("aria-modal", "true")
        places = page.locator("#podium li")
        await expect(places).to_have_count(2)
        state = guest.state
        winner = state["seats"][state["winner"]]["name"]
        await expect(places.first).to_contain_text(winner)
        await expect(places.first).to_contain_text(re.compile(r"\d+ cards"))
        await expect(places.nth(1)).to_contain_text(re.compile(r"\d+ cards"))
        await expect(page.locator("#match")).to_be_hidden()  # one game: no match yet
        # Focus moved in (the host landed on Play again, above) and Tab keeps it in.
        assert await focus_stays_in(page, "#over", 6) == [True] * 6
        await page.keyboard.press("Shift+Tab")
        assert await page.evaluate("() => !!document.activeElement.closest('#over')")
        await page.locator(".topbar .brand").focus()  # focus wandering out comes back
        assert await page.evaluate("() => !!document.activeElement.closest('#over')")
        assert await person.fits_the_screen_width()

        # Once live, a tap on Play again plays again; nothing before it did.
        await expect(page.locator("#rematch")).to_have_css("opacity", "1")
        rematch = await box(page, "#rematch")  # Tab may have scrolled the card
        x, y = rematch["x"] + rematch["width"] / 2, rematch["y"] + rematch["height"] / 2
        await page.touchscreen.tap(x, y)
        await flip_once(person, guest)
        await expect(page.locator("body")).to_have_attribute(
            "data-phase", "over", timeout=GAME_OVER_MS
        )
        log = await page.evaluate("() => window.cardLog")
        phases = [p["phase"] for p in log["phases"]]
        assert phases[-3:] == ["over", "playing", "over"], phases
        again_at = log["phases"][-2]["t"]
        taps = [p for p in log["presses"] if (p["type"], p["on"]) == ("pointerdown", "rematch")]
        before_again = [p for p in taps if p["t"] < again_at]
        assert before_again, "playing again came before the live tap"
        live = before_again[-1]
        assert live["t"] - over_at >= ARM_MS, live
        match = page.locator("#match")
        await expect(match).to_be_visible()
        scores = re.fullmatch(r"Match: (.+) (\d), (.+) (\d)", await match.inner_text())
        assert scores is not None and int(scores[2]) + int(scores[4]) == 2
        assert int(scores[2]) >= int(scores[4])  # most wins first
        assert await person.fits_the_screen_width()
        await page.screenshot(path=screenshots / "game-over-360x740.png")
        await page.set_viewport_size({"width": 844, "height": 390})
        await expect(page.locator("#rematch")).to_be_in_viewport(ratio=1)
        await page.screenshot(path=screenshots / "game-over-844x390.png")
    finally:
        await guest.close()
    assert person.problems == []


async def test_the_big_screen_shows_the_table_large_with_the_qr_code_and_never_sits(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    code = await open_room(base_url)
    host = await Person.open(browser, "small phone", SMALL_PHONE)
    await host.join(f"{base_url}/r/{code}", "Ann")
    await host.seated()
    await expect(host.page.locator(".share-tv")).to_have_attribute("href", f"/r/{code}/tv")
    screen = await Person.open(browser, "tv", {"viewport": {"width": 1920, "height": 1080}})
    page = screen.page
    answer = await page.goto(f"{base_url}/r/{code}/tv")
    assert answer is not None and answer.status == 200
    await expect(page.locator("#conn")).to_have_attribute("data-status", "connected")
    await expect(page.locator("#name-gate")).to_be_hidden()  # no name asked
    await expect(host.page.locator("#watchers")).to_have_text("Watching: Big screen")
    await expect(page.locator(".seat:not(.seat--empty)")).to_have_count(1)  # Ann only
    guest = await Guest(base_url, code, "Bob").connect()
    try:
        await guest.sit()
        await expect(page.locator(".seat:not(.seat--empty)")).to_have_count(2, timeout=WAIT_MS)
        # Between games the QR code and the code stand beside the table.
        qr = await box(page, ".share-qr")
        assert qr["width"] >= 240 and qr["y"] + qr["height"] <= 1080, qr
        await expect(page.locator(".share-code")).to_have_text(code)
        await host.page.tap("#start")
        await screen.wait_phase("playing")
        # Large: the table fills most of the screen while a game is on.
        felt = await box(page, "#felt")
        assert felt["width"] >= 1920 * 0.6 and felt["height"] >= 1080 * 0.8
        await page.screenshot(path=screenshots / "tv-1920x1080.png")
        await expect(page.locator("#controls")).to_be_hidden()
        await page.screenshot(path=screenshots / "tv-1920x1080.png")
    finally:
        await guest.close()
    answer = await page.goto(f"{base_url}/r/ZZZZZZ/tv")
    assert answer is not None and answer.status == 404
    assert [p for p in screen.problems if "status of 404" not in p] == []
