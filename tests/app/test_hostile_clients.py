"""Real networks and hostile clients: a sleeping phone, a client that never reads,
raw frames no browser sends."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

import httpx
import socketio
from app_harness import (
    QUICK_POLLS,
    SHORT_COLLECT_SECONDS,
    WAIT,
    Client,
    autoplay,
    cards_held,
    check_refusals,
    close_all,
    join,
    serving,
)
from raw_client import RawClient

from app.ops.clock import ManualClock
from app.ops.config import Settings

REAL_LIMITS = {
    name: Settings.model_fields[name].default
    for name in ("rate_per_second", "rate_burst", "flood_cutoff")
}


def disconnected(client: Client, player: str) -> bool:
    return any(e["kind"] == "disconnect" and e["player"] == player for e in client.events)


async def busy_until(client: Client, done: Any, *, most: int = 5000) -> int:
    """Makes the room broadcast (sit, stand, ...) until `done()`; every ack must come."""
    for count in range(most):
        if done():
            return count
        await client.ok("sit", {"seat": 6 + count % 2})  # clear of seats people sat in on arrival
        await client.ok("stand")
    raise AssertionError("the room never got there")


# ---- 1: a phone that falls asleep --------------------------------------------------------


async def test_a_silent_phone_never_freezes_its_table() -> None:
    """The phone's network goes silent, its TCP connection stays open. The room's next
    broadcast to it after the ping timeout must not close it inline and run the disconnect
    handler, which would await the room's lock held by that very broadcast: deadlock."""
    async with serving(ping_interval_seconds=1.0, ping_timeout_seconds=1.0) as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        phone = await RawClient.open(server)
        welcome = await phone.join(code, "Sleepy")
        # The phone now sleeps: it answers nothing, reads nothing. Ann plays on; every one
        # of her actions must be answered, and the room must see the phone go.
        await busy_until(ann, lambda: disconnected(ann, welcome["player"]))
        await ann.ok("sit", {"seat": 1})
        assert server.room(code).metrics.longest_hold < 1.0
        await ann.close()
        phone.ws.transport.abort()  # asleep: it would never answer a closing handshake


# ---- 9: a client that never reads --------------------------------------------------------


async def test_a_client_that_never_reads_is_dropped_and_the_room_goes_on() -> None:
    async with serving(send_queue_limit=20) as server:
        code = await server.new_room()
        (ann,) = await join(server, code, "Ann")
        # The kernel's socket buffers absorb what the client does not read before the queue
        # grows: a few MB by default, a thousand rounds and more. Small buffers at both ends
        # (the server's inherited from its listening socket) fill in a few dozen.
        server.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        stuck = await RawClient.open(server, small_buffer=True)
        welcome = await stuck.join(code, "Stuck")
        pinger = stuck.pong_blindly()
        try:
            # Ends on the drop: the bound is generous.
            await busy_until(ann, lambda: disconnected(ann, welcome["player"]), most=20_000)
        finally:
            pinger.cancel()
        sockets = server.app.engineio_server.eio.sockets
        assert all(s.queue.qsize() <= 21 for s in sockets.values())
        await ann.ok("sit", {"seat": 5})  # a free seat (the stuck client sat on arrival)
        await ann.close()
        stuck.ws.transport.abort()


# ---- 3: reserved event names -------------------------------------------------------------


async def test_reserved_event_names_from_a_client_change_nothing(server: Any) -> None:
    code = await server.new_room()
    (ann,) = await join(server, code, "Ann")
    raw = await RawClient.open(server)
    await raw.join(code, "Raw")
    room = server.room(code)
    people = len(room.connected())
    version = room.version
    reserved = ["connect", "disconnect", "connect_error", "message", "*"]
    for ack_id, name in enumerate(reserved * 3, start=1):
        await raw.send(f"42{ack_id}" + json.dumps([name, {"room": code, "name": "Ghost"}]))
        answer = await raw.ack(ack_id)
        assert answer["error"]["code"] == "unknown_event", (name, answer)
    assert len(room.connected()) == people
    assert room.version == version
    await raw.close()  # the one person it was leaves; no ghost stays connected
    await ann.wait_for(lambda: len(server.room(code).connected()) == people - 1)
    await ann.close()


async def test_star_right_after_leave_is_answered(server: Any) -> None:
    code = await server.new_room()
    raw = await RawClient.open(server)
    await raw.join(code, "Raw")
    await raw.send('421["leave",{}]')
    await raw.send('422["*",{}]')
    assert (await raw.ack(1))["ok"]
    assert (await raw.ack(2))["error"]["code"] == "unknown_event"
    await raw.close()


async def test_an_event_named_with_another_sid_costs_that_connection_nothing() -> None:
    async with serving(**REAL_LIMITS) as server:
        code = await server.new_room()
        mallory, victim = await join(server, code, "Mallory", "Victim")
        victim_sid = victim.sio.get_sid()
        for _ in range(2000):  # the flood is charged to the one sending it, who is cut off
            if mallory.disconnected.is_set():
                break
            await mallory.sio.emit(victim_sid, {})
            await asyncio.sleep(0)
        await asyncio.wait_for(mallory.disconnected.wait(), WAIT)
        assert (await victim.ok("sit", {"seat": 0}))["seat"] == 0
        assert not victim.disconnected.is_set()
        await close_all([mallory, victim])


