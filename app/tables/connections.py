"""A room's connections: which person each one is, and what each is sent.

A person has one connection at a time: a newer one (another tab, a reconnect) replaces
the older, which the caller closes. Every send is queued at the transport
(app/wire/encoded.py `Transport`) before the call returns, so the room's next change is
sent after this one on every connection. The Room (app/tables/room.py) holds one, under
its lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.ops.clock import Clock
from app.tables.table import Table
from app.tables.values import Person
from app.tables.views import Views
from app.wire.encoded import Encoded, Transport
from app.wire.protocol import PING


class Connections:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._person_of: dict[str, str] = {}  # connection -> person id
        self._sid_of: dict[str, str] = {}  # person id -> their current connection
        # Closes a connection at the transport (the registry's: app/web/sockets.py sets it),
        # after what was queued on it: a kicked person's, and everyone's when the room closes.
        self.hang_up: Callable[[str], None] = lambda sid: None

    def person_on(self, sid: str) -> str | None:
        """The person connection `sid` is, if it is one here."""
        return self._person_of.get(sid)

    def sid_of(self, person_id: str) -> str | None:
        """The person's current connection, if they have one here."""
        return self._sid_of.get(person_id)

    def has(self, person_id: str) -> bool:
        """Whether the person is connected here."""
        return person_id in self._sid_of

    def bind(self, sid: str, person_id: str) -> str | None:
        """Connection `sid` is `person_id` from now on; returns the older connection it
        replaces (the caller closes it), if any."""
        replaced = self._sid_of.get(person_id)
        if replaced is not None:
            del self._person_of[replaced]
        self._person_of[sid] = person_id
        self._sid_of[person_id] = sid
        return replaced

    def unbind(self, sid: str) -> str | None:
        """Connection `sid` is gone: the person it was, or None if a newer connection of
        theirs replaced it (they are still here)."""
        person_id = self._person_of.pop(sid, None)
        if person_id is not None:
            del self._sid_of[person_id]
        return person_id

    def send(self, person_id: str, message: Encoded) -> bool:
        """Queues `message` on the person's connection; False when they have none."""
        sid = self._sid_of.get(person_id)
        if sid is None:
            return False
        self.transport.send(message, sid)
        return True

    def ping(self, table: Table, clock: Clock, every: float) -> None:
        """The ping time of each person whose round trip the table measures
        (`Table.measured`) and who has few samples yet (app/tables/lag.py
        `LagMeter.ping_time`): their ping rides on their next state (`broadcast`), or goes
        now on its own for a person not measured yet or one whose ping found no state to
        ride since the last ping time (every `every` seconds). Each ping's time is taken as
        it leaves."""
        for person_id in table.measured():
            sid = self._sid_of.get(person_id)
            if sid is not None:
                ping_id = table.lag.ping_time(person_id, clock.now(), every)
                if ping_id is not None:
                    self.transport.send(Encoded.of(PING, {"id": ping_id}), sid)

    def send_everyone(self, message: Encoded) -> None:
        for sid in self._person_of:
            self.transport.send(message, sid)

    def broadcast(
        self, views: Views, people: Iterable[Person], seat_of: dict[str, int], clock: Clock
    ) -> None:
        """Each person's own state, the change's events in it: one message per person per
        change, the shared part encoded once, and the person's lag ping on it if one waits
        (`ping`)."""
        lag = views.table.lag
        for person in people:
            sid = self._sid_of.get(person.id)
            if sid is not None:
                views.shared()  # encoded before a riding ping's time is taken: as it leaves
                ping = lag.rides(person.id, clock.now()) if person.id in lag.due else None
                self.transport.send(views.message(person, seat_of.get(person.id), ping), sid)

    def show_out(self, person_id: str, message: Encoded) -> bool:
        """Tells the person's connection `message`, then closes it: nothing more is sent
        to it. False when they had none."""
        sid = self._sid_of.pop(person_id, None)
        if sid is None:
            return False
        self._person_of.pop(sid, None)
        self.transport.send(message, sid)
        self.hang_up(sid)
        return True

    def close_all(self, message: Encoded) -> None:
        """Tells every connection `message`, then closes it."""
        for sid in list(self._person_of):
            self.transport.send(message, sid)
            self.hang_up(sid)
        self._person_of.clear()
        self._sid_of.clear()
