"""One game of Slapjack: the state and the three ways it moves (flip, slap, tick).

Time comes in as `now` from the caller's monotonic clock and randomness as a seed, so a game
is a pure function of its inputs. Every action either raises `IllegalAction` before touching
anything or applies completely and returns the events it caused. Deadlines the game keeps
(freezes, the collect pause, a trigger's lapse, the time limit) are absolute times on the
caller's clock; a lapse or the time limit takes effect at the first `tick` or action at or
after it.
"""

from __future__ import annotations

import copy
import functools
import random
import statistics
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from engine.cards import Card, as_card, full_deck
from engine.errors import ErrorCode, IllegalAction
from engine.events import Event, FalseSlap, Flip, Lapse, Late, Out, Take, Win
from engine.rules import Rules, check_players

SNAPSHOT_VERSION = 1  # later fields are optional in a snapshot, so version 1 still loads
RUNNER_UP_MS = 500  # a correct slap this close behind the winner's is a runner-up


@dataclass
class SeatStats:
    """A seat's record for the game-over summary."""

    takes: int = 0
    false_slaps: int = 0
    best_ms: int | None = None  # fastest winning slap, from the trigger showing
    closest_win_ms: int | None = None  # smallest lead over the runner-up of a pile it won
    closest_loss_ms: int | None = None  # smallest margin by which it lost a pile
    # Every correct slap's reaction, from the trigger showing, won or late: for the median.
    reactions_ms: list[int] = field(default_factory=list)

    @property
    def median_ms(self) -> int | None:
        if not self.reactions_ms:
            return None
        return round(statistics.median(self.reactions_ms))

    def summary(self) -> dict[str, int | None]:
        """The public figures, without the list of samples behind the median (a dict of
        the caller's own; made once per record, as every view of every change asks)."""
        return dict(self._figures)

    @functools.cached_property
    def _figures(self) -> Mapping[str, int | None]:
        """`summary()` as last made, read-only: it changes only with a record_*, which
        forgets it (as must anything that sets a field by hand: `forget_figures`), so the
        same object means the same figures. Not a field: no snapshot, `asdict` or
        comparison sees it."""
        return MappingProxyType(
            {
                "takes": self.takes,
                "false_slaps": self.false_slaps,
                "best_ms": self.best_ms,
                "median_ms": self.median_ms,
                "closest_win_ms": self.closest_win_ms,
                "closest_loss_ms": self.closest_loss_ms,
            }
        )

    def __getstate__(self) -> dict[str, Any]:
        """What copy, deepcopy and pickle take: the fields, without the figures kept (a
        read-only mapping, which none of them can copy; it is made again when asked)."""
        state = self.__dict__.copy()
        state.pop("_figures", None)
        return state

    def forget_figures(self) -> None:
        self.__dict__.pop("_figures", None)  # how a cached_property is cleared

    def to_dict(self) -> dict[str, Any]:
        """Every field, for snapshots: by hand, as `asdict` is a deep copy field by field
        (and was most of a save's cost). A new field must be added here too."""
        return {
            "takes": self.takes,
            "false_slaps": self.false_slaps,
            "best_ms": self.best_ms,
            "closest_win_ms": self.closest_win_ms,
            "closest_loss_ms": self.closest_loss_ms,
            "reactions_ms": list(self.reactions_ms),
        }

    def record_take(self, reaction_ms: int | None) -> None:
        self.forget_figures()
        self.takes += 1
        if reaction_ms is not None:
            self.reactions_ms.append(reaction_ms)
            if self.best_ms is None or reaction_ms < self.best_ms:
                self.best_ms = reaction_ms

    def record_false_slap(self) -> None:
        self.forget_figures()
        self.false_slaps += 1

    def record_win_margin(self, ms: int) -> None:
        self.forget_figures()
        if self.closest_win_ms is None or ms < self.closest_win_ms:
            self.closest_win_ms = ms

    def record_loss(self, behind_ms: int, reaction_ms: int | None) -> None:
        self.forget_figures()
        if reaction_ms is not None:
            self.reactions_ms.append(reaction_ms)
        if self.closest_loss_ms is None or behind_ms < self.closest_loss_ms:
            self.closest_loss_ms = behind_ms


