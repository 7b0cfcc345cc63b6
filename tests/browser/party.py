"""A party at one table, for the layout tests: eight people with the longest names there
are (one page, seven socket guests), the big screen, and what to measure on each screen:
names whole, nothing overlapping, controls in sight without scrolling."""

from __future__ import annotations

import asyncio
from typing import Any

from browser_table import WAIT_MS, Person
from crowd import Guest
from engines import EnginePage
from playwright.async_api import Page, expect

# The four screens people play on, and the big screen.
SCREENS = {
    "360x740": {"width": 360, "height": 740},
    "844x390": {"width": 844, "height": 390},
    "768x1024": {"width": 768, "height": 1024},
    "1440x900": {"width": 1440, "height": 900},
}
# A common phone, wider than the small one: the recap's columns are checked on it too.
PHONE_390 = {"390x844": {"width": 390, "height": 844}}
TV = {"width": 1920, "height": 1080}
TV_TEXT_PX = 40  # names and counts on the big screen, read across a room
LANGUAGES = {"en": {"locale": "en-GB"}, "ms": {"locale": "ms-MY"}}

# Every name shown on the page (seats, podium, stats, photo finish): its text and box, the
# lines it takes, its font size, and whether any of it is cut (an ellipsis, or text wider or
# taller than its box, or than a box around it that clips).
NAMES = """(selector) => [...document.querySelectorAll(selector)]
  .filter((node) => node.getClientRects().length > 0)
  .map((node) => {
    const style = getComputedStyle(node);
    const r = node.getBoundingClientRect();
    let clipped = node.scrollWidth > node.clientWidth + 1
      || node.scrollHeight > node.clientHeight + 1;
    let ellipsis = false;
    for (let at = node; at && at !== document.body; at = at.parentElement) {
      const s = getComputedStyle(at);
      if (s.textOverflow === 'ellipsis' && s.overflow !== 'visible') ellipsis = true;
      if (at !== node && s.overflowX !== 'visible') {
        const c = at.getBoundingClientRect();
        if (r.left < c.left - 1 || r.right > c.right + 1) clipped = true;
      }
    }
    return {
      text: node.textContent, ellipsis, clipped,
      lines: Math.round(r.height / parseFloat(style.lineHeight)),
      px: parseFloat(style.fontSize),
      box: {left: r.left, top: r.top, right: r.right, bottom: r.bottom},
    };
  })"""

# Each name's words that a line break cuts in two: a word whose letters lie on more than one
# line (a hyphen joins two words: "Adeyemi-" may end a line).
BROKEN_WORDS = """(selector) => {
  const broken = [];
  for (const node of document.querySelectorAll(selector)) {
    if (!node.getClientRects().length) continue;
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const words = text.textContent.matchAll(/[^\\s-]+/g);
      for (const word of words) {
        const range = document.createRange();
        range.setStart(text, word.index);
        range.setEnd(text, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0)
          .map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(`${node.textContent}: "${word[0]}" broken`);
      }
    }
  }
  return broken;
}"""

# Each seat's visible parts (avatar, name, count, remove button) as one box.
SEAT_BOXES = """() => [...document.querySelectorAll('#seats .seat')].map((seat) => {
  const boxes = [...seat.querySelectorAll(
      '.seat-avatar, .seat-empty, .seat-name, .seat-cards, .seat-sit, .seat-tag')]
    .filter((n) => n.getClientRects().length > 0)
    .map((n) => n.getBoundingClientRect());
  return {
    seat: seat.dataset.seat,
    left: Math.min(...boxes.map((b) => b.left)), top: Math.min(...boxes.map((b) => b.top)),
    right: Math.max(...boxes.map((b) => b.right)),
    bottom: Math.max(...boxes.map((b) => b.bottom)),
  };
})"""


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


def inside(box: dict[str, Any], size: dict[str, int]) -> bool:
    return (
        box["left"] >= -0.5
        and box["top"] >= -0.5
        and box["right"] <= size["width"] + 0.5
        and box["bottom"] <= size["height"] + 0.5
    )


