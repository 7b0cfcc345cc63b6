"""The one place that builds `state` messages: the engine's view of the table plus room data.

Nothing here reads a Game's private state: cards come only from the engine's views, which
show counts and the face-up pile and never a face-down card. In Slapjack every seat sees the
same table (engine.views.table_view, read here part by part), so a change builds one `SeatView`
for everyone, encodes it once, and each person's `state` is that JSON with their own `you`
spliced in at the end. The parts that change seldom (the stats, the rules, and who is at the
table) are encoded once per change of theirs, not once per change of the table (ViewParts).
The events the change caused travel inside it (`events`), so a change costs each
recipient one message.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple, cast

import orjson

from app.tables.events import EventDict
from app.tables.table import Person, Phase, Table
from app.wire.encoded import Encoded, event_head, to_json
from app.wire.protocol import STATE, HeatView, SeatState, SeatView, State, You
from engine.rules import Rules
from engine.views import seat_rows, table_facts

# `you` texts kept (about 150 bytes each): several for every person of a few thousand
# tables, who each hold one at a time. Past that, the oldest are made again when needed.
YOU_TEXTS = 32768


NO_STATS = orjson.Fragment(b"[]")  # the stats while no game is on


class Roster(NamedTuple):
    """Who is at the table, as a view shows it: its fields that no move of a game changes
    (`_roster`), as values or as the JSON a ViewParts kept. `heat` is `{}` or `{"heat": ...}`."""

    spectators: Any
    players_needed: Any
    places: Any
    match: Any
    heat: dict[str, Any]


class ViewParts:
    """What one table's views reuse from change to change.

    The JSON of the seats' stats and of the rules is kept with the very objects it was made
    from (the engine's figures, which are read-only and replaced when they change, and the
    frozen rules) and made again as soon as one is another object.

    The roster (`Roster`: spectators, players needed, places, match score, heat) is read from
    people, seats, bots, wins and heat, which are changed in place; it is kept for one
    change that was a single move of the game (a play or a tick) in the same phase, and
    made again after any other. The Room numbers every change it commits (`Table.version`)
    and the table counts every move (`Table.moves_made`), so "one version and one move
    later, same phase" is a change that was that move and nothing else: a move changes
    nobody's seat, name, connection or wins but by ending the game, which changes the phase.
    A table changed outside a commit (a host's role passed with nobody to take it, a join
    that failed half-way) is the Room's to tell (`forget`). In the test suite every roster
    kept is compared with one made afresh, and one gone stale is told to `ViewParts.stale`
    (the fresh one is sent). A Room keeps one for its table; a Views without one makes
    these anew."""

    __slots__ = ("_roster", "_rules", "_stats")

    stale: ClassVar[list[str] | None] = None  # tests: each roster that went stale, told here

    def __init__(self) -> None:
        # Each part's JSON last, after the objects it was made from.
        self._rules: tuple[Rules, tuple[bool, bool], orjson.Fragment] | None = None
        self._stats: tuple[tuple[Mapping[str, int | None], ...], orjson.Fragment]
        self._stats = ((), NO_STATS)
        # The roster's JSON, after the version, moves made and phase it was made at.
        self._roster: tuple[int, int, Phase, Roster] | None = None

    def roster(self, table: Table) -> Roster:
        kept, version, moves, phase = self._roster, table.version, table.moves_made, table.phase
        if kept is not None and (version, moves, phase) == (kept[0] + 1, kept[1] + 1, kept[2]):
            roster = kept[3]
            if ViewParts.stale is not None and not _current(roster, table, ViewParts.stale):
                roster = _encoded(_roster(table))
        else:
            roster = _encoded(_roster(table))
        self._roster = (version, moves, phase, roster)
        return roster

    def forget(self) -> None:
        """The table changed outside a commit: the next view reads the roster afresh."""
        self._roster = None

    def rules(self, rules: Rules, room_rules: tuple[bool, bool]) -> orjson.Fragment:
        kept = self._rules
        if kept is None or kept[0] is not rules or kept[1] != room_rules:
            kept = self._rules = (
                rules,
                room_rules,
                orjson.Fragment(to_json(_rules_shown(rules, room_rules))),
            )
        return kept[2]

    def stats(self, figures: tuple[Mapping[str, int | None], ...]) -> orjson.Fragment:
        kept = self._stats
        if len(kept[0]) != len(figures) or not all(map(operator.is_, kept[0], figures)):
            kept = self._stats = (figures, orjson.Fragment(to_json(_stats_shown(figures))))
        return kept[1]


class Views:
    """One change's view of a table, built and encoded at most once, shared by every
    recipient and every bot planning from it. Make a new one after each change, with the
    events it caused (none for a view that is not sent: a bot's plan, a timer's), and the
    table's ViewParts where there is one."""

    __slots__ = ("_head", "_parts", "_seen", "events", "table")

    def __init__(
        self, table: Table, events: Sequence[EventDict] = (), parts: ViewParts | None = None
    ) -> None:
        self.table = table
        self.events = list(events)
        self._parts = parts
        self._seen: SeatView | None = None
        self._head: str | None = None  # the text up to `you`, the same for everyone

    @property
    def seen(self) -> SeatView:
        if self._seen is None:
            self._seen = _seen_from(self.table, self.events)
        return self._seen

    def state(self, person: Person | None, seat: int | None) -> State:
        """What `person` (None: the bot in `seat`) may see of the table."""
        return cast(State, {**self.seen, "you": _you(self.table, person, seat)})  # no `ping`

    def message(self, person: Person, seat: int | None, ping: str | None = None) -> Encoded:
        """`person`'s `state`, encoded: the shared JSON with their `you` last (where
        `State(**seen, you=...)` puts it, so the text is what encoding the state gives),
        and after it the id of a lag `ping` riding on it, if one does. The shared JSON is
        made without `seen`: the same fields, with the stats and rules the ViewParts kept."""
        head = self.shared()
        you = _you_text(person.id, seat, person.id == self.table.host)
        if ping is not None:  # hex digits (app/tables/lag.py): nothing to escape
            return Encoded(STATE, f'{head}{you},"ping":"{ping}"}}]')
        return Encoded(STATE, f"{head}{you}}}]")

    def shared(self) -> str:
        """The text of every `message` up to its `you`: encoded once, at the first ask."""
        if self._head is None:
            self._head = f'{event_head(STATE)}{to_json(self._encodable())[:-1]},"you":'
        return self._head

    def _encodable(self) -> dict[str, Any]:
        """`seen`'s fields with the stats and rules as the ViewParts keeps their JSON."""
        table, parts = self.table, self._parts or ViewParts()
        game = table.game
        rules = game.rules if game is not None else table.rules
        stats = parts.stats(game.stats_figures()) if game is not None else NO_STATS
        shown = parts.rules(rules, _room_rules(table))
        return _compose(table, self.events, stats, shown, parts.roster(table))


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


