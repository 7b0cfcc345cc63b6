"""A room's timetable: when each of its timers fires, derived from the table's state alone.

After every change the Room sets every timer again (`Timetable.set`), so a room rebuilt from
a snapshot carries on with none stored, and a timer that no longer applies is cancelled; a
job that fires stale is voided by its timer's generation (app/ops/timers.py). What a timer
does when it fires is the Room's: its `on_*` hooks (app/tables/room.py), named by `Wakeups`.
The bots' minds (their plans, not in snapshots) live here, since a plan is a timer.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

from app.ops.clock import Clock
from app.ops.config import Settings
from app.ops.timers import Timers
from app.tables.bots import Bot, Plan
from app.tables.table import Table
from app.tables.values import Person, TableBot
from app.tables.views import Views


class Wakeups(Protocol):
    """What a room does when one of its timers fires (app/tables/room.py `Room`)."""

    async def on_autoflip(self, now: float) -> None: ...

    async def on_tick(self, now: float) -> None: ...

    async def on_abandon(self, now: float) -> None: ...

    async def on_host_timeout(self, now: float) -> None: ...

    async def on_ping(self, now: float) -> None: ...

    async def on_expire(self, now: float) -> None: ...

    async def on_idle(self, now: float) -> None: ...

    async def on_bot_move(self, seat: int, bot_id: str, plan: Plan, now: float) -> None: ...

    async def on_heat_deal(self, now: float) -> None: ...


class Timetable:
    """Sets a room's timers (on `timers`, read against `clock`) from its table's state."""

    def __init__(self, timers: Timers, clock: Clock, settings: Settings) -> None:
        self.timers = timers
        self.clock = clock
        self.settings = settings
        self.planners: dict[str, Bot] = {}  # bot id -> the bot's mind (not in snapshots)
        self.bot_plans: dict[int, Plan] = {}

    def set(self, room: Wakeups, table: Table, now: float, views: Views, *, anyone: bool) -> None:
        """Every game timer, from the table's state alone. `anyone`: whether someone is
        connected. (The room's expiry is `expiry`'s.)"""
        self.autopilot(room, table)
        self.tick(room, table)
        self.bots(room, table, views)
        self.abandon(room, table, now)
        self.host(room, table)
        self.ping(room, table, now, anyone)
        self.heat(room, table, now)

    def expiry(self, room: Wakeups, now: float, *, anyone: bool, used: bool) -> None:
        """A room nobody is in closes after a while: soon if only its opener was ever in it."""
        if anyone:
            self.timers.cancel("expiry")
        elif not self.timers.pending("expiry"):
            settings = self.settings
            keep = settings.room_expiry_seconds if used else settings.unused_room_seconds
            self.timers.at("expiry", now + keep, room.on_expire)

    def idle(self, room: Wakeups, table: Table) -> None:
        """A table no game was dealt at closes once nobody acted (came in, or sent a
        command) for SLAPJACK_UNUSED_ROOM_SECONDS, whoever sits in it: a room held open by
        idle connections is no room anyone plays in. An event's heat deals its own games
        (`heat`) and waits for its winner."""
        if table.games or table.heat is not None:
            self.timers.cancel("idle")
        else:
            when = table.acted_at + self.settings.unused_room_seconds
            self.timers.at("idle", when, room.on_idle)

    def ping(self, room: Wakeups, table: Table, now: float, anyone: bool) -> None:
        """Lag ping times while the table measures round trips (lag-fair judging, false
        starts: `Table.measures_lag`) and someone measured has too few yet
        (`Table.unsettled`): at once when the host turns the rule on, or someone comes,
        comes back or sits down to be measured (one already waiting: in the next round,
        within SLAPJACK_LAG_PING_SECONDS). None once the rule is off or nobody is here;
        and none while everyone measured is settled (`Room.on_ping` stops them), who are
        pinged at triggers only."""
        if not table.measures_lag() or not anyone:
            self.timers.cancel("ping")
        elif not self.timers.pending("ping") and table.unsettled():
            self.timers.at("ping", now, room.on_ping)

    def heat(self, room: Wakeups, table: Table, now: float) -> None:
        """A table of an event deals its next game when it is due (`Table.heat_due`): the
        first once everyone is here, another after a game while nobody is through."""
        when = table.heat_due()
        if when is None:
            self.timers.cancel("heat")
        else:
            self.timers.at("heat", max(when, now), room.on_heat_deal)

    def host(self, room: Wakeups, table: Table) -> None:
        """A disconnected host hands over when their grace runs out."""
        when = table.host_hand_over_at()
        if when is None:
            self.timers.cancel("host")
        else:
            self.timers.at("host", when, room.on_host_timeout)

    def abandon(self, room: Wakeups, table: Table, now: float) -> None:
        """A game nobody at the table can play any more (every seat still in is a person who
        is gone) ends after a while: the autopilot flips but never slaps, so it would stall
        at the first Jack while spectators wait for the lobby."""
        if table.phase == "playing" and not table.anyone_can_play():
            if not self.timers.pending("abandon"):
                when = now + self.settings.abandon_seconds
                self.timers.at("abandon", when, room.on_abandon)
        else:
            self.timers.cancel("abandon")

    def autopilot(self, room: Wakeups, table: Table) -> None:
        """Flips for the seat to play once it is idle, or disconnected, for too long; never
        before its freeze or the collect pause ends, nor while a trigger holds the table (a
        trigger that lapsed holds it no longer)."""
        game = table.game
        if table.phase != "playing" or game is None or game.next_to_play is None:
            self.timers.cancel("autopilot")
            return
        if game.slap_open and not game.trigger_lapsed:
            self.timers.cancel("autopilot")  # the lapse's tick schedules it again
            return
        seat, settings = game.next_to_play, self.settings
        when = table.turn_started_at + settings.idle_autoflip_seconds
        occupant = table.occupant(seat)
        if isinstance(occupant, Person) and occupant.disconnected_at is not None:
            gone = occupant.disconnected_at + settings.disconnected_autoflip_seconds
            paused = table.turn_started_at + settings.autoflip_pause_seconds
            when = min(when, max(gone, paused))
        ready = max(game.frozen_until(seat), game.collect_until)
        self.timers.at("autopilot", max(when, ready), room.on_autoflip)

    def tick(self, room: Wakeups, table: Table) -> None:
        """Wakes the game when a freeze or the collect pause ends (so `frozen_ms` and
        `collect_ms` drop to 0), when a trigger lapses, or when time runs out."""
        game = table.game
        if table.phase != "playing" or game is None:
            self.timers.cancel("tick")
            return
        when = game.next_wake
        if when is not None:
            self.timers.at("tick", when, room.on_tick)
        else:
            self.timers.cancel("tick")

    def bots(self, room: Wakeups, table: Table, views: Views | None = None) -> None:
        """Each bot's next move, as its mind plans it from what its seat sees."""
        if not table.bots and not self.planners and not self.bot_plans:
            return  # no bot here, and none had a plan (a bot's timer is set with its plan)
        views = views if views is not None else Views(table)
        for bot_id in self.planners.keys() - table.bots.keys():
            del self.planners[bot_id]  # removed from the table
        for seat in range(len(table.seats)):
            occupant = table.occupant(seat)
            timer = f"bot{seat}"
            if not isinstance(occupant, TableBot):
                self.timers.cancel(timer)
                self.bot_plans.pop(seat, None)
                continue
            planner = self.planner(occupant)
            plan = planner.plan(views.state(None, seat)) if table.game else None
            if plan is None:
                self.timers.cancel(timer)
                self.bot_plans.pop(seat, None)
            elif plan is not self.bot_plans.get(seat):
                self.bot_plans[seat] = plan
                when = self.clock.now() + plan.delay
                self.timers.at(timer, when, partial(room.on_bot_move, seat, occupant.id, plan))

    def planner(self, bot: TableBot) -> Bot:
        """The mind of `bot` (made when first asked for)."""
        planner = self.planners.get(bot.id)
        if planner is None:
            planner = Bot(bot.level, time_scale=self.settings.bot_time_scale)
            self.planners[bot.id] = planner
        return planner

    def new_game(self) -> None:
        """A deal: every bot plans afresh."""
        self.bot_plans.clear()
        for planner in self.planners.values():
            planner.forget()

    def bot_lost_its_plan(self, room: Wakeups, table: Table, seat: int, bot_id: str) -> None:
        """A bot's planned move was refused (the table moved on): it looks again."""
        bot = table.bots.get(bot_id)
        if bot is not None:
            self.planner(bot).forget()
        self.bot_plans.pop(seat, None)
        self.bots(room, table)
