"""A whole game in each engine the players' phones run (Chromium, Firefox, WebKit), on the
LAN address (no secure context): one person at a phone-sized page against a bot, with real
taps, from the lobby to game over, with no script error, axe-core finding nothing in the
lobby, at play and at game over, and the page answering the lag pings that ride on its
states (the game is judged lag-fair)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from axe_check import ALWAYS, AXE
from browser_table import READ_TABLE
from crowd import open_room
from engines import EnginePage, OpenPage, lan_url
from whole_game import GAME_MS, NEXT_MOVE, SHORT_GAME, TRIGGER_GONE

FLIP_LANDED = f"""(before) => {{
  const table = ({READ_TABLE})();
  return table.phase !== 'playing' || table.cards !== before || !table.myTurn;
}}"""
TRY_MS = 2_000  # one try at a tap before asking the page again what to do
# axe-core, injected as the page's own script would not be (its policy refuses inline
# scripts); then every violation that fails a state, one line each.
RUN_AXE = """async (always) => {
  await Promise.all(document.getAnimations()
    .filter((a) => a.effect.getComputedTiming().iterations !== Infinity)
    .map((a) => a.finished.catch(() => null)));
  const result = await axe.run(document, {resultTypes: ['violations']});
  const targets = (v) => JSON.stringify(v.nodes.slice(0, 2).map((n) => n.target));
  return result.violations.filter((v) => v.impact || always.includes(v.id))
    .map((v) => `${v.id} (${v.impact}): ${targets(v)}`);
}"""


PONGS = 'slapjack_events_handled_total{event="pong"}'


async def pongs(base_url: str) -> float:
    """The `pong`s the server has handled: every page's answers to its lag pings."""
    async with httpx.AsyncClient(base_url=base_url) as http:
        text = (await http.get("/metrics")).text
    found = [line.split()[-1] for line in text.splitlines() if line.startswith(PONGS + " ")]
    return float(found[0]) if found else 0.0


async def axe(page: EnginePage, state: str) -> list[str]:
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        source = AXE.read_text()
        await page.evaluate(f"() => {{ {source}\n; window.axe = axe; }}")
    found = await page.evaluate(RUN_AXE, sorted(ALWAYS))
    return [f"{page.engine} {state}: {line}" for line in found]


async def tap(page: EnginePage, selector: str) -> bool:
    """Taps `selector` if it is shown within a moment; False when it was not."""
    try:
        await page.click(selector, TRY_MS)
    except (TimeoutError, RuntimeError):
        return False
    return True


async def play_to_the_end(page: EnginePage) -> None:
    deadline = time.monotonic() + GAME_MS / 1000
    while time.monotonic() < deadline:
        move = await page.wait_for(NEXT_MOVE, timeout_ms=GAME_MS)
        if move == "over":
            return
        if move == "slap":
            if await tap(page, "#slap"):
                await page.wait_for(TRIGGER_GONE)
        elif move == "flip":
            cards = (await page.evaluate(READ_TABLE))["cards"]
            if await tap(page, "#flip"):
                await page.wait_for(FLIP_LANDED, cards)
    raise AssertionError("the game did not end")


@pytest.mark.engines
@pytest.mark.timeout(240)
async def test_a_whole_game_against_a_bot(
    base_url: str, open_page: OpenPage, engine: str, screenshots: Path
) -> None:
    page = await open_page(engine, 390, 844)
    code = await open_room(base_url, {**SHORT_GAME, "lag_fair": True})
    await page.goto(lan_url(f"{base_url}/r/{code}"))
    assert await page.evaluate("() => window.isSecureContext") is False
    await page.type("#name-input", "Ann")
    await page.click("#name-form button[type=submit]")
    await page.wait_for("() => document.querySelector('.seat--you') !== null")
    await page.click("[data-bot=easy]")
    await page.wait_for("() => document.querySelectorAll('.seat-tag--bot').length === 1")
    problems = await axe(page, "lobby with a bot")
    await page.click("#start")
    await page.wait_for("() => document.body.dataset.phase === 'playing'")
    answered = await pongs(base_url)  # the page is measured by now: its pings ride on states
    problems += await axe(page, "playing")
    await play_to_the_end(page)
    # A ping rides on the page's first state after each 2 s ping time of the 10 s game; a page
    # that left those unanswered would answer nothing after its first (tests/app, lag pings).
    assert await pongs(base_url) >= answered + 2, "the page answered no ping riding on a state"
    await page.wait_for("() => !document.getElementById('over').hidden")
    title = await page.evaluate("() => document.getElementById('over-title').textContent")
    assert "win" in title, title
    problems += await axe(page, "game over")
    await page.screenshot(screenshots / f"{engine}-game-over-390x844.png")
    problems += await page.errors()
    assert problems == [], "\n".join(problems)
