"""Whole games over real connections: cards conserved, races judged once, freezes enforced."""

import asyncio

from app_harness import (
    SHORT_COLLECT_SECONDS,
    Client,
    Server,
    autoplay,
    cards_held,
    check_refusals,
    close_all,
    serving,
)
from app_steps import start_game

from app.ops.clock import ManualClock


async def test_three_seats_one_a_bot_play_to_the_end_with_every_card_kept(server: Server) -> None:
    clients = await start_game(
        server, ["Ann", "Bob"], bots=["hard"], collect_seconds=SHORT_COLLECT_SECONDS
    )
    results = await asyncio.wait_for(asyncio.gather(*(autoplay(c) for c in clients)), 60)
    for acks in results:
        check_refusals(acks)
    final = clients[0].state
    assert final["phase"] == "over"
    assert final["winner"] in (0, 1, 2)
    assert final["win_reason"] == "cards"
    for client in clients:
        assert all(cards_held(state) == 52 for state in client.states if state["game"] == 1)
        await client.wait_for(lambda c=client: c.events and c.events[-1]["kind"] == "win")
        assert [e["kind"] for e in client.events].count("win") == 1
    winner = final["seats"][final["winner"]]
    assert winner["cards"] == 52 and final["next"] is None
    await close_all(clients)


async def play_until(clients: list[Client], done, clock: ManualClock | None = None) -> dict:
    """Plays by hand until `done(state)`: the seat to play flips (once the collect pause is
    over: on a ManualClock, `clock` is turned to its end), the last client slaps a trigger.
    Every client has seen the returned state."""
    by_seat = {c.seat: c for c in clients}
    while True:
        state = clients[0].state
        if done(state):
            for client in clients:
                await client.wait_state(lambda s, v=state["version"]: s["version"] >= v)
            return state
        if state["slap_open"]:
            await clients[-1].ok("slap", {"pile_id": state["pile"]["id"]})
        elif state["collect_ms"] == 0:  # else the server sends a state when the pause ends
            await by_seat[state["next"]].ok("flip")
        elif clock is not None:
            await clock.advance(state["collect_ms"] / 1000)
        await clients[0].wait_state(lambda s, v=state["version"]: s["version"] > v)


async def flip_until_a_jack(clients: list[Client]) -> dict:
    return await play_until(clients, lambda s: s["slap_open"])


async def test_a_slap_race_has_exactly_one_winner_and_costs_the_others_nothing(
    server: Server,
) -> None:
    clients = await start_game(server, ["Ann", "Bob", "Cy", "Dee"])
    for _ in range(2):  # two Jacks, two races
        state = await flip_until_a_jack(clients)
        before = {s["seat"]: s["cards"] for s in state["seats"]}
        pile = state["pile"]
        replies = await asyncio.gather(*(c.call("slap", {"pile_id": pile["id"]}) for c in clients))
        kinds = sorted(r["events"][0]["kind"] for r in replies if r["ok"])
        assert all(r["ok"] for r in replies), replies
        assert kinds == ["late", "late", "late", "take"]
        taker = next(r["events"][0]["seat"] for r in replies if r["events"][0]["kind"] == "take")
        after = await clients[0].wait_state(lambda s, p=pile["id"]: s["pile"]["id"] > p)
        for seat, cards in before.items():
            expected = cards + pile["count"] if seat == taker else cards
            assert after["seats"][seat]["cards"] == expected
            assert after["seats"][seat]["frozen_ms"] == 0
        assert not any(e["kind"] == "false_slap" for c in clients for e in c.events)
        # The photo finish: every late slap names the winner and how far behind it came.
        lates = [r["events"][0] for r in replies if r["events"][0]["kind"] == "late"]
        assert all(e["winner"] == taker and e["behind_ms"] >= 0 for e in lates)
        close = sorted((e["behind_ms"], e["seat"]) for e in lates if e["behind_ms"] <= 500)
        n, p = len(close), pile["id"]
        raced = await clients[0].wait_state(
            lambda s, n=n, p=p: (
                s["race"] and (s["race"]["pile_id"], len(s["race"]["runners_up"])) == (p, n)
            )
        )
        assert raced["race"]["winner"] == taker
        assert [(r["behind_ms"], r["seat"]) for r in raced["race"]["runners_up"]] == close
    await close_all(clients)


