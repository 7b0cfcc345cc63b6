"""Held judging (house rules lag_fair and tie_window_ms; one window serves both): the first
slap at a trigger opens a judging window, every slap that could still count as earlier, or as
tied with the first, arrives within it, and when it closes the engine gets them in the order
they count. The Room (app/tables/room.py) holds the window and closes it on its timer, under
its lock; a slap's sender waits for its ack until then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.ops.timers import Job, Timers
from app.tables.events import AppEvent, EventDict
from app.tables.table import Table
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.protocol import Ack, ack
from engine import ErrorCode as EngineCode
from engine import IllegalAction


@dataclass
class HeldSlap:
    """A slap held for judging: who, when it arrived, when it counts, who waits."""

    seat: int
    arrived: float
    counts_at: float  # arrival minus the slapper's round-trip estimate (lag_fair), else arrival
    answer: asyncio.Future[Ack] | None  # a person's ack waits for the judging; None for a bot


@dataclass
class Judging:
    """The slaps at a trigger held while the judging window is open."""

    pile_id: int
    shown_at: float  # when the trigger showed (the last flip or burn): no slap counts before
    slaps: list[HeldSlap] = field(default_factory=list)


def judging_order(
    slaps: Sequence[HeldSlap], tie_window: float, tie_order: Callable[[list[int]], list[int]]
) -> tuple[list[HeldSlap], list[int]]:
    """The held slaps in the order the engine gets them, and the tied seats in the tie
    rule's order (fewer than two: no tie). Slaps counting within `tie_window` seconds of the
    first are a genuine tie (each seat's first slap only): they go first, in `tie_order`
    (the engine's: the seat next to flip, then clockwise after it); the rest follow by the
    time they count. With no window, it is the order of the times they count."""
    timed = sorted(slaps, key=lambda held: held.counts_at)
    if not tie_window or len(timed) < 2:
        return timed, []
    first_of: dict[int, HeldSlap] = {}
    for held in timed:
        if held.counts_at - timed[0].counts_at > tie_window:
            break
        first_of.setdefault(held.seat, held)
    if len(first_of) < 2:
        return timed, []
    tied = tie_order(list(first_of))
    ahead = [first_of[seat] for seat in tied]
    return ahead + [held for held in timed if all(held is not a for a in ahead)], tied


def _no_credit(seat: int) -> float:
    """A slap counts at its arrival: lag_fair is off."""
    return 0.0


def hold(
    table: Table,
    window: Judging | None,
    seat: int,
    pile_id: int,
    now: float,
    answer: asyncio.Future[Ack] | None,
) -> tuple[Judging, float | None] | None:
    """Holds `seat`'s slap at `pile_id` if lag-fair judging or the tie window applies to it
    (None: it is judged at once). The first slap opens a judging window: any slap that could
    still count as earlier once compensated (arrival minus the slapper's round trip, under
    lag_fair), or as tied with the first (within tie_window_ms of it, compensated times
    compared under lag_fair), arrives within it. Returns the window holding it, and when a
    window this slap opened closes (None: it was open already)."""
    game = table.game
    tie_window = table.rules.tie_window_ms / 1000
    if not (table.lag_fair or tie_window) or table.phase != "playing" or game is None:
        return None
    if not game.slap_open or pile_id != game.pile_id:
        return None  # no race to judge: late, false or refused, at once
    credit = table.compensation if table.lag_fair else _no_credit
    counts_at = now - credit(seat)
    closes_at = None
    if window is None:
        window = Judging(game.pile_id, table.turn_started_at)
        most = max((credit(s) for s in range(game.players)), default=0.0)
        closes_at = counts_at + most + tie_window
    window.slaps.append(HeldSlap(seat, now, counts_at, answer))
    return window, closes_at


class Judge:
    """A room's judging window: at most one is open, and its timer ("judging") closes it
    (the room's `wake`, which calls `judge`)."""

    __slots__ = ("timers", "window")

    def __init__(self, timers: Timers) -> None:
        self.timers = timers
        self.window: Judging | None = None  # slaps waiting for their window to close

    def hold_person(
        self, table: Table, person_id: str, pile_id: int, now: float, wake: Job
    ) -> asyncio.Future[Ack] | None:
        """A person's slap held for judging: the future of its ack, or None when the slap
        is judged at once (both rules off, no trigger shows, another pile)."""
        seat = table.seat_of(person_id)
        if seat is None:
            return None
        answer: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
        return answer if self.hold(table, seat, pile_id, now, answer, wake) else None

    def hold(
        self,
        table: Table,
        seat: int,
        pile_id: int,
        now: float,
        answer: asyncio.Future[Ack] | None,
        wake: Job,
    ) -> bool:
        """Holds `seat`'s slap at `pile_id` if the judging applies to it (`hold`); a window
        it opens closes on the timer, which calls `wake`."""
        held = hold(table, self.window, seat, pile_id, now, answer)
        if held is None:
            return False
        self.window, closes_at = held
        if closes_at is not None:
            self.timers.at("judging", closes_at, wake)
        return True

    def check_not_judging(self) -> None:
        """No flip while slaps wait for their judging: it would cover the trigger."""
        if self.window is not None:
            raise IllegalAction(EngineCode.SLAP_PENDING, "slaps are being judged")

    def take(self) -> Judging | None:
        """The window, closed: no slap is held from now on."""
        window, self.window = self.window, None
        return window

    def answer_held(self, why: ErrorCode) -> None:
        """The room closes (or pauses) with slaps held: their senders are told, not left
        waiting."""
        answer_held(self.take(), why)


def judge(
    table: Table,
    window: Judging,
    apply: Callable[[Sequence[AppEvent]], list[EventDict]],
    *,
    closed: bool,
) -> None:
    """The judging window closed: the engine gets the held slaps in the order
    `judging_order` gives (a tie first, in the tie rule's order; then by the time each
    counts), each at the time it counts (never before the trigger showed), and stays
    first-come. The tied slap the rule favours is told whom it tied with; if the engine
    refuses it (a frozen seat), the next tied one is, with those still after it. `apply`
    commits what a slap did and returns its events as sent; each sender gets its ack."""
    game = table.game
    tie_window = table.rules.tie_window_ms / 1000
    order, tied = judging_order(
        window.slaps, tie_window, game.tie_order if game is not None else sorted
    )
    for slap in order:
        at = max(slap.counts_at, window.shown_at)
        tied_with: list[int] = []
        if tied and tied[0] == slap.seat:
            tied_with, tied = tied[1:], tied[1:]
        try:
            if closed or table.game is None or table.phase != "playing":
                raise ProtocolError(ErrorCode.WRONG_PHASE, "the game ended")
            happened = table.play(slap.seat, "slap", window.pile_id, at, tied_with=tied_with)
            tied = []  # decided: the others are late slaps at the pile taken
        except ProtocolError as error:
            answer = ack(error)
        except IllegalAction as refused:
            answer = ack(ProtocolError(ErrorCode(refused.code), refused.message))
        else:
            answer = ack(events=apply(happened))
        if slap.answer is not None and not slap.answer.done():
            slap.answer.set_result(answer)


def answer_held(window: Judging | None, why: ErrorCode) -> None:
    """The room closes (or pauses) with slaps held: their senders are told, not left
    waiting."""
    words = "room closed" if why is ErrorCode.NO_ROOM else "the table is paused"
    for slap in window.slaps if window is not None else []:
        if slap.answer is not None and not slap.answer.done():
            slap.answer.set_result(ack(ProtocolError(why, words)))
