"""A flooding client is refused, then cut off at the transport; other rooms play on."""

import asyncio

from app_harness import WAIT, Client, close_all, join, serving

from app.ops.config import Settings

REAL_LIMITS = {
    name: Settings.model_fields[name].default
    for name in ("rate_per_second", "rate_burst", "flood_cutoff")
}


async def test_a_flood_gets_rate_limited_then_disconnected_while_others_play_on() -> None:
    async with serving(**REAL_LIMITS) as server:
        await flood_and_check(server)


async def flood_and_check(server) -> None:
    flood_room, quiet_room = await server.new_room(), await server.new_room()
    flooder, neighbour = await join(server, flood_room, "Flo", "Ned")
    (quiet,) = await join(server, quiet_room, "Quinn")
    acks: list[dict] = []
    for _ in range(400):
        if flooder.disconnected.is_set():
            break
        await flooder.sio.emit("stand", {}, callback=acks.append)
    await asyncio.wait_for(flooder.disconnected.wait(), WAIT)
    codes = [a["error"]["code"] for a in acks if not a["ok"]]
    assert "rate_limited" in codes
    assert set(codes) <= {"rate_limited", "not_seated"}
    # The flooder's room saw it go; the other room never noticed anything.
    await neighbour.wait_for(lambda: any(e["kind"] == "disconnect" for e in neighbour.events))
    assert (await quiet.ok("sit", {"seat": 0}))["seat"] == 0
    assert (await neighbour.ok("sit", {"seat": 0}))["seat"] == 0
    await close_all([neighbour, quiet])


async def test_a_steady_client_is_never_limited() -> None:
    async with serving(**REAL_LIMITS) as server:
        code = await server.new_room()
        ann = await Client(server, code, "Ann").connect()
        for _ in range(30):  # well inside the burst, one at a time
            assert (await ann.call("sit", {"seat": 1}))["ok"]
        await ann.close()