@dataclass
class Race:
    """The photo finish of the last pile taken by a slap: who won it, when, and how far
    behind each other seat's first slap at it arrived (in arrival order)."""

    pile_id: int  # the pile that was won: the id its slappers aimed at
    winner: int
    at: float  # when the winning slap arrived
    shown_at: float | None  # when the trigger showed
    behind: list[tuple[int, int]] = field(default_factory=list)  # (seat, ms behind the winner)
    # A take the tie rule decided (Rules.tie_window_ms): the seat that was next to flip, and
    # the seats whose slaps tied with the winner's. None and empty for a plain race.
    tie: int | None = None
    tied: list[int] = field(default_factory=list)

    def runners_up(self) -> list[dict[str, int]]:
        if not self.behind:
            return []  # no other seat has slapped this pile yet
        close = sorted((ms, seat) for seat, ms in self.behind if ms <= RUNNER_UP_MS)
        return [{"seat": seat, "behind_ms": ms} for ms, seat in close]

    def public(self) -> dict[str, Any]:
        return {
            "pile_id": self.pile_id,
            "winner": self.winner,
            "runners_up": self.runners_up(),
            "tie": self.tie,
        }

    def to_dict(self) -> dict[str, Any]:
        """Every field, by hand (not `asdict`: see SeatStats.to_dict); pairs as lists."""
        return {
            "pile_id": self.pile_id,
            "winner": self.winner,
            "at": self.at,
            "shown_at": self.shown_at,
            "behind": [[seat, ms] for seat, ms in self.behind],
            "tie": self.tie,
            "tied": list(self.tied),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Race:
        return cls(
            pile_id=int(data["pile_id"]),
            winner=int(data["winner"]),
            at=float(data["at"]),
            shown_at=None if data["shown_at"] is None else float(data["shown_at"]),
            behind=[(int(seat), int(ms)) for seat, ms in data["behind"]],
            # Absent from a race saved before the tie rule: no tie decided it.
            tie=None if data.get("tie") is None else int(data["tie"]),
            tied=[int(seat) for seat in data.get("tied", ())],
        )


class Game:
    """A Slapjack table: seats 0..players-1, each with a face-down deck, and a centre pile."""

    rules: Rules

    def __init__(self) -> None:
        raise TypeError("use Game.deal, Game.from_hands or Game.from_dict")

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def deal(
        cls,
        players: int,
        *,
        rules: Rules | None = None,
        seed: int | str | None = None,
        first: int = 0,
        now: float = 0.0,
    ) -> Game:
        """Shuffles with `random.Random(seed)` and deals one card at a time from seat `first`
        upwards, so in an uneven split the seats dealt to first hold the extra cards."""
        rules = rules or Rules()
        check_players(players)
        _check_first(first, players)
        deck = full_deck(rules.decks)
        shuffler = random.Random(seed)
        shuffler.shuffle(deck)
        hands: list[list[Card]] = [[] for _ in range(players)]
        for i, card in enumerate(deck):
            hands[(first + i) % players].append(card)
        # Drawn after the deal, so the deal of a seed is the same with or without shuffle_taken.
        return cls._new(rules, hands, [], first, now, shuffler.getrandbits(64))

    @classmethod
    def from_hands(
        cls,
        hands: Sequence[Iterable[Card | str]],
        *,
        rules: Rules | None = None,
        first: int = 0,
        pile: Iterable[Card | str] = (),
        now: float = 0.0,
        seed: int | str = 0,
    ) -> Game:
        """A game from literal hands (`hands[i][0]` is seat i's top card) and pile (top last);
        `seed` only seeds the `shuffle_taken` shuffles. Literal hands are a literal setup, so
        the default seed is fixed: the same hands always play the same game."""
        rules = rules or Rules()
        check_players(len(hands))
        _check_first(first, len(hands))
        decks = [[as_card(c) for c in hand] for hand in hands]
        table = [as_card(c) for c in pile]
        _check_copies([*table, *(c for hand in decks for c in hand)], rules.decks)
        return cls._new(rules, decks, table, first, now, random.Random(seed).getrandbits(64))

    @classmethod
    def _new(
        cls,
        rules: Rules,
        hands: list[list[Card]],
        pile: list[Card],
        first: int,
        now: float,
        shuffle_seed: int,
    ) -> Game:
        game = cls.__new__(cls)
        players = len(hands)
        game.rules = rules
        game._hands = [deque(hand) for hand in hands]
        game._pile = pile
        game._pile_id = 0
        game._burned = 0
        game._out = [not hand for hand in hands]
        game._frozen = [0.0] * players
        game._next = first
        game._winner = None
        game._win_reason = None
        game._last_flipper = None
        game._now = now
        game._deadline = None if rules.time_limit is None else now + rules.time_limit
        game._trigger = rules.trigger(pile)
        game._trigger_since = now if game._trigger else None
        game._lapsed = False
        game._collect_until = now
        game._race = None
        game._shuffle_seed = shuffle_seed
        game._stats = [SeatStats() for _ in range(players)]
        still_in = [seat for seat, out in enumerate(game._out) if not out]
        if not still_in:
            raise ValueError("at least one seat must hold cards")
        if len(still_in) == 1:
            game._sweep_and_win(still_in[0], [])
        else:
            game._pass_turn_to_a_seat_in([])
        return game

    # ---- state, read-only ---------------------------------------------------------------

    _hands: list[deque[Card]]
    _pile: list[Card]
    _pile_id: int
    _burned: int  # how many of the pile's bottom cards were burned under it (face up)
    _out: list[bool]
    _frozen: list[float]
    _next: int | None
    _winner: int | None
    _win_reason: Literal["cards", "time"] | None
    _last_flipper: int | None
    _now: float
    _deadline: float | None
    _trigger: str | None
    _trigger_since: float | None
    _lapsed: bool  # the trigger showing has lapsed: flipping may cover it
    _collect_until: float
    _race: Race | None
    _shuffle_seed: int  # secret: seeds the shuffle_taken shuffles, never in a view
    _stats: list[SeatStats]

    @property
    def players(self) -> int:
        return len(self._hands)

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(hand) for hand in self._hands)

    def hand(self, seat: int) -> tuple[Card, ...]:
        """Seat's face-down deck, top first. Private: never send it to a client."""
        self._check_seat(seat)
        return tuple(self._hands[seat])

    @property
    def pile(self) -> tuple[Card, ...]:
        return tuple(self._pile)

    @property
    def pile_size(self) -> int:
        return len(self._pile)

    @property
    def pile_burned(self) -> int:
        """How many of the pile's bottom cards were burned under it (face up, by false
        slaps), so a view can draw them apart: with the pile this short they are among the
        top cards shown."""
        return self._burned

    def stats_by_seat(self) -> list[dict[str, int | None]]:
        """`stats_summary` of every seat with the `seat` first, in seat order: what a view
        shows, one new dict a seat (every view of every change holds them)."""
        return [{"seat": seat, **figures} for seat, figures in enumerate(self.stats_figures())]

    def stats_figures(self) -> tuple[Mapping[str, int | None], ...]:
        """Every seat's kept figures (`SeatStats._figures`) in seat order: read-only and not
        copied, each the same object until that seat's figures change. A server that keeps
        what it made of them (app/tables/views.py) makes it again when one is another object."""
        return tuple([stats._figures for stats in self._stats])

    @property
    def pile_id(self) -> int:
        return self._pile_id

    @property
    def next_to_play(self) -> int | None:
        return self._next

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def win_reason(self) -> Literal["cards", "time"] | None:
        return self._win_reason

    @property
    def over(self) -> bool:
        return self._winner is not None

    @property
    def slap_open(self) -> bool:
        return self._trigger is not None

    @property
    def trigger(self) -> str | None:
        return self._trigger

    @property
    def trigger_since(self) -> float | None:
        """When the trigger showing showed (None: none shows)."""
        return self._trigger_since

    @property
    def now(self) -> float:
        return self._now

    @property
    def deadline(self) -> float | None:
        return self._deadline

    @property
    def collect_until(self) -> float:
        """Until when nobody may flip because a pile was just taken (in the past: no pause)."""
        return self._collect_until

    @property
    def next_wake(self) -> float | None:
        """The earliest of every seat's `frozen_until`, `collect_until`, `lapse_at` and
        `deadline` that is after `now`, or None: when a caller keeping one wake-up per game
        should `tick` (or look again: a freeze or the collect pause ending changes nothing
        by itself)."""
        now, soonest = self._now, None
        for until in self._frozen:  # a loop, not min() of a generator: read at every change
            if until > now and (soonest is None or until < soonest):
                soonest = until
        for when in (self._collect_until, self.lapse_at, self._deadline):
            if when is not None and when > now and (soonest is None or when < soonest):
                soonest = when
        return soonest

    @property
    def trigger_lapsed(self) -> bool:
        """The trigger showing has lapsed unslapped: it is still slappable, but flips go on."""
        return self._trigger is not None and self._lapsed

    @property
    def lapse_at(self) -> float | None:
        """When the trigger showing lapses, or None (no trigger, lapsed already, or never)."""
        timeout = self.rules.trigger_timeout
        if self._trigger is None or self._lapsed or not timeout or self._trigger_since is None:
            return None
        return self._trigger_since + timeout

    @property
    def last_race(self) -> dict[str, Any] | None:
        """The photo finish of the last pile won by a slap: `pile_id` (the pile won), `winner`
        and `runners_up` (`[{"seat", "behind_ms"}]`, the other seats' correct slaps within
        RUNNER_UP_MS of the winner's, closest first). Late slaps keep adding to it until the
        next pile is won."""
        return None if self._race is None else self._race.public()

    def is_out(self, seat: int) -> bool:
        self._check_seat(seat)
        return self._out[seat]

    def frozen_until(self, seat: int) -> float:
        self._check_seat(seat)
        return self._frozen[seat]

    def stats(self, seat: int) -> SeatStats:
        """Seat's slaps won, false slaps, reaction times and closest races (a copy)."""
        self._check_seat(seat)
        stats = copy.copy(self._stats[seat])  # not asdict: views ask for every seat's
        stats.reactions_ms = list(stats.reactions_ms)
        stats.forget_figures()  # the copy's fields are the caller's to change
        return stats

    def stats_summary(self, seat: int) -> dict[str, int | None]:
        """Seat's public figures (`SeatStats.summary`), read without copying its samples."""
        self._check_seat(seat)
        return self._stats[seat].summary()

    # ---- actions ------------------------------------------------------------------------

    def flip(self, seat: int, now: float) -> list[Event]:
        """The seat to play turns its top card face-up onto the pile."""
        self._check_actor(seat, now)
        if seat != self._next:
            raise IllegalAction(ErrorCode.NOT_YOUR_TURN)
        if now < self._collect_until:
            raise IllegalAction(
                ErrorCode.COLLECTING, f"collecting for {self._collect_until - now:.2f} s more"
            )
        lapse_at = self.lapse_at  # None once lapsed, or when triggers never lapse
        holding = self._trigger is not None and not self._lapsed
        if holding and (lapse_at is None or now < lapse_at):
            raise IllegalAction(ErrorCode.SLAP_PENDING)
        hand = self._hands[seat]
        if not hand:
            raise IllegalAction(ErrorCode.NO_CARDS)

        # A due lapse cannot move the turn here: the seat to play holds cards.
        events: list[Event] = []
        self._advance_clock(now, events)
        card = hand.popleft()
        self._pile.append(card)
        self._last_flipper = seat
        events.append(Flip(seat, card))
        self._update_trigger(now)
        if not hand and card.is_jack and self.rules.last_card_jack:
            self._take(seat, now, events, reason="last_card")
        else:
            self._next = self._seat_after(seat)
        self._settle(events, seat)
        return events

    def slap(
        self,
        seat: int,
        now: float,
        pile_id: int | None = None,
        *,
        tied_with: Collection[int] = (),
    ) -> list[Event]:
        """A slap aimed at pile `pile_id` (None: whatever pile is there when it arrives).

        `tied_with`: the other seats whose slaps at this trigger the caller judged a genuine
        tie with this one (Rules.tie_window_ms), this seat being the one the tie rule gives
        the pile (first in `tie_order`). The engine stays first-come: the caller hands it
        this slap first and the tied ones after it; if it takes the pile, the photo finish
        and the tied seats' `late` events say the tie rule decided it. A tie the rule would
        decide otherwise, or with the rule off, is the caller's bug: ValueError."""
        self._check_actor(seat, now)
        tie = self._check_tie(seat, tied_with) if tied_with else None
        if pile_id is not None and pile_id < self._pile_id:
            return self._late(seat, now, pile_id)  # that pile is gone: nothing to pay
        if not self._pile and now < self._collect_until:
            # Aimed at the pile just taken, whatever id it carries: the slapper saw a trigger
            # a moment ago, and an empty pile is no trigger anyone could mean.
            return self._late(seat, now, self._pile_id - 1)
        if not self._hands[seat] and self.rules.empty_deck == "out":
            raise IllegalAction(ErrorCode.NO_CARDS)

        events: list[Event] = []
        self._advance_clock(now, events)
        if self._winner is not None or self._out[seat]:
            return events  # a lapse decided the game, or spent this seat's last chance
        if self._trigger is not None:
            self._take(seat, now, events, reason="slap", tie=tie, tied=tied_with)
        else:
            self._false_slap(seat, now, events)
        self._settle(events, seat)
        return events

    def tie_order(self, seats: Iterable[int]) -> list[int]:
        """Seats whose slaps at the trigger showing are a genuine tie, in the order the tie
        rule gives them the pile: the seat next to flip first, then the others clockwise
        after it (a seat out of the game or without cards keeps its place in the circle)."""
        chosen = set(seats)
        for seat in chosen:
            self._check_seat(seat)
        start, players = self._next or 0, len(self._hands)
        return sorted(chosen, key=lambda seat: (seat - start) % players)

    def tick(self, now: float) -> list[Event]:
        """Lets time pass: a trigger lapses when its time has come, and the time limit ends
        the game once one seat leads alone."""
        if self._winner is not None:
            return []
        events: list[Event] = []
        self._advance_clock(now, events)
        self._check_time(events)
        return events

    # ---- rules --------------------------------------------------------------------------

    def _take(
        self,
        seat: int,
        now: float,
        events: list[Event],
        *,
        reason: Literal["slap", "last_card"],
        tie: int | None = None,
        tied: Collection[int] = (),
    ) -> None:
        pile, top = self._pile, self._pile[-1]
        reaction_ms = None
        if reason == "slap" and self._trigger_since is not None:
            reaction_ms = _ms(now - self._trigger_since)
        self._race = None
        if reason == "slap":
            self._race = Race(self._pile_id, seat, now, self._trigger_since, [], tie, sorted(tied))
        if self.rules.shuffle_taken:
            # A fresh generator per pile, from the game's secret seed and the pile's id: the
            # order is a pure function of the deal yet unknowable from the public flips.
            random.Random(f"{self._shuffle_seed}:{self._pile_id}").shuffle(pile)
        self._pile_to(seat)
        self._trigger = self._trigger_since = None
        self._lapsed = False
        self._collect_until = now + self.rules.collect_seconds
        # The policy may name a seat the loop below knocks out (last_chance): `_settle` then
        # passes the turn on to the next seat still in, as after any action.
        self._next = FIRST_AFTER_TAKE[self.rules.after_take](self, seat)
        self._stats[seat].record_take(reaction_ms)
        events.append(Take(seat, top, len(pile), self._pile_id, reaction_ms, reason))
        if self.rules.empty_deck == "last_chance":
            for other, hand in enumerate(self._hands):  # their last chance was this pile
                if other != seat and not hand and not self._out[other]:
                    self._knock_out(other, events)

    def _late(self, seat: int, now: float, pile_id: int) -> list[Event]:
        """A slap at a pile already taken: free, but it goes into that pile's photo finish."""
        events: list[Event] = []
        self._advance_clock(now, events)
        events.append(self._photo_finish(seat, now, pile_id))
        if self._winner is None:
            self._check_time(events)
        return events

    def _photo_finish(self, seat: int, now: float, pile_id: int) -> Late:
        race = self._race
        if race is None or race.pile_id != pile_id:
            return Late(seat, pile_id)
        if seat == race.winner:
            return Late(seat, pile_id, None, race.winner)
        # A tied slap may have arrived before the winner's: it is 0 ms behind (a dead heat).
        behind_ms = _ms(now - race.at)
        if all(other != seat for other, _ in race.behind):  # only a seat's first slap counts
            if not race.behind:
                self._stats[race.winner].record_win_margin(behind_ms)
            race.behind.append((seat, behind_ms))
            reaction_ms = None if race.shown_at is None else _ms(now - race.shown_at)
            self._stats[seat].record_loss(behind_ms, reaction_ms)
        return Late(seat, pile_id, behind_ms, race.winner, race.tie if seat in race.tied else None)

    def _false_slap(self, seat: int, now: float, events: list[Event]) -> None:
        hand = self._hands[seat]
        if not hand:  # only in last_chance: no card to pay with, so the last chance is spent
            events.append(FalseSlap(seat, None, None, now))
            self._knock_out(seat, events)
            return
        card = hand.popleft()
        receiver = self._penalty_receiver(seat)
        if receiver is None:
            self._pile.insert(0, card)  # burned face-up under the pile
            self._burned += 1
            self._update_trigger(now)  # on a short pile the burn can complete a trigger
        else:
            self._hands[receiver].append(card)  # face-down, so the event does not name it
        self._frozen[seat] = now + self.rules.freeze_seconds
        self._stats[seat].record_false_slap()
        shown = card if receiver is None else None
        events.append(FalseSlap(seat, shown, receiver, self._frozen[seat]))
        if not hand and self.rules.empty_deck == "out":
            self._knock_out(seat, events)

    def _penalty_receiver(self, slapper: int) -> int | None:
        """Who gets the false slapper's card under `give`; None means burn it."""
        receiver = self._last_flipper
        if self.rules.penalty != "give" or receiver is None or receiver == slapper:
            return None
        return None if self._out[receiver] else receiver

    def _settle(self, events: list[Event], actor: int) -> None:
        """After an action: knocks out the actor if it ran out of cards (only the actor can
        lose one), finds the next seat to flip, and ends the game when one seat is left in or
        the time limit decides it."""
        if self._winner is not None:
            return
        if not self._hands[actor] and not self._out[actor] and self.rules.empty_deck == "out":
            self._knock_out(actor, events)
        if self._winner is None:
            self._pass_turn_to_a_seat_in(events)
        if self._winner is None:
            self._check_time(events)

    def _pass_turn_to_a_seat_in(self, events: list[Event]) -> None:
        nxt = self._next
        assert nxt is not None
        if not self._out[nxt] and self._hands[nxt]:
            return  # the common case: the seat to play is in and holds cards
        while self._winner is None:
            if self._out[nxt]:
                nxt = self._seat_after(nxt)
            elif not self._hands[nxt] and (self._trigger is None or self._lapsed):
                self._knock_out(nxt, events)  # last chance: the turn came round first
            else:
                break
        if self._winner is None:
            self._next = nxt

    def _pile_to(self, seat: int) -> None:
        """The pile goes under `seat`'s deck, its bottom card first, and a new pile starts:
        empty, with an id of its own and nothing burned under it."""
        self._hands[seat].extend(self._pile)
        self._pile = []
        self._pile_id += 1
        self._burned = 0

    def _knock_out(self, seat: int, events: list[Event]) -> None:
        self._out[seat] = True
        events.append(Out(seat))
        still_in = [s for s, out in enumerate(self._out) if not out]
        if len(still_in) == 1:
            self._sweep_and_win(still_in[0], events)

    def _sweep_and_win(self, seat: int, events: list[Event]) -> None:
        if self._pile:
            self._pile_to(seat)
        self._trigger = self._trigger_since = None
        self._lapsed = False
        self._finish(seat, "cards", events)

    def _check_time(self, events: list[Event]) -> None:
        if self._deadline is None or self._now < self._deadline or self._winner is not None:
            return
        sizes = self.hand_sizes
        most = max(sizes)
        if sizes.count(most) == 1:
            self._finish(sizes.index(most), "time", events)

    def _finish(self, seat: int, reason: Literal["cards", "time"], events: list[Event]) -> None:
        self._winner, self._win_reason, self._next = seat, reason, None
        events.append(Win(seat, reason))

    def _update_trigger(self, now: float) -> None:
        """After a card lands on the pile (a flip, or a burn while no trigger shows): whatever
        shows now is a fresh trigger, even on top of a lapsed one."""
        showing = self.rules.trigger(self._pile)
        self._trigger = showing
        self._trigger_since = now if showing is not None else None
        self._lapsed = False

    def _seat_after(self, seat: int) -> int:
        """The next seat up from `seat` (wrapping) that is still in; `seat` if none is."""
        players, out = len(self._hands), self._out
        for step in range(1, players):
            candidate = (seat + step) % players
            if not out[candidate]:
                return candidate
        return seat

    def _advance_clock(self, now: float, events: list[Event]) -> None:
        """Moves the game's clock to `now` and lets a trigger lapse if its time has come."""
        if now > self._now:
            self._now = now
        lapse_at = self.lapse_at
        if lapse_at is not None and self._now >= lapse_at:
            assert self._trigger is not None
            self._lapsed = True
            events.append(Lapse(self._trigger, self._pile_id))
            # In last_chance a seat without cards is out when its turn comes with no trigger
            # holding the table: a lapsed trigger holds it no longer.
            self._pass_turn_to_a_seat_in(events)

    # ---- checks -------------------------------------------------------------------------

    def _check_tie(self, seat: int, tied_with: Collection[int]) -> int | None:
        """The seat next to flip, by which the tie rule gives `seat` the pile over the seats
        `tied_with`; ValueError when the rule is off or would give it to another of them."""
        if not self.rules.tie_window_ms:
            raise ValueError("a tie needs the tie rule: tie_window_ms is 0")
        if seat in tied_with:
            raise ValueError(f"seat {seat} cannot tie with itself")
        favoured = self.tie_order([seat, *tied_with])[0]
        if favoured != seat:
            raise ValueError(f"the tie rule gives the pile to seat {favoured}, not {seat}")
        return self._next

    def _check_seat(self, seat: int) -> None:
        if type(seat) is not int or not 0 <= seat < len(self._hands):
            raise IllegalAction(ErrorCode.BAD_SEAT, f"there is no seat {seat!r}")

    def _check_actor(self, seat: int, now: float) -> None:
        if self._winner is not None:
            raise IllegalAction(ErrorCode.GAME_OVER)
        self._check_seat(seat)
        if self._out[seat]:
            raise IllegalAction(ErrorCode.OUT)
        if now < self._frozen[seat]:
            raise IllegalAction(
                ErrorCode.FROZEN, f"frozen for {self._frozen[seat] - now:.2f} s more"
            )

    # ---- snapshots ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The whole state, face-down cards included: for snapshots, never for a client."""
        return {
            "version": SNAPSHOT_VERSION,
            "rules": self.rules.to_dict(),
            "hands": [[card.text for card in hand] for hand in self._hands],
            "pile": [card.text for card in self._pile],
            "pile_id": self._pile_id,
            "burned": self._burned,
            "out": list(self._out),
            "frozen_until": list(self._frozen),
            "next": self._next,
            "winner": self._winner,
            "win_reason": self._win_reason,
            "last_flipper": self._last_flipper,
            "now": self._now,
            "deadline": self._deadline,
            "trigger_since": self._trigger_since,
            "trigger_lapsed": self._lapsed,
            "collect_until": self._collect_until,
            "race": None if self._race is None else self._race.to_dict(),
            "shuffle_seed": self._shuffle_seed,
            "stats": [stats.to_dict() for stats in self._stats],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Game:
        """Rebuilds the exact game `to_dict` described."""
        if data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported snapshot version {data.get('version')!r}")
        game = cls.__new__(cls)
        game.rules = Rules.from_dict(data["rules"])
        game._hands = [deque(Card.parse(c) for c in hand) for hand in data["hands"]]
        check_players(len(game._hands))
        game._pile = [Card.parse(c) for c in data["pile"]]
        _check_copies([*game._pile, *(c for h in game._hands for c in h)], game.rules.decks)
        game._pile_id = int(data["pile_id"])
        game._out = [bool(o) for o in data["out"]]
        game._frozen = [float(f) for f in data["frozen_until"]]
        game._next, game._winner = data["next"], data["winner"]
        game._win_reason = data["win_reason"]
        game._last_flipper = data["last_flipper"]
        game._now, game._deadline = float(data["now"]), data["deadline"]
        game._trigger = game.rules.trigger(game._pile)
        game._trigger_since = data["trigger_since"]
        # Fields added after version 1 came out: an older snapshot loads with their defaults.
        game._lapsed = bool(data.get("trigger_lapsed", False)) and game._trigger is not None
        game._collect_until = float(data.get("collect_until", game._now))
        race = data.get("race")
        game._race = None if race is None else Race.from_dict(race)
        game._shuffle_seed = int(data.get("shuffle_seed", 0))
        game._burned = int(data.get("burned", 0))
        if not 0 <= game._burned <= len(game._pile):
            raise ValueError(f"{game._burned} burned cards under a pile of {len(game._pile)}")
        game._stats = [SeatStats(**s) for s in data["stats"]]
        for stats in game._stats:  # its own samples: the game shares nothing with `data`
            stats.reactions_ms = list(stats.reactions_ms)
        per_seat = (game._out, game._frozen, game._stats)
        if any(len(values) != len(game._hands) for values in per_seat):
            raise ValueError("snapshot lists disagree on the number of seats")
        return game

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        state = f"winner={self._winner}" if self._winner is not None else f"next={self._next}"
        return (
            f"<Game players={self.players} hands={self.hand_sizes} pile={len(self._pile)} {state}>"
        )


# Who flips first after a take, by Rules.after_take: the take asks this policy rather than
# testing the rule itself. "left_of_winner" (seed 003) names the next seat still in.
FIRST_AFTER_TAKE: dict[str, Callable[[Game, int], int]] = {
    "winner": lambda game, taker: taker,
    "left_of_winner": lambda game, taker: game._seat_after(taker),
}


def _ms(seconds: float) -> int:
    """A duration in whole milliseconds, never negative (a caller's clock may stall)."""
    return max(0, round(seconds * 1000))


def _check_first(first: int, players: int) -> None:
    if type(first) is not int or not 0 <= first < players:
        raise ValueError(f"first must be a seat from 0 to {players - 1}, not {first!r}")


def _check_copies(cards: list[Card], decks: int) -> None:
    for card, copies in Counter(cards).items():
        if copies > decks:
            raise ValueError(f"{card} appears {copies} times; {decks} deck(s) hold {decks}")
