"""Per-seat views: the one function that decides what a seat (or a spectator) may see.

In Slapjack nobody may see a face-down card, their own included, so every seat sees the same
table (`table_view`: counts, the face-up pile and public facts) and a seat's view only adds
who is looking (`player_view`). A server can build `table_view` once per change and share it.

Views are built from plain values (no `dataclasses.asdict`, which deep-copies field by field):
a server builds one for every change of every table. To show a new field, add one line to
the dict it belongs in (`table_view`, `_seat_view`, or `SeatStats.to_dict` for the stats).
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
    """What every seat and every spectator sees alike: `player_view` without the viewer."""
    pile, sizes, now = game.pile, game.hand_sizes, game.now
    return {
        "seats": [_seat_view(game, s, sizes[s], now) for s in range(game.players)],
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
        "stats": [{"seat": s, **game.stats(s).to_dict()} for s in range(game.players)],
        "rules": game.rules.to_dict(),
    }


def _seat_view(game: Game, seat: int, cards: int, now: float) -> dict[str, Any]:
    frozen_s = max(0.0, game.frozen_until(seat) - now)
    return {
        "seat": seat,
        "cards": cards,
        "out": game.is_out(seat),
        "frozen_ms": math.ceil(frozen_s * 1000),
    }