def _seen_from(table: Table, events: list[EventDict]) -> SeatView:
    game = table.game
    rules = game.rules if game is not None else table.rules
    stats = game.stats_by_seat() if game is not None else []
    shown = _rules_shown(rules, _room_rules(table))
    return cast(SeatView, _compose(table, events, stats, shown, _roster(table)))


def _room_rules(table: Table) -> tuple[bool, bool]:
    """The room's own rules (not the engine's), in the order the protocol shows them."""
    return table.lag_fair, table.false_starts


def _rules_shown(rules: Rules, room_rules: tuple[bool, bool]) -> dict[str, Any]:
    """The game's rules while one is on (the engine's copy), with the room's own."""
    lag_fair, false_starts = room_rules
    return {**rules.to_dict(), "lag_fair": lag_fair, "false_starts": false_starts}


def _stats_shown(figures: tuple[Mapping[str, int | None], ...]) -> list[dict[str, int | None]]:
    """What the engine's `stats_by_seat` gives, from the figures read."""
    return [{"seat": seat, **shown} for seat, shown in enumerate(figures)]


def _no_game() -> dict[str, Any]:
    """`table_facts` while no game is on (a new dict each time: a view's are its own)."""
    return {
        "pile": {"id": 0, "count": 0, "top": [], "burned": 0},
        "next": None,
        "slap_open": False,
        "trigger": None,
        "trigger_lapsed": False,
        "lapse_ms": None,
        "collect_ms": 0,
        "race": None,
        "winner": None,
        "win_reason": None,
    }


