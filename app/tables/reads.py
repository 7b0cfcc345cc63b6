"""A room's table, read through the room: its fields for the pages, the registry and the
tests (app/tables/room.py `Room` is one). Nothing here changes the table, but the two
setters only tests use, to stage a phase or rules the protocol refuses."""

from __future__ import annotations

from typing import Any

from app.tables.bots import Bot
from app.tables.schedule import Timetable
from app.tables.table import Person, Phase, Table, TableBot
from engine import Game, Rules


class TableReads:
    """What a Room shows of its table (`table`), bots' seats as their minds (`timetable`)."""

    code: str
    table: Table
    timetable: Timetable

    @property
    def version(self) -> int:
        return self.table.version

    @property
    def game(self) -> Game | None:
        return self.table.game

    @property
    def phase(self) -> Phase:
        return self.table.phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        """Only tests stage a phase (tests/app/test_lobby.py); the server never does."""
        self.table.phase = phase

    @property
    def rules(self) -> Rules:
        return self.table.rules

    @rules.setter
    def rules(self, rules: Rules) -> None:
        """Only tests set rules the protocol refuses (a 0.2 s time limit); the server never
        does: `rules` goes through `Table.set_rules`."""
        self.table.rules = rules

    @property
    def games(self) -> int:
        return self.table.games

    @property
    def first(self) -> int:
        return self.table.first

    @property
    def seats(self) -> list[Person | Bot | None]:
        """Who sits where: people, and the bots' minds (whose plans tests may watch)."""
        seats: list[Person | Bot | None] = []
        for seat in range(len(self.table.seats)):
            occupant = self.table.occupant(seat)
            seats.append(
                self.timetable.planner(occupant) if isinstance(occupant, TableBot) else occupant
            )
        return seats

    @property
    def host(self) -> Person | None:
        return self.table.host_person()

    def connected(self) -> list[Person]:
        return self.table.connected()

    def spectators(self) -> list[Person]:
        return self.table.spectators()

    def summary(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "phase": self.table.phase,
            "game": self.table.games,
            "seated": self.table.seated(),
            "spectators": len(self.table.spectators()),
        }
