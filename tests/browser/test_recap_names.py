"""Game over's recap lists each player's median reaction: your own row shows your name with
the "you" tag, as the podium does (it read "You YOU"). The card is drawn by the page's own
module (panels.js renderGameOver) from a finished game's state, in a real page."""

from __future__ import annotations

from browser_table import PHONE, Person
from crowd import open_room
from playwright.async_api import Browser

# A game Ann won against Bob, both with a median reaction.
DRAW_GAME_OVER = """async () => {
  const { renderGameOver } = await import('/static/js/panels.js');
  const state = {
    phase: 'over', game: 1, winner: 0, win_reason: 'cards', match: [], rules: {},
    you: {seat: 0, player: 'p1', host: true}, places: [0, 1],
    seats: [{seat: 0, name: 'Ann', player: 'p1', cards: 52, connected: true},
            {seat: 1, name: 'Bob', player: 'p2', cards: 0, out: true, connected: true}],
    stats: [{seat: 0, takes: 2, false_slaps: 0, best_ms: 150, median_ms: 180},
            {seat: 1, takes: 1, false_slaps: 1, best_ms: 170, median_ms: 210}],
  };
  renderGameOver(state, {});
  return [...document.querySelectorAll('#recap-medians .recap-name')].map((name) => ({
    name: name.querySelector('.name-text').textContent,
    you: name.querySelector('.you-tag') !== null,
  }));
}"""


async def test_your_own_median_reads_your_name_with_the_you_tag(
    base_url: str, browser: Browser
) -> None:
    person = await Person.open(browser, "phone", PHONE)
    await person.join(f"{base_url}/r/{await open_room(base_url)}", "Ann")
    rows = await person.page.evaluate(DRAW_GAME_OVER)
    assert rows == [{"name": "Ann", "you": True}, {"name": "Bob", "you": False}], rows
    assert person.problems == []
