"""The server's list of clients (app/realtime/clients.py): a client's disconnect looks at a
namespace holding one room whatever the number of clients, and nothing python-socketio
does with a client's sid is lost: a message to one client reaches it, the rooms it entered
are left when it goes, and nothing of it stays once everyone is gone.

The disconnect's cost is judged by what it walks (python-socketio looks through every room
of the namespace), not timed: bench/storm.py measures the stall."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import socketio
from app_harness import Client, Logged, Server, close_all, serving, until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.realtime.clients import ClientList
from app.realtime.outgoing import SocketTransport

NS = "/"


def server() -> socketio.AsyncServer:
    return socketio.AsyncServer(async_mode="asgi", client_manager=ClientList())


async def connected(manager: ClientList, count: int) -> list[str]:
    sids = []
    for number in range(count):
        sid = await manager.connect(f"eio{number}", NS)
        assert sid is not None
        sids.append(sid)
    return sids


async def test_a_thousand_clients_make_one_room_and_each_is_found_by_its_sid() -> None:
    manager = server().manager
    sids = await connected(manager, 1000)
    for number, sid in enumerate(sids):  # tables of four, as in a cluster
        await manager.enter_room(sid, NS, f"T{number // 4:05d}")
    # python-socketio's list of the namespace's clients, and no other room in it.
    assert manager.get_rooms(sids[0], NS) == [sids[0], "T00000"]
    assert [sid for sid, _ in manager.get_participants(NS, "T00249")] == sids[996:]
    assert len(manager.rooms[NS]) == 1
    assert len(list(manager.get_participants(NS, None))) == 1000
    for number in (0, 500, 999):
        assert list(manager.get_participants(NS, sids[number])) == [(sids[number], f"eio{number}")]
        assert manager.is_connected(sids[number], NS)


async def test_a_client_going_leaves_its_rooms_and_the_others_as_they_were() -> None:
    manager = server().manager
    first, second = await connected(manager, 2)
    await manager.enter_room(first, NS, "ABCDEF")
    await manager.enter_room(second, NS, "ABCDEF")
    await manager.disconnect(first, NS)
    assert list(manager.get_participants(NS, "ABCDEF")) == [(second, "eio1")]
    assert list(manager.get_participants(NS, first)) == []
    assert not manager.is_connected(first, NS)
    assert list(manager.get_participants(NS, second)) == [(second, "eio1")]
    await manager.disconnect(second, NS)
    assert list(manager.get_namespaces()) == []  # nothing of either stays
    assert list(manager.get_participants(NS, second)) == []


async def test_a_message_to_one_client_still_reaches_it() -> None:
    sio = server()
    manager = sio.manager
    first, _ = await connected(manager, 2)
    sent: list[tuple[str, Any]] = []

    async def send(eio_sid: str, packet: Any) -> None:
        sent.append((eio_sid, packet.data))

    sio.eio.send_packet = send  # what python-socketio's emit hands each recipient's packet to
    await sio.emit("welcome", {"player": "p"}, to=first)
    assert [eio_sid for eio_sid, _ in sent] == ["eio0"]


async def test_a_list_of_rooms_finds_clients_by_sid_and_rooms_by_name_once_each() -> None:
    manager = server().manager
    first, second, third = await connected(manager, 3)
    await manager.enter_room(second, NS, "ABCDEF")
    await manager.enter_room(third, NS, "ABCDEF")
    found = list(manager.get_participants(NS, [first, "ABCDEF", second]))
    assert sorted(found) == sorted([(first, "eio0"), (second, "eio1"), (third, "eio2")])
    assert list(manager.get_participants(NS, ["GHIJKL"])) == []


@pytest.mark.parametrize("manager", [ClientList(), socketio.AsyncManager()], ids=["ours", "theirs"])
async def test_a_client_s_own_room_is_neither_entered_nor_closed_by_another(manager: Any) -> None:
    socketio.AsyncServer(async_mode="asgi", client_manager=manager)
    first, second = await connected(manager, 2)
    with pytest.raises(ValueError, match="cannot enter a sid room"):
        await manager.enter_room(first, NS, second)
    with pytest.raises(ValueError, match="cannot close a sid room"):
        await manager.close_room(second, NS)
    assert list(manager.get_participants(NS, second)) == [(second, "eio1")]


ROOMS = ("ABCDEF", "GHIJKL", "MNOPQR")
# What a client list is asked to do: connect client n, and for client n: go, enter or leave
# a room, or close one.
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("connect"), st.integers(0, 5)),
        st.tuples(st.just("disconnect"), st.integers(0, 5)),
        st.tuples(st.sampled_from(["enter", "leave"]), st.integers(0, 5), st.sampled_from(ROOMS)),
        st.tuples(st.just("close"), st.sampled_from(ROOMS)),
    ),
    max_size=40,
)


async def apply(manager: Any, step: tuple[Any, ...], sids: dict[int, str]) -> None:
    kind, *args = step
    if kind == "connect":  # as python-socketio's server connects a client (once at a time)
        if args[0] not in sids or not manager.is_connected(sids[args[0]], NS):
            sids[args[0]] = await manager.pre_connect(f"eio{args[0]}", NS)
            await manager.connect(sids[args[0]], NS)
    elif kind == "close":
        await manager.close_room(args[0], NS)
    elif (sid := sids.get(args[0])) is not None and manager.is_connected(sid, NS):
        if kind == "disconnect":
            await manager.disconnect(sid, NS)
        elif kind == "enter":
            await manager.enter_room(sid, NS, args[1])
        else:
            await manager.leave_room(sid, NS, args[1])


def seen(manager: Any, sids: dict[int, str]) -> dict[str, Any]:
    """What anyone can ask a client list, with each client named by its number."""
    number = {sid: n for n, sid in sids.items()}

    def clients(room: Any) -> list[tuple[int, str]]:
        return sorted((number[sid], eio) for sid, eio in manager.get_participants(NS, room))

    asked: list[Any] = [None, *ROOMS, *sids.values(), list(ROOMS[:2]), [*sids.values(), ROOMS[0]]]
    return {
        "participants": [clients(room) for room in asked],
        "rooms": {
            n: sorted(f"#{number[room]}" if room in number else room for room in rooms)
            for n, rooms in ((n, manager.get_rooms(sid, NS)) for n, sid in sids.items())
        },
        "connected": {n: manager.is_connected(sid, NS) for n, sid in sids.items()},
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_it_answers_as_python_socketio_s_own_list_does(steps: list[tuple[Any, ...]]) -> None:
    """Any sequence of connects, disconnects and rooms entered, left and closed: every
    question gets the same answer from both (the sids each makes told apart by number)."""

    async def both() -> None:
        ours, theirs = server().manager, socketio.AsyncServer(async_mode="asgi").manager
        our_sids: dict[int, str] = {}
        their_sids: dict[int, str] = {}
        for step in steps:
            await apply(ours, step, our_sids)
            await apply(theirs, step, their_sids)
            assert seen(ours, our_sids) == seen(theirs, their_sids), step
        for sid in list(our_sids.values()):
            if ours.is_connected(sid, NS):
                await ours.disconnect(sid, NS)
        assert list(ours.get_namespaces()) == []
        assert ours._eio_sids == ours._rooms == ours._entered == {}  # nothing of anyone stays

    asyncio.run(both())


class Rooms:
    def __init__(self) -> None:
        self.entered: list[tuple[str, str]] = []

    async def enter_room(self, sid: str, room: str) -> None:
        self.entered.append((sid, room))


@pytest.mark.parametrize("cluster", [False, True])
async def test_a_table_s_room_is_kept_in_a_cluster_only(cluster: bool) -> None:
    sio = Rooms()
    transport = SocketTransport(sio, ClientList(), rooms=cluster)  # type: ignore[arg-type]
    await transport.enter_room("sid", "ABCDEF")
    assert sio.entered == ([("sid", "ABCDEF")] if cluster else [])


async def test_a_connection_that_fails_is_refused_and_leaves_nothing_behind(
    server: Server, logged: Logged, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of ours (or anything not a refusal) in the connect handler: python-socketio
    forgets a client only when its connect is refused, and the client would wait for an
    answer, a pending connection for good."""
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    room = server.room(code)
    join = room.join

    async def failing(sid: str, *args: Any, **kwargs: Any) -> Any:
        await join(sid, *args, **kwargs)  # bound, then something fails
        raise RuntimeError("a bug")

    monkeypatch.setattr(room, "join", failing)
    bob = Client(server, code, "Bob")
    with pytest.raises(socketio.exceptions.ConnectionError):
        await bob.connect()
    assert bob.refusal["data"]["code"] == "internal_error"
    assert "connect_failed" in logged.events
    manager = server.app.engineio_server.manager
    await until(lambda: len(list(manager.get_participants(NS, None))) == 1, "Bob forgotten")
    # Bound before it failed: let go, as a connection gone is.
    here = lambda: [p.name for p in room.table.people.values() if p.connected]  # noqa: E731
    await until(lambda: here() == ["Ann"], "Bob not shown as here")
    monkeypatch.undo()
    cy = await Client(server, code, "Cy").connect()  # the room goes on
    await close_all([ann, cy])


async def test_the_app_s_clients_leave_no_room_behind() -> None:
    """Through the app as it is served: a table of three, then everyone goes."""
    async with serving() as server:
        code = await server.new_room()
        clients = [await Client(server, code, name).connect() for name in ("Ann", "Bo", "Cy")]
        manager = server.app.engineio_server.manager
        assert len(manager.rooms[NS]) == 1  # no room of a client's own, and none of the table's
        # Each still gets what is sent to it alone (its welcome, by `emit(to=sid)`).
        assert all(client.welcome is not None for client in clients)
        await close_all(clients)
        await until(lambda: not list(manager.get_namespaces()), "every client gone")