async def settle(page: Page) -> None:
    """Two frames: the page has drawn (and fitted its names) at the new size."""
    await page.evaluate(
        "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


async def names_whole(
    page: Page | EnginePage,
    where: str,
    selector: str,
    size: dict[str, int],
    min_px: float = 0,
    scrolls: bool = False,
) -> list[str]:
    """What is wrong with the names `selector` finds: cut, a word broken across lines, on
    more than two lines, outside the screen, or smaller than `min_px` (a name of two words
    or more: a single word too long for its box is set smaller). `scrolls`: they are in a
    card that scrolls up and down (game over on a phone), so only their sides must be on
    the screen."""
    problems = []
    for name in await page.evaluate(NAMES, selector):
        said = f"{where}: {name['text']!r}"
        if name["ellipsis"] or name["clipped"]:
            problems.append(f"{said} is cut ({name})")
        if name["lines"] > 2:
            problems.append(f"{said} takes {name['lines']} lines")
        box = name["box"]
        if scrolls and box["left"] >= -0.5 and box["right"] <= size["width"] + 0.5:
            continue
        if not inside(box, size):
            problems.append(f"{said} lies outside the screen {name['box']}")
        # A single word too long for its box shrinks below the smallest size to stay whole.
        if name["px"] < min_px and " " in name["text"].strip():
            problems.append(f"{said} is {name['px']} px, under {min_px}")
    problems += [f"{where}: {broken}" for broken in await page.evaluate(BROKEN_WORDS, selector)]
    return problems


# Seat names whose corners something else covers or clips (the felt's rounded edge, a
# card): the element at each corner, 2px in, must be the name itself. (Not under the
# game-over card, which covers the whole table on purpose.)
HIDDEN_CORNERS = """() => !document.getElementById('over').hidden ? [] :
  [...document.querySelectorAll('#seats .seat-name')]
  .filter((name) => name.getClientRects().length > 0)
  .filter((name) => {
    const r = name.getBoundingClientRect();
    const points = [[r.left + 2, r.top + 2], [r.right - 2, r.top + 2],
                    [r.left + 2, r.bottom - 2], [r.right - 2, r.bottom - 2]];
    return points.some(([x, y]) => {
      if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false;
      const hit = document.elementFromPoint(x, y);
      return !hit || !name.contains(hit) && !hit.contains(name);
    });
  })
  .map((name) => name.textContent)"""


async def seats_apart(
    page: Page, where: str, size: dict[str, int], scrolls: bool = False
) -> list[str]:
    """Seats clear of each other and on the screen (`scrolls`: across it, the page scrolls
    down to them)."""
    problems = []
    seats = await page.evaluate(SEAT_BOXES)
    for i, first in enumerate(seats):
        across = first["left"] >= -0.5 and first["right"] <= size["width"] + 0.5
        if not (inside(first, size) or (scrolls and across)):
            problems.append(f"{where}: seat {first['seat']} lies outside the screen {first}")
        for second in seats[i + 1 :]:
            if overlap(first, second):
                problems.append(f"{where}: seats {first['seat']} and {second['seat']} overlap")
    for name in await page.evaluate(HIDDEN_CORNERS):
        problems.append(f"{where}: {name!r} is partly hidden")
    return problems


async def in_sight(page: Page, where: str, selectors: list[str]) -> list[str]:
    """Each of `selectors` is wholly on the first screen, without scrolling."""
    await page.evaluate("() => window.scrollTo(0, 0)")
    size = page.viewport_size
    assert size is not None
    problems = []
    for selector in selectors:
        found = page.locator(selector).first
        box = await found.bounding_box() if await found.count() else None
        if box is None:
            problems.append(f"{where}: {selector} is not shown")
            continue
        edges = {
            "left": box["x"],
            "top": box["y"],
            "right": box["x"] + box["width"],
            "bottom": box["y"] + box["height"],
        }
        if not inside(edges, size):
            problems.append(f"{where}: {selector} is out of sight at {edges}")
    return problems


# The recap's median rows as laid out: each row's cells (place, name, time), line by line,
# with the number a list draws before a row of plain text (its marker, measured in the
# row's font); the times apart, with the column their row stands in.
RECAP_CELLS = """() => {
  const recap = document.getElementById('recap');
  const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const pen = document.createElement('canvas').getContext('2d');
  const cells = [];
  [...recap.querySelectorAll('#recap-medians > li')].forEach((row, index) => {
    const r = row.getBoundingClientRect();
    const style = getComputedStyle(row);
    const first = cells.length;
    for (const part of row.children.length ? [...row.children] : [row]) {
      const range = document.createRange();
      range.selectNodeContents(part);
      for (const rect of range.getClientRects()) {
        if (rect.width > 0) cells.push({row: index, text: part.textContent, ...box(rect)});
      }
    }
    if (style.display === 'list-item' && cells.length > first) {
      pen.font = style.font;
      const width = pen.measureText(`${index + 1}. `).width;
      const line = cells[first];
      const marker = {left: r.left - width, top: line.top, right: r.left, bottom: line.bottom};
      cells.push({row: index, text: `marker ${index + 1}`, ...marker});
    }
  });
  const times = [...recap.querySelectorAll('#recap-medians > li > .recap-ms')].map((time) => ({
    text: time.textContent, column: Math.round(time.parentElement.getBoundingClientRect().left),
    right: time.getBoundingClientRect().right,
  }));
  return {recap: box(recap.getBoundingClientRect()), cells, times,
          rows: recap.querySelectorAll('#recap-medians > li').length};
}"""


async def recap_readable(page: Page, where: str, size: dict[str, int]) -> list[str]:
    """The recap's medians: no two cells overlap, each within the recap, the times in a
    column of their own and lined up, the names whole."""
    laid = await page.evaluate(RECAP_CELLS)
    problems = []
    cells, edge = laid["cells"], laid["recap"]
    for i, cell in enumerate(cells):
        if cell["left"] < edge["left"] - 0.5 or cell["right"] > edge["right"] + 0.5:
            problems.append(f"{where} recap: {cell['text']!r} sticks out of the recap")
        for other in cells[i + 1 :]:
            if other["row"] == cell["row"] and other["text"] == cell["text"]:
                continue  # two lines of one cell
            if overlap(cell, other):
                problems.append(f"{where} recap: {cell['text']!r} overlaps {other['text']!r}")
    if len(laid["times"]) != laid["rows"]:
        problems.append(f"{where} recap: {laid['rows']} rows, {len(laid['times'])} times apart")
    columns: dict[int, list[float]] = {}
    for time in laid["times"]:
        columns.setdefault(time["column"], []).append(time["right"])
    for column, rights in columns.items():
        if max(rights) - min(rights) > 1:
            problems.append(f"{where} recap: the times at {column} do not line up {rights}")
    return problems + await names_whole(
        page, f"{where} recap", "#recap .name-text", size, scrolls=True
    )


def seat_of(guest: Guest) -> int | None:
    seat: int | None = (guest.state.get("you") or {}).get("seat")
    return seat


async def flip_until_a_trigger(host: Person, guests: list[Guest]) -> dict[str, Any]:
    """Whoever's turn it is flips (the host on the page, a guest through its socket) until
    a trigger shows; returns the state it shows in."""
    watcher = guests[0]
    for _ in range(300):
        state = watcher.state
        if state.get("phase") != "playing":
            raise AssertionError(f"the game ended first: {state.get('phase')}")
        if state.get("trigger") and not state.get("trigger_lapsed"):
            return state
        turn = state.get("next")
        flipper = next((g for g in guests if seat_of(g) == turn), None)
        if flipper is None:
            table = await host.table()
            if table["myTurn"] and not table["trigger"] and not table["frozen"]:
                await host.flip()
            else:
                await asyncio.sleep(0.05)
            continue
        version = state.get("version", 0)
        reply = await flipper.call("flip")
        if not reply["ok"]:
            await asyncio.sleep(0.05)
            continue
        async with asyncio.timeout(WAIT_MS / 1000):
            while watcher.state.get("version", 0) <= version:
                await asyncio.sleep(0.02)
    raise AssertionError("no trigger in 300 flips")


async def wait_for(guest: Guest, test: Any, what: str) -> None:
    async with asyncio.timeout(WAIT_MS / 1000):
        while not test(guest.state):
            await asyncio.sleep(0.05)
    assert test(guest.state), what


async def photograph(page: Page, path: Any) -> None:
    await expect(page.locator("body")).not_to_have_attribute("data-phase", "connecting")
    await page.screenshot(path=path)


# The longest recap a game can end with: a row for each of eight players with a long name
# and a five-figure median. Written over the finished game's own rows (the names must be
# its players': the checks know them); the page fits names again on a resize.
WORST_RECAP = """(names) => {
  const list = document.getElementById('recap-medians');
  const first = list.firstElementChild;
  list.replaceChildren(...names.map((name, i) => {
    const row = first.cloneNode(true);
    row.querySelector('.recap-place').textContent = `${i + 1}.`;
    row.querySelector('.name-text').textContent = name;
    row.querySelector('.recap-ms').textContent = `${10000 + i * 1111} ms`;
    return row;
  }));
  window.dispatchEvent(new Event('resize'));
}"""


async def worst_recap(page: Page, names: list[str]) -> None:
    """Sets the recap's medians to WORST_RECAP's rows, the widest names (most W and M)
    first: the big screen shows the first four."""
    widest = sorted(names, key=lambda n: (-n.count("W") - n.count("M"), n))
    await page.evaluate(WORST_RECAP, widest)
    await settle(page)
