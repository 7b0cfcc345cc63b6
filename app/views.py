"""The one place that builds `state` messages: the engine's view of the table plus room data.

Nothing here reads a Game's private state: cards come only from the engine's views, which
show counts and the face-up pile and never a face-down card. In Slapjack every seat sees the
same table (engine.views.table_view), so a change builds one `Seen` for everyone, encodes it
once, and each person's `state` is that JSON with their own `you` spliced in at the end.
The events the change caused travel inside it (`events`), so a change costs each
recipient one message.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from app.events import EventDict
from app.outgoing import Encoded, event_head, to_json
from app.protocol import STATE, MatchScore, Pile, SeatState, Seen, Spectator, State, You
from app.table import Person, Table

# `you` texts kept (about 150 bytes each): several for every person of a few thousand
# tables, who each hold one at a time. Past that, the oldest are made again when needed.
YOU_TEXTS = 32768


class Views:
    """One change's view of a table, built and encoded at most once, shared by every
    recipient and every bot planning from it. Make a new one after each change, with the
    events it caused (none for a view that is not sent: a bot's plan, a timer's)."""

    __slots__ = ("_head", "_seen", "events", "table")

    def __init__(self, table: Table, events: Sequence[EventDict] = ()) -> None:
        self.table = table
        self.events = list(events)
        self._seen: Seen | None = None
        self._head: str | None = None  # the text up to `you`, the same for everyone

    @property
    def seen(self) -> Seen:
        if self._seen is None:
            self._seen = _seen_from(self.table, self.events)
        return self._seen

    def state(self, person: Person | None, seat: int | None) -> State:
        """What `person` (None: the bot in `seat`) may see of the table."""
        return State(**self.seen, you=_you(self.table, person, seat))

    def message(self, person: Person, seat: int | None) -> Encoded:
        """`person`'s `state`, encoded: the shared JSON with their `you` last (where
        `State(**seen, you=...)` puts it, so the text is what encoding the state gives)."""
        if self._head is None:
            self._head = f'{event_head(STATE)}{to_json(self.seen)[:-1]},"you":'
        you = _you_text(person.id, seat, person.id == self.table.host)
        return Encoded(STATE, f"{self._head}{you}}}]")


def build_state(
    table: Table, person: Person | None, seat: int | None, events: Sequence[EventDict] = ()
) -> State:
    """What `person` (None: the bot in `seat`) may see of `table` right now, after the
    change that caused `events`."""
    return Views(table, events).state(person, seat)


def _you(table: Table, person: Person | None, seat: int | None) -> You:
    if person is None:
        return _you_of(None, seat, False)
    return _you_of(person.id, seat, person.id == table.host)


def _you_of(player: str | None, seat: int | None, host: bool) -> You:
    return {"player": player, "seat": seat, "host": host}


@functools.lru_cache(maxsize=YOU_TEXTS)
def _you_text(player: str, seat: int | None, host: bool) -> str:
    """`_you`'s JSON, made once per person, seat and hosting: the same text goes into every
    state they get until one of the three changes."""
    return to_json(_you_of(player, seat, host))


def _seen_from(table: Table, events: list[EventDict]) -> Seen:
    game = table.game
    view = game.table_view() if game is not None else None
    hands = view["seats"] if view is not None else None
    seats = range(game.players) if game is not None else range(len(table.seats))
    return {
        "room": table.code,
        "version": table.version,
        "phase": table.phase,
        "game": table.games,
        "first": table.first,
        "host": table.host,
        "seats": _seats(table, hands, seats),
        "spectators": [
            Spectator(player=p.id, name=p.name, connected=True) for p in table.spectators()
        ],
        "pile": view["pile"] if view is not None else Pile(id=0, count=0, top=[], burned=0),
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
        "events": events,  # last but `you`: a reader of the first bytes finds `version` soon
    }


def _seats(
    table: Table, hands: list[dict[str, Any]] | None, seats: range
) -> list[SeatState | None]:
    """Each seat's occupant and hand, in one pass (a view is built for every change)."""
    people, bots, lag = table.people, table.bots, table.lag
    shown: list[SeatState | None] = []
    for seat in seats:
        occupant = table.seats[seat]
        if occupant is None:
            shown.append(None)
            continue
        hand = hands[seat] if hands is not None else None
        bot = bots.get(occupant)
        if bot is not None:
            name, level = bot.name, bot.level
            player, avatar, connected, lag_ms = None, None, True, None
        else:
            person = people[occupant]
            name, player, avatar = person.name, person.id, person.avatar
            level, connected = None, person.connected
            estimate = lag.estimate(occupant)
            lag_ms = None if estimate is None else round(estimate * 1000)
        shown.append(
            {
                "seat": seat,
                "player": player,
                "name": name,
                "avatar": avatar,
                "bot": level,
                "connected": connected,
                "cards": hand["cards"] if hand is not None else 0,
                "out": hand["out"] if hand is not None else False,
                "frozen_ms": hand["frozen_ms"] if hand is not None else 0,
                "lag_ms": lag_ms,
            }
        )
    return shown
