"""The Socket.IO server's list of clients (python-socketio's documented `client_manager`):
its own in-memory AsyncManager, each client's disconnect as quick with 10,000 clients as
with 10.

python-socketio puts every client in a room of its own, named by its sid, and a client
that goes is looked for in every room of its namespace (`BaseManager.basic_disconnect`): a
step for every client still connected. Clients that all go at once (a Wi-Fi blip at a
festival, a router restarting) cost the server the square of their number: 4,000 held its
loop 2.7 s, during which no table moved. Here a client leaves its own room as soon as it
has one (`pre_connect`), so the namespace holds one room, python-socketio's list of its
clients, beside each table's in a cluster (app/realtime/outgoing.py). A message for one
client (`emit(to=sid)`) still reaches it: `get_participants` finds it in `_eio_sids`.

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
        """python-socketio's, and for a client's own sid (a room of its own no more) that
        client, while it is connected."""
        eio_sid = self._eio_sids.get(namespace, {}).get(room) if isinstance(room, str) else None
        if eio_sid is not None:
            yield room, eio_sid
        else:
            yield from super().get_participants(namespace, room)