def _compose(
    table: Table, events: list[EventDict], stats: Any, rules: Any, roster: Roster
) -> dict[str, Any]:
    """A `SeatView`'s fields, in its order, with the `stats`, `rules` and `roster` given (as
    values, or as the JSON a ViewParts kept). Every other field is read from the table and
    the engine's view (`seat_rows`, `table_facts`): nothing here reads a game's private
    state."""
    game = table.game
    if game is not None:
        seats = _seats(table, seat_rows(game), range(game.players))
        facts = table_facts(game)
    else:
        # A heat's seats are dealt (0, 1, ...): none free to offer.
        shown = table.seated() if table.heat is not None else len(table.seats)
        seats = _seats(table, None, range(shown))
        facts = _no_game()
    return {
        "room": table.code,
        "version": table.version,
        "phase": table.phase,
        "game": table.games,
        "first": table.first,
        "host": table.host,
        "owner": table.owner,
        "locked": table.locked,
        "seats": seats,
        "spectators": roster.spectators,
        **facts,  # pile ... win_reason
        "stats": stats,
        "rules": rules,
        "players_needed": roster.players_needed,
        "places": roster.places,
        "match": roster.match,
        **roster.heat,
        "events": events,  # last but `you`: a reader of the first bytes finds `version` soon
    }


def _roster(table: Table) -> Roster:
    """Who is at the table (`Roster`), as values."""
    people = table.people
    return Roster(
        [{"player": p.id, "name": p.name, "connected": True} for p in table.spectators()],
        table.players_needed(),
        table.places(),
        [
            {"player": i if i in people else None, "name": name, "wins": wins}
            for i, name, wins in table.match_score()
        ],
        _heat_shown(table),
    )


def _fragment(value: Any) -> orjson.Fragment:
    return orjson.Fragment(to_json(value))


def _encoded(roster: Roster) -> Roster:
    spectators, needed, places, match, heat = roster
    return Roster(
        _fragment(spectators),
        _fragment(needed),
        _fragment(places),
        _fragment(match),
        {name: _fragment(shown) for name, shown in heat.items()},
    )


def _current(kept: Roster, table: Table, stale: list[str]) -> bool:
    """Whether the roster kept is the one the table gives now; if not, says so in `stale`."""
    kept_json = [to_json(part) for part in kept]
    made_json = [to_json(part) for part in _roster(table)]
    if kept_json != made_json:
        stale.append(f"room {table.code} version {table.version}: {kept_json} for {made_json}")
    return kept_json == made_json


def _heat_shown(table: Table) -> dict[str, Any]:
    """`heat` at a table of an event, nothing at any other."""
    heat = table.heat
    if heat is None:
        return {}
    winner = table.heat_winner()
    shown: HeatView = {
        "event": heat.event,
        "name": heat.name,
        "round": heat.round,
        "final": heat.final,
        "first_to": heat.first_to,
        "winner": None if winner is None else table.seat_of(winner),
    }
    return {"heat": shown}


def _seats(
    table: Table, rows: list[tuple[int, bool, int]] | None, seats: range
) -> list[SeatState | None]:
    """Each seat's occupant and hand (the engine's `seat_rows`), in one pass (a view is
    built for every change)."""
    people, bots, lag = table.people, table.bots, table.lag
    shown: list[SeatState | None] = []
    for seat in seats:
        occupant = table.seats[seat]
        if occupant is None:
            shown.append(None)
            continue
        cards, out, frozen_ms = rows[seat] if rows is not None else (0, False, 0)
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
                "cards": cards,
                "out": out,
                "frozen_ms": frozen_ms,
                "lag_ms": lag_ms,
            }
        )
    return shown
