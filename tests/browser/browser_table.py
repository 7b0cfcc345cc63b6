"""A person at the table: one browser page, read through the page's own data attributes
and driven only by real taps, clicks and key presses."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Dialog, Page, expect

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

READ_TABLE = """() => {
  const body = document.body;
  const you = document.querySelector('.seat--you');
  return {
    phase: body.dataset.phase,
    myTurn: body.dataset.turn === 'mine',
    trigger: body.dataset.trigger || null,
    frozen: !document.getElementById('freeze').hidden,
    pileCards: document.querySelectorAll('#pile .card').length,
    seat: you ? you.dataset.seat : null,
  };
}"""


@dataclass
class Person:
    label: str
    context: BrowserContext
    page: Page
    touch: bool
    slaps: bool = False  # whether keep_playing slaps triggers for this person
    problems: list[str] = field(default_factory=list)
    # Held by whoever drives the page for a step, so a reload never cuts a step in half.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    async def open(cls, browser: Browser, label: str, device: dict[str, Any]) -> Person:
        context = await browser.new_context(**device)
        page = await context.new_page()
        person = cls(label, context, page, touch=bool(device.get("has_touch")))
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

    async def press(self, selector: str) -> None:
        """A finger on a phone, a mouse click on a desktop."""
        if self.touch:
            await self.page.tap(selector)
        else:
            await self.page.click(selector)

    async def join(self, url: str, name: str) -> None:
        await self.page.goto(url)
        await self.page.fill("#name-input", name)
        await self.press("#name-form button[type=submit]")
        await expect(self.page.locator("#lobby-status")).not_to_be_empty(timeout=WAIT_MS)

    async def sit(self) -> None:
        await self.press("#sit")
        await expect(self.page.locator(".seat--you")).to_have_count(1, timeout=WAIT_MS)

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

    async def seat_names(self) -> list[str]:
        names: list[str] = await self.page.locator(".seat-name").all_text_contents()
        return names


def seconds_text(text: str) -> bool:
    return re.fullmatch(r"\d+\.\d", text.strip()) is not None
