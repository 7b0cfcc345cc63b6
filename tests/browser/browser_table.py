"""A person at the table: one browser page, read through the page's own data attributes
and driven only by real taps, clicks and key presses."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Dialog,
    Page,
    expect,
)
from playwright.async_api import TimeoutError as PlaywrightTimeout

# The phone plays in the dark theme, the desktops in the light one: screenshots show both.
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "has_touch": True,
    "is_mobile": True,
    "color_scheme": "dark",
}
DESKTOP = {"viewport": {"width": 1280, "height": 800}, "color_scheme": "light"}
CALM_DESKTOP = {**DESKTOP, "reduced_motion": "reduce"}
WAIT_MS = 20_000  # generous for a shared 2-core machine: waits end on what they wait for
PRESS_TRY_MS = 2_000  # one try at tapping the deck before asking whether it is still to tap
# The classic `<img src=x onerror=alert(1)>` is 28 characters and names stop at 20, so the
# same attack in 20: it would run if a page ever built HTML from a name.
XSS_NAME = "<svg onload=alert()>"

# What a person sees of the table. `frozen` is the freeze overlay counting down, or the
# server still marking the seat frozen (it may lag the countdown by a tick).
READ_TABLE = """() => {
  const body = document.body;
  const you = document.querySelector('.seat--you');
  const cards = you && you.querySelector('.seat-cards');
  const pile = document.getElementById('pile');
  return {
    phase: body.dataset.phase,
    myTurn: body.dataset.turn === 'mine',
    trigger: body.dataset.trigger || null,
    frozen: !document.getElementById('freeze').hidden
      || (!!you && you.classList.contains('seat--frozen')),
    out: !!you && you.classList.contains('seat--out'),
    cards: cards && /^\\d+ (cards?|kad)$/.test(cards.textContent)
      ? parseInt(cards.textContent) : null,
    pileCards: pile.querySelectorAll('.card').length,  // the top few, fanned
    pileCount: parseInt(document.getElementById('pile-count').textContent) || 0,
    pileId: pile.dataset.pileId,
    top: pile.dataset.top || null,
    seat: you ? you.dataset.seat : null,
  };
}"""
# Every text the banner showed, in order: it clears itself after a few seconds, so the
# test reads this log rather than racing the banner.
BANNER_LOG = """
window.bannerLog = [];
document.addEventListener('DOMContentLoaded', () => {
  const banner = document.getElementById('banner');
  if (!banner) return;
  // Every text the banner was given, in order: two banners set in one task (a take and
  // its photo finish, drawn from one state) are two records, while the banner's text by
  // the time the observer runs is only the second.
  new MutationObserver((records) => {
    for (const record of records) {
      const added = record.type === 'characterData' ? [record.target] : record.addedNodes;
      for (const node of added) if (node.textContent) window.bannerLog.push(node.textContent);
    }
  }).observe(banner, { childList: true, characterData: true, subtree: true });
});
"""
READY_TO_FLIP = f"""() => {{
  const table = ({READ_TABLE})();
  return table.phase === 'playing' && table.myTurn && !table.trigger && !table.frozen;
}}"""
# The flipper's own count went down (or they are out, or the game ended). Not "the turn
# moved on": when the turn comes straight back, a page may draw only the newest state.
FLIP_LANDED = f"""(cardsBefore) => {{
  const table = ({READ_TABLE})();
  return table.phase !== 'playing' || table.cards !== cardsBefore;
}}"""
# The deck is no longer yours to tap: the game ended (its time ran out) or the turn moved.
NOT_MY_FLIP = (
    "() => document.body.dataset.phase !== 'playing' || document.body.dataset.turn !== 'mine'"
)
# Why a page might not show its deck: for the message of a test that fails.
DECK_SEEN = """() => ({
  phase: document.body.dataset.phase, turn: document.body.dataset.turn,
  play: !document.getElementById('play').hidden,
  fatal: !document.getElementById('fatal').hidden,
  conn: document.getElementById('conn').dataset.status,
  classes: document.body.className,
})"""
# What a page showed when its flip did not land: for the message of a test that fails.
FLIP_SEEN = f"""() => ({{
  table: ({READ_TABLE})(), deck: ({DECK_SEEN})(),
  disabled: document.getElementById('flip').disabled,
  hint: document.getElementById('flip-hint').textContent,
  banners: window.bannerLog || null,
}})"""
# Where a finger slaps the felt, down from its top: where game over, opening over the felt,
# shows its title, not a button.
SLAP_HEIGHT = 0.25
FELT_IN_PLAY = """([x, y]) => document.body.dataset.phase === 'playing'
  && !document.getElementById('over').contains(document.elementFromPoint(x, y))"""
# A table quiet enough to photograph: a fanned pile, no trigger, nothing in flight.
SETTLED_PILE = """() => document.querySelectorAll('#pile .card').length >= 2
  && !document.body.dataset.trigger && !document.querySelector('.flying-card')"""


@dataclass
class Person:
    label: str
    context: BrowserContext
    page: Page
    touch: bool
    flip_key: str | None = None  # None: tap the deck button; else this key flips
    problems: list[str] = field(default_factory=list)

    @classmethod
    async def open(
        cls, browser: Browser, label: str, device: dict[str, Any], flip_key: str | None = None
    ) -> Person:
        context = await browser.new_context(**device)
        page = await context.new_page()
        touch = bool(device.get("has_touch"))
        person = cls(label, context, page, touch=touch, flip_key=flip_key)
        page.on("console", person._console)
        page.on("pageerror", lambda error: person.problems.append(f"page error: {error}"))
        page.on("dialog", person._dialog)
        return person

    def _console(self, message: ConsoleMessage) -> None:
        # CSP violations and script errors land here as console errors.
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    async def _dialog(self, dialog: Dialog) -> None:
        self.problems.append(f"dialog opened: {dialog.message}")
        await dialog.dismiss()

    async def table(self) -> dict[str, Any]:
        state: dict[str, Any] = await self.page.evaluate(READ_TABLE)
        return state

    async def press(self, selector: str, timeout: float | None = None) -> None:
        """A finger on a phone, a mouse click on a desktop."""
        if self.touch:
            await self.page.tap(selector, timeout=timeout)
        else:
            await self.page.click(selector, timeout=timeout)

    async def flip(self, unless: str | None = None) -> None:
        """Turns the top card over (a tap on the deck, or the person's flip key) and waits
        until the card has left this person's deck. A deck that stops being theirs before
        the tap (the time limit ended the game a moment after the page said "your turn")
        is not tapped. `unless`: a page condition under which the server rightly refuses
        the flip (a tap it may meet, or one already on its way): the wait ends there too."""
        cards = (await self.table())["cards"]
        if self.flip_key is None:
            if not await self._tap_the_deck(unless):
                return
        else:
            await self.page.keyboard.press(self.flip_key)
        landed = (
            FLIP_LANDED if unless is None else f"(cards) => ({FLIP_LANDED})(cards) || ({unless})()"
        )
        try:
            await self.page.wait_for_function(landed, arg=cards, timeout=WAIT_MS)
        except PlaywrightTimeout:
            seen = await self.page.evaluate(FLIP_SEEN)
            raise AssertionError(
                f"{self.label}: tapped the deck at {cards} cards: {seen}"
            ) from None

    async def _tap_the_deck(self, unless: str | None) -> bool:
        """Taps the deck; False when it stopped being this person's to tap first (or
        `unless` holds). The deck hides at game over, so a tap waiting for it would wait
        for ever: each try is short, and between tries the page says whether the deck is
        still theirs."""
        given_up = NOT_MY_FLIP if unless is None else f"() => ({NOT_MY_FLIP})() || ({unless})()"
        for _try in range(WAIT_MS // PRESS_TRY_MS):
            try:
                await self.press("#flip", timeout=PRESS_TRY_MS)
                return True
            except PlaywrightTimeout:
                if await self.page.evaluate(given_up):
                    return False
        seen = await self.page.evaluate(DECK_SEEN)
        raise AssertionError(f"{self.label}: the page says it is my turn, the deck stays: {seen}")

    async def slap(self) -> None:
        """A finger on the felt on a phone, the space bar on a desktop. A finger lifted
        while the game ended is not put down: game over opens over the felt, and a tap
        there may press one of its buttons."""
        if not self.touch:
            await self.page.keyboard.press("Space")
            return
        box = await self.page.locator("#felt").bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * SLAP_HEIGHT
        if await self.page.evaluate(FELT_IN_PLAY, [x, y]):
            await self.page.touchscreen.tap(x, y)

    async def join(self, url: str, name: str) -> None:
        await self.page.goto(url)
        await self.page.fill("#name-input", name)
        await self.press("#name-form button[type=submit]")
        await expect(self.page.locator("#lobby-status")).not_to_be_empty(timeout=WAIT_MS)

    async def sit(self) -> None:
        """A watcher takes a seat with the lobby's button."""
        await self.press("#sit")
        await self.seated()

    async def seated(self) -> None:
        """Sat down on arrival: the lobby seats a newcomer at once, no button pressed."""
        await expect(self.page.locator(".seat--you")).to_have_count(1, timeout=WAIT_MS)
        await expect(self.page.locator("#sit")).to_be_hidden()

    async def wait_phase(self, phase: str) -> None:
        await expect(self.page.locator("body")).to_have_attribute(
            "data-phase", phase, timeout=WAIT_MS
        )

    async def fits_the_screen_width(self) -> bool:
        """No sideways scrolling: nothing on the page is wider than the viewport."""
        fits: bool = await self.page.evaluate(
            "() => document.documentElement.scrollWidth <= window.innerWidth"
        )
        return fits


