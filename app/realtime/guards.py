"""What every incoming Socket.IO frame passes on either transport (SLAPJACK_TRANSPORT): a
budget per connection, refusals counted and logged briefly, a connection that keeps going
past its budget cut off at the transport.

The servers of app/realtime/transport.py (lean) and app/realtime/stock.py (stock) mix this
in; each says how it answers a refused event (`_queue_packet`) and how it closes a
connection (`hang_up`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from socketio import packet

from app.ops.config import Settings
from app.ops.logs import log_event
from app.ops.metrics import Metrics
from app.realtime.limits import TokenBucket
from app.wire.protocol import ErrorCode, ProtocolError, ack

# Event names Socket.IO gives a meaning of its own; never a client's to send.
RESERVED_EVENTS = frozenset({"connect", "connect_error", "disconnect", "message", "*"})
# At most this many "frame_refused" log lines a second for the whole server (burst 10):
# a flood of bad frames must not become a flood of log lines.
REFUSAL_LOG_RATE = 1.0
REFUSAL_LOG_BURST = 10


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
    start_background_task: Callable[..., Any]

    def guard(self, settings: Settings, metrics: Metrics) -> None:
        self.settings, self.metrics = settings, metrics
        self._budgets: dict[str, FrameBudget] = {}
        self._log_allowance = TokenBucket(REFUSAL_LOG_RATE, REFUSAL_LOG_BURST)

    def budget_for(self, eio_sid: str, environ: dict[str, Any]) -> FrameBudget:
        bucket = TokenBucket(self.settings.rate_per_second, self.settings.rate_burst)
        budget = self._budgets[eio_sid] = FrameBudget(bucket, address=client_address(environ))
        return budget

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

    def _cut_off(self, eio_sid: str, budget: FrameBudget, why: str) -> None:
        """The transport, not just the namespace, closes: the client must start over."""
        budget.cut_off = True
        self._log_refusal(why, eio_sid, budget, cut_off=True)
        self.start_background_task(self.hang_up, eio_sid)

    def _log_refusal(self, why: str, eio_sid: str, budget: FrameBudget, *, cut_off: bool) -> None:
        self.metrics.frames_refused.labels(why).inc()
        # A cut-off is always told (once per connection, and connections are limited).
        if cut_off or self._log_allowance.take(time.monotonic()):
            log_event(
                "frame_refused",
                level=logging.WARNING,
                why=why,
                cut_off=cut_off,
                sid=eio_sid,
                address=budget.address,
            )


def client_address(environ: dict[str, Any]) -> str:
    """The client's address as uvicorn saw it, after its trusted-proxy rules (the ASGI
    scope's client). python-engineio's REMOTE_ADDR is always 127.0.0.1 under ASGI."""
    scope = environ.get("asgi.scope") or {}
    client = scope.get("client")
    if client:
        return str(client[0])
    return "unknown"
