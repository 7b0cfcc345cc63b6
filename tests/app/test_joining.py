"""Joining a room: refusals, welcome, tokens, the host, Origin checks, names as text."""

import asyncio

import pytest
import socketio
from app_harness import WAIT, Client, Server, close_all, join, serving, turn_until, until
from app_steps import refused

from app.ops.clock import ManualClock


@pytest.mark.parametrize(
    ("auth", "code"),
    [
        (None, "bad_auth"),
        ("K7PQRX", "bad_auth"),
        ({"room": "K7PQRX"}, "bad_auth"),
        ({"room": "NOROOM", "name": "Ann"}, "no_room"),
        ({"room": "{code}", "name": "   "}, "bad_name"),
        ({"room": "{code}", "name": "x" * 21}, "bad_name"),
        ({"room": "{code}", "name": "Ann\u0007"}, "bad_name"),
        ({"room": "{code}", "name": "Ann\u202e"}, "bad_name"),
        ({"room": "{code}", "name": 7}, "bad_auth"),
        ({"room": "{code}", "name": "Ann", "token": 5}, "bad_auth"),
        ({"room": "{code}", "name": "Ann", "extra": 1}, "bad_auth"),
    ],
)
async def test_a_bad_connection_is_refused_with_a_reason_to_show(
    server: Server, auth, code
) -> None:
    room = await server.new_room()
    if isinstance(auth, dict) and auth.get("room") == "{code}":
        auth = {**auth, "room": room}
    reason = await refused(server, auth)
    assert reason["data"]["code"] == code
    assert reason["message"] == reason["data"]["message"]
    assert server.room(room).summary()["spectators"] == 0


async def test_welcome_then_state_and_the_first_person_is_host(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code.lower(), "  Ann  ").connect()
    kinds = [kind for kind, _ in ann.messages]
    assert kinds[:2] == ["welcome", "state"]
    assert len(ann.token) >= 22  # 128 bits, url-safe base64
    state = ann.state
    assert state["room"] == code
    assert state["phase"] == "lobby"
    # Whoever opens the table sits at once, and so does the next person in.
    assert state["you"] == {"player": ann.player, "seat": 0, "host": True}
    assert state["host"] == ann.player
    assert state["spectators"] == []
    assert len(state["seats"]) == 8 and state["seats"][0]["name"] == "Ann"
    assert state["seats"][1:] == [None] * 7 and state["players_needed"] == 1
    bob = await Client(server, code, "Bob").connect()
    assert bob.state["you"]["host"] is False and bob.state["you"]["seat"] == 1
    assert bob.state["players_needed"] == 0
    assert (await bob.call("add_bot", {"level": "easy"}))["error"]["code"] == "not_host"
    await close_all([ann, bob])


async def test_names_are_kept_as_text(server: Server) -> None:
    code = await server.new_room()
    name = "<b>Ann</b>&amp;"
    ann = await Client(server, code, name).connect()
    await ann.ok("sit", {"seat": 2})
    assert ann.state["seats"][2]["name"] == name
    await ann.close()


async def test_the_token_brings_back_the_same_seat_and_drops_the_older_tab(server: Server) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    await ann.ok("sit", {"seat": 4})
    again = await Client(server, code, "Ann", token=ann.token).connect()
    assert again.player == ann.player and again.token == ann.token
    assert again.state["you"] == {"player": ann.player, "seat": 4, "host": True}
    await asyncio.wait_for(ann.disconnected.wait(), WAIT)  # the older tab is let go
    state = await bob.wait_state(lambda s: any(e["kind"] == "reconnect" for e in bob.events))
    assert state["seats"][4]["connected"] is True
    assert len(state["spectators"]) == 1  # Bob only: Ann is one person, not two
    await close_all([again, bob])


async def test_a_forged_or_missing_token_is_a_new_person_who_cannot_act_for_the_seat(
    server: Server,
) -> None:
    code = await server.new_room()
    ann, bob = await join(server, code, "Ann", "Bob")
    await ann.ok("sit", {"seat": 0})
    await bob.ok("sit", {"seat": 1})
    await ann.ok("start")
    # Ann's name with a forged token is an impostor: refused (the name reads as hers).
    impostor = Client(server, code, "ANN", token="x" * 22)
    with pytest.raises(socketio.exceptions.ConnectionError):
        await impostor.connect()
    assert impostor.refusal["data"]["code"] == "name_taken"
    forged = await Client(server, code, "Anne", token="x" * 22).connect()
    missing = await Client(server, code, "Annie").connect()
    for intruder in (forged, missing):
        assert intruder.token != ann.token and intruder.player != ann.player
        assert intruder.state["you"]["seat"] is None
        for event, data in (("flip", {}), ("slap", {"pile_id": 0}), ("stand", {})):
            reply = await intruder.call(event, data)
            assert reply["error"]["code"] in ("not_seated", "wrong_phase"), reply
    assert ann.state["pile"]["count"] == 0  # nothing was flipped for seat 0
    await close_all([ann, bob, forged, missing])


async def test_the_host_passes_on_when_the_host_leaves(server: Server) -> None:
    code = await server.new_room()
    ann, bob, cy = await join(server, code, "Ann", "Bob", "Cy")
    assert await ann.call("leave", {}) == {"ok": True}  # on purpose: at once
    await asyncio.wait_for(ann.disconnected.wait(), WAIT)
    state = await cy.wait_state(lambda s: s["host"] == bob.player)
    assert state["you"]["host"] is False
    assert (await bob.wait_state(lambda s: s["you"]["host"]))["host"] == bob.player
    await close_all([bob, cy])


