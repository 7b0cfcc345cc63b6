"""The room's state, which every part of the Table (app/tables/table.py) shares: who is
here and where they sit, the host, the phase and the engine Game, the door's and the
reflexes' records; with the reads and the checks every command makes. No command lives
here: the door (door.py), the reflexes (reflexes.py) and the game (table.py) change it."""

from __future__ import annotations

from app.tables.lag import LagMeter
from app.tables.notation import Move
from app.tables.values import (
    Heat,
    Person,
    Policy,
    TableBot,
    token_hash,
)
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.protocol import MAX_SEATS, Phase
from engine import Game, Rules
from engine.rules import MIN_PLAYERS
from engine.views import player_view


class TableState:
    """The fields of a table and what any part of it reads."""

    def __init__(self, code: str, rules: Rules | None = None, policy: Policy | None = None):
        self.code = code
        self.rules = rules or Rules()
        self.policy = policy or Policy()
        # House rule of the room, not of the engine: judge slaps by arrival minus each
        # person's measured round trip (the Room holds them for a judging window).
        self.lag_fair = False
        # House rule of the room: a person's slap sooner than a person can react after the
        # trigger reached them is a false start (`false_start`); off for tables of scripts.
        self.false_starts = True
        self.lag = LagMeter(self.policy.lag_cap_seconds)  # measurements: not in snapshots
        self._lag_shown: dict[str, int] = {}  # person id -> the estimate last broadcast, ms
        self.version = 0
        self.phase: Phase = "lobby"
        self.game: Game | None = None
        self.games = 0
        self.first = 0
        self.seats: list[str | None] = [None] * MAX_SEATS  # person or bot ids
        self.people: dict[str, Person] = {}  # by id, in order of arrival
        self.bots: dict[str, TableBot] = {}
        self.host: str | None = None  # a person id
        # The table's first host: the role comes back to them whenever they are here.
        self.owner: str | None = None
        # The host's door: locked, nobody new gets in but with the invite (its hash: a
        # snapshot holds nothing usable); kicked people's tokens and addresses, as hashes.
        self.locked = False
        self.invite_hash: str | None = None
        self.banned_tokens: set[str] = set()
        self.banned_addresses: set[str] = set()
        # The last time someone acted (came in, or sent a command): a table no game was dealt
        # at closes when nobody acted for SLAPJACK_UNUSED_ROOM_SECONDS (the Room's timer).
        self.acted_at = 0.0
        # The game and pile whose trigger some seats started too early for, and those seats.
        self.false_started: tuple[Game | None, int, set[int]] = (None, -1, set())
        self.turn_started_at = 0.0  # when the seat to play was last given something to do
        # Games won in this room, by person or bot id: the match score across rematches.
        self.wins: dict[str, int] = {}
        # This game's seats in the order they went out: the podium's order below the winner.
        self.out_order: list[int] = []
        self.next_bot = 1
        self._by_token: dict[str, str] = {}  # token hash -> person id
        # Every play and tick the game took, in order, until the owner clears it: with the
        # snapshot taken before the first, it is the table (`journal`), saved for a fraction
        # of a whole snapshot's cost. Not in snapshots; the owner keeps it short.
        self.moves: list[Move] = []
        self.moves_made = 0  # every play and tick, ever: a view keeps its roster across one
        # One of an event's tables (app/tournaments/): the event deals its seats and games.
        self.heat: Heat | None = None

    # ---- reading -----------------------------------------------------------------------

    def admit(self, person: Person) -> None:
        """`person` is one of the table's people from now on, known by their token."""
        self.people[person.id] = person
        self._by_token[person.token_hash] = person.id

    def knows(self, token: str) -> bool:
        """Someone at this table holds `token` (a person coming back)."""
        return token_hash(token) in self._by_token

    def person(self, person_id: str) -> Person | None:
        return self.people.get(person_id)

    def host_person(self) -> Person | None:
        return self.people.get(self.host) if self.host is not None else None

    def seat_of(self, occupant_id: str) -> int | None:
        for seat, occupant in enumerate(self.seats):
            if occupant == occupant_id:
                return seat
        return None

    def occupant(self, seat: int) -> Person | TableBot | None:
        occupant = self.seats[seat]
        if occupant is None:
            return None
        return self.bots.get(occupant) or self.people[occupant]

    def connected(self) -> list[Person]:
        return [p for p in self.people.values() if p.connected]

    def seat_by_id(self) -> dict[str, int]:
        return {occupant: seat for seat, occupant in enumerate(self.seats) if occupant is not None}

    def spectators(self) -> list[Person]:
        """Who is here without a seat (one pass: every change's view asks)."""
        seated = set(self.seats)
        return [p for p in self.people.values() if p.connected and p.id not in seated]

    def seated(self) -> int:
        return len(self.seats) - self.seats.count(None)

    def anyone_can_play(self) -> bool:
        """A seat still in the game holds a bot or a connected person."""
        game = self.game
        if game is None:
            return False
        for seat in range(game.players):
            occupant = self.occupant(seat)
            if game.is_out(seat) or occupant is None:
                continue
            if isinstance(occupant, TableBot) or occupant.connected:
                return True
        return False

    def players_needed(self) -> int:
        """How many more must sit before a game can start (0: enough)."""
        return max(0, MIN_PLAYERS - self.seated())

    def places(self) -> list[int]:
        """A finished game's seats, best first: the winner, then those still holding cards
        (most first: a time-limit win leaves several), then who went out last."""
        game = self.game
        if self.phase != "over" or game is None:
            return []
        view = player_view(game, None)
        hands = view["seats"]
        still_in = [s for s in range(game.players) if not hands[s]["out"] and s != game.winner]
        still_in.sort(key=lambda s: -int(hands[s]["cards"]))
        gone = [s for s in reversed(self.out_order) if s != game.winner]
        unranked = [s for s in range(game.players) if s not in (*still_in, *gone, game.winner)]
        first = [] if game.winner is None else [game.winner]
        return first + still_in + gone + unranked

    def match_score(self) -> list[tuple[str, str, int]]:
        """(id, name, games won) for everyone seated or with a win here, most wins first."""
        people, bots, wins = self.people, self.bots, self.wins
        ids = [o for o in self.seats if o is not None]
        ids += [i for i in wins if i not in ids]
        scores = []
        for i in ids:
            who = bots.get(i) or people.get(i)
            if who is not None:
                scores.append((i, who.name, wins.get(i, 0)))
        if wins:  # else every score is 0, and the order stays as it is
            scores.sort(key=lambda score: -score[2])
        return scores

    def new_version(self) -> int:
        """The next change's number: the Room calls this once per broadcast change."""
        self.version += 1
        return self.version

    def _connected_person(self, person_id: str) -> Person:
        person = self.people.get(person_id)
        if person is None or not person.connected:
            raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this room")
        return person

    # ---- checks ------------------------------------------------------------------------

    def _check_host(self, person_id: str) -> None:
        self._connected_person(person_id)
        if person_id != self.host:
            raise ProtocolError(ErrorCode.NOT_HOST, "only the host can do that")

    def _check_not_heat(self) -> None:
        if self.heat is not None:
            raise ProtocolError(ErrorCode.WRONG_PHASE, "the event deals this table's seats")

    def _check_between_games(self) -> None:
        if self.phase == "playing":
            raise ProtocolError(ErrorCode.WRONG_PHASE, "not during a game")

    @staticmethod
    def _check_seat_number(seat: int) -> None:
        if not 0 <= seat < MAX_SEATS:
            raise ProtocolError(ErrorCode.BAD_REQUEST, f"seat: a seat is 0 to {MAX_SEATS - 1}")

    def _free_seat(self) -> int:
        seat = self._free_seat_or_none()
        if seat is None:
            raise ProtocolError(ErrorCode.NO_FREE_SEAT, "every seat is taken")
        return seat

    def _free_seat_or_none(self) -> int | None:
        return next((seat for seat, occupant in enumerate(self.seats) if occupant is None), None)

    def _reopen(self) -> None:
        """A change after a game takes the room back to the lobby, clearing the old table."""
        self.phase, self.game = "lobby", None
