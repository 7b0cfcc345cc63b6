"""The Socket.IO server's list of clients (python-socketio's documented `client_manager`):
python-socketio's in-memory AsyncManager, each client's disconnect as quick with 10,000
clients as with 10.

python-socketio puts every client in a room of its own, named by its sid, beside the rooms
the app puts it in, and a client that goes is looked for in every room of its namespace
(`BaseManager.basic_disconnect`): a step for every client still connected. Clients that
all go at once (a Wi-Fi blip at a festival, a router restarting) cost the server the square
of their number: 4,000 held its loop 2.7 s, during which no table moved. Here a client
leaves its own room as soon as it has one (`pre_connect`), and the rooms the app puts it
in (a table's, an event's: only in a cluster, app/realtime/outgoing.py) are kept here, with
each client's list of them, so the namespace holds one room: python-socketio's list of its
clients, which it still keeps. Everything else answers as python-socketio's own rooms do: a
client's sid names it (`emit(to=sid)`, alone or in a list), `get_rooms` gives its own and
those it entered, a room is entered, left and closed with python-socketio's refusals
(tests/app/test_client_list.py asks both the same questions after any sequence of steps).

Only documented methods of the manager (python-socketio's API reference lists each) are
overridden: no name of the library's beyond it is read or set here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import socketio


class ClientList(socketio.AsyncManager):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        # By namespace: every client's eio sid, by its sid (python-socketio keeps the same in
        # its list of clients, the one room left it, but reads it back only through a method
        # it does not document; `eio_sid` reads this), and the rooms the app put clients in
        # (each room's clients, each client's rooms), which python-socketio does not see.
        self._eio_sids: dict[str, dict[str, str]] = {}
        self._rooms: dict[str, dict[str, dict[str, str]]] = {}
        self._entered: dict[str, dict[str, set[str]]] = {}

    async def pre_connect(self, eio_sid: str, namespace: str) -> str | None:
        sid: str | None = await super().pre_connect(eio_sid, namespace)
        if sid is not None:
            await super().leave_room(sid, namespace, sid)  # the room python-socketio made it
            self._eio_sids.setdefault(namespace, {})[sid] = eio_sid
        return sid

    async def disconnect(self, sid: str, namespace: str, **kwargs: Any) -> Any:
        for room in list(self._entered.get(namespace, {}).get(sid, ())):
            self._leave(sid, namespace, room)
        _forget(self._eio_sids, namespace, sid)
        return await super().disconnect(sid, namespace, **kwargs)

    async def enter_room(
        self, sid: str, namespace: str, room: Any, eio_sid: str | None = None
    ) -> None:
        if room is None:  # python-socketio's list of clients
            await super().enter_room(sid, namespace, room, eio_sid=eio_sid)
            return
        if room == sid:
            return  # its own room: its sid names it already
        clients = self._eio_sids.get(namespace, {})
        if room in clients:
            raise ValueError("cannot enter a sid room")
        eio_sid = eio_sid or clients.get(sid)
        if eio_sid is None:
            raise ValueError("sid is not connected to requested namespace")
        self._rooms.setdefault(namespace, {}).setdefault(room, {})[sid] = eio_sid
        self._entered.setdefault(namespace, {}).setdefault(sid, set()).add(room)

    async def leave_room(self, sid: str, namespace: str, room: Any) -> None:
        if room is None:
            await super().leave_room(sid, namespace, room)
        else:
            self._leave(sid, namespace, room)

    async def close_room(self, room: Any, namespace: str) -> None:
        if room in self._eio_sids.get(namespace, {}):
            raise ValueError("cannot close a sid room")
        for sid in list(self._rooms.get(namespace, {}).get(room, ())):
            self._leave(sid, namespace, room)

    def eio_sid(self, sid: str, namespace: str) -> str | None:
        """The Engine.IO sid of client `sid`, None once it is gone (the broadcast path's
        look-up: app/realtime/outgoing.py)."""
        return self._eio_sids.get(namespace, {}).get(sid)

    def get_rooms(self, sid: str, namespace: str) -> list[str]:
        """The rooms the client `sid` is in: its own, and those it entered."""
        if sid not in self._eio_sids.get(namespace, {}):
            return []
        return [sid, *self._entered.get(namespace, {}).get(sid, ())]

    def get_participants(self, namespace: str, room: Any) -> Iterator[tuple[str, str]]:
        """The clients in `room` (a name, or a list of names), as (sid, eio_sid): a client's
        own sid names that client, any other name a room the app put clients in, and None
        every client of the namespace (python-socketio's list)."""
        if room is None:
            yield from super().get_participants(namespace, room)
            return
        clients, rooms = self._eio_sids.get(namespace, {}), self._rooms.get(namespace, {})
        found: dict[str, str] = {}
        for name in [room] if isinstance(room, str) else room:
            if name in clients:
                found[name] = clients[name]
            else:
                found.update(rooms.get(name, {}))
        yield from found.items()

    def _leave(self, sid: str, namespace: str, room: str) -> None:
        members = self._rooms.get(namespace, {}).get(room)
        if members is not None and members.pop(sid, None) is not None and not members:
            _forget(self._rooms, namespace, room)
        entered = self._entered.get(namespace, {}).get(sid)
        if entered is not None:
            entered.discard(room)
            if not entered:
                _forget(self._entered, namespace, sid)


def _forget(index: dict[str, dict[str, Any]], namespace: str, key: str) -> None:
    """`key` out of a namespace's `index`, and the namespace with its last key."""
    keys = index.get(namespace)
    if keys is not None and keys.pop(key, None) is not None and not keys:
        del index[namespace]