async def test_a_false_slap_freezes_the_slapper_until_the_server_says_it_thawed() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        await a_false_slap_freezes_the_slapper_until_the_server_says_it_thawed(server, clock)


async def a_false_slap_freezes_the_slapper_until_the_server_says_it_thawed(
    server: Server, clock: ManualClock
) -> None:
    ann, bob = await start_game(server, ["Ann", "Bob"], freeze_seconds=1.5)
    # The first flip: a card on the pile and (unless it is a Jack) nothing to slap.
    state = await play_until([ann, bob], lambda s: s["pile"]["count"] and not s["slap_open"], clock)
    reply = await ann.ok("slap", {"pile_id": state["pile"]["id"]})
    assert reply["events"][0]["kind"] == "false_slap"
    assert reply["events"][0]["frozen_ms"] == 1500  # the clock stood still since
    frozen_states = await ann.wait_for(
        lambda: [s for s in ann.states if s["game"] and s["seats"][0]["frozen_ms"] > 0]
    )
    frozen = frozen_states[0]
    assert frozen["seats"][0]["frozen_ms"] == 1500
    await clock.advance(1.499)
    refused = await ann.call("slap", {"pile_id": state["pile"]["id"]})
    assert refused == {
        "ok": False,
        "error": {"code": "frozen", "message": refused["error"]["message"]},
    }
    assert ann.state["version"] == frozen["version"]
    await clock.advance(0.001)
    thawed = await ann.wait_state(lambda s: s["seats"][0]["frozen_ms"] == 0)
    assert thawed["version"] > frozen["version"]  # sent by the server with no action
    second = await ann.call("slap", {"pile_id": thawed["pile"]["id"]})
    assert second["ok"], second
    await close_all([ann, bob])


async def test_a_slap_at_a_pile_that_does_not_exist_yet_is_refused(server: Server) -> None:
    ann, bob = await start_game(server, ["Ann", "Bob"])
    before = ann.state
    reply = await bob.call("slap", {"pile_id": before["pile"]["id"] + 1})
    assert reply["error"]["code"] == "bad_request"
    assert server.room(ann.room).version == before["version"]
    await close_all([ann, bob])


async def test_after_a_take_flips_wait_for_the_collect_pause_and_slaps_count_as_late() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        await flips_wait_for_the_collect_pause_and_slaps_count_as_late(server, clock)


async def flips_wait_for_the_collect_pause_and_slaps_count_as_late(
    server: Server, clock: ManualClock
) -> None:
    ann, bob = await start_game(server, ["Ann", "Bob"], collect_seconds=1.0)
    jack = await flip_until_a_jack([ann, bob])
    taken = jack["pile"]["id"]
    take = await bob.ok("slap", {"pile_id": taken})
    assert take["events"][0]["kind"] == "take"
    state = await bob.wait_state(lambda s: s["pile"]["id"] == taken + 1)
    assert state["next"] == 1 and state["collect_ms"] == 1000
    await clock.advance(0.25)
    refused = await bob.call("flip", {})
    assert refused["error"]["code"] == "collecting", refused
    # Ann saw the Jack a moment ago and slaps the empty new pile: late, and how late.
    late = await ann.ok("slap", {"pile_id": taken + 1})
    assert late["events"][0]["kind"] == "late"
    assert late["events"][0]["pile_id"] == taken and late["events"][0]["winner"] == 1
    assert late["events"][0]["behind_ms"] == 250
    assert ann.state["seats"][0]["frozen_ms"] == 0
    raced = await ann.wait_state(lambda s: s["race"] and s["race"]["runners_up"])
    assert raced["race"]["winner"] == 1 and raced["race"]["pile_id"] == taken
    assert raced["race"]["runners_up"][0]["seat"] == 0
    # When the pause ends the server says so with no action, and the flip is accepted.
    await clock.advance(0.749)
    assert (await bob.call("flip", {}))["error"]["code"] == "collecting"
    await clock.advance(0.001)
    ready = await bob.wait_state(lambda s: s["collect_ms"] == 0)
    assert ready["pile"]["id"] == taken + 1
    await bob.ok("flip")
    await close_all([ann, bob])
