"""Every screen a table is played on: eight players with the longest names there are, on a
small Android, an iPhone, a phone on its side and a laptop. Each seat's name, card count
and avatar must lie inside the screen and clear of every other seat (bounding boxes), and
the screenshots are there to be looked at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_table import WAIT_MS, Person
from crowd import LONG_NAMES, Guest, leave_all, open_room, seat_guests
from playwright.async_api import Browser, Page, expect

SCREENS = {
    "360x740": {"width": 360, "height": 740},
    "390x844": {"width": 390, "height": 844},
    "844x390": {"width": 844, "height": 390},
    "1366x768": {"width": 1366, "height": 768},
}
SMALL_PHONE = {
    "viewport": SCREENS["360x740"],
    "has_touch": True,
    "is_mobile": True,
    "color_scheme": "dark",
}

# Every seat's visible parts (avatar, name, count), their union, and how the name is shown.
SEAT_BOXES = """() => [...document.querySelectorAll('#seats .seat')].map((seat) => {
  const parts = {};
  for (const [key, selector] of [['avatar', '.seat-avatar, .seat-empty'], ['name', '.seat-name'],
                                 ['cards', '.seat-cards']]) {
    const node = seat.querySelector(selector);
    if (!node) continue;
    const r = node.getBoundingClientRect();
    parts[key] = {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  }
  const text = seat.querySelector('.name-text');
  const style = text && getComputedStyle(text);
  return {
    seat: seat.dataset.seat,
    label: seat.getAttribute('aria-label'),
    parts,
    name: text ? {
      overflow: style.textOverflow, wraps: style.whiteSpace !== 'nowrap',
      lines: Math.round(text.getBoundingClientRect().height / parseFloat(style.lineHeight)),
    } : null,
  };
})"""

# Text contrast of each avatar's letter on its colour (WCAG's relative luminance).
AVATAR_CONTRAST = """() => {
  const luminance = (rgb) => {
    const [r, g, b] = rgb.match(/[\\d.]+/g).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return [...document.querySelectorAll('#seats .seat-avatar')].map((avatar) => {
    const style = getComputedStyle(avatar);
    const [a, b] = [luminance(style.backgroundColor), luminance(style.color)];
    return {bg: style.backgroundColor, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)};
  });
}"""


def union(parts: dict[str, dict[str, float]]) -> dict[str, float]:
    boxes = list(parts.values())
    return {
        "left": min(b["left"] for b in boxes),
        "top": min(b["top"] for b in boxes),
        "right": max(b["right"] for b in boxes),
        "bottom": max(b["bottom"] for b in boxes),
    }


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


async def seats_fit(page: Page, screen: str, phase: str) -> list[str]:
    """What is wrong with the seats on this screen: a part outside the viewport, two seats
    overlapping, a name cut with an ellipsis or on more than two lines."""
    size = SCREENS[screen]
    seats: list[dict[str, Any]] = await page.evaluate(SEAT_BOXES)
    problems = []
    assert len(seats) == 8, seats
    for seat in seats:
        where = f"{screen} {phase} seat {seat['seat']} ({seat['label']})"
        expected = {"avatar", "name", "cards"} if phase == "playing" else {"avatar", "name"}
        if set(seat["parts"]) != expected:
            problems.append(f"{where}: shows {sorted(seat['parts'])}")
        for part, box in seat["parts"].items():
            # The lobby opens on the host's controls and the invitation, the table under
            # them: its seats are a scroll away, but never off the screen's sides.
            inside = (
                box["left"] >= 0
                and (box["top"] >= 0 or phase == "lobby")
                and box["right"] <= size["width"]
                and (box["bottom"] <= size["height"] or phase == "lobby")
            )
            if not inside:
                problems.append(f"{where}: {part} {box} outside the screen")
        name = seat["name"]
        if name and (name["overflow"] == "ellipsis" or name["lines"] > 2):
            problems.append(f"{where}: name shown as {name}")
    for i, first in enumerate(seats):
        for second in seats[i + 1 :]:
            if overlap(union(first["parts"]), union(second["parts"])):
                pair = f"{first['seat']} and {second['seat']}"
                problems.append(f"{screen} {phase}: seats {pair} overlap")
    return problems


async def test_eight_long_names_fit_every_screen(
    base_url: str, browser: Browser, screenshots: Path
) -> None:
    code = await open_room(base_url)
    host = await Person.open(browser, "small phone", SMALL_PHONE)
    page = host.page
    await host.join(f"{base_url}/r/{code}", LONG_NAMES[0])
    await host.seated()
    await expect(page.locator(".seat--you")).to_have_count(1, timeout=WAIT_MS)
    # The indicators say what they are: the four-colour switch and the connection dot on
    # hover, the house rules by a chevron that turns as they open.
    await expect(page.locator("#colours-toggle")).to_have_attribute("title", "Four-colour deck")
    await expect(page.locator("#conn")).to_have_attribute("title", "Connection: connected")
    chevron = "el => getComputedStyle(el, '::after').borderRightStyle"
    assert await page.eval_on_selector(".house-rules summary", chevron) == "solid"
    guests: list[Guest] = await seat_guests(base_url, code, LONG_NAMES[1:])
    try:
        taken = page.locator("#seats .seat:not(.seat--empty)")
        await expect(taken).to_have_count(8, timeout=WAIT_MS)
        problems = []
        for screen, size in SCREENS.items():
            await page.set_viewport_size(size)
            await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r()))")
            problems += await seats_fit(page, screen, "lobby")
            await page.screenshot(path=screenshots / f"lobby-8-{screen}.png")

        await page.set_viewport_size(SCREENS["360x740"])
        await page.click("#start")
        await host.wait_phase("playing")
        await expect(page.locator(".seat-cards")).to_have_count(8, timeout=WAIT_MS)
        for screen, size in SCREENS.items():
            await page.set_viewport_size(size)
            await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r()))")
            problems += await seats_fit(page, screen, "playing")
            # Nothing taller than the screen: the whole table is in sight without scrolling.
            height = await page.evaluate("() => document.documentElement.scrollHeight")
            if height > size["height"]:
                problems.append(f"{screen} playing: the page is {height} px tall")
            await page.screenshot(path=screenshots / f"table-8-{screen}.png")
        for avatar in await page.evaluate(AVATAR_CONTRAST):
            if avatar["ratio"] < 4.5:
                problems.append(f"avatar {avatar['bg']}: contrast {avatar['ratio']:.2f}")

        # A toast ("... joined") never covers a seat, on any screen.
        watcher = await Guest(base_url, code, "Watcher").connect()
        guests.append(watcher)
        for screen, size in SCREENS.items():
            await page.set_viewport_size(size)
            await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r()))")
            toast = await page.evaluate(
                """() => { const t = document.createElement('div'); t.className = 'toast';
                  t.textContent = 'Maximiliana Rosewood lost connection';
                  document.getElementById('toasts').replaceChildren(t);
                  const r = t.getBoundingClientRect();
                  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; }"""
            )
            for seat in await page.evaluate(SEAT_BOXES):
                if overlap(toast, union(seat["parts"])):
                    problems.append(f"{screen}: a toast covers seat {seat['seat']}")
        assert problems == [], "\n".join(problems)
        assert host.problems == []
    finally:
        await leave_all(guests)
