"""A tie too close to call (house rule tie_window_ms): slaps that reach the server within the
window of the first slap at a trigger are a genuine tie, and the seat next to flip among them
(else the tied slapper nearest after it) takes the pile. The room holds the first slap for
the window in the judging window lag-fair judging uses; with both rules on, the window
compares compensated times.

Races are staged as in tests/app/test_lag_fair.py (app_steps.py): a Jack on the pile, seat 0
next to flip. The races inside the window run on a ManualClock: a slap "5 ms later" is 5 ms
later on the server's clock however busy the machine, and the window closes when the test
moves the clock past it, not when a loaded machine happens to let it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app_harness import Client, close_all, serving, until
from app_steps import seated, stage_a_jack

from app.ops.clock import ManualClock
from app.tables.judging import HeldSlap, judging_order
from app.tables.room import Room

WINDOW_MS = 50


def first_event(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    event: dict[str, Any] = reply["events"][0]
    return event


async def slap(client: Client, pile: int) -> dict[str, Any]:
    return await client.call("slap", {"pile_id": pile})


async def slaps_held(room: Room, count: int) -> None:
    """Until the room holds `count` slaps waiting for the judging window to close."""
    await until(
        lambda: room.judge.window is not None and len(room.judge.window.slaps) == count,
        f"{count} slaps held for judging",
    )


async def race(
    clock: ManualClock, room: Room, first: Client, second: Client, pile: int, gap: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`first` slaps, then `second` `gap` seconds later on the server's clock; then the
    clock moves on until the judging window has closed. The two answers, in that order."""
    answers = [asyncio.create_task(slap(first, pile))]
    await slaps_held(room, 1)
    await clock.advance(gap)
    answers.append(asyncio.create_task(slap(second, pile)))
    await slaps_held(room, 2)
    while room.judge.window is not None:
        await clock.advance(0.01)
    first_reply, second_reply = await asyncio.gather(*answers)
    return first_reply, second_reply


# ---- the order the room hands the engine ---------------------------------------------------


def held(seat: int, counts_at: float) -> HeldSlap:
    return HeldSlap(seat, counts_at, counts_at, None)


def next_is(seat: int, players: int = 4) -> Any:
    """The engine's tie order with `seat` next to flip (Game.tie_order)."""
    return lambda seats: sorted(set(seats), key=lambda s: (s - seat) % players)


def test_slaps_within_the_window_of_the_first_go_first_in_the_tie_rules_order() -> None:
    slaps = [held(3, 10.000), held(1, 10.030), held(2, 10.049), held(0, 10.051)]
    order, tied = judging_order(slaps, 0.05, next_is(2))
    assert tied == [2, 3, 1]  # seat 0 came 51 ms after the first: no part of the tie
    assert [s.seat for s in order] == [2, 3, 1, 0]


def test_a_lone_slap_in_the_window_or_no_window_is_first_come() -> None:
    slaps = [held(3, 10.0), held(1, 10.2), held(3, 10.01)]
    order, tied = judging_order(slaps, 0.05, next_is(1))
    assert (tied, [s.seat for s in order]) == ([], [3, 3, 1])  # a seat cannot tie with itself
    order, tied = judging_order(slaps[:2], 0.0, next_is(1))
    assert (tied, [s.seat for s in order]) == ([], [3, 1])


def test_a_seats_second_slap_in_the_window_follows_the_tie() -> None:
    slaps = [held(3, 10.0), held(3, 10.01), held(1, 10.02)]
    order, tied = judging_order(slaps, 0.05, next_is(1))
    assert tied == [1, 3]
    assert [(s.seat, s.counts_at) for s in order] == [(1, 10.02), (3, 10.0), (3, 10.01)]


# ---- over the wire -----------------------------------------------------------------------


