"""Per-seat views: the one function that decides what a seat (or a spectator) may see.

In Slapjack nobody may see a face-down card, their own included, so every view shows only
counts, the face-up pile and public facts; it names the viewer so a client knows its seat.
"""

from __future__ import annotations

import math
from dataclasses import asdict
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
        "winner": game.winner,
        "win_reason": game.win_reason,
        "stats": [{"seat": s, **asdict(game.stats(s))} for s in range(game.players)],
        "rules": game.rules.to_dict(),
    }


def _seat_view(game: Game, seat: int, cards: int) -> dict[str, Any]:
    frozen_s = max(0.0, game.frozen_until(seat) - game.now)
    return {
        "seat": seat,
        "cards": cards,
        "out": game.is_out(seat),
        "frozen_ms": math.ceil(frozen_s * 1000),
    }
