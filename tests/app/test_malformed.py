"""Malformed, unknown and oversized messages: an error ack (or a closed connection for an
oversized one), never a crash, never a change of state; the room keeps working."""

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
import socketio
from app_harness import WAIT, Client, Server, close_all, join, serving
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.wire.protocol import CLIENT_EVENTS, ErrorCode

ERROR_CODES = {code.value for code in ErrorCode}
RESERVED = {"connect", "connect_error", "disconnect"}
NOT_UNKNOWN = set(CLIENT_EVENTS) | RESERVED

json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def not_a_field_of(event: str) -> st.SearchStrategy[str]:
    fields = set(CLIENT_EVENTS[event].model_fields)
    return st.text(min_size=1, max_size=12).filter(lambda key: key not in fields)


def wrong_values(event: str) -> st.SearchStrategy[dict[str, Any]]:
    """A payload with one known field holding a value of the wrong type or out of range."""
    fields = list(CLIENT_EVENTS[event].model_fields)
    if not fields:
        return st.nothing()
    bad = st.sampled_from(
        [True, "1", 1.5, [], {}, -1, 99, 10**30, "x" * 3000, "hard!", ["jack", "jack"] * 3]
    )
    return st.builds(lambda field, value: {field: value}, st.sampled_from(fields), bad).filter(
        lambda payload: not valid(event, payload)
    )


def valid(event: str, payload: Any) -> bool:
    from app.wire.protocol import ProtocolError, parse

    try:
        parse(event, (payload,))
    except ProtocolError:
        return False
    return True


def malformed(event: str) -> st.SearchStrategy[Any]:
    """Payloads the event must refuse with bad_request."""
    not_an_object = json_value.filter(lambda v: v is not None and not isinstance(v, dict))
    extra_field = st.builds(lambda key, value: {key: value}, not_a_field_of(event), json_value)
    return not_an_object | extra_field | wrong_values(event)


class Background:
    """An event loop in a thread, so hypothesis (synchronous) can drive async clients."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT)

    def stop(self) -> None:
        async def cancel_the_rest() -> None:
            current = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not current]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        self.run(cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)


class Table:
    def __init__(self, server: Server, code: str, ann: Client, bob: Client) -> None:
        self.server, self.code, self.ann, self.bob = server, code, ann, bob

    @property
    def version(self) -> int:
        return self.server.room(self.code).version


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[Background, Table]]:
    background = Background()
    serving_cm = serving(rate_per_second=100_000, rate_burst=100_000)

    async def open_table() -> Table:
        server = await serving_cm.__aenter__()
        code = await server.new_room()
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.ok("sit", {"seat": None})
        await bob.ok("sit", {"seat": None})
        await ann.ok("start")
        return Table(server, code, ann, bob)

    table = background.run(open_table())
    yield background, table
    background.run(close_all([table.ann, table.bob]))
    background.run(serving_cm.__aexit__(None, None, None))
    background.stop()


@pytest.mark.parametrize("event", sorted(CLIENT_EVENTS))
def test_malformed_payloads_get_bad_request_and_change_nothing(
    table: tuple[Background, Table], event: str
) -> None:
    background, room = table

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(payload=malformed(event))
    def check(payload: Any) -> None:
        before = room.version
        reply = background.run(room.bob.call(event, payload))
        assert reply["ok"] is False
        assert reply["error"]["code"] == "bad_request", reply
        assert isinstance(reply["error"]["message"], str)
        assert room.version == before

    check()


@pytest.mark.parametrize("event", sorted(set(CLIENT_EVENTS) - {"leave"}))
def test_any_json_payload_gets_a_well_formed_ack(
    table: tuple[Background, Table], event: str
) -> None:
    background, room = table

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(payload=json_value)
    def check(payload: Any) -> None:
        reply = background.run(room.bob.call(event, payload))
        assert isinstance(reply, dict) and isinstance(reply["ok"], bool)
        if not reply["ok"]:
            assert reply["error"]["code"] in ERROR_CODES

    check()


def test_unknown_events_and_extra_arguments_get_error_acks(table: tuple[Background, Table]) -> None:
    background, room = table

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(name=st.text(min_size=1, max_size=30).filter(lambda n: n not in NOT_UNKNOWN))
    def check(name: str) -> None:
        before = room.version
        reply = background.run(room.bob.call(name, {}))
        assert reply["error"]["code"] == "unknown_event"
        assert room.version == before

    check()
    before = room.version
    reply = background.run(
        room.bob.sio.call("slap", ({"pile_id": 0}, {"pile_id": 0}), timeout=WAIT)
    )
    assert reply["error"]["code"] == "bad_request"
    assert room.version == before


def test_the_room_keeps_working_after_all_that(table: tuple[Background, Table]) -> None:
    background, room = table

    async def play_on() -> None:
        state = room.ann.state
        assert state["phase"] == "playing"
        while state["slap_open"]:
            await room.ann.call("slap", {"pile_id": state["pile"]["id"]})
            state = await room.ann.wait_state(lambda s, v=state["version"]: s["version"] > v)
        flipper = room.ann if state["next"] == 0 else room.bob
        frozen = state["seats"][state["next"]]["frozen_ms"]
        if frozen:
            await flipper.wait_state(lambda s: s["seats"][state["next"]]["frozen_ms"] == 0)
        await flipper.wait_state(lambda s: s["collect_ms"] == 0)  # a take's pause: over
        await flipper.ok("flip")

    before = room.version
    background.run(play_on())
    assert room.version > before
    reply = background.run(room.ann.call("rules", {"freeze_seconds": 1}))
    assert reply["error"]["code"] == "wrong_phase"


def test_any_auth_is_admitted_or_refused_with_a_reason(table: tuple[Background, Table]) -> None:
    background, room = table
    # Not a bare number: in a CONNECT packet digits after the type read as an ack id, and
    # python-socketio's parser then fails before any handler of ours runs.
    not_a_number = json_value.filter(
        lambda v: isinstance(v, bool) or not isinstance(v, int | float)
    )
    auth = not_a_number | st.fixed_dictionaries(
        {"room": st.sampled_from([room.code, room.code.lower(), "ZZZZZZ"]) | json_value},
        optional={"name": st.text(max_size=25) | json_value, "token": json_value},
    )

    async def connect(data: Any) -> tuple[bool, Any]:
        client = Client(room.server, room.code, "x")
        try:
            await client.sio.connect(
                room.server.url, auth=data, transports=["websocket"], wait_timeout=WAIT
            )
        except socketio.exceptions.ConnectionError:
            return False, client.refusal
        await client.wait_for(lambda: client.states)
        await client.close()
        return True, None

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=auth)
    def check(data: Any) -> None:
        admitted, refusal = background.run(connect(data))
        if not admitted:
            assert refusal["data"]["code"] in {"bad_auth", "no_room", "bad_name"}, refusal
            assert refusal["message"] == refusal["data"]["message"]

    check()


async def test_an_oversized_message_closes_only_that_connection() -> None:
    async with serving(max_message_bytes=1024) as server:
        code = await server.new_room()
        ann, bob = await join(server, code, "Ann", "Bob")
        await ann.sio.emit("sit", {"seat": 0, "padding": "x" * 5000})
        await asyncio.wait_for(ann.disconnected.wait(), WAIT)
        assert (await bob.ok("sit", {"seat": 1}))["seat"] == 1
        await close_all([ann, bob])
