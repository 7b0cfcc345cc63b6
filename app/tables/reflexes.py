"""Reflexes as the room judges them: each person's measured round trip (pings and pongs,
for lag-fair judging) and false starts (a slap sooner after the trigger reached the
slapper than a person can react). Part of the Table (app/tables/table.py)."""

from __future__ import annotations

from collections.abc import Iterator

from app.tables import events
from app.tables.state import TableState
from app.tables.values import (
    Outcome,
    Person,
)
from app.wire.errors import ErrorCode, ProtocolError

# A seat's lag badge is sent again once its estimate moves this much (ms), not on every pong.
LAG_SHOWN_STEP_MS = 5


class Reflexes(TableState):
    """Round trips measured, and slaps judged too soon to be a person's."""

    def compensation(self, seat: int) -> float:
        """Seconds a slap from `seat` is moved earlier under lag-fair judging: the person's
        measured round trip (capped), 0 for a bot or before any measurement."""
        occupant = self.occupant(seat)
        if not isinstance(occupant, Person):
            return 0.0
        return self.lag.estimate(occupant.id) or 0.0

    def pong(self, person_id: str, ping_id: str, now: float) -> Outcome:
        """The answer to a lag ping: one more round-trip sample. Under lag-fair judging a
        seated person's badge is sent again when their estimate moved noticeably."""
        self._connected_person(person_id)
        if not self.lag.pong(person_id, ping_id, now) or not self.lag_fair:
            return Outcome([])
        estimate = self.lag.estimate(person_id)
        if estimate is None or self.seat_of(person_id) is None:
            return Outcome([])
        shown, ms = self._lag_shown.get(person_id), round(estimate * 1000)
        if shown is not None and abs(ms - shown) < LAG_SHOWN_STEP_MS:
            return Outcome([])
        self._lag_shown[person_id] = ms
        return Outcome([], refresh=True)

    def measures_lag(self) -> bool:
        """Whether people's round trips are measured (pings): for lag-fair judging, and for
        false starts (a reaction is counted from when the trigger reached the slapper)."""
        return self.lag_fair or self.judges_false_starts()

    def measured(self) -> list[str]:
        """Whose round trips are measured while `measures_lag` (`_measured_people`)."""
        return [p.id for p in self._measured_people()]

    def unsettled(self) -> bool:
        """Whether someone measured has fewer than SETTLED round trips yet: the ping times
        go on while anyone has (app/tables/lag.py), and stop once nobody has. Read after
        every change whose room has no ping time waiting: one pass, no list."""
        settled = self.lag.settled
        return any(not settled(p.id) for p in self._measured_people())

    def _measured_people(self) -> Iterator[Person]:
        """Every connected person under lag-fair judging, else the seated (false starts:
        nobody else slaps)."""
        everyone, seats = self.lag_fair, self.seats
        return (p for p in self.people.values() if p.connected and (everyone or p.id in seats))

    def ping_at_trigger(self) -> None:
        """A new trigger shows: every measured person's ping rides on the state that shows
        it (app/tables/lag.py). The page answers before it can slap, so the round trip this
        very trigger took is among those its slap at it is judged by."""
        game, kept = self.game, self.lag.trigger_shown
        shown = game.trigger_since if game is not None else None
        if shown is None or not self.measures_lag():
            return
        if kept is not None and kept[0] is game and kept[1] == shown:
            return  # pinged already: a later change while the same trigger shows
        self.lag.trigger_shown = (game, shown)
        self.lag.due.update(self.measured())

    def judges_false_starts(self) -> bool:
        return self.false_starts and self.policy.false_start_seconds > 0

    def reaction(self, person_id: str, now: float) -> float | None:
        """Seconds from the trigger showing reaching `person_id` to their slap arriving at
        `now`: the arrival, less the time the trigger was sent, less the person's smallest
        recent round trip (none measured yet: nothing), so nobody is judged faster than they
        were. None when no trigger shows."""
        game = self.game
        shown = game.trigger_since if game is not None else None
        if shown is None:
            return None
        return now - shown - (self.lag.smallest(person_id) or 0.0)

    def false_start_ms(self, person_id: str, pile_id: int | None, now: float) -> int | None:
        """The reaction (ms) of a person's slap at the trigger showing if it is a false
        start: sooner after the trigger reached them than a person can react
        (Policy.false_start_seconds). None: no false start (no trigger, another pile, a frozen
        seat: the engine judges those; the rule off). A seat that started too soon for this
        pile is refused (false_start)."""
        game, seat = self.game, self.seat_of(person_id)
        if game is None or seat is None or self.phase != "playing":
            return None
        if not game.slap_open or (pile_id is not None and pile_id != game.pile_id):
            return None
        started_in, pile, early = self.false_started
        if started_in is game and pile == game.pile_id and seat in early:
            raise ProtocolError(ErrorCode.FALSE_START, "you started too soon for this pile")
        if not self.judges_false_starts() or game.frozen_until(seat) > now:
            return None
        reaction = self.reaction(person_id, now)
        if reaction is None or reaction >= self.policy.false_start_seconds:
            return None
        return max(0, round(reaction * 1000))

    def false_start(self, person_id: str, pile_id: int | None, now: float) -> Outcome | None:
        """A false start (`false_start_ms`) takes nothing: the table is told (a `false_start`
        event), and the seat's further slaps at this pile are refused. None: no false start."""
        reaction_ms = self.false_start_ms(person_id, pile_id, now)
        game, seat = self.game, self.seat_of(person_id)
        if reaction_ms is None or game is None or seat is None:
            return None
        started_in, pile, early = self.false_started
        if started_in is not game or pile != game.pile_id:
            self.false_started = (game, game.pile_id, early := set())
        early.add(seat)
        return Outcome([events.FalseStart(seat, game.pile_id, reaction_ms)])
