"""Engine.IO's pings for every websocket of a server, in one sweep: a connection is pinged
ping_interval after it opened or last answered, and hung up if its answer is ping_timeout
late.

python-engineio starts a task sleeping ping_interval for each ping, and its service task
visits every socket in turn with an `asyncio.wait_for` (a task, a timer and a TimeoutError)
each: thousands of tasks, timers and exceptions a minute for the collector to walk. Here one
task wakes every SWEEP_SECONDS while any websocket is open, on the monotonic clock (a wall
clock stepped back or forth neither holds a ping nor drops a connection), and
python-engineio's own monitoring is off (`monitor_clients=False`, app/realtime/transport.py,
which watches the long-polling sessions' pongs itself).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from app.ops.logs import log_event

# How often the sweep runs: a ping goes out, and a late pong is noticed, at most this much
# later than its time.
SWEEP_SECONDS = 0.25


class Pinged:
    """A connection as the sweep sees it (app/realtime/websocket.py GameWebSocket)."""

    sid: str
    awaiting: int = 0  # the number of the ping it has not answered yet; 0: none
    pinged: int = 0  # pings sent to it so far
    ended: bool = False


class PingSweep:
    """Sends each watched connection's pings (`ping(sid)`) and tells of each whose answer
    is late (`late(connection)`)."""

    def __init__(
        self,
        interval: float,
        timeout: float,
        ping: Callable[[str], None],
        late: Callable[[Pinged], None],
    ) -> None:
        self.interval, self.timeout = interval, timeout
        self.ping, self.late = ping, late
        # Two lines, each in the order it is due (every entry of one waits the same time):
        # (when, connection) pings to send, (when, connection, ping number) answers awaited.
        self._pings: deque[tuple[float, Pinged]] = deque()
        self._answers: deque[tuple[float, Pinged, int]] = deque()
        self._task: asyncio.Task[None] | None = None

    def watch(self, connection: Pinged) -> None:
        """A connection just opened: its first ping is due ping_interval from now."""
        self._ping_later(connection)

    def answered(self, connection: Pinged) -> None:
        """Its pong: the next ping ping_interval from now (a pong that answers no ping
        changes nothing)."""
        if connection.awaiting:
            connection.awaiting = 0
            self._ping_later(connection)

    def _ping_later(self, connection: Pinged) -> None:
        self._pings.append((time.monotonic() + self.interval, connection))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        """Sweeps while any connection is watched (the task ends with the last one)."""
        try:
            while self._pings or self._answers:
                await asyncio.sleep(SWEEP_SECONDS)
                try:
                    self.sweep(time.monotonic())
                except Exception:  # never let the sweep die: it is every connection's ping
                    log_event("sweep_failed", level=logging.ERROR, exc_info=True)
        finally:
            self._task = None

    def sweep(self, now: float) -> None:
        """Sends the pings due by `now` and tells of the answers late by then."""
        pings, answers = self._pings, self._answers
        while pings and pings[0][0] <= now:
            _, connection = pings.popleft()
            if connection.ended or connection.awaiting:
                continue  # gone, or pinged already (a stale entry)
            connection.pinged += 1
            connection.awaiting = connection.pinged
            answers.append((now + self.timeout, connection, connection.pinged))
            try:
                self.ping(connection.sid)
            except Exception:  # one connection's trouble is not everyone's ping
                log_event("ping_failed", level=logging.ERROR, exc_info=True, sid=connection.sid)
        while answers and answers[0][0] <= now:
            _, connection, number = answers.popleft()
            if connection.awaiting == number and not connection.ended:
                self.late(connection)