# ---- 4 and 7: binary and malformed frames ------------------------------------------------


async def test_a_binary_event_is_refused_at_its_first_frame(server: Any) -> None:
    code = await server.new_room()
    raw = await RawClient.open(server)
    await raw.join(code, "Bin")
    await raw.send('459999999999-["sit",{"_placeholder":true,"num":0}]')
    assert await raw.closed()
    assert not server.app.engineio_server._binary_packet  # nothing gathered


async def test_a_binary_frame_is_refused(server: Any) -> None:
    code = await server.new_room()
    raw = await RawClient.open(server)
    await raw.join(code, "Bin")
    await raw.send(b"\x04" + b"x" * 100)
    assert await raw.closed()


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_malformed_frames_are_counted_logged_briefly_and_cut_off() -> None:
    records = Records()
    watched = [logging.getLogger(), logging.getLogger("app")]
    for logger in watched:
        logger.addHandler(records)
    try:
        async with serving(**REAL_LIMITS) as server:
            code = await server.new_room()
            (ann,) = await join(server, code, "Ann")
            raw = await RawClient.open(server)
            await raw.join(code, "Junk")
            junk = ["42[", '42{"a":1}', "4x", "49", "42[1,2]", "42[]", '40{"room":1}', "4"]
            for frame in junk * 100:
                try:
                    await raw.send(frame)
                except Exception:
                    break  # cut off: the socket is closed
            assert await raw.closed()
            # The room never noticed (seat 5: clear of those taken on arrival).
            assert (await ann.ok("sit", {"seat": 5}))["seat"] == 5
            await ann.close()
    finally:
        for logger in watched:
            logger.removeHandler(records)
    assert not [r for r in records.records if r.exc_info], "a traceback was logged"
    refused = [r for r in records.records if r.getMessage() == "frame_refused"]
    # One line each, rate-limited for the whole server, the cut-off's too (an address
    # reconnecting in a loop is cut off each time): not one per frame.
    assert 1 <= len(refused) <= 12


# ---- 5: limits per real client address ---------------------------------------------------


async def test_connection_limits_are_per_client_address_and_returning_people_pass() -> None:
    async with serving(connects_per_minute=3) as server:
        code = await server.new_room()
        attacker = {"X-Forwarded-For": "203.0.113.7"}  # through the trusted proxy (loopback)
        refused = 0
        for n in range(6):
            client = Client(server, code, f"Atk {n}")
            try:
                await client.connect(headers=attacker)
            except socketio.exceptions.ConnectionError:
                refused += 1
                assert client.refusal["data"]["code"] == "rate_limited"
            await client.close()
        assert refused >= 3
        # Someone at another address is not locked out by the attacker's refusals.
        honest = await Client(server, code, "Hon").connect(
            headers={"X-Forwarded-For": "198.51.100.2"}
        )
        await honest.close()
        # A person at the attacker's address coming back with their token gets in.
        # (each one takes over from the last, as a phone back from a blip does).
        amy = await Client(server, code, "Amy").connect(headers={"X-Forwarded-For": "192.0.2.9"})
        for _ in range(4):  # past the address's limit: every one a return with a token
            again = await Client(server, code, "Amy", amy.token).connect(
                headers={"X-Forwarded-For": "192.0.2.9"}
            )
            assert again.player == amy.player
            await amy.disconnected.wait()
            amy = again
        await amy.close()


# ---- 6: long-polling with no Origin header -----------------------------------------------


async def test_a_polling_client_plays_a_game() -> None:
    async with serving(**QUICK_POLLS) as server:
        code = await server.new_room(collect_seconds=SHORT_COLLECT_SECONDS)
        ann = await Client(server, code, "Ann").connect(transports=["polling"])
        bob = await Client(server, code, "Bob").connect(transports=["polling"])
        assert ann.sio.transport() == "polling"
        await ann.ok("sit", {"seat": 0})
        await bob.ok("sit", {"seat": 1})
        await ann.ok("start")
        acks = await asyncio.gather(autoplay(ann), autoplay(bob))
        for some in acks:
            check_refusals(some)
        assert ann.state["phase"] == "over"
        assert cards_held(ann.state) == 52
        await close_all([ann, bob])


