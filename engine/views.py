"""Per-seat views: the one function that decides what a seat (or a spectator) may see.

In Slapjack nobody may see a face-down card, their own included, so every seat sees the same
table (`table_view`: counts, the face-up pile and public facts) and a seat's view only adds
who is looking (`player_view`). A server builds one table view per change and shares it,
from `table_view`'s parts (`seat_rows`, `table_facts`, `Game.stats_figures` and the rules),
so it can keep the parts that did not change.

Views are built from plain values (no `dataclasses.asdict`, which deep-copies field by field):
a server builds one for every change of every table. To show a new field, add it where it
belongs: `table_facts`, a seat's in `seat_rows` (and `table_view`'s seats), or
`SeatStats._figures` for the stats; app/tables/views.py shows what these give.
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
    also read one by one (app/tables/views.py, keeping what did not change since the last view)."""
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
    tuples. (Read from the game's fields, as `table_facts` is: see there.)"""
    now = game._now
    return [
        (len(hand), out, 0 if until <= now else _ms_left(now, until))
        for hand, out, until in zip(game._hands, game._out, game._frozen, strict=True)
    ]


def table_facts(game: Game) -> dict[str, Any]:
    """`table_view` but its seats, stats and rules: the pile, the turn, the trigger and its
    timings, the last race and the result. Read from the game's fields, not through its
    properties (each a call, and a server makes this for every change of every table):
    what each shows is the property of the same name, which an invariant of
    tests/engine/test_properties.py holds it to."""
    now, pile, trigger, race = game._now, game._pile, game._trigger, game._race
    lapse_at = game.lapse_at if trigger is not None else None
    return {
        "pile": {
            "id": game._pile_id,
            "count": len(pile),
            "top": [card.text for card in pile[-PILE_CARDS_SHOWN:]],
            "burned": game._burned,
        },
        "next": game._next,
        "slap_open": trigger is not None,
        "trigger": trigger,
        "trigger_lapsed": trigger is not None and game._lapsed,
        "lapse_ms": None if lapse_at is None else _ms_left(now, lapse_at),
        "collect_ms": _ms_left(now, game._collect_until),
        "race": None if race is None else race.public(),
        "winner": game._winner,
        "win_reason": game._win_reason,
    }


def _ms_left(now: float, until: float) -> int:
    """Milliseconds from the game's `now` (its last action) to `until`, rounded up, never
    negative: a client counting down must not see the wait end early."""
    if until <= now:
        return 0
    # Rounded to the microsecond first, so 2.5 - 1.9 reads 600 ms and not 601.
    return math.ceil(round((until - now) * 1000, 3))
