"""A table as one of an event's heats (app/tournaments/): its seats dealt by the event, its
games dealt by themselves (the first once everyone is here, the next a moment after each),
until one occupant has won the heat (`first_to` games). Part of the Table
(app/tables/table.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

from app.tables.state import TableState
from app.tables.values import HEAT_NEXT_GAME_SECONDS, Heat, Person, Policy, TableBot
from app.wire.protocol import MAX_SEATS
from engine import Game, Rules, bracket
from engine.rules import MIN_PLAYERS


class Heats(TableState):
    """A heat's deal, its winner and its totals."""

    @classmethod
    def for_heat(
        cls,
        code: str,
        rules: Rules,
        policy: Policy,
        heat: Heat,
        people: Sequence[Person],
        bots: Sequence[TableBot],
        *,
        lag_fair: bool = False,
        false_starts: bool = True,
    ) -> Self:
        """A table of an event, its seats dealt: `people` (not here yet: each comes with the
        token the event knows them by) then `bots`, in seat order. Nobody is its host; its
        first game is dealt once everyone is here, or at `heat.gather_until` (`heat_due`)."""
        if not MIN_PLAYERS <= len(people) + len(bots) <= MAX_SEATS:
            raise ValueError(f"a heat seats {MIN_PLAYERS} to {MAX_SEATS}")
        table = cls(code, rules, policy)
        table.lag_fair, table.false_starts, table.heat = lag_fair, false_starts, heat
        for seat, person in enumerate(people):
            table.admit(person)
            table.seats[seat] = person.id
        for seat, bot in enumerate(bots, start=len(people)):
            table.bots[bot.id] = bot
            table.seats[seat] = bot.id
        return table

    def heat_winner(self) -> str | None:
        """The occupant id of the heat's winner (the first to win `first_to` games), None
        while nobody has (or at a table that is no heat)."""
        if self.heat is None:
            return None
        return bracket.heat_winner(self.wins, self.heat.first_to)

    def keeps_open(self) -> bool:
        """An undecided heat stays open with nobody here (the autopilot plays on for the
        absent): the event waits for its winner."""
        return self.heat is not None and self.heat_winner() is None

    def heat_due(self) -> float | None:
        """When the heat's next game is dealt: its first once everyone dealt to it is here
        (at once) or at the gathering's end; another HEAT_NEXT_GAME_SECONDS after a game
        ended with nobody through yet. None: no deal is waiting."""
        heat = self.heat
        if heat is None:
            return None
        if self.phase == "lobby":
            seated = [self.people.get(o) for o in self.seats if o is not None]
            if all(p is None or p.connected for p in seated):
                return -math.inf
            return heat.gather_until
        if self.phase == "over" and heat.over_at is not None and self.heat_winner() is None:
            return heat.over_at + HEAT_NEXT_GAME_SECONDS
        return None

    def _heat_game_over(self, heat: Heat, game: Game, now: float) -> None:
        """A heat's game ended: its figures go into the heat's totals, its places are kept."""
        heat.over_at = now
        heat.places = [o for s in self.places() if (o := self.seats[s]) is not None]
        for seat, figures in enumerate(game.stats_figures()):
            occupant = self.seats[seat]
            if occupant is None:
                continue
            total = heat.totals.setdefault(occupant, {"takes": 0, "false_slaps": 0})
            total["takes"] = (total["takes"] or 0) + (figures["takes"] or 0)
            total["false_slaps"] = (total["false_slaps"] or 0) + (figures["false_slaps"] or 0)
            best, fastest = total.get("best_ms"), figures["best_ms"]
            if fastest is not None and (best is None or fastest < best):
                total["best_ms"] = fastest
            total.setdefault("best_ms", None)
