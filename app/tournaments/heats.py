"""An event's heats are ordinary tables: opened, read, followed and paused through here.

`HeatTables` is what an event's shell (app/tournaments/room.py) needs of its tables, as
`Store` is what a room needs of its store: open one for a deal, read how it stands (its
progress for the stage, and its result once a player has won it), hear when it changes
phase, and pause it with the event. `LocalHeats` serves a process that holds every table
(SQLite or memory: app/tables/registry.py `Rooms`); a cluster's is app/tournaments/cluster.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from app.stores import StoreError
from app.tables.journal import table_from_snapshot
from app.tables.registry import Rooms
from app.tables.table import Policy, Table
from app.tournaments.values import Dealt
from engine import Rules


@dataclass(frozen=True)
class HeatState:
    """How one of an event's tables stands: its `progress` for the stage (phase, games
    dealt, each seat's player, cards, whether out, games won and whether here) and, once
    a player has won it, what the event needs of it (`decided`, `wins`, `places`,
    `totals`)."""

    code: str
    progress: dict[str, Any]
    decided: bool
    wins: dict[str, int]
    places: list[str]
    totals: dict[str, dict[str, int | None]]


def read_heat(table: Table) -> HeatState:
    """What the event reads of a heat's table (between two awaits: always whole)."""
    game = table.game
    hands = game.hand_sizes if game is not None else ()
    seats = []
    for seat, occupant in enumerate(table.seats):
        if occupant is None:
            continue
        person = table.people.get(occupant)
        seats.append(
            {
                "player": occupant,
                "cards": hands[seat] if seat < len(hands) else 0,
                "out": game is not None and seat < game.players and game.is_out(seat),
                "wins": table.wins.get(occupant, 0),
                "here": person is None or person.connected,
            }
        )
    heat = table.heat
    progress = {"phase": table.phase, "game": table.games, "seats": seats}
    return HeatState(
        table.code,
        progress,
        table.heat_winner() is not None,
        dict(table.wins),
        list(heat.places) if heat is not None else [],
        {k: dict(v) for k, v in heat.totals.items()} if heat is not None else {},
    )


class HeatTables(Protocol):
    async def open(self, dealt: Dealt, rules: Rules, lag_fair: bool, false_starts: bool) -> None:
        """Opens the table of a heat just dealt (and writes it)."""
        ...

    async def read(self, code: str) -> HeatState | None:
        """How the table stands; None if there is no such table (never written, or gone)."""
        ...

    def follow(self, code: str, on_change: Callable[[], None]) -> None:
        """`on_change()` after each change of the table's phase, while it is in this process
        (a cluster's other tables are read, not heard)."""
        ...

    async def hold(self, code: str, held: bool) -> None:
        """Pauses the table with its event (`held`), or lets it go on."""
        ...

    async def bar(self, code: str, player: str) -> None:
        """The event removed `player`: they are refused at their table from now on."""
        ...


class LocalHeats:
    """The heats of a process that holds every table: in its registry of rooms."""

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms

    async def open(self, dealt: Dealt, rules: Rules, lag_fair: bool, false_starts: bool) -> None:
        room = self.rooms.open_table(self.table(dealt, rules, lag_fair, false_starts))
        if room.saver is not None:
            room.saver.changed(urgent=True)

    def table(self, dealt: Dealt, rules: Rules, lag_fair: bool, false_starts: bool) -> Table:
        """The table a heat just dealt is opened as."""
        policy = Policy.of(self.rooms.settings)
        return Table.for_heat(
            dealt.code,
            rules,
            policy,
            dealt.heat,
            dealt.people,
            dealt.bots,
            lag_fair=lag_fair,
            false_starts=false_starts,
        )

    async def read(self, code: str) -> HeatState | None:
        room = self.rooms.get(code)
        if room is not None:
            return read_heat(room.table)
        try:
            snapshot = await self.rooms.store.load(code)
        except StoreError:
            return None
        if snapshot is None:
            return None
        now = self.rooms.clock.now()
        return read_heat(table_from_snapshot(snapshot, now, Policy.of(self.rooms.settings)))

    def follow(self, code: str, on_change: Callable[[], None]) -> None:
        room = self.rooms.get(code)
        if room is not None:
            room.on_phase_change = lambda _room: on_change()

    async def bar(self, code: str, player: str) -> None:
        room = self.rooms.get(code)
        if room is not None:
            await room.bar_from_event(player)

    async def hold(self, code: str, held: bool) -> None:
        room = self.rooms.get(code)
        if room is not None:
            async with room.lock:
                room.hold_for_event(held)
