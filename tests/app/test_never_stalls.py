"""The game never stalls: the server flips for an idle or disconnected seat, never slaps for
anyone; a person who comes back with the token finds their seat.

The server's clock is a ManualClock the tests turn (`turn_until`): the autopilot's, the
abandon timer's and the game's own waits come when the test says, not after real seconds.
"""

import asyncio
from typing import Any

from app_harness import WAIT, Client, Server, close_all, join, serving, turn_until

from app.ops.clock import ManualClock, settle
from app.wire.protocol import Flip


async def seated_game(server: Server, *names: str) -> list[Client]:
    code = await server.new_room()
    clients = await join(server, code, *names)
    for client in clients:
        await client.ok("sit", {"seat": None})
    await clients[0].ok("start")
    return clients


def auto_flips(client: Client) -> list[dict]:
    return [e for e in client.events if e["kind"] == "flip" and e["auto"]]


def jack_flipped(client: Client) -> bool:
    return any(e["card"].startswith("J") for e in auto_flips(client))


def state_when(client: Client, condition: Any) -> Any:
    """The client's newest state if `condition` holds of it (for `turn_until`)."""
    return client.state if client.states and condition(client.state) else None


async def test_idle_seats_are_flipped_for_but_nobody_is_slapped_for() -> None:
    clock = ManualClock()
    async with serving(clock, idle_autoflip_seconds=1.0) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        # Nobody flips: the autopilot does, once a seat has been idle its second.
        await clock.advance(0.99)
        assert not auto_flips(ann)
        # Flips alone bring a Jack (the event follows the state it led to).
        await turn_until(clock, lambda: jack_flipped(ann), "a Jack", step=1.0)
        jack = ann.state
        assert jack["slap_open"] and jack["trigger"] == "jack"
        flips = auto_flips(ann)
        assert flips[-1]["card"].startswith("J")
        assert [e["seat"] for e in flips] == [i % 2 for i in range(len(flips))]  # in turn
        assert all(e["auto"] for e in ann.events if e["kind"] == "flip")
        room = server.room(jack["room"])
        # Five idle periods (within the Jack's 8 s before it lapses): nobody slapped for.
        await clock.advance(5)
        assert room.version == ann.state["version"] == jack["version"]
        assert not any(e["kind"] in ("take", "false_slap") for e in ann.events)
        await ann.ok("slap", {"pile_id": jack["pile"]["id"]})  # a person's slap moves it on
        await turn_until(clock, lambda: len(auto_flips(ann)) > len(flips), "a flip", step=1)
        await close_all([ann, bob])


async def test_a_disconnected_seat_is_flipped_for_and_gets_its_seat_back() -> None:
    clock = ManualClock()
    async with serving(clock, disconnected_autoflip_seconds=2.0) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        await ann.drop()  # the network drops; Ann (seat 0) is first
        await bob.wait_state(lambda s: s["seats"][0]["connected"] is False)
        await clock.advance(1.9)
        assert not auto_flips(bob)
        flip = await turn_until(clock, lambda: auto_flips(bob), "a flip for Ann", step=0.1)
        assert flip[0]["seat"] == 0
        state = await bob.wait_state(lambda s: s["next"] == 1 or s["slap_open"])
        assert state["seats"][0]["connected"] is False
        back = await Client(server, ann.room, "Ann", token=ann.token).connect()
        assert back.player == ann.player
        state = back.state
        assert state["you"]["seat"] == 0 and state["phase"] == "playing"
        assert state["seats"][0]["connected"] is True
        assert sum(s["cards"] for s in state["seats"]) + state["pile"]["count"] == 52
        if not state["slap_open"]:
            await bob.ok("flip")
            state = await back.wait_state(lambda s: s["pile"]["count"] == 2 or s["slap_open"])
        while state["slap_open"]:  # Ann takes any Jack herself, from her old seat
            reply = await back.ok("slap", {"pile_id": state["pile"]["id"]})
            assert reply["events"][0]["kind"] == "take" and reply["events"][0]["seat"] == 0
            # The collect pause after a take holds every flip: wait for its end.
            state = await turn_until(
                clock,
                lambda: state_when(back, lambda s: not s["slap_open"] and not s["collect_ms"]),
                "the collect pause's end",
            )
        if state["next"] == 0:
            # A take of hers is gathered first: nobody flips during the collect pause.
            await turn_until(
                clock, lambda: state_when(back, lambda s: s["collect_ms"] == 0), "the pause"
            )
            assert (await back.ok("flip"))["events"][0]["seat"] == 0
        await close_all([back, bob])


