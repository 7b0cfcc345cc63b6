"""The Socket.IO server's list of clients (python-socketio's documented `client_manager`):
its own in-memory AsyncManager, each client's disconnect in one process as quick with
10,000 clients as with 10.

python-socketio puts every client in a room of its own, named by its sid, and a client
that goes is looked for in every room of its namespace (`BaseManager.basic_disconnect`): a
step for every client still connected. Clients that all go at once (a Wi-Fi blip at a
festival, a router restarting) cost the server the square of their number: 4,000 held its
loop 2.7 s, during which no table moved. Here a client leaves its own room as soon as it
has one (`pre_connect`), so the namespace holds one room, python-socketio's list of its
clients. In a cluster each table and event keeps a room beside it (app/realtime/outgoing.py),
so a disconnect there still looks at one room per table: a fifth of what it was at tables
of four. A message for one client (`emit(to=sid)`, alone or in a list) still reaches it:
`get_participants` finds it in `_eio_sids`.

Only documented methods of the manager (python-socketio's API reference lists each) are
overridden: no name of the library's beyond it is read or set here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import socketio


class ClientList(socketio.AsyncManager):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self._eio_sids: dict[str, dict[str, str]] = {}  # namespace -> sid -> eio_sid

    async def pre_connect(self, eio_sid: str, namespace: str) -> str | None:
        sid: str | None = await super().pre_connect(eio_sid, namespace)
        if sid is not None:
            await self.leave_room(sid, namespace, sid)  # the room python-socketio made it
            self._eio_sids.setdefault(namespace, {})[sid] = eio_sid
        return sid

    async def disconnect(self, sid: str, namespace: str, **kwargs: Any) -> Any:
        clients = self._eio_sids.get(namespace)
        if clients is not None and clients.pop(sid, None) is not None and not clients:
            del self._eio_sids[namespace]
        return await super().disconnect(sid, namespace, **kwargs)

    def get_participants(self, namespace: str, room: Any) -> Iterator[tuple[str, str]]:
        """python-socketio's, a client's own sid (a room of its own no more) standing for
        that client while it is connected, alone or in a list of rooms."""
        clients = self._eio_sids.get(namespace, {})
        rooms = [room] if room is None or isinstance(room, str) else list(room)
        found = {sid: clients[sid] for sid in rooms if sid in clients}
        others = [name for name in rooms if name not in found]
        if others:
            found.update(
                super().get_participants(namespace, others if len(others) > 1 else others[0])
            )
        yield from found.items()