async def test_a_long_poll_without_origin_is_answered(server: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.get("/socket.io/", params={"EIO": "4", "transport": "polling"})
    assert answer.status_code == 200, answer.text
    assert answer.text.startswith("0{")


# ---- 10: HTTP odds and ends --------------------------------------------------------------


async def test_a_deeply_nested_body_is_a_bad_request(server: Any) -> None:
    body = "[" * 2000 + "]" * 2000
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.post("/api/rooms", content=body)
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "bad_request"


async def test_room_lookups_cost_only_wrong_codes_and_are_limited_per_address() -> None:
    clock = ManualClock()
    budget = {"wrong_codes_per_minute": 1.0, "wrong_codes_burst": 3}
    async with serving(clock, **budget) as server:
        code = await server.new_room()
        async with httpx.AsyncClient(base_url=server.url) as http:
            # Right codes cost nothing, however many.
            for _ in range(20):
                assert (await http.get(f"/api/rooms/{code}")).status_code == 200
            wrong = [(await http.get("/api/rooms/ZZZZZZ")).status_code for _ in range(4)]
            assert wrong == [404, 404, 404, 429]
            # Past its budget, the address is refused every look-up: a 429 tells nothing.
            assert (await http.get(f"/api/rooms/{code}")).status_code == 429
            other = await http.get(
                f"/api/rooms/{code}", headers={"X-Forwarded-For": "198.51.100.3"}
            )
            assert other.status_code == 200
            await clock.advance(60)  # one wrong code's worth back
            assert (await http.get(f"/api/rooms/{code}")).status_code == 200


async def test_metrics_can_be_kept_private() -> None:
    async with (
        serving(expose_metrics=False) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.get("/metrics")).status_code == 404
    async with serving() as server, httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/metrics")).status_code == 200


async def test_allowed_hosts_refuse_a_rebound_name() -> None:
    async with (
        serving(allowed_hosts=["127.0.0.1", "slap.example"]) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.get("/healthz")).status_code == 200
        ours = await http.get("/healthz", headers={"Host": "slap.example:8000"})
        assert ours.status_code == 200
        rebound = await http.get("/healthz", headers={"Host": "evil.example"})
        assert rebound.status_code == 400
        poll = await http.get(
            "/socket.io/",
            params={"EIO": "4", "transport": "polling"},
            headers={"Host": "evil.example"},
        )
        assert poll.status_code == 400


async def test_names_with_nothing_visible_or_dressed_as_bots_are_refused(server: Any) -> None:
    code = await server.new_room()
    dressed = [
        "Hard bot",
        "EASY BOT",
        "Hard b\u043et",  # a Cyrillic o
        "\uff28\uff41\uff52\uff44 \uff42\uff4f\uff54",  # fullwidth
        "Sprocket",  # a bot's own name (app/tables/values.py BOT_NAMES), in any dress:
        "SPR0CKET",
        "robo-rita",
        "\u0405\u0440r\u043e\u0441k\u0435t",  # Cyrillic S, p, o, c, e
        "Pix\u0435l",
        # Look-alikes that only Unicode's confusables.txt knows (UTS #39's skeleton):
        "\u13daprocket",  # a Cherokee S
        "Hard b\u1d0ft",  # a small capital O
        "\ua4dalank",  # a Lisu C
        "G\u0269zmo",  # a Latin iota
        "Gizrno",  # r n for m
    ]
    for name in ["\u3164", "\u2800\u2800", "a\u2028b", "\u115f\u1160", *dressed]:
        client = Client(server, code, name)
        try:
            await client.connect()
        except socketio.exceptions.ConnectionError:
            assert client.refusal["data"]["code"] == "bad_name", name
        else:
            raise AssertionError(f"{name!r} was accepted")
        finally:
            await client.close()
    people = [
        *("Ann", "Nurul Aisyah", "Siti Nurhaliza", "Muhammad Iqbal", "Ng Wei Ming"),
        *("Jos\u00e9", "Zo\u00eb", "Nguy\u1ec5n V\u0103n An", "Rob", "Pixie", "Ian"),
        *("\u041f\u0451\u0442\u0440", "\u0410\u0445\u043c\u0435\u0434", "\u674e\u660e"),
    ]
    for name in people:
        person = Client(server, code, name)
        await person.connect()  # names of people, in any script, pass
        await person.close()


# ---- 2: host hand-over under uvloop ------------------------------------------------------


async def test_the_host_hands_over_after_the_grace_every_time() -> None:
    """With a 1 s hand-over the gone host always stayed host on uvloop (its timer fired
    early, the check found the grace not over, and nothing re-armed it)."""
    async with serving(host_handover_seconds=0.3) as server:
        for _ in range(3):
            code = await server.new_room()
            host = await RawClient.open(server)
            await host.join(code, "Host")
            (guest,) = await join(server, code, "Guest")
            host.ws.transport.abort()  # the network goes: no goodbye, the grace applies
            await guest.wait_for(lambda guest=guest: any(e["kind"] == "host" for e in guest.events))
            assert guest.state["you"]["host"]
            await guest.close()


# ---- 8: slowloris ------------------------------------------------------------------------


async def test_a_request_trickled_byte_by_byte_is_cut_off() -> None:
    async with serving(request_timeout_seconds=1.0) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        closed = False
        async with asyncio.timeout(20):
            for _ in range(200):  # one header byte every 0.1 s: never a whole request
                try:
                    writer.write(b"X")
                    await writer.drain()
                except ConnectionError:
                    closed = True
                    break
                try:
                    if await asyncio.wait_for(reader.read(1), 0.1) == b"":
                        closed = True
                        break
                except TimeoutError:
                    pass
        writer.close()
        assert closed
        # An honest request on a fresh connection is still served.
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/healthz")).status_code == 200
