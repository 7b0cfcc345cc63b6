"""Nothing of an evening stays behind: tables played to their end, every room closed, a full
collection, and the server holds what it held idle before they came (real uvicorn, sockets
and Socket.IO clients in this process)."""

from __future__ import annotations

import asyncio
import gc
import socket
import types
from collections import Counter
from dataclasses import dataclass

from app_harness import SHORT_COLLECT_SECONDS, WAIT, Client, Server, deal, play_to_the_end, serving

TABLES = 8
NAMES = ("Ann", "Bob", "Cy")
# The packages whose objects are ours or the transport's: none may outlive the evening.
WATCHED = ("app", "engine", "socketio", "engineio", "uvicorn", "websockets", "h11", "httptools")
SETTINGS = {
    "room_expiry_seconds": 1.0,  # a room nobody is in closes a second after the last left
    "ping_interval_seconds": 1.0,  # a closed client's server side goes within a ping or two
    "ping_timeout_seconds": 2.0,
}


@dataclass
class Census:
    objects: int  # every object the collector tracks
    finished_tasks: int  # tasks done but still referenced
    coroutines: int
    sockets: int
    ours: Counter[str]  # instances of the watched packages' classes, by class


def census() -> Census:
    gc.collect()
    objects = gc.get_objects()
    ours: Counter[str] = Counter()
    for thing in objects:
        kind = type(thing)
        module = kind.__dict__.get("__module__")
        if isinstance(module, str) and module.split(".")[0] in WATCHED:
            ours[f"{module}.{kind.__qualname__}"] += 1
    found = Census(
        objects=len(objects),
        finished_tasks=sum(1 for o in objects if isinstance(o, asyncio.Task) and o.done()),
        coroutines=sum(1 for o in objects if isinstance(o, types.CoroutineType)),
        sockets=sum(1 for o in objects if isinstance(o, socket.socket)),
        ours=ours,
    )
    del objects
    return found


async def a_table_played_out(server: Server) -> None:
    code = await server.new_room(collect_seconds=SHORT_COLLECT_SECONDS)
    clients = [await Client(server, code, name).connect() for name in NAMES]
    await deal(clients)
    await play_to_the_end(clients, WAIT * 6)
    for client in clients:
        await client.close()


async def every_room_closed(server: Server) -> None:
    """Every room closed and forgotten, and every connection gone at the transport."""
    async with asyncio.timeout(WAIT):
        while len(server.rooms) or server.app.engineio_server.eio.sockets:
            await asyncio.sleep(0.05)


def grown(idle: Census, now: Census) -> dict[str, int]:
    return {name: n - idle.ours[name] for name, n in now.ours.items() if n > idle.ours[name]}


def back_to(idle: Census, now: Census) -> bool:
    return (
        not grown(idle, now)
        and now.finished_tasks <= idle.finished_tasks
        and now.coroutines <= idle.coroutines
        and now.sockets <= idle.sockets
        and abs(now.objects - idle.objects) <= idle.objects / 100
    )


async def census_settled(idle: Census, seconds: float) -> Census:
    """The census once it is back to `idle`, or as it is after `seconds`. A closed
    connection's entry in the transport's ping and pong lines holds it until that entry
    is due (a ping interval and timeout at most): memory for a while, no leak."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        now = census()
        if back_to(idle, now) or asyncio.get_running_loop().time() > deadline:
            return now
        await asyncio.sleep(0.5)


async def test_an_evening_of_tables_leaves_nothing_behind() -> None:
    async with serving(**SETTINGS) as server:
        # One table first: what the first game brings for good (imports, caches, interned
        # names) is no leak.
        await a_table_played_out(server)
        await every_room_closed(server)
        idle = await census_settled(census(), 0)

        await asyncio.gather(*(a_table_played_out(server) for _ in range(TABLES)))
        await every_room_closed(server)
        lingering = SETTINGS["ping_interval_seconds"] + SETTINGS["ping_timeout_seconds"]
        after = await census_settled(idle, lingering + WAIT)

        assert after.finished_tasks <= idle.finished_tasks, (idle, after)
        assert after.coroutines <= idle.coroutines, (idle, after)
        assert after.sockets <= idle.sockets, (idle, after)
        assert grown(idle, after) == {}
        assert abs(after.objects - idle.objects) <= idle.objects / 100, (idle, after)


def test_the_census_sees_what_it_counts() -> None:
    """The census finds a finished task kept alive, a coroutine, a socket and an object of
    ours (it would not, were it blind to them: the guard above would hold for nothing)."""
    loop = asyncio.new_event_loop()
    before = census()
    try:
        kept = loop.run_until_complete(_finished_task())
        coroutine = asyncio.sleep(0)
        probe = socket.socket()
        from app.ops.metrics import Metrics

        metrics = Metrics()
        after = census()
        assert after.finished_tasks == before.finished_tasks + 1
        assert after.coroutines >= before.coroutines + 1
        assert after.sockets == before.sockets + 1
        assert after.ours["app.ops.metrics.Metrics"] == before.ours["app.ops.metrics.Metrics"] + 1
        coroutine.close()
        probe.close()
        del kept, metrics
    finally:
        loop.close()


async def _finished_task() -> asyncio.Task[None]:
    task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
    await task
    return task
