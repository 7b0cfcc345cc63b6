"""A whole game played in the browser: each person flips on their turn and slaps every
trigger with their own taps or keys until the game is over (shared by the game tests)."""

from __future__ import annotations

import asyncio

from browser_table import READ_TABLE, WAIT_MS, Person

# A time limit bounds the game: after it, the seat holding the most cards wins. Rooms are
# opened through the API, which takes limits the home page's whole minutes do not offer
# (test_malay goes through the home page's selects).
SHORT_GAME = {"freeze_seconds": 1, "time_limit": 10}
SHORT_GAME_SUMMARY = "1 s freeze · 10 s limit"
GAME_MS = 90_000  # an upper bound for the 10-second game, not a timing expectation

# What a player at the table does next, seen on their own page (polled in the page).
NEXT_MOVE = f"""() => {{
  const table = ({READ_TABLE})();
  if (table.phase === 'over') return 'over';
  if (table.phase !== 'playing' || table.out || table.frozen) return null;
  if (table.trigger) return 'slap';
  return table.myTurn ? 'flip' : null;
}}"""
# The slapped pile is gone (someone took it), or the game is over.
TRIGGER_GONE = "() => !document.body.dataset.trigger || document.body.dataset.phase !== 'playing'"


async def keep_playing(person: Person) -> None:
    """Flip on your turn and slap every trigger, with your own taps or keys, until the end."""
    while True:
        move = await person.page.wait_for_function(NEXT_MOVE, timeout=GAME_MS)
        match await move.json_value():
            case "over":
                return
            case "slap":
                await person.slap()
                # A second slap must not land on the next pile: wait for this one to go.
                await person.page.wait_for_function(TRIGGER_GONE, timeout=WAIT_MS)
            case "flip":
                await person.flip()


async def play_to_the_end(people: list[Person]) -> None:
    async with asyncio.timeout(GAME_MS / 1000), asyncio.TaskGroup() as players:
        for person in people:
            players.create_task(keep_playing(person))
