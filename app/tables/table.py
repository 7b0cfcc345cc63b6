"""The room as a value: people, seats, host, phase, rules, the engine Game and the version.

Every rule of the room lives here, synchronous and with no clock: `now` comes in, like the
engine's. A command checks everything first and changes the table only when every check
passed, so a refusal (a ProtocolError, or the engine's IllegalAction) leaves it untouched;
it returns the typed events to broadcast. The Room (app/tables/room.py) is the async shell that
calls these methods under its lock, then broadcasts and sets timers.

Its parts: the shared state and checks (state.py), people and the host's door (door.py),
round trips and false starts (reflexes.py); here the seats between games, the rules, the
deal and the game. `to_dict(now)` / `from_dict(data, now)` write the table down and read
it back (app/tables/notation.py: snapshots and journals).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any, Literal

from app.tables import events, notation
from app.tables.door import HANDOVER_EARLY_SECONDS, RENAME_SECONDS, Door
from app.tables.events import AppEvent, GameEvent
from app.tables.heats import Heats
from app.tables.reflexes import LAG_SHOWN_STEP_MS, Reflexes
from app.tables.values import (
    BOT_NAMES,
    Heat,
    Joined,
    Level,
    Outcome,
    Person,
    Policy,
    TableBot,
    token_hash,
)
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.protocol import BETWEEN_GAMES, MAX_SEATS, PHASES, Phase, Who
from app.wire.rules_schema import merged_rules
from engine import Game
from engine.rules import MAX_PLAYERS, MIN_PLAYERS, check_players

Action = Literal["flip", "slap"]


class Table(Door, Reflexes, Heats):
    """The room as a value: every rule of the room, with `now` given."""

    # ---- between games -----------------------------------------------------------------

    def sit(self, person_id: str, seat: int | None, now: float) -> Outcome:
        """Sit in `seat` (None: the seat already held, else the first free one)."""
        person = self._connected_person(person_id)
        if person.screen:  # a shared screen has no controls: seated, every turn would stall
            raise ProtocolError(
                ErrorCode.BAD_REQUEST, "a shared screen only watches: it never sits"
            )
        self._check_not_heat()
        self._check_between_games()
        current = self.seat_of(person.id)
        wanted = seat
        if wanted is None:
            wanted = current if current is not None else self._free_seat()
        self._check_seat_number(wanted)
        if wanted == current:
            return Outcome([], {"seat": current})
        if self.seats[wanted] is not None:
            raise ProtocolError(ErrorCode.SEAT_TAKEN, "that seat is taken")
        happened: list[AppEvent] = []
        if current is not None:
            self.seats[current] = None
            happened.append(events.Stand(person.id, current))
        self._reopen()
        self.seats[wanted] = person.id
        happened.append(events.Sit(person.id, wanted, person.name))
        return Outcome(happened, {"seat": wanted})

    def stand(self, person_id: str, now: float) -> Outcome:
        person = self._connected_person(person_id)
        self._check_not_heat()
        self._check_between_games()
        seat = self.seat_of(person.id)
        if seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "you have no seat")
        self._reopen()
        self.seats[seat] = None
        return Outcome([events.Stand(person.id, seat)])

    def add_bot(self, person_id: str, level: Level, now: float) -> Outcome:
        self._check_host(person_id)
        self._check_between_games()
        seat = self._free_seat()
        taken = {b.name for b in self.bots.values()}
        names = BOT_NAMES[seat:] + BOT_NAMES[:seat]
        name = next((n for n in names if n not in taken), f"Bot {self.next_bot}")
        bot = TableBot(f"b{self.next_bot}", level, name)
        self.next_bot += 1
        self._reopen()
        self.bots[bot.id] = bot
        self.seats[seat] = bot.id
        return Outcome([events.BotAdded(seat, bot.level, bot.name)], {"seat": seat})

    def remove(self, person_id: str, seat: int, now: float) -> Outcome:
        self._check_host(person_id)
        self._check_between_games()
        self._check_seat_number(seat)
        occupant = self.occupant(seat)
        if occupant is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "that seat is empty")
        self._reopen()
        self.seats[seat] = None
        if isinstance(occupant, TableBot):
            del self.bots[occupant.id]
            return Outcome([events.Remove(seat, None)])
        self._forget_if_unneeded(occupant)
        return Outcome([events.Remove(seat, occupant.id)])

    def set_rules(self, person_id: str, changes: dict[str, Any], now: float) -> Outcome:
        """Merges the house rules the host sent into the room's."""
        self._check_host(person_id)
        self._check_between_games()
        changes = dict(changes)
        lag_fair = changes.pop("lag_fair", self.lag_fair)
        false_starts = changes.pop("false_starts", self.false_starts)
        if not isinstance(lag_fair, bool) or not isinstance(false_starts, bool):
            raise ProtocolError(ErrorCode.BAD_REQUEST, "lag_fair, false_starts: true or false")
        rules = merged_rules(self.rules, changes)
        if lag_fair and not self.lag_fair:
            # Turned on again: nothing was measured while it was off, so what was measured
            # before is old news (another Wi-Fi, another room): measure everyone afresh.
            self.lag.reset()
            self._lag_shown.clear()
        self.rules, self.lag_fair, self.false_starts = rules, lag_fair, false_starts
        self.lag.due.clear()  # who is measured may change: the next ping time says
        self._reopen()
        shown = self.rules_shown()
        return Outcome([events.RulesChanged(shown)], {"rules": shown})

    def rules_shown(self) -> dict[str, Any]:
        """The room's rules as the protocol shows them: the engine's and the room's own."""
        return {
            **self.rules.to_dict(),
            "lag_fair": self.lag_fair,
            "false_starts": self.false_starts,
        }

    def start(self, person_id: str, now: float, *, seed: int | None = None) -> Outcome:
        self._check_host(person_id)
        if self.phase != "lobby":
            message = "start is for the lobby: rematch after a game"
            raise ProtocolError(ErrorCode.WRONG_PHASE, message)
        return self._deal(now, seed, rematch=False)

    def rematch(self, person_id: str, now: float, *, seed: int | None = None) -> Outcome:
        """The same seats again; the first flipper moves on one seat."""
        self._check_host(person_id)
        if self.phase != "over":
            raise ProtocolError(ErrorCode.WRONG_PHASE, "rematch follows a finished game")
        return self._deal(now, seed, rematch=True)

    def _deal(self, now: float, seed: int | None, *, rematch: bool) -> Outcome:
        # Only the present are dealt in: a seated person whose connection is gone is stood
        # up (they watch when they come back, and are told why) rather than dealt a hand the
        # autopilot would flip away all game.
        absent = [
            (seat, person)
            for seat, occupant in enumerate(self.seats)
            if occupant is not None
            and (person := self.people.get(occupant)) is not None
            and not person.connected
            and self.heat is None  # a heat's seats are dealt: the autopilot plays for them
        ]
        gone = {person.id for _, person in absent}
        seated = [occupant for occupant in self.seats if occupant is not None]
        seated = [occupant for occupant in seated if occupant not in gone]
        try:
            check_players(len(seated))  # the engine is the judge of how many can play
        except ValueError:
            message = f"a game needs {MIN_PLAYERS} to {MAX_PLAYERS} seated and here"
            raise ProtocolError(ErrorCode.TOO_FEW_PLAYERS, message) from None
        # Those stood up at an earlier deal and never back are forgotten now, so at most a
        # table's seats of absent people are remembered.
        for person in list(self.people.values()):
            if (
                person.missed_deal
                and not person.connected
                and person.id
                not in (
                    self.host,
                    self.owner,
                )
            ):
                self._forget_if_unneeded(person)
        happened: list[AppEvent] = []
        for seat, person in absent:
            self.seats[seat] = None
            person.missed_deal = True
            happened.append(events.Stand(person.id, seat))
        first = (self.first + 1) % len(seated) if self.games else 0
        seed = secrets.randbits(64) if seed is None else seed  # nobody can predict a deck
        game = Game.deal(len(seated), rules=self.rules, seed=seed, first=first, now=now)
        self.seats = seated + [None] * (MAX_SEATS - len(seated))  # compact: game seat = room seat
        self.first, self.game = first, game
        self.out_order = []
        self.games += 1
        self.phase = "playing"
        self.turn_started_at = now
        happened.append(events.Start(self.games, first, rematch))
        return Outcome(happened, {"game": self.games})

    # ---- the game: one path for people, bots and the autopilot ------------------------

    def play_as(self, person_id: str, action: Action, pile_id: int | None, now: float) -> Outcome:
        """A person's flip or slap, from their own seat."""
        person = self._connected_person(person_id)
        seat = self.seat_of(person.id)
        if seat is None:
            raise ProtocolError(ErrorCode.NOT_SEATED, "spectators cannot play: sit first")
        if pile_id is not None and self.game is not None and pile_id > self.game.pile_id:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "no such pile yet: send the pile you see")
        if action == "slap":
            early = self.false_start(person.id, pile_id, now)
            if early is not None:
                return early
        return Outcome(self.play(seat, action, pile_id, now))

    def play(
        self,
        seat: int,
        action: Action,
        pile_id: int | None,
        now: float,
        *,
        auto: bool = False,
        tied_with: Sequence[int] = (),
    ) -> list[AppEvent]:
        """Seat `seat` flips or slaps at `now`; the engine judges (IllegalAction: refused).
        `tied_with`: the seats whose slaps the room judged tied with this one (the Room's
        judging window, house rule tie_window_ms; see `Game.slap`)."""
        game = self.game
        if game is None:
            raise ProtocolError(ErrorCode.WRONG_PHASE, "no game is on")
        # Judged and applied in one synchronous engine call: a refusal changes nothing.
        if action == "flip":
            happened = game.flip(seat, now)
        else:
            happened = game.slap(seat, now, pile_id, tied_with=tied_with)
        if tied_with:
            self.moves.append((action, seat, pile_id, now, auto, sorted(tied_with)))
        else:
            self.moves.append((action, seat, pile_id, now, auto))
        self.moves_made += 1
        occupant = self.occupant(seat)
        if auto and isinstance(occupant, Person) and not occupant.connected:
            occupant.away_flips += sum(1 for e in happened if e.kind == "flip")
        if any(e.kind != "late" for e in happened):
            self.turn_started_at = now
        self._note_outs(happened)
        self._end_if_over(now)
        return [GameEvent(e, now, auto) for e in happened]

    def tick(self, now: float) -> list[AppEvent]:
        """A freeze ended or the time limit came: the engine's clock catches up."""
        if self.phase != "playing" or self.game is None:
            return []
        happened = self.game.tick(now)
        self.moves.append(("tick", None, None, now, False))
        self.moves_made += 1
        self._note_outs(happened)
        self._end_if_over(now)
        return [GameEvent(e, now) for e in happened]

    def abandon(self, now: float) -> list[AppEvent]:
        """Ends a game nobody at the table can play any more (every seat still in is a person
        who is gone); nothing if someone still can."""
        if self.phase != "playing" or self.anyone_can_play() or self.heat is not None:
            return []
        self._reopen()
        return [events.Abandon(self.games)]

    def _note_outs(self, happened: list[Any]) -> None:
        for event in happened:
            if event.kind == "out" and event.seat not in self.out_order:
                self.out_order.append(event.seat)

    def _end_if_over(self, now: float) -> None:
        if self.game is not None and self.game.over and self.phase == "playing":
            self.phase = "over"
            winner = self.game.winner
            occupant = self.seats[winner] if winner is not None else None
            if occupant is not None:
                self.wins[occupant] = self.wins.get(occupant, 0) + 1
            if self.heat is not None:
                self._heat_game_over(self.heat, self.game, now)

    def deal_heat(self, now: float, *, seed: int | None = None) -> Outcome:
        """The heat's next game, when due (`heat_due`): the first one or, after a game, the
        same seats again; nothing otherwise."""
        due = self.heat_due()
        if due is None or now < due:
            return Outcome([])
        return self._deal(now, seed, rematch=self.phase == "over")

    # ---- snapshots (app/tables/notation.py) --------------------------------------------

    def to_dict(self, now: float) -> dict[str, Any]:
        """The table at `now` as JSON-able data: times in seconds relative to `now`,
        tokens only as hashes. Timers are not stored: they follow from this state."""
        return notation.to_dict(self, now)

    @classmethod
    def from_dict(cls, data: dict[str, Any], now: float, policy: Policy | None = None) -> Table:
        """The table `to_dict` (or a journal) wrote down, continuing at `now` on this
        process's clock."""
        return notation.from_dict(data, now, lambda code, rules: cls(code, rules, policy))


__all__ = [
    "BETWEEN_GAMES",
    "BOT_NAMES",
    "HANDOVER_EARLY_SECONDS",
    "LAG_SHOWN_STEP_MS",
    "MAX_SEATS",
    "PHASES",
    "RENAME_SECONDS",
    "Heat",
    "Joined",
    "Outcome",
    "Person",
    "Phase",
    "Policy",
    "Table",
    "TableBot",
    "Who",
    "token_hash",
]
