"""A cluster is no weaker than one server against strangers (deploy/cluster.py: Redis, two
processes, nginx): the budget of wrong room codes is one per address across the processes,
and nginx's word for the address is the only one believed; SLAPJACK_MAX_ROOMS counts the
cluster's rooms; nginx holds each address to the apps' websocket cap."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator

import httpx
import pytest
from cluster_harness import SETTINGS
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from deploy.cluster import Cluster

pytestmark = pytest.mark.cluster

BURST = 4  # SLAPJACK_WRONG_CODES_BURST here
MOST_ROOMS = 3  # SLAPJACK_MAX_ROOMS
WEBSOCKETS = 3  # SLAPJACK_WEBSOCKETS_PER_ADDRESS
MISSING = "ZZZZZZ"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    env = {
        **SETTINGS,
        "SLAPJACK_WRONG_CODES_PER_MINUTE": "1",
        "SLAPJACK_WRONG_CODES_BURST": str(BURST),
        "SLAPJACK_MAX_ROOMS": str(MOST_ROOMS),
        "SLAPJACK_OPEN_ROOMS_PER_ADDRESS": "100",
        "SLAPJACK_WEBSOCKETS_PER_ADDRESS": str(WEBSOCKETS),
        "SLAPJACK_CONNECTIONS_PER_ADDRESS": "20",
    }
    with Cluster(processes=2, env=env, workdir=tmp_path_factory.mktemp("strangers")) as running:
        yield running


async def test_the_budget_of_wrong_codes_is_one_across_the_processes(cluster: Cluster) -> None:
    guesser = {"X-Forwarded-For": "203.0.113.77"}  # each process trusts loopback as its proxy
    statuses = []
    for n in range(BURST + 2):  # the processes in turn: twice the processes, no more budget
        async with httpx.AsyncClient(base_url=cluster.app_url(n % 2)) as http:
            statuses.append((await http.get(f"/api/rooms/{MISSING}", headers=guesser)).status_code)
    assert statuses == [404] * BURST + [429, 429]


async def test_a_header_a_client_writes_is_no_new_address_through_nginx(cluster: Cluster) -> None:
    """One address with a new X-Forwarded-For on every request: nginx writes the address it
    saw, so every guess is the one address's."""
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.9")
    rng = random.Random(3)
    statuses = []
    async with httpx.AsyncClient(base_url=cluster.url, transport=transport) as http:
        for _ in range(BURST + 3):
            forged = {"X-Forwarded-For": f"198.51.{rng.randrange(256)}.{rng.randrange(256)}"}
            statuses.append((await http.get(f"/r/{MISSING}", headers=forged)).status_code)
    assert statuses == [404] * BURST + [429] * 3


async def test_a_websocket_through_nginx_is_counted_by_its_own_address(cluster: Cluster) -> None:
    """Socket.IO's requests reach the apps with the client's address as nginx saw it (and the
    Host the page asked for), as pages do: one address guessing room codes on websockets
    spends its own budget, not every other address's, whatever X-Forwarded-For it writes."""
    rng = random.Random(5)

    async def join_missing(address: str) -> str:
        url = f"ws://127.0.0.1:{cluster.port}/socket.io/?EIO=4&transport=websocket&room={MISSING}"
        forged = {"X-Forwarded-For": f"198.51.{rng.randrange(256)}.{rng.randrange(256)}"}
        origin = f"http://127.0.0.1:{cluster.port}"  # a page's, which the apps check with Host
        async with connect(
            url, origin=origin, local_addr=(address, 0), additional_headers=forged
        ) as socket:
            assert str(await socket.recv()).startswith("0{")
            await socket.send(json.dumps({"room": MISSING, "name": "Eve"}).join(("40", "")))
            refusal = str(await socket.recv())
        assert refusal.startswith("44"), refusal
        code: str = json.loads(refusal[2:])["data"]["code"]
        return code

    guesses = [await join_missing("127.0.0.12") for _ in range(BURST + 1)]
    assert "rate_limited" not in guesses[:BURST] and guesses[BURST] == "rate_limited", guesses
    assert await join_missing("127.0.0.13") != "rate_limited"


async def test_the_cluster_opens_at_most_its_rooms(cluster: Cluster) -> None:
    answers = []
    for n in range(MOST_ROOMS + 2):  # from both processes, from addresses of their own
        headers = {"X-Forwarded-For": f"192.0.2.{n + 1}"}
        async with httpx.AsyncClient(base_url=cluster.app_url(n % 2)) as http:
            answers.append(await http.post("/api/rooms", headers=headers))
    assert [a.status_code for a in answers] == [201] * MOST_ROOMS + [503, 503]
    assert answers[-1].json()["error"]["code"] == "too_many_rooms"


async def test_nginx_holds_an_address_to_the_apps_websocket_cap(cluster: Cluster) -> None:
    url = f"ws://127.0.0.1:{cluster.port}/socket.io/?EIO=4&transport=websocket&room=ABCDEF"
    async with contextlib.AsyncExitStack() as held:
        for _ in range(WEBSOCKETS):
            socket = await held.enter_async_context(connect(url, local_addr=("127.0.0.10", 0)))
            assert (await socket.recv()).startswith("0{")
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, local_addr=("127.0.0.10", 0)):
                pass
        assert refused.value.response.status_code == 429
        # Another address is not held back by this one; pages still load for this one.
        async with connect(url, local_addr=("127.0.0.11", 0)) as other:
            assert (await other.recv()).startswith("0{")
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.10")
        async with httpx.AsyncClient(base_url=cluster.url, transport=transport) as http:
            assert (await http.get("/healthz")).status_code == 200


@pytest.fixture
def wave_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    env = {**SETTINGS, "SLAPJACK_GUESS_WAVE_PER_MINUTE": "5"}
    with Cluster(processes=2, env=env, workdir=tmp_path_factory.mktemp("wave")) as running:
        yield running


async def test_a_wave_of_wrong_codes_is_noticed_across_the_processes(
    wave_cluster: Cluster,
) -> None:
    """Fifty addresses guess once each, half on each process: a wave of ten times the rate.
    A new address's first wrong code then costs it its whole budget, on either process; a
    right code is answered."""
    cluster = wave_cluster

    async def guess(index: int, address: str, code: str = MISSING) -> int:
        async with httpx.AsyncClient(base_url=cluster.app_url(index)) as http:
            answer = await http.get(f"/api/rooms/{code}", headers={"X-Forwarded-For": address})
            return answer.status_code

    assert [await guess(n % 2, f"203.0.113.{n + 1}") for n in range(50)] == [404] * 50
    assert [await guess(1, "198.51.100.99") for _ in range(2)] == [404, 429]
    async with httpx.AsyncClient(base_url=cluster.app_url(0)) as http:
        code = (await http.post("/api/rooms", headers={"X-Forwarded-For": "192.0.2.9"})).json()
        lines = (await http.get("/metrics")).text.splitlines()
    assert await guess(1, "192.0.2.10", code["code"]) == 200
    # Process 0 saw 25 of the 50: alone it would have priced its last at 25 / 5 = 5 at most;
    # it priced it at the cluster's count (49 / 5, the minute's boundary aside).
    [cost] = [line.split()[1] for line in lines if line.startswith("slapjack_wrong_code_cost ")]
    assert 6 < float(cost) <= 10
