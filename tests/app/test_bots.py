"""Bots: a bots-only room plays a whole game at a person's pace, on a clock the test turns;
then a rematch."""

from app_harness import Client, Server, cards_held, serving, turn_until

from app.ops.clock import ManualClock


async def test_bots_play_a_whole_game_and_a_rematch_rotates_the_first_flipper() -> None:
    clock = ManualClock()
    async with serving(clock, bot_time_scale=1.0) as server:
        await bots_play_a_whole_game_and_a_rematch(server, clock)


async def bots_play_a_whole_game_and_a_rematch(server: Server, clock: ManualClock) -> None:
    code = await server.new_room()
    host = await Client(server, code, "Host").connect()
    await host.ok("stand")  # seated on arrival: this host only watches
    for level in ("easy", "normal", "hard"):
        await host.ok("add_bot", {"level": level})
    assert (await host.call("rematch"))["error"]["code"] == "wrong_phase"
    assert (await host.ok("start"))["game"] == 1
    # Bots think and react in a person's time (a quarter second to a second): hours at most.
    await turn_until(
        clock, lambda: server.room(code).phase == "over", "the end", step=5, most=36_000
    )
    over = await host.wait_state(lambda s: s["phase"] == "over")
    game_states = [s for s in host.states if s["game"] == 1]
    assert all(cards_held(s) == 52 for s in game_states)
    assert over["winner"] is not None and over["seats"][over["winner"]]["cards"] == 52
    assert over["first"] == 0
    await host.wait_for(lambda: any(e["kind"] == "win" for e in host.events))
    kinds = {e["kind"] for e in host.events}
    assert {"flip", "take", "out", "win"} <= kinds
    assert not any(e.get("auto") for e in host.events if e["kind"] == "flip")  # bots flip

    assert (await host.call("start"))["error"]["code"] == "wrong_phase"
    assert (await host.ok("rematch"))["game"] == 2
    state = await host.wait_state(lambda s: s["game"] == 2)
    assert state["first"] == 1 and state["phase"] == "playing"
    assert [s["bot"] for s in state["seats"]] == [s["bot"] for s in over["seats"]]
    await host.close()


async def test_bots_only_see_what_their_seat_sees(server: Server) -> None:
    code = await server.new_room()
    host = await Client(server, code, "Host").connect()
    await host.ok("stand")  # seated on arrival: the bot takes seat 0
    await host.ok("add_bot", {"level": "hard"})
    await host.ok("sit", {"seat": None})
    room = server.room(code)
    seen: list[dict] = []
    bot = room.seats[0]
    plan = bot.plan

    def spy(state: dict):
        seen.append(state)
        return plan(state)

    bot.plan = spy
    await host.ok("start")
    await host.wait_for(lambda: any(e["kind"] == "flip" for e in host.events))
    assert seen
    for state in seen:
        assert state["you"] == {"player": None, "seat": 0, "host": False}
        assert set(state) == set(host.state)  # the very shape a person's state has
    await host.close()


def test_a_bot_never_plans_a_flip_before_the_collect_pause_ends() -> None:
    from app.tables.bots import Bot

    seat = {"seat": 0, "cards": 30, "out": False, "frozen_ms": 0}
    state = {
        "you": {"player": None, "seat": 0, "host": False},
        "phase": "playing",
        "seats": [seat, {**seat, "seat": 1}],
        "pile": {"id": 3, "count": 0, "top": []},
        "next": 0,
        "slap_open": False,
        "trigger": None,
        "collect_ms": 800,
    }
    for seed in range(20):
        plan = Bot("hard", time_scale=0.02, seed=seed).plan(state)  # type: ignore[arg-type]
        assert plan is not None and plan.action == "flip"
        assert plan.delay >= 0.8
    ready = Bot("hard", time_scale=0.02, seed=1).plan({**state, "collect_ms": 0})  # type: ignore[arg-type]
    assert ready is not None and ready.delay < 0.8
