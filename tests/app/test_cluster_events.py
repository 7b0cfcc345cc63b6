"""An event in a cluster (deploy/cluster.py: redis-server, two processes, nginx): its record has
one owner by lease, as a table's has, and follows the router to the process its connections
are sent to; its tables each have their own lease and live wherever their players' phones
are sent; the event reads the tables it does not hold from Redis, and plays from its link to
its podium. When the process running it stops, the other takes it and the event goes on."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from app_harness import until
from cluster_harness import SETTINGS, Player, close_all, index_of, lease_holder

from deploy.cluster import Cluster

pytestmark = pytest.mark.cluster

# Tables of three (nine players: three tables, then a final of three) whose games end at
# their time limit (18, 17 and 17 cards: the first seat wins when time runs out): no play
# is needed to decide a table.
RULES = {"time_limit": 10}
WAIT = 90.0  # a round's game, the pause before the next and the pages' moves, on a busy machine


class EventPlayer(Player):
    """A page of the event: records its `event_state` and comes back by itself."""

    def _fresh_connection(self) -> None:
        super()._fresh_connection()
        self.sio.on("event_state", lambda data: self._record("event_state", data))

    async def connect(self, **options: Any) -> EventPlayer:
        auth: dict[str, Any] = {"room": self.room, "name": self.name}
        if self.token is not None:
            auth["token"] = self.token
        await self.sio.connect(self.url, auth=auth, transports=["websocket"], wait_timeout=20)
        start = self.connection_starts
        await self.wait_for(lambda: any(k == "event_state" for k, _ in self.messages[start:]))
        return self

    @property
    def event(self) -> dict[str, Any]:
        """The newest event state since the last connection ({} while none came: between a
        reconnect and its first state)."""
        current = [d for k, d in self.messages[self.connection_starts :] if k == "event_state"]
        return max(current, key=lambda s: s["version"], default={})


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Cluster(processes=2, env=SETTINGS, workdir=tmp_path) as running:
        yield running


async def open_event(cluster: Cluster) -> tuple[str, str]:
    async with httpx.AsyncClient(base_url=cluster.url) as http:
        answer = await http.post("/api/events", json={"name": "Fair", "size": 3, "rules": RULES})
        assert answer.status_code == 201, answer.text
        code, token = answer.json()["code"], answer.json()["token"]
        for index in range(len(cluster.app_ports)):  # its page and API on either process
            page = await http.get(f"{cluster.app_url(index)}/e/{code}")
            assert page.status_code == 200 and "Fair" in page.text
            summary = await http.get(f"{cluster.app_url(index)}/api/events/{code}")
            assert summary.json()["stage"] == "lobby", summary.text
    return code, token


async def as_organiser(cluster: Cluster, code: str, token: str) -> EventPlayer:
    organiser = EventPlayer(cluster.url, code, "Ms Lee")
    organiser.token = token
    return await organiser.connect()


async def at_their_tables(cluster: Cluster, phones: list[EventPlayer]) -> list[Player]:
    tables = []
    for phone in phones:
        await phone.wait_for(lambda p=phone: p.event.get("you", {}).get("status") == "playing")
        table = Player(cluster.url, phone.event["you"]["table"], phone.name)
        table.token = phone.token
        tables.append(await table.connect())
    return tables


async def test_an_event_and_its_tables_across_two_processes(cluster: Cluster) -> None:
    code, token = await open_event(cluster)
    organiser = await as_organiser(cluster, code, token)
    assert organiser.event["you"]["organiser"]
    owner = lease_holder(cluster, code)
    assert owner is not None
    phones = [await EventPlayer(cluster.url, code, f"P{i}").connect() for i in range(9)]
    await organiser.ok("event_start")
    tables = await at_their_tables(cluster, phones)
    codes = {t.room for t in tables}
    assert len(codes) == 3
    holders = {index_of(lease_holder(cluster, c)) for c in codes}  # each its own lease
    assert all(lease_holder(cluster, c) is not None for c in codes), holders

    async def decided() -> None:
        await until(lambda: organiser.event.get("stage") == "over", "the podium", WAIT * 2)

    finalists: list[Player] = []

    async def final() -> None:
        await until(lambda: organiser.event.get("final") is not None, "the final", WAIT)
        through = [p for p in phones if p.event["you"]["status"] == "playing"]
        finalists.extend(await at_their_tables(cluster, through))

    await asyncio.gather(final(), decided())
    over = organiser.event
    assert len(over["podium"]) == 3 and over["round"] == 2 and not over["ended"]
    assert lease_holder(cluster, code) == owner  # the router kept the event where it was
    await close_all([*tables, *finalists, *phones, organiser])


async def test_the_event_goes_on_at_the_other_process_when_its_own_stops(
    cluster: Cluster,
) -> None:
    code, token = await open_event(cluster)
    organiser = await as_organiser(cluster, code, token)
    phones = [await EventPlayer(cluster.url, code, f"P{i}").connect() for i in range(3)]
    await organiser.ok("event_start")
    tables = await at_their_tables(cluster, phones)
    owner = index_of(lease_holder(cluster, code))
    cluster.kill(owner, signal.SIGTERM)  # the event is written and its lease let go
    # Its pages come back through nginx to the other process, which takes the event from
    # Redis; its table (wherever it went) is read from Redis too, and the podium comes.
    other = f"node-{2 - owner}"  # nodes are numbered from 1
    await until(lambda: lease_holder(cluster, code) == other, "the event taken", WAIT)
    await until(lambda: organiser.event.get("stage") == "over", "the podium", WAIT * 2)
    assert len(organiser.event["podium"]) == 3
    await close_all([*tables, *phones, organiser])
