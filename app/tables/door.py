"""Who is at the table and who holds the host's role: people coming (`join`: the door's
checks, the name rules), going (`drop`) and coming back, the host's hand-over and return,
and the host's door (`kick`, `lock`, `invite`). Part of the Table (app/tables/table.py)."""

from __future__ import annotations

import secrets

from app.tables import events
from app.tables.events import AppEvent
from app.tables.state import TableState
from app.tables.values import (
    Joined,
    Outcome,
    Person,
    address_hash,
    invite_holds,
    token_hash,
)
from app.wire.errors import ErrorCode, ProtocolError
from app.wire.names import looks_alike

# A host hand-over timer may fire a little before its time (the loop's clock resolution,
# float rounding): a host gone this close to the grace counts as gone for it.
HANDOVER_EARLY_SECONDS = 0.05

# A person takes a new name (by connecting with it) at most this often, never in a game.
RENAME_SECONDS = 60.0


class Door(TableState):
    """People coming and going, and the host's door."""

    # ---- people come and go ------------------------------------------------------------

    def join(
        self,
        name: str,
        token: str | None,
        now: float,
        *,
        avatar: str | None = None,
        watch: bool = False,
        address: str | None = None,
        invite: str | None = None,
        new_id: str | None = None,
        new_token: str | None = None,
    ) -> Joined:
        """The person holding `token` (a new person if nobody does) is connected now, from
        client `address`. A new person's id and token are drawn here unless given (tests give
        them). A new person in the lobby sits in the first free seat at once (they may stand
        up to watch); one arriving during or after a game watches until the lobby, and so
        does one who asked to `watch` (a shared screen). Nobody new gets in with a kicked
        token, nor from a kicked address or while the table is locked without its `invite`;
        a name must not read like anyone else's here (`looks_alike`). A returning person
        with another name takes it if they may (`_rename`)."""
        hashed = token_hash(token) if token else None
        known = self._by_token.get(hashed) if hashed is not None else None
        person = self.people.get(known) if known is not None else None
        returning = person is not None
        where = address_hash(self.code, address) if address is not None else None
        if person is not None and hashed in self.banned_tokens:  # barred from a heat
            raise ProtocolError(ErrorCode.KICKED, "the organiser removed you from this event")
        if person is None:
            # The host's invite is their word for whoever holds it: it lets a new person in
            # from a kicked address (a household behind one address), never a kicked token.
            invited = self._invited(invite)
            if hashed in self.banned_tokens or (where in self.banned_addresses and not invited):
                raise ProtocolError(ErrorCode.KICKED, "the host removed you from this table")
            if self.locked and not invited:
                raise ProtocolError(ErrorCode.ROOM_LOCKED, "the table is locked: ask for an invite")
            if len(self.connected()) >= self.policy.max_people:
                raise ProtocolError(ErrorCode.ROOM_FULL, "this room is full")
            self._check_name_free(name, None, screen=watch)
            token = new_token or secrets.token_urlsafe(16)
            person_id = new_id
            while person_id is None or person_id in self.people:
                if new_id is not None:
                    raise ValueError(f"person id {new_id!r} is taken")
                person_id = "p" + secrets.token_hex(4)  # drawn again in the rare clash
            person = Person(
                person_id, name, token_hash(token), now, avatar=avatar, screen=watch, arrived_at=now
            )
            self.admit(person)
            self.acted_at = now
            happened: list[AppEvent] = [events.Join(person.id, name)]
            free = self._free_seat_or_none()
            if self.phase == "lobby" and free is not None and not watch and self.heat is None:
                self.seats[free] = person.id
                happened.append(events.Sit(person.id, free, name))
        else:
            if not person.connected:
                person.connected_since = now
            self.lag.forget(person.id)  # a new connection: measure it afresh
            self._lag_shown.pop(person.id, None)
            self._rename(person, name, now)
            person.disconnected_at, person.avatar = None, avatar
            seat = self.seat_of(person.id)
            happened = [events.Reconnect(person.id, seat, person.away_flips, person.missed_deal)]
            person.away_flips, person.missed_deal = 0, False
        assert token is not None
        person.address = where
        if self.host is None and not person.screen and self.heat is None:
            self.host = person.id
        if self.owner is None and self.host == person.id:
            self.owner = person.id
        if person.id == self.owner and self.host != person.id:
            self._pass_host(person.id)  # the table's own host is back: the role comes home
            happened.append(events.Host(person.id))
        happened += self.hand_over_if_gone(now)
        return Joined(person, token, returning, happened)

    def _rename(self, person: Person, name: str, now: float) -> None:
        """A returning person connected with another name: it is theirs if no game is on,
        they took none in the last RENAME_SECONDS, and nobody else's reads like it; else
        they keep the one they had (they are let in all the same). At an event's table a
        player keeps the name the event knows them by (unique in the event, not just here)."""
        if name == person.name or self.phase == "playing" or self.heat is not None:
            return
        if person.renamed_at is not None and now - person.renamed_at < RENAME_SECONDS:
            return
        try:
            self._check_name_free(name, person, screen=person.screen)
        except ProtocolError:
            return
        person.name, person.renamed_at = name, now

    def _check_name_free(self, name: str, person: Person | None, *, screen: bool) -> None:
        """name_taken if `name` reads like the name of anyone else known here (seated,
        watching or away) or of a bot; shared screens may share theirs with each other."""
        for other in self.people.values():
            if other is person or (screen and other.screen):
                continue
            if looks_alike(name, other.name):
                raise ProtocolError(ErrorCode.NAME_TAKEN, "someone here has a name like that")
        if any(looks_alike(name, bot.name) for bot in self.bots.values()):
            raise ProtocolError(ErrorCode.NAME_TAKEN, "a bot here has a name like that")

    def _invited(self, invite: str | None) -> bool:
        return invite_holds(invite, self.invite_hash)

    def drop(self, person_id: str, now: float, *, left: bool) -> list[AppEvent]:
        """The person's connection is gone; `left` when they said goodbye (`leave`)."""
        person = self._connected_person(person_id)
        seat = self.seat_of(person.id)
        person.disconnected_at = now
        happened: list[AppEvent] = []
        if left and seat is not None and self.phase != "playing" and self.heat is None:
            self._reopen()  # as `stand` does: the finished table is cleared
            self.seats[seat] = None
            happened.append(events.Stand(person.id, seat))
        gone = events.Leave if left else events.Disconnect
        happened.append(gone(person.id, seat))
        if self.host == person.id and (left or self.policy.handover_seconds == 0):
            happened += self._hand_over()
        self._forget_if_unneeded(person)
        return happened

    def disconnect_everyone(self, now: float) -> list[AppEvent]:
        """Every connection is gone at once: a table restored in a new process has none."""
        happened: list[AppEvent] = []
        for person in list(self.people.values()):
            if person.connected:
                happened += self.drop(person.id, now, left=False)
        return happened

    def host_hand_over_at(self) -> float | None:
        """When a disconnected host's grace runs out (None: no hand-over is waiting)."""
        host = self.host_person()
        if host is None or host.disconnected_at is None:
            return None
        return host.disconnected_at + self.policy.handover_seconds

    def hand_over_if_gone(self, now: float) -> list[AppEvent]:
        """A host disconnected for the grace period passes the role on."""
        when = self.host_hand_over_at()
        if when is None or now < when - HANDOVER_EARLY_SECONDS:
            return []
        return self._hand_over()

    def _hand_over(self) -> list[AppEvent]:
        """The connected player who came to the table first becomes host (a seated one before
        one watching; a reconnection keeps a person's place); with nobody connected, the next
        person in will. The table's own host takes it back when they return (`join`)."""
        old = self.host
        candidates = [p for p in self.connected() if not p.screen]
        seated = set(self.seats)
        new = (
            min(candidates, key=lambda p: (p.id not in seated, p.arrived_at))
            if candidates
            else None
        )
        self._pass_host(new.id if new is not None else None)
        if new is None or new.id == old:
            return []
        return [events.Host(new.id)]

    def _pass_host(self, new: str | None) -> None:
        """`new` hosts from now on. The host before, if a gone spectator kept only for the
        role, is let go."""
        old = self.host_person()
        self.host = new
        if old is not None:
            self._forget_if_unneeded(old)

    def _forget_if_unneeded(self, person: Person) -> None:
        """A gone spectator leaves no trace, so strangers reconnecting cannot fill memory."""
        if (
            person.connected
            or person.id in (self.host, self.owner)
            or self.seat_of(person.id) is not None
        ):
            return
        self.people.pop(person.id, None)
        self._by_token.pop(person.token_hash, None)

    def kick(self, person_id: str, player: str, now: float) -> Outcome:
        """The host removes `player` for good: out of their seat and the room, and their
        token and their client address refused here until the table closes (nobody new
        gets in from it; those already here stay). Never the host themselves nor the
        table's own host; a seated player between games only (a game's seats are dealt)."""
        self._check_host(person_id)
        target = self.people.get(player)
        if target is None:
            raise ProtocolError(ErrorCode.BAD_REQUEST, "player: nobody here has that id")
        if player in (person_id, self.owner):
            raise ProtocolError(ErrorCode.BAD_REQUEST, "player: not the table's own host")
        seat = self.seat_of(player)
        if seat is not None and self.phase == "playing":
            raise ProtocolError(ErrorCode.WRONG_PHASE, "a seated player: between games")
        self.banned_tokens.add(target.token_hash)
        if target.address is not None:
            self.banned_addresses.add(target.address)
        if seat is not None:
            self._reopen()
            self.seats[seat] = None
        self.people.pop(player, None)
        self._by_token.pop(target.token_hash, None)
        self.lag.forget(player)
        self._lag_shown.pop(player, None)
        return Outcome([events.Kick(player, seat)])

    def bar_from_heat(self, person_id: str, now: float) -> list[AppEvent]:
        """The event removed a player of this heat: their token is refused here from now on
        (kicked) and they are away, so the autopilot plays their seat on; they stay in it,
        for the heat's result. Nothing at any other table, or for anyone else."""
        person = self.people.get(person_id)
        if self.heat is None or person is None or person.token_hash in self.banned_tokens:
            return []
        self.banned_tokens.add(person.token_hash)
        return self.drop(person_id, now, left=False) if person.connected else []

    def lock(self, person_id: str, locked: bool, now: float) -> Outcome:
        """The host locks the table (nobody new gets in without the invite) or opens it."""
        self._check_host(person_id)
        if locked == self.locked:
            return Outcome([], {"locked": locked})
        self.locked = locked
        return Outcome([events.Lock(locked)], {"locked": locked})

    def invite(self, person_id: str, now: float, *, secret: str | None = None) -> Outcome:
        """A fresh invite for the host to share: it lets whoever holds it in while the table
        is locked; the one before no longer does. Only its hash is kept (drawn here unless
        given: tests give it)."""
        self._check_host(person_id)
        secret = secret or secrets.token_urlsafe(9)
        self.invite_hash = token_hash(secret)
        return Outcome([], {"invite": secret})
