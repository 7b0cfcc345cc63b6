"""Strangers, impostors and robots against a real server: every way to
test a room code spends one budget per address; the host removes a stranger for good and
locks the door; names and avatars that pass for someone else are refused; a script that
slaps the instant a trigger reaches it wins nothing; rooms count against their opener until
they close, and a lobby nobody acts in closes whoever sits in it."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest
import socketio
from app_harness import (
    WAIT,
    Client,
    Recorder,
    Server,
    close_all,
    deal,
    join,
    serving,
    turn_until,
)
from app_steps import stage_a_jack

from app.ops.clock import ManualClock
from app.ops.config import Settings
from app.tables.registry import Rooms

GUESSER = {"X-Forwarded-For": "203.0.113.66"}  # through the trusted proxy (loopback)
NEIGHBOUR = {"X-Forwarded-For": "198.51.100.30"}
MISSING = "ZZZZZZ"  # no table has it: Z is a code letter, and these tests open few rooms


def guest(server: Server, code: str, name: str, **auth: Any) -> Client:
    """A person whose `auth` carries more: an avatar, an invite."""
    client = Client(server, code, name)
    client.auth_extra = auth
    return client


async def refusal(client: Client, **options: Any) -> str:
    """The code of the refusal `client` gets connecting."""
    with pytest.raises(socketio.exceptions.ConnectionError):
        await client.connect(**options)
    code: str = client.refusal["data"]["code"]
    await client.close()
    return code


async def metric(server: Server, name: str, label: str | None = None) -> float:
    async with httpx.AsyncClient(base_url=server.url) as http:
        text = (await http.get("/metrics")).text
    wanted = f'{name}{{result="{label}"}}' if label else name
    for line in text.splitlines():
        if line.startswith(wanted + " "):
            return float(line.split()[1])
    return 0.0


# ---- 1: room codes ------------------------------------------------------------------------


async def test_every_way_to_test_a_code_spends_one_budget_per_address(logged: Any) -> None:
    clock = ManualClock()
    async with (
        serving(clock, wrong_codes_per_minute=1.0, wrong_codes_burst=4) as server,
        httpx.AsyncClient(base_url=server.url, headers=GUESSER) as http,
    ):
        code = await server.new_room()
        # Four wrong codes, four ways: the API's three pages and a Socket.IO connection.
        assert (await http.get(f"/r/{MISSING}")).status_code == 404
        assert (await http.get(f"/r/{MISSING}/tv")).status_code == 404
        assert (await http.get(f"/r/{MISSING}/qr.svg")).status_code == 404
        assert await refusal(Client(server, MISSING, "Gus"), headers=GUESSER) == "no_room"
        # Spent: every way says no, to the right code too (a refusal tells nothing).
        assert (await http.get(f"/api/rooms/{code}")).status_code == 429
        assert (await http.get(f"/r/{code}")).status_code == 429
        assert (await http.get(f"/r/{code}/qr.svg")).status_code == 429
        assert await refusal(Client(server, code, "Gus"), headers=GUESSER) == "rate_limited"
        # Another address, with the link: never held back.
        friend = await Client(server, code, "Fay").connect(headers=NEIGHBOUR)
        assert (await http.get(f"/r/{code}", headers=NEIGHBOUR)).status_code == 200
        assert await metric(server, "slapjack_code_lookups_total", "missing") == 4
        assert await metric(server, "slapjack_code_lookups_total", "refused") == 4
        assert "lookup_refused" in logged.events
        # A minute later the address has a wrong code's worth again.
        await clock.advance(60)
        assert (await http.get(f"/api/rooms/{code}")).status_code == 200
        await friend.close()


async def test_a_wave_of_wrong_codes_makes_every_further_wrong_code_dearer() -> None:
    """From many addresses at once (a botnet): the server notices the wave and each further
    wrong code costs its address more; a right code never costs anything."""
    clock = ManualClock()
    settings = {"wrong_codes_per_minute": 1.0, "wrong_codes_burst": 10, "guess_wave_per_minute": 4}
    async with (
        serving(clock, **settings) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        code = await server.new_room()

        async def guess(address: str) -> int:
            headers = {"X-Forwarded-For": address}
            return (await http.get(f"/api/rooms/{MISSING}", headers=headers)).status_code

        bots = [f"203.0.113.{n}" for n in range(1, 41)]
        first = [await guess(bot) for bot in bots]  # 40 wrong codes in a minute: a wave
        assert first == [404] * 40
        # 40 a minute, ten times the wave's rate: each further one costs 10 (the burst).
        assert await metric(server, "slapjack_wrong_code_cost") == 10
        # A fresh address in the wave: its first wrong code costs it its whole burst.
        late = "203.0.113.200"
        assert [await guess(late) for _ in range(3)] == [404, 429, 429]
        # People with the right code are answered, wave or not.
        for n in range(20):
            answer = await http.get(
                f"/api/rooms/{code}", headers={"X-Forwarded-For": f"192.0.2.{n}"}
            )
            assert answer.status_code == 200


# ---- 2: the host's table ------------------------------------------------------------------


async def test_a_kicked_stranger_is_shown_out_and_never_gets_back_in(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    eve = await Client(server, code, "Eve").connect(headers=GUESSER)
    assert eve.seat is not None
    assert (await ann.ok("kick", {"player": eve.player})) == {"ok": True}
    await asyncio.wait_for(eve.disconnected.wait(), WAIT)
    told = [data for kind, data in eve.messages if kind == "event" and data["kind"] == "kick"]
    assert told and told[0]["player"] == eve.player
    await ann.wait_state(
        lambda s: all(seat is None or seat["player"] != eve.player for seat in s["seats"])
    )
    # Back with her token, or anyone new from her address: refused, every time.
    for _ in range(3):
        assert await refusal(Client(server, code, "Eve", token=eve.token)) == "kicked"
        assert await refusal(Client(server, code, "Mal"), headers=GUESSER) == "kicked"
    # She cannot sit again before the host's Start: the game is Ann's and Bob's.
    bob = await Client(server, code, "Bob").connect(headers=NEIGHBOUR)
    await ann.ok("start")
    state = await ann.wait_state(lambda s: s["phase"] == "playing")
    assert {seat["player"] for seat in state["seats"] if seat} == {ann.player, bob.player}
    await close_all([ann, bob, eve])


async def test_a_locked_table_admits_nobody_new_but_with_the_invite(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    bob = await Client(server, code, "Bob").connect()
    assert (await ann.ok("lock", {"locked": True}))["locked"] is True
    await bob.wait_state(lambda s: s["locked"])
    assert await refusal(Client(server, code, "Eve")) == "room_locked"
    await bob.drop()
    back = await Client(server, code, "Bob", token=bob.token).connect()  # he was here
    invite = (await ann.ok("invite"))["invite"]
    cy = await guest(server, code, "Cy", invite=invite).connect()
    fresh = (await ann.ok("invite"))["invite"]
    assert await refusal(guest(server, code, "Dot", invite=invite)) == "room_locked"
    dot = await guest(server, code, "Dot", invite=fresh).connect()
    assert (await back.call("lock", {"locked": False}))["error"]["code"] == "not_host"
    await close_all([ann, back, cy, dot])


# ---- 3, 4: names and avatars --------------------------------------------------------------


@pytest.mark.parametrize(
    "impostor",
    ["Ann", "ANN", "\u0410nn", "Ann.", "You", "Big screen", "A" + "\u0301" * 19, "\U0001d159"],
)
async def test_nobody_passes_for_someone_at_the_table(server: Server, impostor: str) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    assert await refusal(Client(server, code, impostor)) in ("name_taken", "bad_name")
    await ann.close()


async def test_renaming_in_a_loop_and_in_a_game_changes_nothing(server: Server) -> None:
    """Bob reconnects with his token ten times in a second, as Ann's look-alikes, in a game:
    every screen still says Ann and Bob."""
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    bob = await Client(server, code, "Bob").connect()
    await ann.ok("start")
    await ann.wait_state(lambda s: s["phase"] == "playing")
    for n in range(10):
        again = await Client(
            server, code, "ANN" if n % 2 else f"Ann {n}", token=bob.token
        ).connect()
        assert again.player == bob.player
        await again.close()
    assert {seat["name"] for seat in ann.state["seats"] if seat} == {"Ann", "Bob"}
    await close_all([ann, bob])


async def test_an_avatar_of_eight_joined_blocks_is_refused(server: Server) -> None:
    code = await server.new_room()
    blocks = "\u200d".join(["\u2588"] * 8)
    assert await refusal(guest(server, code, "Ann", avatar=blocks)) == "bad_avatar"
    fox = await guest(server, code, "Ann", avatar="\U0001f98a").connect()
    assert fox.state["seats"][0]["avatar"] == "\U0001f98a"
    await fox.close()


# ---- 5: reflexes --------------------------------------------------------------------------


async def test_a_script_that_slaps_on_arrival_wins_nothing(logged: Any) -> None:
    """29 piles between a script that slaps as soon as the Jack reaches it and a person
    who reacts in 200-300 ms: the person takes every one; each of the script's slaps is a
    false start, told to the table, counted and logged."""
    clock = ManualClock()
    async with serving(clock, false_start_ms=100) as server:
        code = await server.new_room()
        human = await Client(server, code, "Hu").connect()
        script = await Client(server, code, "Bo").connect()
        await deal([human, script])
        await turn_until(clock, lambda: script.pings and human.pings, "round trips measured")
        piles = 29
        for race in range(piles):
            state = await stage_a_jack(server, code, [human, script])
            pile = state["pile"]["id"]
            early = await script.call("slap", {"pile_id": pile})
            assert [e["kind"] for e in early["events"]] == ["false_start"], early
            assert early["events"][0]["reaction_ms"] < 100
            await clock.advance(0.2 + (race % 11) / 100)  # the person: 200-300 ms
            won = await human.call("slap", {"pile_id": pile})
            assert won["events"][0]["kind"] == "take", won
            again = await script.call("slap", {"pile_id": pile})  # the pile was never its
            assert again["ok"] is False or again["events"][0]["kind"] == "late"
        told = [e for e in human.events if e["kind"] == "false_start"]
        assert len(told) == piles and {e["seat"] for e in told} == {script.seat}
        assert await metric(server, "slapjack_false_starts_total") == piles
        assert logged.events.count("false_start") == piles
        await close_all([human, script])


async def test_a_table_of_scripts_may_turn_the_check_off() -> None:
    clock = ManualClock()
    async with serving(clock, false_start_ms=100) as server:
        code = await server.new_room(false_starts=False)
        a, b = await Client(server, code, "A").connect(), await Client(server, code, "B").connect()
        await deal([a, b])
        state = await stage_a_jack(server, code, [a, b])
        taken = await a.call("slap", {"pile_id": state["pile"]["id"]})
        assert taken["events"][0]["kind"] == "take"
        assert a.state["rules"]["false_starts"] is False
        await close_all([a, b])


# ---- 7: hoarding --------------------------------------------------------------------------


async def test_a_used_room_counts_against_its_opener_until_it_closes() -> None:
    clock = ManualClock()
    async with (
        serving(clock, open_rooms_per_address=2, unused_room_seconds=60) as server,
        httpx.AsyncClient(base_url=server.url, headers=GUESSER) as http,
    ):
        codes = [(await http.post("/api/rooms")).json()["code"] for _ in range(2)]
        # Two people came to each; one left, one idle socket stayed.
        idle = []
        for code in codes:
            first, second = await join(server, code, "Sock", "Puppet")
            await second.ok("leave")
            idle.append(first)
        refused = await http.post("/api/rooms")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        # Nobody acted for SLAPJACK_UNUSED_ROOM_SECONDS: both close, sockets and all.
        await turn_until(
            clock, lambda: all(server.rooms.get(c) is None for c in codes), "closed", step=5
        )
        for sock in idle:
            await asyncio.wait_for(sock.disconnected.wait(), WAIT)
            assert any(kind == "event" and data["kind"] == "closed" for kind, data in sock.messages)
        assert (await http.post("/api/rooms")).status_code == 201
        await close_all(idle)


async def test_a_lobby_where_people_act_stays_open() -> None:
    clock = ManualClock()
    async with serving(clock, unused_room_seconds=60) as server:
        code = await server.new_room()
        ann, bob = (
            await Client(server, code, "Ann").connect(),
            await Client(server, code, "Bob").connect(),
        )
        for _ in range(5):
            await clock.advance(50)
            await ann.ok("rules", {"freeze_seconds": 1})  # the host sets the table up
        assert server.rooms.get(code) is not None
        await ann.ok("start")  # a game dealt: the lobby rule no longer applies
        await clock.advance(300)
        assert server.rooms.get(code) is not None
        await close_all([ann, bob])


def test_the_module_names_no_code_a_room_could_have() -> None:
    assert re.fullmatch(r"[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}", MISSING)


async def test_a_room_judging_false_starts_measures_the_seated_round_trips() -> None:
    """Round trips are measured (pings) while a room judges false starts, for the people
    who can slap: the seated, not a shared screen or a watcher; a room of scripts with the
    check off measures nobody (lag-fair judging, on, measures everyone: test_fan_out.py)."""
    clock, recorder = ManualClock(), Recorder()
    settings = Settings(allowed_origins=["http://127.0.0.1"], lag_ping_seconds=2.0)
    rooms = Rooms(settings, recorder, clock=clock)
    for false_starts in (True, False):
        room = rooms.create(false_starts=false_starts)
        await room.join("ann", "Ann", None)
        await room.join("tv", "Big screen", None, watch=True)
        await clock.advance(2 * 2.0)
        assert recorder.pings("ann") == (3 if false_starts else 0)
        assert recorder.pings("tv") == 0
        room.close()
        recorder.sent.clear()
    rooms.close_all()
