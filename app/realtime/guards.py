"""What every incoming Socket.IO frame passes: a budget per connection, refusals counted
and logged briefly, a connection that keeps going past its budget cut off at the transport.

The Socket.IO server of app/realtime/transport.py mixes this in; it says how it answers a
refused event (`_queue_packet`) and how it closes a connection (`hang_up`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engineio import payload
from socketio import packet

from app.ops.config import Settings
from app.ops.limits import PerAddress, TokenBucket
from app.ops.logs import Throttled
from app.ops.metrics import Metrics
from app.wire.protocol import ErrorCode, ProtocolError, ack

# Event names Socket.IO gives a meaning of its own; never a client's to send.
RESERVED_EVENTS = frozenset({"connect", "connect_error", "disconnect", "message", "*"})
# A long-polling body: packets separated by this, at most python-engineio's number of them.
PAYLOAD_SEPARATOR = "\x1e"
MOST_POLLED_PACKETS = payload.Payload.max_decode_packets
ENGINEIO_TYPES = frozenset("0123456")  # an Engine.IO packet's type, its first character
MESSAGE_TYPE = "4"  # an Engine.IO MESSAGE (a Socket.IO packet), charged when it is handled


@dataclass(eq=False, slots=True)
class FrameBudget:
    """One connection's allowance of incoming frames."""

    bucket: TokenBucket
    refused_in_a_row: int = 0
    cut_off: bool = False
    address: str = "unknown"


