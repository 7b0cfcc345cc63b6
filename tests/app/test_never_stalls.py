"""The game never stalls: the server flips for an idle or disconnected seat, never slaps for
anyone; a person who comes back with the token finds their seat."""

import asyncio
import time

import pytest
from app_harness import WAIT, Client, Server, close_all, join, serving

from app.wire.protocol import Flip
from engine import Rules

# The same on both transports (SLAPJACK_TRANSPORT: conftest.py runs each test on each).
pytestmark = pytest.mark.transports("lean", "stock")


async def seated_game(server: Server, *names: str) -> list[Client]:
    code = await server.new_room()
    clients = await join(server, code, *names)
    for client in clients:
        await client.ok("sit", {"seat": None})
    await clients[0].ok("start")
    return clients


def auto_flips(client: Client) -> list[dict]:
    return [e for e in client.events if e["kind"] == "flip" and e["auto"]]


async def test_idle_seats_are_flipped_for_but_nobody_is_slapped_for() -> None:
    async with serving(idle_autoflip_seconds=0.1) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        # Flips alone bring a Jack (the event follows the state it led to).
        await ann.wait_for(lambda: any(e["card"].startswith("J") for e in auto_flips(ann)))
        jack = ann.state
        assert jack["slap_open"] and jack["trigger"] == "jack"
        flips = auto_flips(ann)
        assert flips[-1]["card"].startswith("J")
        assert [e["seat"] for e in flips] == [i % 2 for i in range(len(flips))]  # in turn
        assert all(e["auto"] for e in ann.events if e["kind"] == "flip")
        await asyncio.sleep(0.5)  # five idle periods: still nobody slapped for anyone
        assert ann.state["version"] == jack["version"]
        assert not any(e["kind"] in ("take", "false_slap") for e in ann.events)
        await ann.ok("slap", {"pile_id": jack["pile"]["id"]})  # a person's slap moves it on
        await ann.wait_for(lambda: len(auto_flips(ann)) > len(flips))
        await close_all([ann, bob])


async def test_a_disconnected_seat_is_flipped_for_and_gets_its_seat_back() -> None:
    async with serving(disconnected_autoflip_seconds=0.2) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        await ann.drop()  # the network drops; Ann (seat 0) is first
        flip = await bob.wait_for(lambda: auto_flips(bob))
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
            state = await back.wait_state(lambda s: not s["slap_open"] and not s["collect_ms"])
        if state["next"] == 0:
            # A take of hers is gathered first: nobody flips during the collect pause.
            await back.wait_state(lambda s: s["collect_ms"] == 0)
            assert (await back.ok("flip"))["events"][0]["seat"] == 0
        await close_all([back, bob])


async def test_a_room_with_only_bots_and_a_gone_person_still_ends() -> None:
    async with serving(disconnected_autoflip_seconds=0.05) as server:
        code = await server.new_room(freeze_seconds=0.05)
        (ann,) = await join(server, code, "Ann")
        await ann.ok("sit", {"seat": None})
        await ann.ok("add_bot", {"level": "hard"})
        await ann.ok("start")
        await ann.drop()
        room = server.room(code)
        async with asyncio.timeout(60):
            while room.phase != "over":
                await asyncio.sleep(0.05)
        assert room.game is not None and room.game.winner is not None
        assert sum(room.game.hand_sizes) == 52
        await asyncio.wait_for(ann.disconnected.wait(), WAIT)


