"""The one function that builds a `state` message: the engine's view of a seat plus room data.

Nothing here reads a Game's private state: cards come only from `game.view(seat)`, which
shows counts and the face-up pile and never a face-down card.
"""

from __future__ import annotations

from typing import Any

from app.protocol import MatchScore, Pile, SeatState, Seen, Spectator, State, You
from app.table import Person, Table, TableBot


def build_state(
    table: Table,
    person: Person | None,
    seat: int | None,
    cache: dict[int | None, Seen] | None = None,
) -> State:
    """What `person` (None: the bot in `seat`) may see of `table` right now. Everything but
    `you` depends only on the seat, so one broadcast builds it once per seat in `cache`."""
    cache = {} if cache is None else cache
    if seat not in cache:
        cache[seat] = _seen_from(table, seat)
    you = You(
        player=person.id if person is not None else None,
        seat=seat,
        host=person is not None and person.id == table.host,
    )
    return State(**cache[seat], you=you)


def _seen_from(table: Table, seat: int | None) -> Seen:
    game = table.game
    view = game.view(seat) if game is not None else None
    hands = view["seats"] if view is not None else None
    seats = range(game.players) if game is not None else range(len(table.seats))
    return {
        "room": table.code,
        "version": table.version,
        "phase": table.phase,
        "game": table.games,
        "first": table.first,
        "host": table.host,
        "seats": [_seat(table, i, hands[i] if hands is not None else None) for i in seats],
        "spectators": [
            Spectator(player=p.id, name=p.name, connected=True) for p in table.spectators()
        ],
        "pile": view["pile"] if view is not None else Pile(id=0, count=0, top=[]),
        "next": view["next"] if view is not None else None,
        "slap_open": view["slap_open"] if view is not None else False,
        "trigger": view["trigger"] if view is not None else None,
        "trigger_lapsed": view["trigger_lapsed"] if view is not None else False,
        "lapse_ms": view["lapse_ms"] if view is not None else None,
        "collect_ms": view["collect_ms"] if view is not None else 0,
        "race": view["race"] if view is not None else None,
        "winner": view["winner"] if view is not None else None,
        "win_reason": view["win_reason"] if view is not None else None,
        "stats": view["stats"] if view is not None else [],
        # The game's rules while one is on (the engine's copy), with the room's own.
        "rules": {
            **(view["rules"] if view is not None else table.rules.to_dict()),
            "lag_fair": table.lag_fair,
        },
        "players_needed": table.players_needed(),
        "places": table.places(),
        "match": [
            MatchScore(player=i if i in table.people else None, name=name, wins=wins)
            for i, name, wins in table.match_score()
        ],
    }


def _seat(table: Table, seat: int, hand: dict[str, Any] | None) -> SeatState | None:
    occupant = table.occupant(seat)
    if occupant is None:
        return None
    lag = table.lag.estimate(occupant.id) if isinstance(occupant, Person) else None
    bot = occupant if isinstance(occupant, TableBot) else None
    person = occupant if isinstance(occupant, Person) else None
    return {
        "seat": seat,
        "player": person.id if person is not None else None,
        "name": occupant.name,
        "avatar": person.avatar if person is not None else None,
        "bot": bot.level if bot is not None else None,
        "connected": person.connected if person is not None else True,
        "cards": hand["cards"] if hand is not None else 0,
        "out": hand["out"] if hand is not None else False,
        "frozen_ms": hand["frozen_ms"] if hand is not None else 0,
        "lag_ms": None if lag is None else round(lag * 1000),
    }