async def open_three(browser: Browser) -> list[Person]:
    """A phone that flips by tapping and two desktops that flip with F and with Enter."""
    return [
        await Person.open(browser, "phone", PHONE),
        await Person.open(browser, "desktop Bob", DESKTOP, flip_key="f"),
        await Person.open(browser, "desktop Cy", CALM_DESKTOP, flip_key="Enter"),
    ]


async def open_table_from_home(
    host: Person, base_url: str, name: str, rules: dict[str, str]
) -> str:
    """The host opens a table through the home page with these house rules (select name to
    option value) and sits; returns the table's link from the share panel."""
    page = host.page
    await page.goto(f"{base_url}/")
    await page.fill("#create-name", name)
    await host.press(".house-rules summary")
    for select, value in rules.items():
        await page.select_option(f"select[name={select}]", value)
    await host.press("#create-button")
    await page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}$"), timeout=WAIT_MS)
    await host.seated()
    link = await page.input_value("#share-url")
    assert link == page.url  # the share panel's link is this very table
    return link


async def start_the_game(host: Person, people: list[Person], players: int) -> None:
    start = host.page.locator("#start")
    await expect(start).to_have_text(f"Start game · {players} players", timeout=WAIT_MS)
    await host.press("#start")
    for person in people:
        await person.wait_phase("playing")


def seconds_text(text: str) -> bool:
    return re.fullmatch(r"\d+\.\d", text.strip()) is not None


async def whose_turn(people: list[Person]) -> Person:
    """The one person whose own page says it is their turn to flip (pages catch up with
    the server at their own pace, so ask until exactly one says so)."""
    async with asyncio.timeout(WAIT_MS / 1000):
        while True:
            tables = [await person.table() for person in people]
            turns = [p for p, table in zip(people, tables, strict=True) if table["myTurn"]]
            if len(turns) == 1:
                return turns[0]
            await asyncio.sleep(0.05)
