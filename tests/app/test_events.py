"""A client's event on its fast way (app/realtime/transport.py GameServer): decoded as
python-socketio decodes it, answered with the text python-socketio would send, and a
connection that ends while it joins still disconnected once it has joined."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engineio import packet as eio_packet
from socketio import packet as sio_packet

from app.ops.config import Settings
from app.ops.limits import TokenBucket
from app.ops.metrics import Metrics
from app.realtime.guards import FrameBudget
from app.realtime.transport import GameServer, plain_event


def game_server() -> GameServer:
    return GameServer(Settings(allowed_origins=["http://127.0.0.1"]), Metrics())


async def test_an_ack_is_the_text_python_socketio_would_send() -> None:
    server = game_server()
    sent: list[str] = []

    def queue_packet(sid: str, pkt: Any) -> None:  # python-engineio's MESSAGE packet
        assert pkt.packet_type == eio_packet.MESSAGE
        sent.append(pkt.data)

    def queue_text(sid: str, text: str) -> None:  # ours: the whole Engine.IO text
        assert text[:1] == str(eio_packet.MESSAGE), text
        sent.append(text[1:])

    server.eio.queue_packet = queue_packet  # type: ignore[method-assign]
    server.eio.queue_text = queue_text  # type: ignore[method-assign]
    slow_way: list[Any] = []  # python-socketio's Packet and encoder, where orjson refuses
    queue_through_packet = server._queue_packet

    def through_packet(eio_sid: str, pkt: Any) -> None:
        slow_way.append(pkt.data)
        queue_through_packet(eio_sid, pkt)

    server._queue_packet = through_packet  # type: ignore[method-assign]
    answers: list[Any] = [
        {"ok": True, "events": [{"kind": "flip", "card": "10♥"}]},  # beyond ASCII
        ("one", 2),  # a tuple: one argument each
        None,  # no argument
        {1: "an int key"},  # orjson refuses it: python-socketio's own way
    ]
    for number, answer in enumerate(answers):
        sent.clear()
        server._send_answer("eio", None, number, answer)
        expected = sio_packet.Packet(sio_packet.ACK, namespace="/", id=number, data=None)
        expected.data = (
            [] if answer is None else list(answer) if isinstance(answer, tuple) else [answer]
        )
        want = expected.encode()
        prefix = f"3{number}"
        assert sent[0].startswith(prefix) and want.startswith(prefix), (sent, want)
        assert json.loads(sent[0][len(prefix) :]) == json.loads(want[len(prefix) :])
    assert slow_way == [[{1: "an int key"}]]
    sent.clear()
    server._send_answer("eio", None, None, answers[0])
    assert sent == []  # no id: no answer asked for


async def test_an_event_goes_to_the_apps_handler_of_every_event() -> None:
    """What python-socketio's dispatch would do: the handler of every event (`*`) is called
    with the event's name, the connection's sid and its arguments; a connection not (or no
    more) connected to the namespace is answered nothing."""
    server = game_server()
    calls: list[tuple[Any, ...]] = []

    async def every(event: str, sid: str, *args: Any) -> dict[str, bool]:
        calls.append((event, sid, *args))
        return {"ok": True}

    server.on("*", every)
    server.eio.queue_text = lambda sid, text: calls.append(("sent", sid, text))  # type: ignore[method-assign]
    server._budgets["eio"] = FrameBudget(TokenBucket(100, 100))
    await server.engineio_message("eio", '21["flip",{}]')
    assert calls == []  # not connected to the namespace yet
    sid = await server.manager.connect("eio", "/")
    await server.engineio_message("eio", '22["slap",{"pile_id":3},"more"]')
    assert calls == [("slap", sid, {"pile_id": 3}, "more"), ("sent", "eio", '432[{"ok":true}]')]


async def test_a_game_event_runs_at_once_and_any_other_in_a_task_of_its_own() -> None:
    """Frames are read in the websocket protocol's own callback, outside any task: a flip
    runs there at once (no task made); an event whose handler needs a task before its first
    wait (`asyncio.timeout`: a Redis pool waiting for a connection) gets one and answers
    (outside a task it raised "Timeout should be used inside a task")."""
    server = game_server()
    sent: list[str] = []

    async def every(event: str, sid: str, *args: Any) -> dict[str, bool]:
        if event == "flip":
            await asyncio.sleep(0)  # a wait: it goes on as a task from here
        else:
            async with asyncio.timeout(5):  # as redis-py's pool does
                await asyncio.sleep(0)
        return {"ok": True}

    server.on("*", every)
    server.eio.queue_text = lambda sid, text: sent.append(text)  # type: ignore[method-assign]
    server._budgets["eio"] = FrameBudget(TokenBucket(100, 100))
    await server.manager.connect("eio", "/")
    loop = asyncio.get_running_loop()
    heard = loop.create_future()

    def in_a_callback() -> None:  # as the protocol's data_received is called
        assert asyncio.current_task() is None
        server.heard("eio", '21["event_start",{}]')
        server.heard("eio", '22["flip",{}]')
        heard.set_result(len(server._handling))

    loop.call_soon(in_a_callback)
    assert await heard == 2  # each went on as a task: the flip from its first wait
    async with asyncio.timeout(5):
        while len(sent) < 2:
            await asyncio.sleep(0.01)
    assert sorted(sent) == ['431[{"ok":true}]', '432[{"ok":true}]']


FRAMES = [
    '2["flip",{}]',
    '25["slap",{"pile_id":3}]',
    '2007["sit",{"seat":null}]',
    '2["name","Pé 🃏",-1.5e3,[true,false]]',
    '2["x",{"a":1,"a":2}]',  # a repeated key: the last one
    '2 ["x"]',  # not the common shape: python-socketio's decoder
    '2["x",NaN]',  # orjson refuses these three: python-socketio's decoder reads them
    '2["x",123456789012345678901234567890]',
    '2["x","\\ud800"]',
    "2" + "1" * 17 + '["x",-123456789012345678]',  # the longest number orjson reads
    "2" + "1" * 150 + '["x"]',  # refused by both: an id too long
    '21-["x",{"_placeholder":true,"num":0}]',
    '2/admin,5["x"]',
    '2["x"',
    "2",
    '3["x"]',
    "0",
]


def test_an_event_frame_decodes_as_python_socketio_decodes_it() -> None:
    server = game_server()
    fast = 0
    for text in FRAMES:
        try:
            want = sio_packet.Packet(encoded_packet=text)
        except Exception as error:
            refused: Exception | None = error
        else:
            refused = None
        plain = plain_event(text)
        if plain is not None:  # an EVENT in the default namespace: (ack id, data)
            fast += 1
            seen = (sio_packet.EVENT, None, plain[0], json.dumps(plain[1]))
        else:
            try:
                got = server.packet_class(encoded_packet=text)
            except Exception:
                assert refused is not None, text
                continue
            seen = (got.packet_type, got.namespace, got.id, json.dumps(got.data))
        assert refused is None, text
        assert seen == (want.packet_type, want.namespace, want.id, json.dumps(want.data)), text
    assert fast == 6  # the first five, and the 17-digit id with the 18-digit number


async def test_a_connection_that_ends_while_it_joins_is_disconnected_once_it_has() -> None:
    """The connect handler waits (a busy room's lock); the client goes meanwhile, and
    python-socketio's disconnect skips a connection not yet connected. It must still hear
    of it, or the person stays at the table as connected and the room never expires."""
    server = game_server()
    release = asyncio.Event()
    heard: list[str] = []

    async def connect(sid: str, environ: Any, auth: Any) -> bool:
        await release.wait()
        heard.append("connect")
        return True

    async def disconnect(sid: str, reason: str) -> None:
        heard.append(f"disconnect: {reason}")

    server.on("connect", connect)
    server.on("disconnect", disconnect)
    server.eio.queue_packet = lambda *args: None  # type: ignore[method-assign]
    server._budgets["eio"] = FrameBudget(TokenBucket(100, 100))
    server.environ["eio"] = {}
    joining = asyncio.create_task(server.engineio_message("eio", '0{"room":"ABCDEF"}'))
    await asyncio.sleep(0.01)
    await server.engineio_disconnect("eio", server.reason.TRANSPORT_CLOSE)
    assert heard == []  # python-socketio: not connected yet, nothing to tell
    release.set()
    await asyncio.wait_for(joining, 1)
    # (python-socketio's `disconnect`, which the server calls, tells it as its own doing)
    assert heard == ["connect", f"disconnect: {server.reason.SERVER_DISCONNECT}"]
    assert server.manager.sid_from_eio_sid("eio", "/") is None