async def test_the_time_limit_ends_a_game_nobody_plays(server: Server) -> None:
    code = await server.new_room()
    ann, bob, cy = await join(server, code, "Ann", "Bob", "Cy")
    for client in (ann, bob, cy):
        await client.ok("sit", {"seat": None})
    room = server.room(code)
    room.rules = Rules(time_limit=0.2)  # the protocol allows 10 s and more; tests cannot wait
    await ann.ok("start")
    over = await ann.wait_state(lambda s: s["phase"] == "over")
    assert over["winner"] == 0 and over["win_reason"] == "time"  # 18 cards to 17 and 17
    assert over["pile"]["count"] == 0 and over["seats"][0]["cards"] == 18
    await close_all([ann, bob, cy])


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
    sid = room._sid_of[room.table.seats[game.next_to_play]]
    version = room.version
    await room.lock.acquire()  # a busy room
    waiting = asyncio.create_task(room.act(sid, "flip", Flip(), time.monotonic()))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    room.lock.release()
    assert waiting.cancelled() and not room.lock.locked()
    act_now = room._act_now

    def cancelled_inside(*args: object) -> dict:
        raise asyncio.CancelledError  # as if cancelled while it held the lock

    room._act_now = cancelled_inside  # type: ignore[method-assign]
    inside = asyncio.create_task(room.act(sid, "flip", Flip(), time.monotonic()))
    await asyncio.gather(inside, return_exceptions=True)
    assert inside.cancelled() and not room.lock.locked()
    room._act_now = act_now  # type: ignore[method-assign]
    assert room.version == version  # neither flipped
    await turn.ok("flip")  # the room plays on
    assert room.version > version
    await close_all([ann, bob])


async def test_leaving_mid_game_keeps_the_seat_for_the_autopilot() -> None:
    async with serving(disconnected_autoflip_seconds=0.1) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        assert (await ann.call("leave"))["ok"]  # Ann (seat 0) is first to flip
        flips = await bob.wait_for(lambda: auto_flips(bob))
        assert flips[0]["seat"] == 0
        state = bob.state
        assert state["seats"][0]["name"] == "Ann" and state["seats"][0]["connected"] is False
        assert state["host"] == bob.player
        await bob.close()


async def test_a_game_whose_players_are_all_gone_is_abandoned_for_the_watchers() -> None:
    settings = {"disconnected_autoflip_seconds": 0.05, "abandon_seconds": 0.3}
    async with serving(**settings) as server:
        ann, bob = await seated_game(server, "Ann", "Bob")
        [cy] = await join(server, ann.room, "Cy")  # watches
        await ann.ok("leave")
        await bob.ok("leave")
        # The autopilot flips for them but never slaps: a Jack would stall the table.
        await cy.wait_for(lambda: any(e["kind"] == "abandon" for e in cy.events))
        state = cy.state
        assert state["phase"] == "lobby"
        assert state["host"] == cy.player
        assert (await cy.call("add_bot", {"level": "easy"}))["ok"]  # the room is usable again
        await cy.close()


async def test_a_game_with_a_bot_still_in_is_not_abandoned() -> None:
    settings = {"disconnected_autoflip_seconds": 30.0, "abandon_seconds": 0.1}
    async with serving(**settings) as server:
        code = await server.new_room()
        [ann] = await join(server, code, "Ann")
        await ann.ok("sit", {"seat": None})
        await ann.ok("add_bot", {"level": "easy"})
        await ann.ok("start")
        await ann.close()  # gone, but the bot can still play
        await asyncio.sleep(0.5)
        assert server.room(code).phase != "lobby"


async def test_a_trigger_nobody_slaps_lapses_and_the_autopilot_flips_on() -> None:
    async with serving(idle_autoflip_seconds=0.1) as server:
        code = await server.new_room(trigger_timeout=2)
        ann, bob = await join(server, code, "Ann", "Bob")
        for client in (ann, bob):
            await client.ok("sit", {"seat": None})
        await ann.ok("start")
        await ann.wait_for(lambda: any(e["card"].startswith("J") for e in auto_flips(ann)))
        jack = ann.state
        assert jack["slap_open"] and not jack["trigger_lapsed"]
        assert 0 < jack["lapse_ms"] <= 2000
        # The server wakes at the lapse by itself: an event, a state, and flips go on.
        lapse = await ann.wait_for(lambda: [e for e in ann.events if e["kind"] == "lapse"])
        assert lapse[0] == {
            "kind": "lapse",
            "trigger": "jack",
            "pile_id": jack["pile"]["id"],
            "version": lapse[0]["version"],
        }
        lapsed = await ann.wait_state(lambda s: s["trigger_lapsed"])
        assert lapsed["lapse_ms"] is None and lapsed["slap_open"]
        flips = len(auto_flips(ann))
        await ann.wait_for(lambda: len(auto_flips(ann)) > flips)  # the Jack held nobody
        assert not any(e["kind"] in ("take", "false_slap") for e in ann.events)
        await close_all([ann, bob])
