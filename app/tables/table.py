"""The room as a value: people, seats, host, phase, rules, the engine Game and the version.

Every rule of the room lives here, synchronous and with no clock: `now` comes in, like the
engine's. A command checks everything first and changes the table only when every check
passed, so a refusal (a ProtocolError, or the engine's IllegalAction) leaves it untouched;
it returns the typed events to broadcast. The Room (app/tables/room.py) is the async shell that
calls these methods under its lock, then broadcasts and sets timers.

`to_dict(now)` / `from_dict(data, now)` write the table down and read it back
(app/tables/notation.py: snapshots and journals).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any, Literal

from app.tables import events, notation
from app.tables.events import AppEvent, GameEvent
from app.tables.lag import LagMeter
from app.tables.notation import Move
from app.tables.values import (
    BOT_NAMES,
    Joined,
    Level,
    Outcome,
    Person,
    Policy,
    TableBot,
    address_hash,
    token_hash,
)
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import looks_alike
from app.wire.protocol import BETWEEN_GAMES, MAX_SEATS, PHASES, Phase, Who
from app.wire.rules_schema import merged_rules
from engine import Game, Rules
from engine.rules import MAX_PLAYERS, MIN_PLAYERS, check_players
from engine.views import player_view

# A seat's lag badge is sent again once its estimate moves this much (ms), not on every pong.
LAG_SHOWN_STEP_MS = 5
# A host hand-over timer may fire a little before its time (the loop's clock resolution,
# float rounding): a host gone this close to the grace counts as gone for it.
HANDOVER_EARLY_SECONDS = 0.05
# A person takes a new name (by connecting with it) at most this often, never in a game.
RENAME_SECONDS = 60.0

Action = Literal["flip", "slap"]


class Table:
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

    def new_version(self) -> int:
        """The next change's number: the Room calls this once per broadcast change."""
        self.version += 1
        return self.version

    # ---- people come and go ------------------------------------------------------------

    def join(
        self,
        name: str,
        token: str | None,
        now: float,
        *,
        avatar: str | None = None,
        watch: bool = False,
        address: str | None = None,
        invite: str | None = None,
        new_id: str | None = None,
        new_token: str | None = None,
    ) -> Joined:
        """The person holding `token` (a new person if nobody does) is connected now, from
        client `address`. A new person's id and token are drawn here unless given (tests give
        them). A new person in the lobby sits in the first free seat at once (they may stand
        up to watch); one arriving during or after a game watches until the lobby, and so
        does one who asked to `watch` (a shared screen). Nobody new gets in with a kicked
        token, nor from a kicked address or while the table is locked without its `invite`;
        a name must not read like anyone else's here (`looks_alike`). A returning person
        with another name takes it if they may (`_rename`)."""
        hashed = token_hash(token) if token else None
        known = self._by_token.get(hashed) if hashed is not None else None
        person = self.people.get(known) if known is not None else None
        returning = person is not None
        where = address_hash(self.code, address) if address is not None else None
        if person is None:
            # The host's invite is their word for whoever holds it: it lets a new person in
            # from a kicked address (a household behind one address), never a kicked token.
            invited = self._invited(invite)
            if hashed in self.banned_tokens or (where in self.banned_addresses and not invited):
                raise ProtocolError(ErrorCode.KICKED, "the host removed you from this table")
            if self.locked and not invited:
                raise ProtocolError(ErrorCode.ROOM_LOCKED, "the table is locked: ask for an invite")
            if len(self.connected()) >= self.policy.max_people:
                raise ProtocolError(ErrorCode.ROOM_FULL, "this room is full")
            self._check_name_free(name, None, screen=watch)
            token = new_token or secrets.token_urlsafe(16)
            person_id = new_id
            while person_id is None or person_id in self.people:
                if new_id is not None:
                    raise ValueError(f"person id {new_id!r} is taken")
                person_id = "p" + secrets.token_hex(4)  # drawn again in the rare clash
            person = Person(
                person_id, name, token_hash(token), now, avatar=avatar, screen=watch, arrived_at=now
            )
            self.admit(person)
            self.acted_at = now
            happened: list[AppEvent] = [events.Join(person.id, name)]
            free = self._free_seat_or_none()
            if self.phase == "lobby" and free is not None and not watch:
                self.seats[free] = person.id
                happened.append(events.Sit(person.id, free, name))
        else:
            if not person.connected:
                person.connected_since = now
            self.lag.forget(person.id)  # a new connection: measure it afresh
            self._lag_shown.pop(person.id, None)
            self._rename(person, name, now)
            person.disconnected_at, person.avatar = None, avatar
            seat = self.seat_of(person.id)
            happened = [events.Reconnect(person.id, seat, person.away_flips, person.missed_deal)]
            person.away_flips, person.missed_deal = 0, False
        assert token is not None
        person.address = where
        if self.host is None and not person.screen:
            self.host = person.id
        if self.owner is None and self.host == person.id:
            self.owner = person.id
        if person.id == self.owner and self.host != person.id:
            self.host = person.id  # the table's own host is back: the role comes home
            happened.append(events.Host(person.id))
        happened += self.hand_over_if_gone(now)
        return Joined(person, token, returning, happened)

    def _rename(self, person: Person, name: str, now: float) -> None:
        """A returning person connected with another name: it is theirs if no game is on,
        they took none in the last RENAME_SECONDS, and nobody else's reads like it; else
        they keep the one they had (they are let in all the same)."""
        if name == person.name or self.phase == "playing":
            return
        if person.renamed_at is not None and now - person.renamed_at < RENAME_SECONDS:
            return
        try:
            self._check_name_free(name, person, screen=person.screen)
        except ProtocolError:
            return
        person.name, person.renamed_at = name, now

    def _check_name_free(self, name: str, person: Person | None, *, screen: bool) -> None:
        """name_taken if `name` reads like the name of anyone else known here (seated,
        watching or away) or of a bot; shared screens may share theirs with each other."""
        for other in self.people.values():
            if other is person or (screen and other.screen):
                continue
            if looks_alike(name, other.name):
                raise ProtocolError(ErrorCode.NAME_TAKEN, "someone here has a name like that")
        if any(looks_alike(name, bot.name) for bot in self.bots.values()):
            raise ProtocolError(ErrorCode.NAME_TAKEN, "a bot here has a name like that")

    def _invited(self, invite: str | None) -> bool:
        return (
            invite is not None
            and self.invite_hash is not None
            and secrets.compare_digest(token_hash(invite), self.invite_hash)
        )

    def drop(self, person_id: str, now: float, *, left: bool) -> list[AppEvent]:
        """The person's connection is gone; `left` when they said goodbye (`leave`)."""
        person = self._connected_person(person_id)
        seat = self.seat_of(person.id)
        person.disconnected_at = now
        happened: list[AppEvent] = []
        if left and seat is not None and self.phase != "playing":
            self._reopen()  # as `stand` does: the finished table is cleared
            self.seats[seat] = None
            happened.append(events.Stand(person.id, seat))
        gone = events.Leave if left else events.Disconnect
        happened.append(gone(person.id, seat))
        if self.host == person.id and (left or self.policy.handover_seconds == 0):
            happened += self._hand_over()
        self._forget_if_unneeded(person)
        return happened

    def disconnect_everyone(self, now: float) -> list[AppEvent]:
        """Every connection is gone at once: a table restored in a new process has none."""
        happened: list[AppEvent] = []
        for person in list(self.people.values()):
            if person.connected:
                happened += self.drop(person.id, now, left=False)
        return happened

    def host_hand_over_at(self) -> float | None:
        """When a disconnected host's grace runs out (None: no hand-over is waiting)."""
        host = self.host_person()
        if host is None or host.disconnected_at is None:
            return None
        return host.disconnected_at + self.policy.handover_seconds

    def hand_over_if_gone(self, now: float) -> list[AppEvent]:
        """A host disconnected for the grace period passes the role on."""
        when = self.host_hand_over_at()
        if when is None or now < when - HANDOVER_EARLY_SECONDS:
            return []
        return self._hand_over()

    def _hand_over(self) -> list[AppEvent]:
        """The connected player who came to the table first becomes host (a seated one before
        one watching; a reconnection keeps a person's place); with nobody connected, the next
        person in will. The table's own host takes it back when they return (`join`)."""
        old = self.host_person()
        candidates = [p for p in self.connected() if not p.screen]
        seated = set(self.seats)
        new = (
            min(candidates, key=lambda p: (p.id not in seated, p.arrived_at))
            if candidates
            else None
        )
        self.host = new.id if new is not None else None
        if old is not None:
            self._forget_if_unneeded(old)
        if new is None or new is old:
            return []
        return [events.Host(new.id)]

    def _forget_if_unneeded(self, person: Person) -> None:
        """A gone spectator leaves no trace, so strangers reconnecting cannot fill memory."""
        if (
            person.connected
            or person.id in (self.host, self.owner)
            or self.seat_of(person.id) is not None
        ):
            return
        self.people.pop(person.id, None)
        self._by_token.pop(person.token_hash, None)

    def _connected_person(self, person_id: str) -> Person:
        person = self.people.get(person_id)
        if person is None or not person.connected:
            raise ProtocolError(ErrorCode.NO_ROOM, "you are not in this room")
        return person

    # ---- between games -----------------------------------------------------------------

    def sit(self, person_id: str, seat: int | None, now: float) -> Outcome:
        """Sit in `seat` (None: the seat already held, else the first free one)."""
        person = self._connected_person(person_id)
        if person.screen:  # a shared screen has no controls: seated, every turn would stall
            raise ProtocolError(
                ErrorCode.BAD_REQUEST, "a shared screen only watches: it never sits"
            )
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

    def kick(self, person_id: str, player: str, now: float) -> Outcome:
        """The host removes `player` for good: out of their seat and the room, and their
        token and their client address refused here until the table closes (nobody new
        gets in from it; those already here stay). Never the host themselves nor the
        table's own host; a seated player between games only (a game's seats are dealt)."""
        self._check_host(person_id)
        target = self.people.get(player)
        if target is None:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "player: nobody here has that id")
        if player in (person_id, self.owner):
            raise ProtocolError(ErrorCode.BAD_REQUEST, "player: not the table's own host")
        seat = self.seat_of(player)
        if seat is not None and self.phase == "playing":
            raise ProtocolError(ErrorCode.WRONG_PHASE, "a seated player: between games")
        self.banned_tokens.add(target.token_hash)
        if target.address is not None:
            self.banned_addresses.add(target.address)
        if seat is not None:
            self._reopen()
            self.seats[seat] = None
        self.people.pop(player, None)
        self._by_token.pop(target.token_hash, None)
        self.lag.forget(player)
        self._lag_shown.pop(player, None)
        return Outcome([events.Kick(player, seat)])

    def lock(self, person_id: str, locked: bool, now: float) -> Outcome:
        """The host locks the table (nobody new gets in without the invite) or opens it."""
        self._check_host(person_id)
        if locked == self.locked:
            return Outcome([], {"locked": locked})
        self.locked = locked
        return Outcome([events.Lock(locked)], {"locked": locked})

    def invite(self, person_id: str, now: float, *, secret: str | None = None) -> Outcome:
        """A fresh invite for the host to share: it lets whoever holds it in while the table
        is locked; the one before no longer does. Only its hash is kept (drawn here unless
        given: tests give it)."""
        self._check_host(person_id)
        secret = secret or secrets.token_urlsafe(9)
        self.invite_hash = token_hash(secret)
        return Outcome([], {"invite": secret})

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

    def measures_lag(self) -> bool:
        """Whether people's round trips are measured (pings): for lag-fair judging, and for
        false starts (a reaction is counted from when the trigger reached the slapper)."""
        return self.lag_fair or self.judges_false_starts()

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
        occupant = self.occupant(seat)
        if auto and isinstance(occupant, Person) and not occupant.connected:
            occupant.away_flips += sum(1 for e in happened if e.kind == "flip")
        if any(e.kind != "late" for e in happened):
            self.turn_started_at = now
        self._note_outs(happened)
        self._end_if_over()
        return [GameEvent(e, now, auto) for e in happened]

    def tick(self, now: float) -> list[AppEvent]:
        """A freeze ended or the time limit came: the engine's clock catches up."""
        if self.phase != "playing" or self.game is None:
            return []
        happened = self.game.tick(now)
        self.moves.append(("tick", None, None, now, False))
        self._note_outs(happened)
        self._end_if_over()
        return [GameEvent(e, now) for e in happened]

    def abandon(self, now: float) -> list[AppEvent]:
        """Ends a game nobody at the table can play any more (every seat still in is a person
        who is gone); nothing if someone still can."""
        if self.phase != "playing" or self.anyone_can_play():
            return []
        self._reopen()
        return [events.Abandon(self.games)]

    def _note_outs(self, happened: list[Any]) -> None:
        for event in happened:
            if event.kind == "out" and event.seat not in self.out_order:
                self.out_order.append(event.seat)

    def _end_if_over(self) -> None:
        if self.game is not None and self.game.over and self.phase == "playing":
            self.phase = "over"
            winner = self.game.winner
            occupant = self.seats[winner] if winner is not None else None
            if occupant is not None:
                self.wins[occupant] = self.wins.get(occupant, 0) + 1

    # ---- checks ------------------------------------------------------------------------

    def _check_host(self, person_id: str) -> None:
        self._connected_person(person_id)
        if person_id != self.host:
            raise ProtocolError(ErrorCode.NOT_HOST, "only the host can do that")

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
    "MAX_SEATS",
    "PHASES",
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
