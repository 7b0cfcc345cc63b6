"""Events over the wire, on the app's clock (a ManualClock the test turns): the organiser opens
one, players join it from their phones and a shared screen watches, Start sends each phone to
its own table, each table deals once its players are there, rounds go on as their tables are
won, the final ends on the podium; the organiser's remove, pause and end; and an event is
written to the store and comes back after a restart, its tables with it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import socketio
from app_harness import Client, Server, close_all, serving, turn_until
from event_steps import EventClient, open_event, to_table

from app.ops.clock import ManualClock, settle
from app.tournaments.tournament import ROUND_PAUSE_SECONDS

# Tables of three with a time limit: 52 cards dealt 18, 17, 17, so when time runs out the
# first seat holds more than every other and wins; no play is needed to end a game.
TIME_LIMIT = 10.0
RULES = {"time_limit": TIME_LIMIT}


async def gather(server: Any, code: str, names: list[str]) -> list[EventClient]:
    return [await EventClient(server, code, name).connect() for name in names]


async def everyone_at_their_tables(phones: list[EventClient]) -> list[Client]:
    """Each phone at its table, and every table dealt (once its players are there: the
    deal is a timer, which fires when the clock turns)."""
    tables = list(await asyncio.gather(*(to_table(p) for p in phones)))
    clock = phones[0].server.clock
    assert isinstance(clock, ManualClock)
    dealt = lambda: all(t.state["phase"] == "playing" for t in tables)  # noqa: E731
    await turn_until(clock, dealt, "every table dealt", step=0.01, most=1.0)
    return tables


async def test_an_event_from_its_link_to_the_podium() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        code, token = await open_event(server, size=3, rules=RULES)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        assert organiser.event["you"]["organiser"] and organiser.event["stage"] == "lobby"
        stage = await EventClient(server, code, "TV").connect(watch=True)
        assert stage.event["you"] == {
            "player": None,
            "organiser": False,
            "table": None,
            "status": None,
        }
        names = [f"Player {i}" for i in range(9)]
        phones = await gather(server, code, names)
        lobby = await organiser.wait_event(lambda s: len(s["players"]) == 9)
        assert lobby["rounds_to_play"] == 2 and all(
            p["status"] == "waiting" for p in lobby["players"]
        )
        refused = await phones[0].call("event_start")
        assert refused["error"]["code"] == "not_host"
        assert (await organiser.ok("event_start"))["round"] == 1

        tables = await everyone_at_their_tables(phones)
        codes = {t.room for t in tables}
        assert len(codes) == 3
        for table in tables:
            state = await table.wait_state(lambda s: s["phase"] == "playing")
            assert state["heat"]["event"] == code and state["heat"]["round"] == 1
            assert state["host"] is None and len(state["seats"]) == 3
        watching = await stage.wait_event(
            lambda s: all(
                h["progress"] and h["progress"]["phase"] == "playing" for h in s["rounds"][0]
            )
        )
        assert {h["table"] for h in watching["rounds"][0]} == codes

        # Time runs out at every table: its first seat wins, and goes through.
        await turn_until(clock, lambda: stage.event["next_round_ms"] is not None, "round one won")
        through = [p for p in stage.event["players"] if p["status"] == "through"]
        assert len(through) == 3
        await close_all(tables)
        finalists = [phones[names.index(p["name"])] for p in through]
        await clock.advance(ROUND_PAUSE_SECONDS)
        await settle()
        final_tables = await everyone_at_their_tables(finalists)
        assert len({t.room for t in final_tables}) == 1
        state = await final_tables[0].wait_state(lambda s: s["phase"] == "playing")
        assert state["heat"]["final"] and state["heat"]["round"] == 2
        assert stage.event["final"] == final_tables[0].room

        await turn_until(clock, lambda: stage.event["stage"] == "over", "the final won")
        over = stage.event
        assert len(over["podium"]) == 3 and over["podium"][0] in {p["player"] for p in through}
        champion = next(p for p in over["players"] if p["player"] == over["podium"][0])
        assert champion["status"] == "champion"
        assert over["recap"]["games"] == 4
        await close_all([*final_tables, *phones, organiser, stage])


async def test_a_phone_that_joins_late_follows_the_stage_and_bots_play_as_players() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        code, token = await open_event(server, size=3, bots=True, rules=RULES)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        await organiser.ok("event_bot", {"level": "hard"})
        phones = await gather(server, code, ["Ann", "Bo", "Cy", "Di"])
        await organiser.ok("event_start")  # five players at tables of three: two tables
        late = await EventClient(server, code, "Late").connect()
        assert late.event["you"]["player"] is None and len(late.event["players"]) == 6
        tables = await everyone_at_their_tables(phones)
        seats = {s["name"]: s for t in tables for s in t.state["seats"] if s is not None}
        assert len(seats) == 6
        assert sum(1 for s in seats.values() if s["bot"]) == 2  # the one added, one filling
        await close_all([*tables, *phones, late, organiser])


async def test_the_organiser_removes_pauses_and_ends() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        code, token = await open_event(server, size=3, rules=RULES)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        phones = await gather(server, code, ["Ann", "Bo", "Cy", "Di"])
        gone = phones[3].event["you"]["player"]
        await organiser.ok("event_remove", {"player": gone})
        await phones[3].wait_event(lambda s: gone not in [p["player"] for p in s["players"]])
        await organiser.ok("event_start")
        tables = await everyone_at_their_tables(phones[:3])
        await tables[0].wait_state(lambda s: s["phase"] == "playing")
        assert (await organiser.ok("event_pause", {"paused": True}))["paused"]
        await tables[0].wait_for(lambda: any(e.get("kind") == "paused" for e in tables[0].events))
        refused = await tables[0].call("flip")
        assert refused["error"]["code"] == "paused"
        await organiser.ok("event_pause", {"paused": False})
        await tables[0].wait_for(lambda: any(e.get("kind") == "resumed" for e in tables[0].events))
        await organiser.ok("event_end")
        ended = await phones[0].wait_event(lambda s: s["stage"] == "over")
        assert ended["ended"] and ended["podium"] == []
        await close_all([*tables, *phones, organiser])


async def started(server: Server) -> tuple[str, EventClient, list[EventClient]]:
    """An event of tables of three, started with Ann, Bo and Cy: its code, organiser and
    phones."""
    code, token = await open_event(server, size=3, rules=RULES)
    organiser = await EventClient(server, code, "Ms Lee", token).connect()
    phones = await gather(server, code, ["Ann", "Bo", "Cy"])
    await organiser.ok("event_start")
    return code, organiser, phones


async def test_a_player_reaches_a_table_the_organiser_paused_and_is_told_why() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        _, organiser, phones = await started(server)
        await organiser.ok("event_pause", {"paused": True})  # before anyone is at their table
        tables = list(await asyncio.gather(*(to_table(p) for p in phones)))
        told = {"kind": "paused", "by": "organiser"}
        for table in tables:  # seated at their heat, and told it is the organiser's pause
            assert table.state["seats"][table.seat]["name"] == table.name
            await table.wait_for(lambda t=table: told in t.events)  # type: ignore[misc]
        await clock.advance(5)
        assert tables[0].state["phase"] == "lobby"  # nothing dealt while paused
        assert (await tables[0].call("flip"))["error"]["code"] == "paused"
        await organiser.ok("event_pause", {"paused": False})
        await turn_until(
            clock, lambda: all(t.state["phase"] == "playing" for t in tables), "the deal", step=0.1
        )
        await close_all([*tables, *phones, organiser])


async def refusal(phone: EventClient) -> str:
    """The code of the refusal `phone` gets connecting."""
    with pytest.raises(socketio.exceptions.ConnectionError):
        await phone.connect()
    code: str = phone.refusal["data"]["code"]
    await phone.close()
    return code


async def test_the_organisers_door_locks_invites_and_keeps_a_removed_phone_out() -> None:
    async with serving(ManualClock()) as server:
        code, token = await open_event(server, size=3)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        ann, bo = await gather(server, code, ["Ann", "Bo"])
        assert await refusal(EventClient(server, code, "ANN")) == "name_taken"
        assert (await organiser.ok("event_lock", {"locked": True}))["locked"]
        locked = await ann.wait_event(lambda s: s["locked"])
        assert {k: v for k, v in locked["events"][0].items() if k != "version"} == {
            "kind": "lock",
            "locked": True,
        }
        assert await refusal(EventClient(server, code, "Cy")) == "room_locked"
        back = await EventClient(server, code, "Ann", ann.token).connect()  # a reload
        assert back.event["you"]["player"] == ann.event["you"]["player"]
        refused = await bo.call("event_invite")
        assert refused["error"]["code"] == "not_host"
        invite = (await organiser.ok("event_invite"))["invite"]
        cy = EventClient(server, code, "Cy")
        cy.auth_extra = {"invite": invite}
        await cy.connect()
        assert cy.event["you"]["status"] == "waiting"
        await organiser.ok("event_lock", {"locked": False})
        await organiser.ok("event_remove", {"player": bo.event["you"]["player"]})
        assert await refusal(EventClient(server, code, "Bo", bo.token)) == "kicked"
        # Every phone here comes from one address (127.0.0.1): the removed one's.
        assert await refusal(EventClient(server, code, "Di")) == "kicked"
        di = EventClient(server, code, "Di")
        di.auth_extra = {"invite": invite}
        await di.connect()
        assert di.event["you"]["status"] == "waiting"
        await close_all([organiser, ann, back, bo, cy, di])


async def test_a_player_removed_during_a_heat_is_sent_from_their_table_for_good() -> None:
    clock = ManualClock()
    async with serving(clock) as server:
        code, organiser, phones = await started(server)
        tables = await everyone_at_their_tables(phones)
        gone = phones[2].event["you"]["player"]
        await organiser.ok("event_remove", {"player": gone})
        await asyncio.wait_for(tables[2].disconnected.wait(), 10)
        assert any(e.get("kind") == "kick" and e["player"] == gone for e in tables[2].events)
        seat = next(s for s in tables[0].state["seats"] if s and s["player"] == gone)
        await tables[0].wait_state(lambda s: not s["seats"][seat["seat"]]["connected"])
        again = Client(server, tables[2].room, "Cy", phones[2].token)
        with pytest.raises(socketio.exceptions.ConnectionError):
            await again.connect()
        assert again.refusal["data"]["code"] == "kicked"
        back = await EventClient(server, code, "Cy", phones[2].token).connect()
        assert back.event["you"]["status"] == "removed"
        await close_all([*tables, *phones, back, again, organiser])


async def test_an_event_and_its_tables_survive_a_restart(tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path / 'events.db'}"
    clock = ManualClock()
    async with serving(clock, store=store) as server:
        code, token = await open_event(server, size=3, rules=RULES)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        phones = await gather(server, code, ["Ann", "Bo", "Cy", "Di", "Ed", "Flo"])
        await organiser.ok("event_start")
        tables = await everyone_at_their_tables(phones)
        await tables[0].wait_state(lambda s: s["phase"] == "playing")
        before = organiser.event
        await close_all([*tables, *phones, organiser])
    clock = ManualClock()
    async with serving(clock, store=store) as server:
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        assert organiser.event["you"]["organiser"]
        assert organiser.event["rounds"] == [
            [
                {**h, "progress": organiser.event["rounds"][0][i]["progress"]}
                for i, h in enumerate(before["rounds"][0])
            ]
        ]
        back = await EventClient(server, code, "Ann", phones[0].token).connect()
        table = await to_table(back)
        assert table.state["heat"]["event"] == code and table.seat is not None
        await turn_until(clock, lambda: organiser.event["next_round_ms"] is not None, "round won")
        await close_all([table, back, organiser])


async def test_the_event_api_refuses_what_it_cannot_open() -> None:
    async with serving() as server, httpx.AsyncClient(base_url=server.url) as http:
        for body in (
            {"name": ""},
            {"name": "x", "size": 7},
            {"name": "x", "first_to": 4},
            {"name": "x", "rules": {"decks": 3}},
            {"name": "a\x07b"},
            {"name": "x" * 41},
        ):
            answer = await http.post("/api/events", json=body)
            assert answer.status_code == 422, (body, answer.text)
        code, _token = await open_event(server)
        summary = (await http.get(f"/api/events/{code.lower()}")).json()
        assert summary == {
            "code": code,
            "name": "Class 2B",
            "stage": "lobby",
            "players": 0,
            "round": 0,
        }
        assert (await http.get("/api/events/ZZZZZZ")).status_code == 404


async def test_an_events_tables_take_the_rooms_own_rules_from_its_form() -> None:
    """The home page's form sends every rule a table's does, the room's own among them."""
    clock = ManualClock()
    async with serving(clock) as server:
        rules = {**RULES, "false_starts": False, "lag_fair": True}
        code, token = await open_event(server, size=3, rules=rules)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        shown = organiser.event["rules"]
        assert shown["false_starts"] is False and shown["lag_fair"] is True
        phones = await gather(server, code, ["Ann", "Bo", "Cy"])
        await organiser.ok("event_start")
        tables = await everyone_at_their_tables(phones)
        assert tables[0].state["rules"]["false_starts"] is False
        assert tables[0].state["rules"]["lag_fair"] is True
        await close_all([*tables, *phones, organiser])


@pytest.mark.parametrize("command", ["sit", "flip"])
async def test_a_tables_command_on_an_events_connection_is_unknown_there(command: str) -> None:
    async with serving() as server:
        code, token = await open_event(server)
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        refused = await organiser.call(command, {})
        assert refused["error"]["code"] == "unknown_event"
        await organiser.close()


async def test_a_table_nobody_comes_to_plays_on_by_autopilot_and_the_event_goes_on() -> None:
    """Nobody goes to their table: it deals at the gathering's end with everyone absent, the
    autopilot flips for every seat (a lapsed Jack is flipped over, never slapped) until one
    seat holds every card it can, and the event takes its winner as any other."""
    clock = ManualClock()
    async with serving(clock, disconnected_autoflip_seconds=0.5) as server:
        code, token = await open_event(server, size=3)  # no time limit: play decides
        organiser = await EventClient(server, code, "Ms Lee", token).connect()
        await gather(server, code, ["Ann", "Bo", "Cy"])
        await organiser.ok("event_start")
        await turn_until(
            clock, lambda: organiser.event["stage"] == "over", "won by autopilot", step=1.0
        )
        assert organiser.event["podium"] and organiser.event["recap"]["games"] == 1
        await organiser.close()
