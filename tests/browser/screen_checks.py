"""What a screen must show in every engine, measured in the page (engines.py EnginePage;
the names' check is party.py's, which takes a Playwright page or an EnginePage alike):
every name whole (no ellipsis, at most two lines, never a word broken across lines), the
seats clear of each other, of the pile and of the top bar, every part of a seat in sight,
and the controls on the screen."""

from __future__ import annotations

from typing import Any

from engines import EnginePage
from party import SEAT_BOXES, inside, overlap

# The phones, the tablet, and the laptops and televisions people play on and watch.
PHONES = {
    "360x740": (360, 740),
    "390x844": (390, 844),
    "412x915": (412, 915),
    "844x390": (844, 390),
}
TABLET = {"768x1024": (768, 1024)}
TVS = {
    "1280x720": (1280, 720),
    "1366x768": (1366, 768),
    "1440x900": (1440, 900),
    "1920x1080": (1920, 1080),
    "3840x2160": (3840, 2160),
}
EVERY_SCREEN = {**PHONES, **TABLET, **TVS}

# A seat's part (name, count, HOST/BOT tag, avatar) something else covers or clips: the
# element at each of its corners, 2 px in (a round avatar's: 30% in), must be the part or
# inside it (the top bar over a tag, the felt's edge cutting a count). Game over covers the
# table on purpose.
COVERED_PARTS = """() => !document.getElementById('over').hidden ? [] :
  [...document.querySelectorAll(
      '#seats .seat-name, #seats .seat-cards, #seats .seat-tag, #seats .seat-avatar')]
  .filter((part) => part.getClientRects().length > 0)
  .filter((part) => {
    const r = part.getBoundingClientRect();
    const round = part.classList.contains('seat-avatar');
    const [x, y] = round ? [r.width * 0.3, r.height * 0.3] : [2, 2];
    const points = [[r.left + x, r.top + y], [r.right - x, r.top + y],
                    [r.left + x, r.bottom - y], [r.right - x, r.bottom - y]];
    return points.some(([x, y]) => {
      if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return true;
      const hit = document.elementFromPoint(x, y);
      return !hit || !part.contains(hit) && !hit.contains(part);
    });
  })
  .map((part) => `${part.className} of ${part.closest('.seat').getAttribute('aria-label')}`)"""

# The pile's cards and its count: no seat may lie over them.
PILE_BOX = """() => {
  const boxes = [...document.querySelectorAll('#pile, #pile .card, #pile-count')]
    .filter((n) => n.getClientRects().length && n.textContent !== '' || n.id === 'pile')
    .map((n) => n.getBoundingClientRect()).filter((r) => r.width && r.height);
  if (!boxes.length) return null;
  return {left: Math.min(...boxes.map((b) => b.left)), top: Math.min(...boxes.map((b) => b.top)),
          right: Math.max(...boxes.map((b) => b.right)),
          bottom: Math.max(...boxes.map((b) => b.bottom))};
}"""

# The felt's box: every seat lies on it (its edge clips whatever sticks out).
FELT_BOX = """() => { const r = document.getElementById('felt').getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; }"""

# Boxes of what must be wholly on the screen: each selector's first shown element.
SHOWN_BOXES = """(selectors) => selectors.map((selector) => {
  const node = [...document.querySelectorAll(selector)].find((n) => n.getClientRects().length);
  if (!node) return [selector, null];
  const r = node.getBoundingClientRect();
  return [selector, {left: r.left, top: r.top, right: r.right, bottom: r.bottom}];
})"""


async def seats_apart(
    page: EnginePage, where: str, size: dict[str, int], scrolls: bool = False
) -> list[str]:
    """Seats clear of each other and of the pile, each part in sight (`scrolls`: the lobby,
    whose table is a scroll away: across the screen, and not covered)."""
    problems = []
    seats: list[dict[str, Any]] = await page.evaluate(SEAT_BOXES)
    pile = None if scrolls else await page.evaluate(PILE_BOX)
    felt = await page.evaluate(FELT_BOX)
    for i, first in enumerate(seats):
        on_felt = all(first[side] >= felt[side] - 0.5 for side in ("left", "top")) and all(
            first[side] <= felt[side] + 0.5 for side in ("right", "bottom")
        )
        if not on_felt:
            problems.append(f"{where}: seat {first['seat']} {first} sticks out of the felt {felt}")
        across = first["left"] >= -0.5 and first["right"] <= size["width"] + 0.5
        if not (inside(first, size) or (scrolls and across)):
            problems.append(f"{where}: seat {first['seat']} lies outside the screen {first}")
        if pile is not None and overlap(first, pile):
            problems.append(f"{where}: seat {first['seat']} {first} lies over the pile {pile}")
        for second in seats[i + 1 :]:
            if overlap(first, second):
                problems.append(f"{where}: seats {first['seat']} and {second['seat']} overlap")
    if not scrolls:
        problems += [f"{where}: {part} is covered" for part in await page.evaluate(COVERED_PARTS)]
    return problems


async def in_sight(
    page: EnginePage, where: str, size: dict[str, int], selectors: list[str]
) -> list[str]:
    problems = []
    await page.evaluate("() => window.scrollTo(0, 0)")
    for selector, box in await page.evaluate(SHOWN_BOXES, selectors):
        if box is None:
            problems.append(f"{where}: {selector} is not shown")
        elif not inside(box, size):
            problems.append(f"{where}: {selector} is out of sight at {box}")
    return problems


async def page_height(page: EnginePage, where: str, size: dict[str, int]) -> list[str]:
    height = await page.evaluate("() => document.documentElement.scrollHeight")
    return [f"{where}: the page is {height} px tall"] if height > size["height"] + 0.5 else []