async def test_two_slaps_inside_the_window_go_to_the_seat_next_to_flip() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        code, clients = await seated(
            server, ["Ann", "Bob"], collect_seconds=0, tie_window_ms=WINDOW_MS
        )
        ann, bob = clients
        room = server.room(code)
        for _race in range(3):
            state = await stage_a_jack(server, code, clients)
            assert state["next"] == ann.seat == 0
            pile = state["pile"]["id"]
            # Bob slaps first; Ann, whose turn it is to flip, 5 ms after: a dead heat.
            bob_reply, ann_reply = await race(clock, room, bob, ann, pile, 0.005)
            take, late = first_event(ann_reply), first_event(bob_reply)
            assert (take["kind"], take["seat"]) == ("take", 0), (ann_reply, bob_reply)
            assert late == {
                "kind": "late",
                "seat": 1,
                "pile_id": pile,
                "behind_ms": 0,  # Bob came first: a dead heat lost is 0 ms behind
                "winner": 0,
                "tie": 0,
                "version": late["version"],
            }
            raced = await bob.wait_state(lambda s, p=pile: s["race"] and s["race"]["pile_id"] == p)
            assert raced["race"]["tie"] == 0
            assert raced["race"]["runners_up"][0]["seat"] == 1
        await close_all(clients)


async def test_a_slap_after_the_window_is_first_come_and_no_tie() -> None:
    async with serving() as server:
        code, clients = await seated(
            server, ["Ann", "Bob"], collect_seconds=0, tie_window_ms=WINDOW_MS
        )
        ann, bob = clients
        state = await stage_a_jack(server, code, clients)
        pile = state["pile"]["id"]
        take = first_event(await slap(bob, pile))  # answered once the window has closed
        assert (take["kind"], take["seat"]) == ("take", 1)
        late = first_event(await slap(ann, pile))  # next to flip, but too late for a tie
        assert (late["kind"], late["winner"], late["tie"]) == ("late", 1, None)
        assert late["behind_ms"] >= WINDOW_MS
        raced = await ann.wait_state(lambda s: s["race"] and s["race"]["runners_up"])
        assert raced["race"]["tie"] is None
        await close_all(clients)


async def test_the_window_holds_flips_as_lag_fair_judging_does() -> None:
    clock = ManualClock()  # the window stays open until the test moves the clock on
    async with serving(clock) as server:
        code, clients = await seated(server, ["Ann", "Bob"], tie_window_ms=WINDOW_MS)
        ann, bob = clients
        state = await stage_a_jack(server, code, clients)
        slapping = asyncio.create_task(slap(bob, state["pile"]["id"]))
        room = server.room(code)
        await slaps_held(room, 1)
        refused = await ann.call("flip")
        assert (refused["ok"], refused["error"]["code"]) == (False, "slap_pending")
        await clock.advance(WINDOW_MS / 1000)
        assert first_event(await slapping)["kind"] == "take"
        await close_all(clients)


async def test_with_lag_fair_the_window_compares_compensated_times() -> None:
    # Pings rare enough that the credit the test gives is the measure.
    clock = ManualClock()
    async with serving(clock, lag_ping_seconds=60, lag_cap_ms=400) as server:
        code, clients = await seated(
            server, ["Ann", "Bob"], collect_seconds=0, tie_window_ms=WINDOW_MS, lag_fair=True
        )
        ann, bob = clients
        room = server.room(code)
        lag = room.table.lag
        for client, credit in ((ann, 0.3), (bob, 0.0)):  # Ann is 300 ms away, Bob next door
            for _ in range(10):  # a whole estimate's worth: one real pong more moves nothing
                ping = lag.ping(client.player, 0.0)
                assert lag.pong(client.player, ping, credit)
        assert lag.estimate(ann.player) == 0.3
        state = await stage_a_jack(server, code, clients)
        assert state["next"] == ann.seat == 0
        pile = state["pile"]["id"]
        # Ann's slap reaches the server 300 ms after Bob's: by arrival no tie, but counted
        # at arrival minus her round trip it is level with his.
        bob_reply, ann_reply = await race(clock, room, bob, ann, pile, 0.3)
        take, late = first_event(ann_reply), first_event(bob_reply)
        assert (take["kind"], take["seat"]) == ("take", 0), (ann_reply, bob_reply)
        assert (late["kind"], late["winner"], late["tie"]) == ("late", 0, 0)
        await close_all(clients)
