"""Per-seat views: the one function that decides what a seat (or a spectator) may see.

In Slapjack nobody may see a face-down card, their own included, so every view shows only
counts, the face-up pile and public facts; it names the viewer so a client knows its seat.
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
    pile, sizes = game.pile, game.hand_sizes
    return {
        "players": game.players,
        "viewer": seat,
        "seats": [_seat_view(game, s, sizes[s]) for s in range(game.players)],
        "pile": {
            "id": game.pile_id,
            "count": len(pile),
            "top": [str(card) for card in pile[-PILE_CARDS_SHOWN:]],
        },
        "next": game.next_to_play,
        "slap_open": game.slap_open,
        "trigger": game.trigger,
        "trigger_lapsed": game.trigger_lapsed,
        "lapse_ms": None if game.lapse_at is None else _ms_left(game, game.lapse_at),
        "collect_ms": _ms_left(game, game.collect_until),
        "race": game.last_race,
        "winner": game.winner,
        "win_reason": game.win_reason,
        "stats": [{"seat": s, **game.stats(s).summary()} for s in range(game.players)],
        "rules": game.rules.to_dict(),
    }


def _seat_view(game: Game, seat: int, cards: int) -> dict[str, Any]:
    return {
        "seat": seat,
        "cards": cards,
        "out": game.is_out(seat),
        "frozen_ms": _ms_left(game, game.frozen_until(seat)),
    }


def _ms_left(game: Game, until: float) -> int:
    """Milliseconds from the game's `now` (its last action) to `until`, rounded up, never
    negative: a client counting down must not see the wait end early."""
    # Rounded to the microsecond first, so 2.5 - 1.9 reads 600 ms and not 601.
    return math.ceil(round(max(0.0, until - game.now) * 1000, 3))
