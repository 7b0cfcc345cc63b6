"""A cluster for real (deploy/cluster.py): redis-server, two `python -m app` processes and
nginx in front routing each room to one process (`hash $arg_room consistent`), with
Socket.IO clients that behave like the page: they connect with `?room=CODE` and come back by
themselves, with their token, whenever their connection closes.

A game played to its end through nginx; a table handed over when a connection reaches the
other process; a killed owner's tables taken over once the lease runs out; and a paused
owner fenced off: it cannot overwrite the new owner's table, and its connections are sent
away.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from app_harness import (
    cards_held,
    play,
    play_to_the_end,
    settled,
    table_of,
    until,
)
from cluster_harness import (
    LEASE_SECONDS,
    SETTINGS,
    Player,
    a_game_through_nginx,
    back,
    back_at_the_table,
    close_all,
    index_of,
    lease_holder,
    logged,
    metric,
    notices,
    saved,
    stored,
    versions_only_grow,
)

from bench.wire import open_wire
from deploy.cluster import ROOT, Cluster

pytestmark = pytest.mark.cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Cluster(processes=2, env=SETTINGS, workdir=tmp_path) as running:
        yield running


async def test_a_game_through_nginx_is_judged_by_one_process_to_its_end(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner
    # Every connection of the room landed on its owner; the other process has no table open.
    assert await metric(cluster.app_url(owner), "slapjack_connected_players") == 4
    assert await metric(cluster.app_url(owner), "slapjack_tables_owned") == 1
    assert await metric(cluster.app_url(owner), "slapjack_restores_total") == 1
    assert await metric(cluster.app_url(other), "slapjack_rooms") == 0
    assert await metric(cluster.app_url(other), "slapjack_tables_owned") == 0

    await play_to_the_end(players, 180)
    assert all(player.welcomes == 1 for player in players)  # nobody was moved
    await close_all(players)


def moves(cluster: Cluster) -> list[tuple[int, str, str]]:
    """Each process's logged hand-overs and claims, in its own order: what a failed count
    of hand-overs is read against."""
    return [
        (index, entry["ts"], entry["event"])
        for index in range(len(cluster.app_ports))
        for entry in logged(cluster, index)
        if "hand" in entry["event"] or "claim" in entry["event"] or "lease" in entry["event"]
    ]


async def test_a_connection_at_the_other_process_moves_the_table_there(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 10)
    await settled(players)
    before = [player.state for player in players]
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner

    # Someone reaches the other process directly (not through the router): the table moves.
    started = time.monotonic()
    newcomer = Player(cluster.app_url(other), code, "Eve", come_back=False)
    await newcomer.connect()
    assert index_of(lease_holder(cluster, code)) == other
    seen = table_of(newcomer.state)
    assert seen["seats"] == table_of(before[0])["seats"]  # the same cards, at the new owner
    assert seen["pile"] == before[0]["pile"]
    hand_overs = await metric(cluster.app_url(owner), "slapjack_hand_overs_total")
    assert hand_overs == 1, moves(cluster)

    # Its players were sent away and are back, same seats, same cards, within 3 s. They
    # came through nginx, which routes the room to its first process: the table followed.
    await back_at_the_table(players, before)
    back_after = time.monotonic() - started
    assert back_after < 3.0, back_after
    assert index_of(lease_holder(cluster, code)) == owner
    assert await metric(cluster.app_url(other), "slapjack_hand_overs_total") == 1, moves(cluster)
    await newcomer.close()

    await play_to_the_end(players, 180)
    await close_all(players)


async def test_a_page_on_a_websocket_is_sent_away_at_once(cluster: Cluster) -> None:
    """A table that moves closes its pages' connections at the transport. The browser's
    Socket.IO client (and bench/wire.py's, a page's cheap double) reads Engine.IO's CLOSE
    only on long-polling: a page on a websocket told only that would sit at a table nobody
    judges there until its ping timeout (10 + 5 s), instead of coming back at once."""
    code, players = await a_game_through_nginx(cluster)
    await settled(players)
    other = 1 - index_of(lease_holder(cluster, code))
    page = await open_wire("127.0.0.1", cluster.port, {"room": code, "name": "Fay"})

    newcomer = Player(cluster.app_url(other), code, "Eve", come_back=False)
    await newcomer.connect()  # the table moves to the other process
    assert index_of(lease_holder(cluster, code)) == other
    await asyncio.wait_for(page.closed, 2.0)

    await newcomer.close()
    await close_all(players)


async def test_a_killed_owners_table_carries_on_at_the_other_process(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 10)
    await saved(cluster, code, players)  # the sitting and the deal
    await play(players, 4)  # and play goes on right up to the kill
    before = await settled(players)
    seats = [player.seat for player in players]
    owner = index_of(lease_holder(cluster, code))

    killed_at = time.monotonic()
    cluster.kill(owner, signal.SIGKILL)
    for player in players:
        await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
    back_after = time.monotonic() - killed_at
    assert back_after < LEASE_SECONDS + 3.0, back_after
    assert index_of(lease_holder(cluster, code)) == 1 - owner
    after = await settled(players)
    assert [player.seat for player in players] == seats
    assert cards_held(after) == 52
    # The table as of its last save (at most SLAPJACK_SAVE_SECONDS of play lost): cards as
    # the players saw them at some moment before the kill.
    seen = [table_of(s)["seats"] for s in players[0].messages_states_before(before)]
    assert table_of(after)["seats"] in seen

    await play_to_the_end(players, 180)
    await close_all(players)


async def test_a_paused_owner_cannot_overwrite_the_new_owners_table(cluster: Cluster) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await saved(cluster, code, players)  # the game so far
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner

    # A move, then the owner stops (a long GC, a VM paused) with that change maybe unsaved.
    await play(players, 1)
    cluster.kill(owner, signal.SIGSTOP)
    try:
        # Someone reaches the other process: the owner does not answer, its lease runs out,
        # and the other process takes the table from its last save.
        newcomer = Player(cluster.app_url(other), code, "Eve", come_back=False)
        await newcomer.connect()
        assert index_of(lease_holder(cluster, code)) == other
        await until(
            lambda: any(p["name"] == "Eve" for p in stored(cluster, code)["people"]),
            "the new owner's save of Eve's arrival",
        )
        newest = stored(cluster, code)["version"]
        drops = [player.drops for player in players]
    finally:
        cluster.kill(owner, signal.SIGCONT)

    # The old owner never writes its stale table over the new owner's: the stored version
    # only grows (every save of a table that moved carries a newer one)...
    async def stored_versions() -> None:
        nonlocal newest
        while True:
            version = stored(cluster, code)["version"]
            assert version >= newest, (version, newest)
            newest = version
            await asyncio.sleep(0.02)

    watching = asyncio.create_task(stored_versions())
    try:
        # ...it finds out it lost the table and sends its connections away...
        for player, dropped in zip(players, drops, strict=True):
            await until(lambda p=player, d=dropped: p.drops > d, "sent away")  # type: ignore[misc]
        events = [line["event"] for line in logged(cluster, owner)]
        assert "lease_lost" in events, events
        # ...and they come back through nginx, which moves the table back from the new
        # owner's save (Eve, sent away in turn, is gone from it by then).
        before = [player.state for player in players]
        for player in players:
            await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
        await asyncio.sleep(1.0)  # a stale save would have landed by now
        assert not watching.done()
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
    after = await settled(players)
    assert cards_held(after) == 52
    assert [table_of(p.state)["you"] for p in players] == [table_of(s)["you"] for s in before]
    await newcomer.close()

    await play_to_the_end(players, 180)
    await close_all(players)


@pytest.mark.parametrize("outage", ["stopped", "hung"])
async def test_a_redis_outage_is_a_pause_that_loses_nothing(cluster: Cluster, outage: str) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 8)
    before = await settled(players)
    owner = index_of(lease_holder(cluster, code))

    if outage == "stopped":
        await asyncio.to_thread(cluster.stop_redis)
    else:
        cluster.hang_redis()
    try:
        # Past the lease: the table pauses, everyone is told and stays connected...
        for player in players:
            await until(lambda p=player: notices(p, "paused"), f"{player.name} told")  # type: ignore[misc]
        mover = next(p for p in players if p.seat == before["next"])
        refused = await mover.call("flip", {})
        assert not refused["ok"] and refused["error"]["code"] == "paused", refused
        await asyncio.sleep(LEASE_SECONDS)  # paused, well past a lease, with Redis away
    finally:
        if outage == "stopped":
            await asyncio.to_thread(cluster.start_redis)
        else:
            cluster.wake_redis()
    answering = time.monotonic()
    for player in players:
        await until(lambda p=player: notices(p, "resumed"), f"{player.name} told it goes on")  # type: ignore[misc]
    resumed_after = max(notices(p, "resumed")[-1] for p in players) - answering
    assert resumed_after < 2.0, resumed_after  # the promise: within 2 s of Redis answering
    # ...nobody was dropped, the table is the one they left, judged by the same process.
    assert all(player.drops == 0 and player.welcomes == 1 for player in players)
    assert index_of(lease_holder(cluster, code)) == owner
    for player in players:  # every card where it was
        assert table_of(player.state)["seats"] == table_of(before)["seats"]
        assert player.state["pile"] == before["pile"]
    await play(players, 4)
    after = await settled(players)
    assert after["version"] > before["version"]
    for player in players:
        versions_only_grow(player)
    await play_to_the_end(players, 180)
    events = [line["event"] for line in logged(cluster, owner)]
    assert "lease_lost" not in events and "table_left" not in events
    await close_all(players)


async def test_after_an_outage_a_page_at_the_other_process_never_rolls_the_table_back(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await saved(cluster, code, players)  # the game so far
    owner = index_of(lease_holder(cluster, code))
    await asyncio.to_thread(cluster.stop_redis)
    # Play goes on from memory (unsaved now) until the table pauses.
    accepted: list[int] = []
    while not notices(players[0], "paused"):
        state = await settled(players)
        by_seat = {p.seat: p for p in players}
        if state["slap_open"]:
            awake = [s for s in state["seats"] if not s["out"] and s["frozen_ms"] == 0]
            answer = await by_seat[awake[0]["seat"]].call("slap", {"pile_id": state["pile"]["id"]})
        else:
            answer = await by_seat[state["next"]].call("flip", {})
        if answer["ok"]:
            accepted.append(max(event["version"] for event in answer["events"]))
        await asyncio.sleep(0.05)
    assert accepted, "no move was made during the outage"
    newest = await settled(players)
    await asyncio.sleep(2.0)
    await asyncio.to_thread(cluster.start_redis)
    # A page (a TV, a misrouted request) reaches the other process the moment Redis is back.
    newcomer = Player(cluster.app_url(1 - owner), code, "Eve", come_back=False)
    with contextlib.suppress(Exception):
        await newcomer.connect()
    await asyncio.sleep(2.0)
    after = await settled(players)
    # Every move accepted during the outage is still there, and nobody ever saw the table's
    # version go backwards.
    assert after["version"] >= max(accepted) and after["version"] >= newest["version"]
    # The owner's next save lands once Redis answers: at its retry (backoff up to 5 s after
    # the failed ones), or as it hands the table over, whichever comes first.
    await until(lambda: stored(cluster, code)["version"] >= newest["version"], "the saved table")
    for player in players:
        versions_only_grow(player)
    assert cards_held(after) == 52
    await newcomer.close()
    await play_to_the_end(players, 180)
    await close_all(players)


def leases_taken_since(cluster: Cluster, index: int, lines_before: int) -> int:
    return sum(
        1 for line in logged(cluster, index)[lines_before:] if line["event"] == "lease_taken"
    )


async def test_an_owner_that_dies_and_comes_back_moves_its_table_once_each_way(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    await saved(cluster, code, players)
    owner = index_of(lease_holder(cluster, code))
    other = 1 - owner
    seen = [len(logged(cluster, index)) for index in (0, 1)]

    cluster.kill(owner, signal.SIGKILL)
    for player in players:
        await until(lambda p=player: back(p), f"{player.name} back")  # type: ignore[misc]
    assert index_of(lease_holder(cluster, code)) == other
    await asyncio.to_thread(cluster.start_app, owner)
    # One page refreshes: nginx sends it to the process that is back, and the table follows.
    refreshed = Player(cluster.url, code, players[0].name)
    refreshed.token = players[0].token
    await players[0].close()
    await refreshed.connect()
    players[0] = refreshed
    await until(lambda: lease_holder(cluster, code) == f"node-{owner + 1}", "the table back")
    for player in players[1:]:
        await until(lambda p=player: back(p, 3), f"{player.name} back again")  # type: ignore[misc]
    await asyncio.sleep(3.0)  # any further move would show by now
    # Taken by the other process when the owner died, taken back once when it returned.
    assert leases_taken_since(cluster, other, seen[other]) == 1
    assert leases_taken_since(cluster, owner, seen[owner]) == 1  # its log goes on after a restart
    assert all(player.drops <= 2 for player in players[1:]), [p.drops for p in players]
    after = await settled(players)
    assert cards_held(after) == 52
    await play_to_the_end(players, 180)
    await close_all(players)


async def test_stopping_the_cluster_saves_every_table_before_redis_stops(
    cluster: Cluster,
) -> None:
    code, players = await a_game_through_nginx(cluster)
    await play(players, 6)
    last = await settled(players)
    owner = index_of(lease_holder(cluster, code))
    await close_all(players)
    await asyncio.to_thread(cluster.stop)  # the apps first, then nginx and Redis
    events = [line["event"] for line in logged(cluster, owner)]
    assert "tables_saved" in events and "tables_not_saved" not in events, events
    await asyncio.to_thread(cluster.start_redis)  # its append-only file read back
    try:
        assert stored(cluster, code)["version"] >= last["version"]
    finally:
        await asyncio.to_thread(cluster.stop_redis)


def test_compose_stops_the_apps_before_redis() -> None:
    # Compose stops a service's dependants before the service: every app depends on Redis
    # (started once it answers), so each writes its tables while Redis is still there.
    compose = yaml.safe_load((ROOT / "deploy" / "compose.cluster.yaml").read_text())
    apps = [name for name in compose["services"] if name.startswith("app")]
    assert apps
    for name in apps:
        depends = compose["services"][name]["depends_on"]
        assert depends["redis"]["condition"] == "service_healthy", depends
    assert "healthcheck" in compose["services"]["redis"]
