"""A connection's queue (app/realtime/queues.py): asyncio.Queue's behaviour at a fraction of its
memory, no task per wait, and connections that still end when their client goes."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import engineio
import pytest
from app_harness import WAIT, join, serving
from raw_client import RawClient
from websockets.exceptions import ConnectionClosed

from app.realtime.queues import LeanQueue, Outbox
from app.realtime.transport import GameEngineIO


async def test_first_in_first_out_and_empty() -> None:
    queue = LeanQueue()
    assert queue.empty() and queue.qsize() == 0
    with pytest.raises(asyncio.QueueEmpty):
        queue.get_nowait()
    for item in ("a", "b", None):
        await queue.put(item)
    assert queue.qsize() == 3
    assert await queue.get() == "a"
    assert queue.get_nowait() == "b"
    assert await queue.get() is None
    assert queue.empty()


async def test_a_waiting_get_is_handed_the_next_item() -> None:
    queue = LeanQueue()
    waiting = asyncio.ensure_future(queue.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    queue.put_nowait("packet")
    assert await asyncio.wait_for(waiting, WAIT) == "packet"
    assert queue.empty()


async def test_a_get_that_timed_out_loses_nothing() -> None:
    """python-engineio waits for each packet with wait_for(queue.get(), ping timeout)."""
    queue = LeanQueue()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(queue.get(), 0.01)
    queue.put_nowait("after")
    assert queue.qsize() == 1  # not handed to the getter that gave up
    assert await asyncio.wait_for(queue.get(), WAIT) == "after"


async def test_waiting_for_an_item_makes_no_task() -> None:
    """asyncio.wait_for wraps a coroutine in a Task on every wait; a future it awaits as is."""
    queue = LeanQueue()
    before = len(asyncio.all_tasks())
    waiting = asyncio.ensure_future(asyncio.wait_for(queue.get(), WAIT))
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before + 1  # the waiting task itself, nothing more
    queue.put_nowait("packet")
    assert await waiting == "packet"


async def test_join_waits_for_every_item_to_be_done() -> None:
    queue = LeanQueue()
    await queue.join()  # nothing put: returns at once
    queue.put_nowait(1)
    queue.put_nowait(2)
    joined = asyncio.ensure_future(queue.join())
    queue.get_nowait()
    queue.task_done()
    await asyncio.sleep(0)
    assert not joined.done()
    queue.get_nowait()
    queue.task_done()
    await asyncio.wait_for(joined, WAIT)
    with pytest.raises(ValueError):
        queue.task_done()


def test_far_smaller_than_an_asyncio_queue() -> None:
    def size(queue: object) -> int:
        parts = [queue, *getattr(queue, "__dict__", {}).values()]
        parts += [getattr(queue, slot) for slot in getattr(type(queue), "__slots__", ())]
        if hasattr(queue, "_finished") and hasattr(queue._finished, "_waiters"):
            parts.append(queue._finished._waiters)
        return sum(sys.getsizeof(part) for part in parts)

    assert size(LeanQueue()) * 5 < size(asyncio.Queue())


# Where the tasks that serve a connection run: uvicorn's websocket protocol, python-engineio,
# asyncio's own queues and waits (wait_for's task per wait was one), and the transport's own
# reader and writer (app/realtime/websocket.py) and pings. Not the room's timers or saves,
# which come and go with no connection's help.
CONNECTION_CODE = (
    "uvicorn/protocols/",
    "engineio/",
    "asyncio/queues.py",
    "asyncio/tasks.py",
    "app/realtime/",
)


async def connection_tasks() -> int:
    """The fewest seen over half a second: a task that handles one message (python-engineio
    runs each in a task of its own) comes and goes; the ones an idle connection keeps stay."""
    counts = []
    for _ in range(10):
        await asyncio.sleep(0.05)
        tasks = asyncio.all_tasks()
        files = [task.get_coro().cr_code.co_filename for task in tasks]
        counts.append(sum(1 for file in files if any(part in file for part in CONNECTION_CODE)))
    return min(counts)


async def test_an_idle_connection_uses_lean_queues_and_a_bounded_number_of_tasks() -> None:
    async with serving() as server:
        code = await server.new_room()
        first = await RawClient.open(server)  # starts python-engineio's service task
        await first.join(code, "First")
        before = await connection_tasks()
        clients = [await RawClient.open(server) for _ in range(4)]  # raw: no tasks of theirs
        for number, client in enumerate(clients):
            await client.join(code, f"P{number}")
        await asyncio.sleep(0.2)  # idle: nothing is sent
        per_connection = (await connection_tasks() - before) / len(clients)
        # uvicorn's task for the connection (which reads, in app/realtime/websocket.py) and
        # the writer: no task for a wait for a frame or a packet, none sleeping until a ping
        # (python-engineio's own path kept four: a reader's wait_for and _send_ping more).
        assert per_connection <= 2, per_connection
        pinging = [t for t in asyncio.all_tasks() if "_send_ping" in t.get_coro().__qualname__]
        assert not pinging, pinging
        sockets = server.app.engineio_server.eio.sockets
        assert all(isinstance(s.queue, Outbox) for s in sockets.values())
        for client in [first, *clients]:
            client.ws.transport.abort()  # it read none of the states: no closing handshake


async def test_a_connection_whose_writer_waits_ends_when_the_client_closes() -> None:
    # python-engineio's ping task outlives its connection by up to a ping interval: short.
    async with serving(ping_interval_seconds=1.0) as server:
        code = await server.new_room()
        await join(server, code, "Ann")
        before = await connection_tasks()
        raw = await RawClient.open(server)
        await raw.join(code, "Gone")
        sockets = server.app.engineio_server.eio.sockets
        assert len(sockets) == 2
        raw.ws.transport.abort()  # no goodbye: the TCP connection just ends
        async with asyncio.timeout(WAIT):
            while len(sockets) > 1 or await connection_tasks() > before:
                await asyncio.sleep(0.05)


async def test_a_silent_client_is_dropped_while_its_writer_waits() -> None:
    """It answers no ping and nothing is sent to it: only the ping timeout can end it."""
    async with serving(ping_interval_seconds=0.5, ping_timeout_seconds=0.5) as server:
        code = await server.new_room()
        raw = await RawClient.open(server)
        await raw.join(code, "Silent")
        sockets = server.app.engineio_server.eio.sockets
        assert len(sockets) == 1
        async with asyncio.timeout(WAIT):  # reads, answers nothing, until it is closed
            with pytest.raises(ConnectionClosed):
                while True:
                    await raw.ws.recv()
        async with asyncio.timeout(WAIT):
            while sockets:
                await asyncio.sleep(0.05)


# ---- python-engineio's poll (long-polling) on our queue -----------------------------------


def engine_socket(ping_interval: float = 25, ping_timeout: float = 20) -> Any:
    engine = GameEngineIO(async_mode="asgi", ping_interval=ping_interval, ping_timeout=ping_timeout)
    return engineio.async_socket.AsyncSocket(engine, "sid")


async def test_poll_takes_what_is_queued() -> None:
    socket = engine_socket()
    socket.queue.put_nowait("a")
    socket.queue.put_nowait("b")
    assert await asyncio.wait_for(socket.poll(), WAIT) == ["a", "b"]
    socket.queue.put_nowait("c")
    socket.queue.put_nowait(None)  # the end: what came before it still goes out
    assert await asyncio.wait_for(socket.poll(), WAIT) == ["c"]
    assert await asyncio.wait_for(socket.poll(), WAIT) == []
    await asyncio.wait_for(socket.queue.join(), WAIT)  # every packet taken is done


async def test_poll_waits_on_an_empty_queue_for_the_next_packet() -> None:
    socket = engine_socket()
    polling = asyncio.ensure_future(socket.poll())
    await asyncio.sleep(0.01)
    assert not polling.done()
    socket.queue.put_nowait("late")
    assert await asyncio.wait_for(polling, WAIT) == ["late"]


async def test_poll_gives_up_after_the_ping_interval_and_timeout_as_before() -> None:
    socket = engine_socket(ping_interval=0.05, ping_timeout=0.05)
    with pytest.raises(engineio.exceptions.QueueEmpty):
        await asyncio.wait_for(socket.poll(), WAIT)
    socket.queue.put_nowait("kept")  # the wait that gave up took nothing with it
    assert await asyncio.wait_for(socket.poll(), WAIT) == ["kept"]


async def test_every_websocket_is_served_by_ours(server: Any) -> None:
    code = await server.new_room()
    raw = await RawClient.open(server)
    await raw.join(code, "Ann")
    [socket] = server.app.engineio_server.eio.sockets.values()
    assert socket.queue.send is not None and socket.upgraded
    raw.ws.transport.abort()