async def test_a_room_with_only_bots_and_a_gone_person_still_ends() -> None:
    clock = ManualClock()
    settings = {"disconnected_autoflip_seconds": 5.0, "bot_time_scale": 1.0}
    async with serving(clock, **settings) as server:
        code = await server.new_room(freeze_seconds=1)
        (ann,) = await join(server, code, "Ann")
        await ann.ok("sit", {"seat": None})
        await ann.ok("add_bot", {"level": "hard"})
        await ann.ok("start")
        await ann.drop()
        room = server.room(code)
        # A bot's pace and the autopilot's, in the clock's time: hours at most.
        await turn_until(clock, lambda: room.phase == "over", "the end", step=5, most=36_000)
        assert room.game is not None and room.game.winner is not None
        assert sum(room.game.hand_sizes) == 52
        await asyncio.wait_for(ann.disconnected.wait(), WAIT)


async def test_the_time_limit_ends_a_game_nobody_plays() -> None:
    clock = ManualClock()
    async with serving(clock, idle_autoflip_seconds=600) as server:  # the autopilot waits
        code = await server.new_room(time_limit=60)
        ann, bob, cy = await join(server, code, "Ann", "Bob", "Cy")
        for client in (ann, bob, cy):
            await client.ok("sit", {"seat": None})
        await ann.ok("start")
        await ann.wait_state(lambda s: s["phase"] == "playing")
        await clock.advance(59.9)
        assert server.room(code).phase == "playing"
        await clock.advance(0.1)
        over = await ann.wait_state(lambda s: s["phase"] == "over")
        await close_all([ann, bob, cy])
    assert over["winner"] == 0 and over["win_reason"] == "time"  # 18 cards to 17 and 17
    assert over["pile"]["count"] == 0 and over["seats"][0]["cards"] == 18


async def test_a_server_bug_still_answers_and_the_room_plays_on(server: Server) -> None:
    code = await server.new_room()
    (ann,) = await join(server, code, "Ann")
    room = server.room(code)
    act = room.act

    async def broken(*args: object) -> dict:
        raise RuntimeError("a bug")

    room.act = broken  # type: ignore[method-assign]
    reply = await ann.call("sit", {"seat": 0})
    assert reply["error"]["code"] == "internal_error"
    room.act = act  # type: ignore[method-assign]
    assert (await ann.ok("sit", {"seat": 0}))["seat"] == 0
    await ann.close()


async def test_a_message_cancelled_at_a_busy_rooms_lock_leaves_the_room_playing(
    server: Server,
) -> None:
    """A message that finds its room's lock held waits for it (`Room.act` takes a free lock
    at once, a held one in turn); cancelled there, it does nothing and holds nothing, and
    one cancelled while it holds the lock lets it go."""
    ann, bob = await seated_game(server, "Ann", "Bob")
    room = server.room(ann.state["room"])
    game = room.table.game
    assert game is not None and game.next_to_play is not None
    turn = next(c for c in (ann, bob) if c.seat == game.next_to_play)
    sid = room.connections.sid_of(room.table.seats[game.next_to_play] or "")
    assert sid is not None
    version = room.version
    await room.lock.acquire()  # a busy room
    waiting = asyncio.create_task(room.act(sid, "flip", Flip(), room.clock.now()))
    await settle()  # it runs as far as the lock, and waits there
    assert not waiting.done()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    room.lock.release()
    assert waiting.cancelled() and not room.lock.locked()
    act_now = room._act_now

    def cancelled_inside(*args: object) -> dict:
        raise asyncio.CancelledError  # as if cancelled while it held the lock

    room._act_now = cancelled_inside  # type: ignore[method-assign]
    inside = asyncio.create_task(room.act(sid, "flip", Flip(), room.clock.now()))
    await asyncio.gather(inside, return_exceptions=True)
    assert inside.cancelled() and not room.lock.locked()
    room._act_now = act_now  # type: ignore[method-assign]
    assert room.version == version  # neither flipped
    await turn.ok("flip")  # the room plays on
    assert room.version > version
    await close_all([ann, bob])


