"""The server's list of clients (app/realtime/clients.py): a client's disconnect looks at a
namespace holding one room whatever the number of clients, and nothing python-socketio
does with a client's sid is lost: a message to one client reaches it, the rooms it entered
are left when it goes, and nothing of it stays once everyone is gone.

The disconnect's cost is judged by what it walks (python-socketio looks through every room
of the namespace), not timed: bench/storm.py measures the stall."""

from __future__ import annotations

from typing import Any

import pytest
import socketio
from app_harness import Client, Logged, Server, close_all, serving, until

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
    # python-socketio's list of the namespace's clients, and no room of one client each.
    assert manager.get_rooms(sids[0], NS) == []
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


class Rooms:
    def __init__(self) -> None:
        self.entered: list[tuple[str, str]] = []

    async def enter_room(self, sid: str, room: str) -> None:
        self.entered.append((sid, room))


@pytest.mark.parametrize("cluster", [False, True])
async def test_a_table_s_room_is_kept_in_a_cluster_only(cluster: bool) -> None:
    sio = Rooms()
    await SocketTransport(sio, rooms=cluster).enter_room("sid", "ABCDEF")  # type: ignore[arg-type]
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
