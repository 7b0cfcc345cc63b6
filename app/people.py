"""The people in a room: who holds which connection and token, and who is host.

Synchronous bookkeeping only; the Room calls it under its lock and broadcasts the events.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from app.protocol import ErrorCode, EventDict, ProtocolError
from app.timers import TIMER_SLACK


@dataclass(eq=False)
class Person:
    id: str  # public: in every state
    token: str  # secret: the key to this person (and their seat)
    name: str
    sid: str | None
    connected_since: float
    disconnected_at: float | None = None

    @property
    def connected(self) -> bool:
        return self.sid is not None


class People:
    def __init__(self, is_seated: Callable[[Person], bool], limit: int) -> None:
        self._is_seated = is_seated
        self._limit = limit
        self._by_token: dict[str, Person] = {}
        self._by_sid: dict[str, Person] = {}
        self.host: Person | None = None

    def by_sid(self, sid: str) -> Person | None:
        return self._by_sid.get(sid)

    def knows(self, token: str) -> bool:
        """Someone in this room holds `token` (a person coming back)."""
        return token in self._by_token

    def connected(self) -> list[Person]:
        return [p for p in self._by_token.values() if p.connected]

    def admit(
        self, sid: str, name: str, token: str | None, now: float
    ) -> tuple[Person, str | None, list[EventDict]]:
        """The person holding `token` (a new one if none does) now on connection `sid`; also
        the sid this connection replaces (an older tab) and what to tell the room."""
        person = self._by_token.get(token) if token else None
        if person is None:
            person = self._new(name, sid, now)
            events: list[EventDict] = [{"kind": "join", "player": person.id, "name": name}]
            replaced = None
        else:
            replaced = person.sid
            if replaced is not None:
                del self._by_sid[replaced]
            else:
                person.connected_since = now
            person.name, person.sid, person.disconnected_at = name, sid, None
            events = [{"kind": "reconnect", "player": person.id}]
        self._by_sid[sid] = person
        if self.host is None:
            self.host = person
        return person, replaced, events

    def _new(self, name: str, sid: str, now: float) -> Person:
        if len(self.connected()) >= self._limit:
            raise ProtocolError(ErrorCode.ROOM_FULL, "this room is full")
        person = Person("p" + secrets.token_hex(4), secrets.token_urlsafe(16), name, sid, now)
        self._by_token[person.token] = person
        return person

    def release(self, sid: str, now: float) -> Person | None:
        """Connection `sid` is gone; returns whose it was (None if it was replaced)."""
        person = self._by_sid.pop(sid, None)
        if person is not None:
            person.sid, person.disconnected_at = None, now
        return person

    def hand_over_if_gone(self, now: float, grace: float) -> list[EventDict]:
        """A host disconnected for `grace` seconds passes the role on."""
        host = self.host
        if host is None or host.connected or host.disconnected_at is None:
            return []
        if now - host.disconnected_at < grace - TIMER_SLACK:  # the timer fires at the grace
            return []
        return self.hand_over()

    def hand_over(self) -> list[EventDict]:
        """The connected person present longest becomes host; with nobody connected, the
        next person in will."""
        old = self.host
        candidates = self.connected()
        self.host = min(candidates, key=lambda p: p.connected_since) if candidates else None
        if old is not None:
            self.forget_if_unneeded(old)
        if self.host is None or self.host is old:
            return []
        return [{"kind": "host", "player": self.host.id}]

    def forget_if_unneeded(self, person: Person) -> None:
        """A gone spectator leaves no trace, so strangers reconnecting cannot fill memory."""
        if not person.connected and person is not self.host and not self._is_seated(person):
            self._by_token.pop(person.token, None)
