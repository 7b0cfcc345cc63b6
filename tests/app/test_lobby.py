"""Seats, bots, rules and starting: who may do what, and when."""

from app_harness import Server, close_all, join


async def test_seats_are_taken_freed_and_moved(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    assert (await ann.ok("sit", {"seat": 5}))["seat"] == 5
    assert (await bob.call("sit", {"seat": 5}))["error"]["code"] == "seat_taken"
    assert (await bob.ok("sit", {"seat": None}))["seat"] == 0
    assert (await bob.ok("sit", {"seat": 7}))["seat"] == 7  # a move
    state = await ann.wait_state(lambda s: s["seats"][7] is not None)
    assert state["seats"][0] is None and state["seats"][7]["name"] == "Bob"
    assert state["spectators"] == []
    await bob.ok("stand")
    state = await ann.wait_state(lambda s: s["seats"][7] is None)
    assert [p["name"] for p in state["spectators"]] == ["Bob"]
    assert (await bob.call("stand"))["error"]["code"] == "not_seated"
    await close_all([ann, bob])


async def test_all_eight_seats_taken_leaves_no_free_seat(server: Server) -> None:
    code = await server.new_room()
    (ann,) = await join(server, code, "Ann")
    for _ in range(8):
        await ann.ok("add_bot", {"level": "normal"})
    assert (await ann.call("add_bot", {"level": "easy"}))["error"]["code"] == "no_free_seat"
    assert (await ann.call("sit", {"seat": None}))["error"]["code"] == "no_free_seat"
    await ann.close()


async def test_only_the_host_manages_the_room(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    await bob.ok("sit", {"seat": 1})
    for event, data in [
        ("add_bot", {"level": "easy"}),
        ("remove", {"seat": 1}),
        ("rules", {"freeze_seconds": 0}),
        ("start", {}),
        ("rematch", {}),
    ]:
        assert (await bob.call(event, data))["error"]["code"] == "not_host"
    await ann.ok("remove", {"seat": 1})  # a person removed becomes a spectator
    state = await bob.wait_state(lambda s: s["seats"][1] is None)
    assert state["you"]["seat"] is None
    assert (await ann.call("remove", {"seat": 1}))["error"]["code"] == "not_seated"
    await close_all([ann, bob])


async def test_rules_change_in_the_lobby_and_bad_rules_are_refused(server: Server) -> None:
    code = await server.new_room()
    (ann,) = await join(server, code, "Ann")
    reply = await ann.ok("rules", {"penalty": "give", "triggers": ["jack", "double"]})
    assert reply["rules"]["penalty"] == "give"
    assert sorted(reply["rules"]["triggers"]) == ["double", "jack"]
    assert reply["rules"]["freeze_seconds"] == 1.5  # untouched fields stay
    state = await ann.wait_state(lambda s: s["rules"]["penalty"] == "give")
    version = state["version"]
    empty = await ann.call("rules", {"triggers": []})
    assert empty["error"] == {
        "code": "bad_rules",
        "message": "triggers must name at least one trigger",
    }
    for bad in ({"decks": 3}, {"freeze_seconds": -1}, {"penalty": None}):
        reply = await ann.call("rules", bad)
        assert reply["error"]["code"] in ("bad_request", "bad_rules"), (bad, reply)
    assert (await ann.ok("rules", {"time_limit": None}))["rules"]["time_limit"] is None
    assert ann.state["version"] == version + 1  # only the good change counted
    await ann.close()


async def test_start_needs_two_to_eight_seated_and_locks_the_lobby(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    assert (await ann.call("start"))["error"]["code"] == "too_few_players"
    await ann.ok("sit", {"seat": 3})
    assert (await ann.call("start"))["error"]["code"] == "too_few_players"
    assert (await ann.call("flip"))["error"]["code"] == "wrong_phase"
    await ann.ok("add_bot", {"level": "hard"})
    await ann.ok("start")
    await bob.wait_state(lambda s: s["phase"] == "playing")
    state = next(s for s in bob.states if s["phase"] == "playing")  # the deal itself
    assert [s["name"] for s in state["seats"]] == ["Robo Rita", "Ann"]  # compacted
    assert state["next"] == 0 and state["first"] == 0 and state["game"] == 1
    assert sum(s["cards"] for s in state["seats"]) == 52
    for event, data in [
        ("sit", {"seat": None}),
        ("stand", {}),
        ("add_bot", {"level": "easy"}),
        ("remove", {"seat": 1}),
        ("rules", {"decks": 2}),
        ("start", {}),
        ("rematch", {}),
    ]:
        reply = await (bob if event == "sit" else ann).call(event, data)
        assert reply["error"]["code"] == "wrong_phase", (event, reply)
    assert (await bob.call("flip"))["error"]["code"] == "not_seated"
    await close_all([ann, bob])


async def test_leaving_the_lobby_frees_the_seat(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    await bob.ok("sit", {"seat": 2})
    assert (await bob.call("leave"))["ok"]
    state = await ann.wait_state(lambda s: s["seats"][2] is None)
    assert state["spectators"] == [] or [p["name"] for p in state["spectators"]] == ["Ann"]
    kinds = [e["kind"] for e in ann.events]
    assert "stand" in kinds and "leave" in kinds
    await ann.close()


async def test_leaving_after_a_game_reopens_the_lobby_as_standing_does(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    await ann.ok("sit", {"seat": None})
    await bob.ok("sit", {"seat": None})
    await ann.ok("start")
    room = server.room(code)
    room.phase = "over"  # as if the game had just ended; its table is still shown
    await bob.ok("leave")
    state = await ann.wait_state(lambda s: s["seats"][1] is None)
    assert state["phase"] == "lobby"
    assert state["pile"]["count"] == 0
    await ann.close()