class FrameGuards:
    """The refusals of a Socket.IO server of ours (a python-socketio AsyncServer subclass)."""

    settings: Settings
    metrics: Metrics
    # python-socketio's (annotated only: a definition here would hide the server's own)
    packet_class: Any
    manager: Any
    start_background_task: Callable[..., Any]

    def guard(self, settings: Settings, metrics: Metrics) -> None:
        self.settings, self.metrics = settings, metrics
        self._budgets: dict[str, FrameBudget] = {}
        # A flood of bad frames must not become a flood of log lines.
        self._refusals = Throttled("frame_refused")
        self._opens = PerAddress.per_minute(settings.opens_per_minute)

    def budget_for(self, eio_sid: str, environ: dict[str, Any]) -> FrameBudget | None:
        """A new Engine.IO session's budget; None, and nothing kept, when its address opened
        its share of sessions this minute (the caller refuses it: python-engineio answers
        401). It must join (a Socket.IO CONNECT) within SLAPJACK_CONNECT_DEADLINE_SECONDS,
        or it is closed: an open connection that never joins holds one of the server's
        connections for nothing."""
        address = client_address(environ)
        if not self._opens.take(address, time.monotonic()):
            self.metrics.frames_refused.labels("opens_per_minute").inc()
            self._tell("opens_per_minute", eio_sid, address, cut_off=True)
            return None
        bucket = TokenBucket(self.settings.rate_per_second, self.settings.rate_burst)
        budget = self._budgets[eio_sid] = FrameBudget(bucket, address=address)
        asyncio.get_running_loop().call_later(
            self.settings.connect_deadline_seconds, self._joined_or_closed, eio_sid
        )
        return budget

    def _joined_or_closed(self, eio_sid: str) -> None:
        budget = self._budgets.get(eio_sid)
        if budget is None or budget.cut_off or self.manager.sid_from_eio_sid(eio_sid, "/"):
            return
        self._cut_off(eio_sid, budget, "no_connect")

    def polled(self, eio_sid: str, body: bytes) -> bool:
        """A long-polling POST's body, checked as a websocket's frames are (app/realtime/polling.py
        calls this before python-engineio reads it): every packet but a message (charged
        when it is handled) is charged to the connection's budget, and a body python-engineio
        could not read (not UTF-8, more packets than it takes, an empty or unknown packet)
        is refused as malformed, with the same cut-off. False: refused, never read."""
        budget = self._budgets.get(eio_sid)
        if budget is None:
            return True  # no such connection: python-engineio answers that itself
        if budget.cut_off:
            return False
        try:
            packets = body.decode().split(PAYLOAD_SEPARATOR)
        except UnicodeDecodeError:
            self._malformed(eio_sid, budget, "undecodable")
            return False
        if len(packets) > MOST_POLLED_PACKETS:
            self._malformed(eio_sid, budget, "too_many_packets")
            return False
        now = time.monotonic()
        for text in packets:
            kind = text[:1]
            if kind == "b":
                self._cut_off(eio_sid, budget, "binary")
                return False
            if kind not in ENGINEIO_TYPES:
                self._malformed(eio_sid, budget, "undecodable")
                return False
            if kind != MESSAGE_TYPE:
                if not budget.bucket.take(now):
                    self._over_budget(eio_sid, budget, -1, None, None)
                    return False
                budget.refused_in_a_row = 0
        return True

    async def hang_up(self, eio_sid: str) -> None:
        """Closes the connection at the transport (not only its Socket.IO session)."""
        raise NotImplementedError

    def _queue_packet(self, eio_sid: str, pkt: Any) -> None:
        """Sends a Socket.IO packet to the connection without waiting."""
        raise NotImplementedError

    def _answer(self, eio_sid: str, namespace: str | None, id: Any, error: ProtocolError) -> None:
        self.metrics.refused(error.code.value)
        if id is not None:
            self._queue_packet(eio_sid, self._ack_packet(namespace, id, [ack(error)]))

    def _ack_packet(self, namespace: str | None, id: Any, data: list[Any]) -> Any:
        return self.packet_class(packet.ACK, namespace=namespace, id=id, data=data)

    def _over_budget(
        self, eio_sid: str, budget: FrameBudget, kind: int, namespace: str | None, id: Any
    ) -> None:
        budget.refused_in_a_row += 1
        if budget.refused_in_a_row >= self.settings.flood_cutoff:
            return self._cut_off(eio_sid, budget, "rate_limited")
        if kind == packet.EVENT:
            error = ProtocolError(ErrorCode.RATE_LIMITED, "too many messages: slow down")
            self._answer(eio_sid, namespace, id, error)

    def _refuse_reserved(self, eio_sid: str, namespace: str | None, id: Any, event: str) -> None:
        """An event named like Socket.IO's own: answered unknown_event, handled by nobody."""
        self.metrics.handled("unknown")
        error = ProtocolError(ErrorCode.UNKNOWN_EVENT, f"there is no event {event!r}")
        self._answer(eio_sid, namespace, id, error)

    def _malformed(self, eio_sid: str, budget: FrameBudget, why: str) -> None:
        budget.refused_in_a_row += 1
        if budget.refused_in_a_row >= self.settings.flood_cutoff:
            return self._cut_off(eio_sid, budget, why)
        self._log_refusal(why, eio_sid, budget, cut_off=False)

    def _charged(self, eio_sid: str, data: Any) -> tuple[FrameBudget, bool] | None:
        """A frame charged to its connection's budget: the budget and whether the frame was
        within it; None when the connection was cut off already, or is now (a binary frame:
        the app sends and takes none)."""
        budget = self._budgets.get(eio_sid)
        if budget is None or budget.cut_off:
            return None
        within = budget.bucket.take(time.monotonic())
        if not isinstance(data, str):
            self._cut_off(eio_sid, budget, "binary")
            return None
        return budget, within

    def _cut_off(self, eio_sid: str, budget: FrameBudget, why: str) -> None:
        """The transport, not just the namespace, closes: the client must start over."""
        budget.cut_off = True
        self._log_refusal(why, eio_sid, budget, cut_off=True)
        self.start_background_task(self.hang_up, eio_sid)

    def _log_refusal(self, why: str, eio_sid: str, budget: FrameBudget, *, cut_off: bool) -> None:
        self.metrics.frames_refused.labels(why).inc()
        self._tell(why, eio_sid, budget.address, cut_off=cut_off)

    def _tell(self, why: str, eio_sid: str, address: str, *, cut_off: bool) -> None:
        """One line, rate-limited for the whole server, cut-offs too (an address reconnecting
        in a loop is cut off every time): each line says how many went untold before it."""
        self._refusals.log(time.monotonic(), why=why, cut_off=cut_off, sid=eio_sid, address=address)


def client_address(environ: dict[str, Any]) -> str:
    """The client's address as uvicorn saw it, after its trusted-proxy rules (the ASGI
    scope's client). python-engineio's REMOTE_ADDR is always 127.0.0.1 under ASGI."""
    scope = environ.get("asgi.scope") or {}
    client = scope.get("client")
    if client:
        return str(client[0])
    return "unknown"