async def test_leaving_mid_game_keeps_the_seat_for_the_autopilot() -> None:
    clock = ManualClock()
    async with serving(clock, disconnected_autoflip_seconds=1.0) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        assert (await ann.call("leave"))["ok"]  # Ann (seat 0) is first to flip
        flips = await turn_until(clock, lambda: auto_flips(bob), "a flip for Ann")
        assert flips[0]["seat"] == 0
        state = bob.state
        assert state["seats"][0]["name"] == "Ann" and state["seats"][0]["connected"] is False
        assert state["host"] == bob.player
        await bob.close()


async def test_a_game_whose_players_are_all_gone_is_abandoned_for_the_watchers() -> None:
    clock = ManualClock()
    # Abandoned long before the autopilot could flip the whole deck.
    settings = {"disconnected_autoflip_seconds": 1.0, "abandon_seconds": 10.0}
    async with serving(clock, **settings) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        [cy] = await join(server, ann.room, "Cy")  # watches
        await ann.ok("leave")
        await bob.ok("leave")
        await cy.wait_state(lambda s: not any(seat["connected"] for seat in s["seats"][:2]))
        await clock.advance(9.9)
        assert not any(e["kind"] == "abandon" for e in cy.events)
        # The autopilot flips for them but never slaps: a Jack would stall the table.
        await turn_until(
            clock, lambda: any(e["kind"] == "abandon" for e in cy.events), "the abandon"
        )
        state = cy.state
        assert state["phase"] == "lobby"
        assert state["host"] == cy.player
        assert (await cy.call("add_bot", {"level": "easy"}))["ok"]  # the room is usable again
        await cy.close()


async def test_a_game_with_a_bot_still_in_is_not_abandoned() -> None:
    clock = ManualClock()
    settings = {"disconnected_autoflip_seconds": 30.0, "abandon_seconds": 10.0}
    async with serving(clock, **settings) as server:
        code = await server.new_room()
        [ann] = await join(server, code, "Ann")
        await ann.ok("sit", {"seat": None})
        await ann.ok("add_bot", {"level": "easy"})
        await ann.ok("start")
        await ann.close()  # gone, but the bot can still play
        room = server.room(code)
        await turn_until(clock, lambda: not room.connected(), "Ann gone")
        await clock.advance(50)  # five abandon delays
        assert room.phase != "lobby"
        assert not any(e.get("kind") == "abandon" for e in room.table.moves)


async def test_a_trigger_nobody_slaps_lapses_and_the_autopilot_flips_on() -> None:
    clock = ManualClock()
    async with serving(clock, idle_autoflip_seconds=1.0) as server:
        code = await server.new_room(trigger_timeout=2)
        ann, bob = await join(server, code, "Ann", "Bob")
        for client in (ann, bob):
            await client.ok("sit", {"seat": None})
        await ann.ok("start")
        await turn_until(clock, lambda: jack_flipped(ann), "a Jack", step=1.0)
        jack = ann.state
        assert jack["slap_open"] and not jack["trigger_lapsed"]
        assert jack["lapse_ms"] == 2000  # the clock stands still until the test turns it
        await clock.advance(1.999)
        assert not any(e["kind"] == "lapse" for e in ann.events)
        # The server wakes at the lapse by itself: an event, a state, and flips go on.
        await clock.advance(0.001)
        lapse = await ann.wait_for(lambda: [e for e in ann.events if e["kind"] == "lapse"])
        assert lapse[0] == {
            "kind": "lapse",
            "trigger": "jack",
            "pile_id": jack["pile"]["id"],
            "version": lapse[0]["version"],
        }
        # The state the lapse came in (the autopilot may have flipped since: its turn's
        # idle time ran out while the Jack held the table).
        lapsed = next(s for s in ann.states if s["trigger_lapsed"])
        assert lapsed["lapse_ms"] is None and lapsed["slap_open"]
        flips = len(auto_flips(ann))
        # The Jack held nobody.
        await turn_until(clock, lambda: len(auto_flips(ann)) > flips, "a flip", step=1.0)
        assert not any(e["kind"] in ("take", "false_slap") for e in ann.events)
        await close_all([ann, bob])