async def test_the_host_passes_on_when_the_host_stays_disconnected() -> None:
    clock = ManualClock()
    async with serving(clock, host_handover_seconds=30) as server:
        code = await server.new_room()
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.drop()  # a dropped connection, not a goodbye
        gone = await bob.wait_for(lambda: [e for e in bob.events if e["kind"] == "disconnect"])
        assert bob.state["host"] == ann.player
        await clock.advance(29.9)
        assert server.room(code).table.host == ann.player  # still within the grace
        await clock.advance(0.1)
        state = await bob.wait_state(lambda s: s["host"] == bob.player)
        assert state["version"] > gone[0]["version"]
        await bob.close()


async def test_an_origin_not_allowed_cannot_connect(server: Server) -> None:
    code = await server.new_room()
    await refused(server, {"room": code, "name": "Eve"}, headers={"Origin": "http://evil.example"})
    ok = await Client(server, code, "Ann").connect(headers={"Origin": server.url})
    assert ok.state["room"] == code
    await ok.close()


async def test_a_full_room_refuses_more_people() -> None:
    async with serving(max_people_per_room=2) as server:
        code = await server.new_room()
        clients = await join(server, code, "Ann", "Bob")
        reason = await refused(server, {"room": code, "name": "Cy"})
        assert reason["data"]["code"] == "room_full"
        await close_all(clients)


async def test_a_room_nobody_is_in_closes() -> None:
    clock = ManualClock()
    # A lobby nobody acts in closes sooner (tests/app/test_room_hoarding.py): not here.
    async with serving(clock, room_expiry_seconds=600, unused_room_seconds=7200) as server:
        code = await server.new_room()
        ann, bob = await join(server, code, "Ann", "Bob")  # used: it lives room_expiry_seconds
        await bob.close()
        await clock.advance(3600)
        assert server.rooms.get(code) is not None  # someone is in: it stays open
        await ann.close()
        room = server.room(code)
        await until(lambda: not room.connected(), "Ann gone")
        await clock.advance(599.9)
        assert server.rooms.get(code) is not None
        await clock.advance(0.1)
        assert server.rooms.get(code) is None
        reason = await refused(server, {"room": code, "name": "Ann"})
        assert reason["data"]["code"] == "no_room"


async def test_a_host_back_within_the_grace_stays_host_and_a_late_one_takes_it_back() -> None:
    clock = ManualClock()
    async with serving(clock, host_handover_seconds=30) as server:
        code = await server.new_room()
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.drop()
        await bob.wait_for(lambda: [e for e in bob.events if e["kind"] == "disconnect"])
        await clock.advance(29.9)  # back just within the grace
        back = await Client(server, code, "Ann", token=ann.token).connect()
        assert back.state["you"]["host"] is True
        await back.drop()
        await turn_until(
            clock, lambda: bob.state["host"] == bob.player, "the hand-over", step=1, most=60
        )
        # The table's own host, back after the hand-over: the role comes home, and nobody
        # who joined after her keeps it.
        late = await Client(server, code, "Ann", token=ann.token).connect()
        assert late.player == ann.player and late.state["you"]["host"] is True
        await bob.wait_state(lambda s: s["host"] == ann.player)
        await close_all([bob, late])


async def test_the_first_person_back_in_an_empty_room_becomes_host(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    assert (await ann.call("leave"))["ok"]
    await asyncio.wait_for(ann.disconnected.wait(), WAIT)
    bob = await Client(server, code, "Bob").connect()
    assert bob.state["you"]["host"] is True
    await bob.close()


async def test_one_address_cannot_connect_in_a_loop() -> None:
    async with serving(connects_per_minute=3) as server:
        code = await server.new_room()
        clients = [await Client(server, code, f"P{i}").connect() for i in range(3)]
        reason = await refused(server, {"room": code, "name": "Flood"})
        assert reason["data"]["code"] == "rate_limited"
        await close_all(clients)


async def test_a_room_nobody_ever_joins_closes_sooner() -> None:
    clock = ManualClock()
    async with serving(clock, unused_room_seconds=60, room_expiry_seconds=600) as server:
        code = await server.new_room()
        await clock.advance(59.9)
        assert server.rooms.get(code) is not None
        await clock.advance(0.1)
        assert server.rooms.get(code) is None


async def test_an_event_named_star_is_unknown_not_a_crash(server: Server) -> None:
    # python-socketio calls the catch-all handler differently for an event named "*".
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    reply = await ann.call("*", {"pile_id": 0})
    assert reply["error"]["code"] == "unknown_event"
    assert (await ann.call("sit", {"seat": None}))["ok"]
    await ann.close()


async def test_a_person_away_at_the_deal_is_not_dealt_in_and_is_told_on_return(
    server: Server,
) -> None:
    code = await server.new_room()
    ann, bob, cy = await join(server, code, "Ann", "Bob", "Cy")
    for person in (ann, bob, cy):
        await person.ok("sit", {"seat": None})
    await bob.drop()  # closed the tab in the lobby
    await ann.wait_state(lambda s: s["seats"][1] and s["seats"][1]["connected"] is False)
    await ann.ok("start")
    state = await ann.wait_state(lambda s: s["phase"] == "playing")
    seated = [seat["name"] for seat in state["seats"] if seat]
    assert seated == ["Ann", "Cy"]
    assert [e["kind"] for e in state["events"]] == ["stand", "start"]
    back = await Client(server, code, "Bob", token=bob.token).connect()
    assert back.player == bob.player and back.seat is None  # watching this game
    told = await back.wait_for(lambda: [e for e in back.events if e["kind"] == "reconnect"])
    assert told[0]["missed_deal"] is True and told[0]["flipped"] == 0
    await close_all([ann, back, cy])
