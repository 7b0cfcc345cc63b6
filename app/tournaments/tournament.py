"""An event as a value: its organiser, its players, its rounds of heats and its podium.

Synchronous and with no clock, like `Table`: `now` comes in, and a command checks everything
first and changes the event only when every check passed (a refusal raises ProtocolError
and leaves `to_dict()` as it was). The bracket is the engine's (engine/bracket.py); the
tables of a round are ordinary tables, each a heat (`app.tables.values.Heat`), which the
shell (app/tournaments/room.py) opens from what a deal returns (`Dealt`) and whose results
it hands back (`heat_decided`).

    event = Tournament.opened("EVT123", "Class 2B", "Ms Lee", organiser_token, size=4)
    event.join("Ann", None, now)                      # a player, in the lobby
    codes = [...]                                     # event.heats_needed() fresh table codes
    done = event.start(event.organiser.id, now, codes, seed=7)   # done.dealt: the heats
    event.heat_decided("HEAT01", wins, places, totals, now)       # a heat's winner is known
    event.round_due()                                 # when the next round is dealt
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from app.tables.values import (
    BOT_NAMES,
    HEAT_GATHER_SECONDS,
    Heat,
    Level,
    Person,
    TableBot,
    address_hash,
    invite_holds,
    token_hash,
)
from app.tournaments.values import (
    Dealt,
    Entrant,
    EventDict,
    HeatRecord,
    Joined,
    Organiser,
    Outcome,
    Stage,
)
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import clean_avatar, looks_alike
from engine import Rules, bracket

SCHEMA = 1  # of `Tournament.to_dict`
KIND = "event"  # a stored record's `kind`: tables' records have none
# Players an event takes (a school fair at tables of four: 64 tables in round one).
MAX_ENTRANTS = 256
# A round's last winner is shown on the stage this long before the next round is dealt.
ROUND_PAUSE_SECONDS = 8.0
FILL_LEVEL: Level = "normal"  # the bots that fill empty seats (the organiser's choice)


class Tournament:
    def __init__(
        self,
        code: str,
        name: str,
        *,
        size: int = bracket.DEFAULT_SIZE,
        first_to: int = 1,
        bots: bool = False,
        rules: Rules | None = None,
        lag_fair: bool = False,
        false_starts: bool = True,
    ) -> None:
        bracket.check_size(size)
        if not bracket.MIN_FIRST_TO <= first_to <= bracket.MAX_FIRST_TO:
            raise ValueError(f"first to {first_to} wins")
        self.code = code
        self.name = name
        self.size = size
        self.first_to = first_to
        self.bots = bots  # bots fill the empty seats of a round's tables
        self.rules = rules or Rules()
        self.lag_fair = lag_fair
        self.false_starts = false_starts  # the tables' own rule, as a table's host sets it
        self.organiser: Organiser | None = None
        self.version = 0
        self.stage: Stage = "lobby"
        self.paused = False
        self.ended = False  # the organiser ended it before its final
        self.entrants: dict[str, Entrant] = {}  # by id, in order of arrival
        self.rounds: list[list[HeatRecord]] = []
        self.round_over_at: float | None = None  # when the current round's last heat ended
        self.podium: list[str] = []
        # Across the event, by player id: games won, takes, wrong slaps, fastest winning slap.
        self.totals: dict[str, dict[str, int | None]] = {}
        self.next_bot = 1
        # The organiser's door, as a table's host's: locked, nobody new joins but with the
        # invite (its hash); removed players' tokens and client addresses, as hashes.
        self.locked = False
        self.invite_hash: str | None = None
        self.barred: set[str] = set()
        self.barred_addresses: set[str] = set()
        self._by_token: dict[str, str] = {}  # token hash -> player id

    @classmethod
    def opened(
        cls, code: str, name: str, organiser_name: str, organiser_token: str, **options: Any
    ) -> Tournament:
        """A new event with its organiser, who comes in with `organiser_token`."""
        event = cls(code, name, **options)
        event.organiser = Organiser(
            "o" + secrets.token_hex(4), organiser_name, token_hash(organiser_token)
        )
        return event

    # ---- reading -------------------------------------------------------------------------

    @property
    def round(self) -> int:
        return len(self.rounds)

    def current(self) -> list[HeatRecord]:
        return self.rounds[-1] if self.rounds else []

    def heat(self, code: str) -> HeatRecord | None:
        return next((h for h in self.current() if h.code == code), None)

    def knows(self, token: str) -> bool:
        hashed = token_hash(token)
        return hashed in self._by_token or (
            self.organiser is not None and hashed == self.organiser.token_hash
        )

    def players(self) -> list[Entrant]:
        """Everyone still taking part (not removed), in order of arrival."""
        return [e for e in self.entrants.values() if not e.removed]

    def next_players(self) -> list[str]:
        """Who the next deal seats: every player before round one, else the current
        round's winners (a removed one stays out)."""
        if not self.rounds:
            return [e.id for e in self.players()]
        winners = [h.winner for h in self.current() if h.winner is not None]
        return [w for w in winners if not self.entrants[w].removed]

    def heats_needed(self) -> int:
        """How many tables the next deal opens (0: it cannot be dealt)."""
        players = len(self.next_players())
        if not bracket.can_deal(players, bots=self.bots):
            return 0
        return 1 if players == 1 else len(bracket.table_sizes(players, self.size))

    def table_of(self, player: str) -> str | None:
        """The table a player is at (or last was): their heat in the latest round they
        were dealt into."""
        for heats in reversed(self.rounds):
            for heat in heats:
                if player in heat.players:
                    return heat.code
        return None

    def status(self, player: str) -> str:
        """`waiting` (the lobby), `playing` (their heat is on), `through` (they won it and
        wait for the next round), `out`, `removed` (by the organiser) or, once over,
        `champion`."""
        entrant = self.entrants.get(player)
        if entrant is None or entrant.removed:  # gone from the lobby, or out of the event
            return "removed"
        if self.podium and self.podium[0] == player:
            return "champion"
        if entrant.out_in is not None:
            return "out"
        if not self.rounds:
            return "waiting"
        heat = next((h for h in self.current() if player in h.players), None)
        if heat is None:
            return "out"  # not dealt into this round: out in an earlier one
        if heat.decided:
            return "through" if heat.winner == player else "out"
        return "playing"

    def round_due(self) -> float | None:
        """When the next round is dealt: ROUND_PAUSE_SECONDS after the current round's last
        heat was decided; None while none is waiting (or the event is paused)."""
        if self.stage != "playing" or self.paused or self.round_over_at is None:
            return None
        return self.round_over_at + ROUND_PAUSE_SECONDS

    def final(self) -> HeatRecord | None:
        """The final's table: the round of one table, once dealt."""
        heats = self.current()
        return heats[0] if len(heats) == 1 else None

    def new_version(self) -> int:
        self.version += 1
        return self.version

    # ---- people come --------------------------------------------------------------------

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
        """The person holding `token`, from client `address`: the organiser, a player coming
        back, or, in the lobby, a new player (unless they `watch`: a shared screen). Anyone
        else follows the event as a guest, known by no token. As at a table, a removed
        player's token is refused (kicked), and so is a new player from a removed player's
        address or while the event is locked, unless they hold the `invite`; a new player's
        name must not read like anyone's in the event (name_taken)."""
        hashed = token_hash(token) if token else None
        where = address_hash(self.code, address) if address is not None else None
        organiser = self.organiser
        if organiser is not None and hashed == organiser.token_hash:
            return Joined(organiser.id, token, "organiser", True, [])
        known = self._by_token.get(hashed) if hashed is not None else None
        if known is not None:
            entrant = self.entrants[known]
            if avatar is not None or entrant.avatar is not None:
                entrant.avatar = clean_avatar(avatar)
            entrant.address = where
            return Joined(entrant.id, token, "player", True, [])
        if hashed is not None and hashed in self.barred:
            raise ProtocolError(ErrorCode.KICKED, "the organiser removed you from this event")
        if watch or self.stage != "lobby":
            return Joined(None, None, "guest", False, [])
        invited = invite_holds(invite, self.invite_hash)
        if where in self.barred_addresses and not invited:
            raise ProtocolError(ErrorCode.KICKED, "the organiser removed you from this event")
        if self.locked and not invited:
            raise ProtocolError(ErrorCode.ROOM_LOCKED, "the event is locked: ask for an invite")
        if len(self.entrants) >= MAX_ENTRANTS:
            raise ProtocolError(ErrorCode.ROOM_FULL, "this event is full")
        self._check_name_free(name)
        token = new_token or secrets.token_urlsafe(16)
        player = new_id
        while player is None or player in self.entrants:
            if new_id is not None:
                raise ValueError(f"player id {new_id!r} is taken")
            player = "p" + secrets.token_hex(4)
        self._admit(Entrant(player, name, token_hash(token), clean_avatar(avatar), address=where))
        return Joined(player, token, "player", False, [_event("join", player=player, name=name)])

    def _admit(self, entrant: Entrant) -> None:
        self.entrants[entrant.id] = entrant
        if entrant.token_hash is not None:
            self._by_token[entrant.token_hash] = entrant.id

    def _check_name_free(self, name: str) -> None:
        """name_taken if `name` reads like any player's or bot's in the event (`looks_alike`),
        or the organiser's: one name is one person on every screen of the event."""
        taken = [e.name for e in self.entrants.values() if not e.removed]
        if self.organiser is not None and self.organiser.name:
            taken.append(self.organiser.name)
        if any(looks_alike(name, other) for other in taken):
            raise ProtocolError(ErrorCode.NAME_TAKEN, "someone here has a name like that")

    # ---- the organiser --------------------------------------------------------------------

    def check_organiser(self, who: str | None) -> None:
        if self.organiser is None or who != self.organiser.id:
            raise ProtocolError(ErrorCode.NOT_HOST, "only the organiser can do that")

    def _check_stage(self, *stages: Stage) -> None:
        if self.stage not in stages:
            raise ProtocolError(ErrorCode.WRONG_PHASE, f"not while the event is {self.stage}")

    def add_bot(self, who: str | None, level: Level, now: float) -> Outcome:
        """A bot joins the players (the lobby)."""
        self.check_organiser(who)
        self._check_stage("lobby")
        if len(self.entrants) >= MAX_ENTRANTS:
            raise ProtocolError(ErrorCode.ROOM_FULL, "this event is full")
        bot = self._new_bot(level)
        return Outcome(
            [_event("bot", player=bot.id, name=bot.name, level=level)], {"player": bot.id}
        )

    def _new_bot(self, level: Level) -> Entrant:
        number = self.next_bot
        self.next_bot += 1
        base = BOT_NAMES[(number - 1) % len(BOT_NAMES)]
        lap = (number - 1) // len(BOT_NAMES) + 1
        # The first that reads like nobody's name here; no person is ever called "Bot N".
        names = [base if lap == 1 else f"{base} {lap}", f"{base} {number}", f"Bot {number}"]
        taken = [e.name for e in self.entrants.values()]
        name = next(n for n in names if not any(looks_alike(n, t) for t in taken))
        bot = Entrant(f"b{number}", name, None, bot=level)
        self._admit(bot)
        return bot

    def remove(self, who: str | None, player: str, now: float) -> Outcome:
        """The organiser removes a player: gone from the lobby (and their phone never back as
        a new player), or, once the event is on, out of it: their seat plays on by
        autopilot, and if they win their heat the next best at the table goes through."""
        self.check_organiser(who)
        entrant = self.entrants.get(player)
        if entrant is None or entrant.removed:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "player: no such player in this event")
        if entrant.token_hash is not None:
            self.barred.add(entrant.token_hash)
        if entrant.address is not None:
            self.barred_addresses.add(entrant.address)
        if self.stage == "lobby":
            del self.entrants[player]
            if entrant.token_hash is not None:
                self._by_token.pop(entrant.token_hash, None)
        else:
            entrant.removed = True
        return Outcome([_event("remove", player=player)])

    def lock(self, who: str | None, locked: bool, now: float) -> Outcome:
        """The organiser locks the event (nobody new joins without the invite) or opens it."""
        self.check_organiser(who)
        self._check_stage("lobby")
        if locked == self.locked:
            return Outcome([], {"locked": locked})
        self.locked = locked
        return Outcome([_event("lock", locked=locked)], {"locked": locked})

    def invite(self, who: str | None, now: float, *, secret: str | None = None) -> Outcome:
        """A fresh invite for the organiser to share: it lets whoever holds it join while
        the event is locked, or from a removed player's address; the one before no longer
        does. Only its hash is kept (drawn here unless given: tests give it)."""
        self.check_organiser(who)
        self._check_stage("lobby")
        secret = secret or secrets.token_urlsafe(9)
        self.invite_hash = token_hash(secret)
        return Outcome([], {"invite": secret})

    def pause(self, who: str | None, paused: bool, now: float) -> Outcome:
        """The organiser pauses the event (its tables stop where they are, no round is
        dealt) or lets it go on."""
        self.check_organiser(who)
        self._check_stage("playing")
        if paused == self.paused:
            return Outcome([], {"paused": paused})
        self.paused = paused
        if not paused and self.round_over_at is not None:
            self.round_over_at = max(self.round_over_at, now - ROUND_PAUSE_SECONDS / 2)
        return Outcome([_event("pause" if paused else "resume")], {"paused": paused})

    def end(self, who: str | None, now: float) -> Outcome:
        """The organiser ends the event before its podium: no round is dealt any more."""
        self.check_organiser(who)
        self._check_stage("lobby", "playing")
        self.stage, self.ended, self.paused = "over", True, False
        self.round_over_at = None
        return Outcome([_event("end")])

    def start(self, who: str | None, now: float, codes: Sequence[str], seed: int) -> Outcome:
        """The organiser deals round one: every player to a table (`codes`, one for each of
        `heats_needed()`)."""
        self.check_organiser(who)
        self._check_stage("lobby")
        if self.heats_needed() == 0:
            raise ProtocolError(ErrorCode.TOO_FEW_PLAYERS, "an event needs two players")
        self.stage = "playing"
        return self._deal(now, codes, seed)

    # ---- rounds ------------------------------------------------------------------------------

    def _deal(self, now: float, codes: Sequence[str], seed: int) -> Outcome:
        players = self.next_players()
        heats = bracket.deal(players, self.size, seed, bots=self.bots)
        if len(codes) != len(heats):
            raise ValueError(f"{len(heats)} tables to open, {len(codes)} codes given")
        number = self.round + 1
        final = len(heats) == 1
        records: list[HeatRecord] = []
        dealt: list[Dealt] = []
        for code, seating in zip(codes, heats, strict=True):
            fillers = [self._new_bot(FILL_LEVEL) for _ in range(seating.bots)]
            seated = [*seating.players, *(b.id for b in fillers)]
            records.append(HeatRecord(code, seated))
            dealt.append(self._dealt(code, seated, number, final, now))
        self.rounds.append(records)
        self.round_over_at = None
        kind = "final" if final else "round"
        happened = [_event(kind, round=number, tables=[h.code for h in records])]
        return Outcome(happened, {"round": number}, dealt)

    def _dealt(
        self, code: str, seated: Sequence[str], number: int, final: bool, now: float
    ) -> Dealt:
        """The table a heat is opened as: its people (not here yet, each known by the token
        the event knows them by), then its bots."""
        entrants = [self.entrants[p] for p in seated]
        heat = Heat(self.code, self.name, number, final, self.first_to, now + HEAT_GATHER_SECONDS)
        people = [
            Person(e.id, e.name, e.token_hash or "", now, now, e.avatar)
            for e in entrants
            if e.bot is None
        ]
        bots = [TableBot(e.id, e.bot, e.name) for e in entrants if e.bot is not None]
        return Dealt(code, heat, people, bots)

    def heat_decided(
        self,
        code: str,
        wins: Mapping[str, int],
        places: Sequence[str],
        totals: Mapping[str, Mapping[str, int | None]],
        now: float,
    ) -> Outcome:
        """A table of the current round has a winner (its first to win `first_to` games):
        `wins` by player id, its last game's `places` and its `totals` (takes, wrong slaps,
        the fastest winning slap). Who goes through is the winner, or if the organiser
        removed them the next best at the table. The round's last heat ends the round:
        the next is dealt at `round_due`, or after the final the podium stands."""
        heat = self.heat(code)
        if heat is None or heat.decided or self.stage != "playing":
            return Outcome([])
        if bracket.heat_winner(wins, self.first_to) is None:
            return Outcome([])  # not decided yet
        standing = bracket.standing(wins, places, heat.players)
        removed = {p for p in heat.players if self.entrants[p].removed}
        winner = bracket.heat_winner(wins, self.first_to, standings=standing, excluded=removed)
        heat.decided, heat.winner, heat.standing = True, winner, standing
        for player in heat.players:
            if player != winner and not self.entrants[player].removed:
                self.entrants[player].out_in = self.round
            self._add_totals(player, wins.get(player, 0), totals.get(player, {}))
        happened = [_event("heat", table=code, winner=winner)]
        if all(h.decided for h in self.current()):
            happened += self._round_over(now)
        return Outcome(happened)

    def _add_totals(self, player: str, won: int, figures: Mapping[str, int | None]) -> None:
        total = self.totals.setdefault(
            player, {"wins": 0, "takes": 0, "false_slaps": 0, "best_ms": None}
        )
        total["wins"] = (total["wins"] or 0) + won
        total["takes"] = (total["takes"] or 0) + (figures.get("takes") or 0)
        total["false_slaps"] = (total["false_slaps"] or 0) + (figures.get("false_slaps") or 0)
        best, fastest = total["best_ms"], figures.get("best_ms")
        if fastest is not None and (best is None or fastest < best):
            total["best_ms"] = fastest

    def _round_over(self, now: float) -> list[EventDict]:
        """Every heat of the round is decided: after the final (or with fewer than two left
        to play on) the podium; else the next round waits for `round_due`."""
        if self.final() is not None or self.heats_needed() == 0:
            return self._finish()
        self.round_over_at = now
        return [_event("round_over", round=self.round)]

    def _finish(self) -> list[EventDict]:
        last = self.current()
        final = [p for h in last for p in h.standing if not self.entrants[p].removed]
        if len(last) > 1:  # not one table: its winners first
            winners = [h.winner for h in last if h.winner is not None]
            final = [*winners, *(p for p in final if p not in winners)]
        runners_up: list[str] = []
        if len(self.rounds) > 1:
            before = self.rounds[-2]
            seconds = [h.standing[1] for h in before if len(h.standing) > 1]
            runners_up = [p for p in seconds if not self.entrants[p].removed]
            runners_up.sort(key=lambda p: -(self.totals.get(p, {}).get("takes") or 0))
        self.podium = bracket.podium(final, runners_up)
        self.stage, self.paused, self.round_over_at = "over", False, None
        return [_event("podium", places=list(self.podium))]

    def deal_again(self, code: str, now: float) -> Dealt | None:
        """A table of the current round lost before anyone won it (its process crashed
        before it was first written): the same players, dealt again at a fresh table. None
        for a heat decided or not of this round."""
        heat = self.heat(code)
        if heat is None or heat.decided or self.stage != "playing":
            return None
        return self._dealt(code, heat.players, self.round, len(self.current()) == 1, now)

    def advance(self, now: float, codes: Sequence[str], seed: int) -> Outcome:
        """The next round, once due (`round_due`): its tables (`codes`, `heats_needed()` of
        them)."""
        due = self.round_due()
        if due is None or now < due - 0.001:
            return Outcome([])
        return self._deal(now, codes, seed)

    # ---- a record (what the store keeps) ----------------------------------------------------

    def to_dict(self, now: float) -> dict[str, Any]:
        """The event as JSON-able data: times relative to `now`, tokens only as hashes."""
        organiser = self.organiser
        return {
            "schema": SCHEMA,
            "kind": KIND,
            "code": self.code,
            "version": self.version,
            "name": self.name,
            "size": self.size,
            "first_to": self.first_to,
            "bots": self.bots,
            "rules": self.rules.to_dict(),
            "lag_fair": self.lag_fair,
            "false_starts": self.false_starts,
            "organiser": None
            if organiser is None
            else {"id": organiser.id, "name": organiser.name, "token_sha256": organiser.token_hash},
            "stage": self.stage,
            "paused": self.paused,
            "ended": self.ended,
            "entrants": [e.to_dict() for e in self.entrants.values()],
            "rounds": [[h.to_dict() for h in heats] for heats in self.rounds],
            "round_over_ago": None if self.round_over_at is None else now - self.round_over_at,
            "podium": list(self.podium),
            "totals": {p: dict(t) for p, t in self.totals.items()},
            "next_bot": self.next_bot,
            "barred": sorted(self.barred),
            "barred_addresses": sorted(self.barred_addresses),
            "locked": self.locked,
            "invite_sha256": self.invite_hash,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], now: float) -> Tournament:
        """The event `to_dict` wrote down, continuing at `now` on this process's clock."""
        if data.get("schema") != SCHEMA or data.get("kind") != KIND:
            raise ValueError("not an event's record")
        event = cls(
            str(data["code"]),
            str(data["name"]),
            size=int(data["size"]),
            first_to=int(data["first_to"]),
            bots=bool(data["bots"]),
            rules=Rules.from_dict(data["rules"]),
            lag_fair=bool(data["lag_fair"]),
            false_starts=bool(data.get("false_starts", True)),
        )
        organiser = data["organiser"]
        if organiser is not None:
            event.organiser = Organiser(
                str(organiser["id"]), str(organiser["name"]), str(organiser["token_sha256"])
            )
        event.version = int(data["version"])
        stage = data["stage"]
        if stage not in ("lobby", "playing", "over"):
            raise ValueError(f"unknown stage {stage!r}")
        event.stage = stage
        event.paused, event.ended = bool(data["paused"]), bool(data["ended"])
        for e in data["entrants"]:
            event._admit(Entrant.from_dict(e))
        for heats in data["rounds"]:
            records = [HeatRecord.from_dict(h) for h in heats]
            if any(p not in event.entrants for h in records for p in h.players):
                raise ValueError("a heat seats somebody the record does not know")
            event.rounds.append(records)
        ago = data["round_over_ago"]
        event.round_over_at = None if ago is None else now - float(ago)
        if event.round_over_at is not None and not math.isfinite(event.round_over_at):
            raise ValueError("a round ended at no time")
        event.podium = [str(p) for p in data["podium"]]
        event.totals = {
            str(p): {str(k): None if v is None else int(v) for k, v in t.items()}
            for p, t in data["totals"].items()
        }
        event.next_bot = int(data["next_bot"])
        event.barred = {str(h) for h in data["barred"]}
        event.barred_addresses = {str(h) for h in data.get("barred_addresses", [])}
        event.locked = bool(data.get("locked", False))
        invite = data.get("invite_sha256")
        event.invite_hash = None if invite is None else str(invite)
        return event


def _event(kind: str, **fields: Any) -> EventDict:
    return {"kind": kind, **fields}
