"""Per-seat views: the one function that decides what a seat (or a spectator) may see.

In Slapjack nobody may see a face-down card, their own included, so every seat sees the same
table (`table_view`: counts, the face-up pile and public facts) and a seat's view only adds
who is looking (`player_view`). A server builds one table view per change and shares it,
from `table_view`'s parts (`seat_rows`, `table_facts`, `Game.stats_figures` and the rules),
so it can keep the parts that did not change.

Views are built from plain values (no `dataclasses.asdict`, which deep-copies field by field):
a server builds one for every change of every table. To show a new field, add it where it
belongs: `table_facts`, a seat's in `seat_rows` (and `table_view`'s seats), or
`SeatStats._figures` for the stats; app/views.py shows what these give.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.game import Game

PILE_CARDS_SHOWN = 3


def player_view(game: Game, seat: int | None) -> dict[str, Any]:
    """JSON-ready: seats' card counts and states, the top of the pile, whose turn, the result."""
    if seat is not None:
        game.is_out(seat)  # raises bad_seat for a seat that does not exist
    return {"players": game.players, "viewer": seat, **table_view(game)}


def table_view(game: Game) -> dict[str, Any]:
    """What every seat and every spectator sees alike: `player_view` without the viewer.
    Made of `seat_rows`, `table_facts`, the seats' stats and the rules, which a server may
    also read one by one (app/views.py, keeping what did not change since the last view)."""
    return {
        "seats": [
            {"seat": seat, "cards": cards, "out": out, "frozen_ms": frozen_ms}
            for seat, (cards, out, frozen_ms) in enumerate(seat_rows(game))
        ],
        **table_facts(game),
        "stats": game.stats_by_seat(),
        "rules": game.rules.to_dict(),
    }


def seat_rows(game: Game) -> list[tuple[int, bool, int]]:
    """Every seat's (cards held, out, frozen_ms) in seat order: `table_view`'s seats as
    tuples."""
    now = game.now
    return [(cards, out, _ms_left(now, until)) for cards, out, until in game.seat_facts()]


def table_facts(game: Game) -> dict[str, Any]:
    """`table_view` but its seats, stats and rules: the pile, the turn, the trigger and its
    timings, the last race and the result."""
    now = game.now
    lapse_at = game.lapse_at
    return {
        "pile": {
            "id": game.pile_id,
            "count": game.pile_size,
            "top": game.pile_top(PILE_CARDS_SHOWN),
            "burned": game.pile_burned,
        },
        "next": game.next_to_play,
        "slap_open": game.slap_open,
        "trigger": game.trigger,
        "trigger_lapsed": game.trigger_lapsed,
        "lapse_ms": None if lapse_at is None else _ms_left(now, lapse_at),
        "collect_ms": _ms_left(now, game.collect_until),
        "race": game.last_race,
        "winner": game.winner,
        "win_reason": game.win_reason,
    }


def _ms_left(now: float, until: float) -> int:
    """Milliseconds from the game's `now` (its last action) to `until`, rounded up, never
    negative: a client counting down must not see the wait end early."""
    if until <= now:
        return 0
    # Rounded to the microsecond first, so 2.5 - 1.9 reads 600 ms and not 601.
    return math.ceil(round((until - now) * 1000, 3))
