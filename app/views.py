"""The one function that builds a `state` message: the engine's view of a seat plus room data.

Nothing here reads a Game's private state: cards come only from `game.view(seat)`, which
shows counts and the face-up pile and never a face-down card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.bots import Bot
from app.people import Person
from app.protocol import Pile, SeatState, Seen, Spectator, State, You

if TYPE_CHECKING:
    from app.rooms import Room


def build_state(
    room: Room,
    person: Person | None,
    seat: int | None,
    cache: dict[int | None, Seen] | None = None,
) -> State:
    """What `person` (None: the bot in `seat`) may see of `room` right now. Everything but
    `you` depends only on the seat, so one broadcast builds it once per seat in `cache`."""
    cache = {} if cache is None else cache
    if seat not in cache:
        cache[seat] = _seen_from(room, seat)
    you = You(
        player=person.id if person is not None else None,
        seat=seat,
        host=person is not None and person is room.host,
    )
    return State(**cache[seat], you=you)


def _seen_from(room: Room, seat: int | None) -> Seen:
    game = room.game
    view = game.view(seat) if game is not None else None
    table = view["seats"] if view is not None else None
    occupants = room.seats[: game.players] if game is not None else room.seats
    return {
        "room": room.code,
        "version": room.version,
        "phase": room.phase,
        "game": room.games,
        "first": room.first,
        "host": room.host.id if room.host is not None else None,
        "seats": [
            _seat(i, occupant, table[i] if table is not None else None)
            for i, occupant in enumerate(occupants)
        ],
        "spectators": [
            Spectator(player=p.id, name=p.name, connected=True) for p in room.spectators()
        ],
        "pile": view["pile"] if view is not None else Pile(id=0, count=0, top=[]),
        "next": view["next"] if view is not None else None,
        "slap_open": view["slap_open"] if view is not None else False,
        "trigger": view["trigger"] if view is not None else None,
        "winner": view["winner"] if view is not None else None,
        "win_reason": view["win_reason"] if view is not None else None,
        "stats": view["stats"] if view is not None else [],
        "rules": view["rules"] if view is not None else room.rules.to_dict(),
    }


def _seat(
    seat: int, occupant: Person | Bot | None, table: dict[str, Any] | None
) -> SeatState | None:
    if occupant is None:
        return None
    bot = occupant if isinstance(occupant, Bot) else None
    person = occupant if not isinstance(occupant, Bot) else None
    return {
        "seat": seat,
        "player": person.id if person is not None else None,
        "name": occupant.name,
        "bot": bot.level if bot is not None else None,
        "connected": person.connected if person is not None else True,
        "cards": table["cards"] if table is not None else 0,
        "out": table["out"] if table is not None else False,
        "frozen_ms": table["frozen_ms"] if table is not None else 0,
    }
