"""A connection's queue: asyncio.Queue's interface at a tenth of its memory, and a `get`
that waits without a task of its own.

Every connected player has one: python-engineio's queue of its outgoing packets (made by
the server's `create_queue`). An asyncio.Queue is four deques (its items, getters, putters,
and its `join` event's waiters) of 760 bytes each even when empty.

`get` returns a future rather than a coroutine: python-engineio awaits each packet with
`asyncio.wait_for(queue.get(), ...)` (long-polling), which wraps a coroutine in a new Task
on every wait (Python 3.11) but waits on a future as it is. A packet put while a getter
waits is handed to it directly.

Unbounded (`put` never waits): the bound is app/realtime/transport.py's `send_queue_limit`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

Send = Callable[[dict[str, Any]], Coroutine[Any, Any, Any]]  # a websocket's ASGI `send`


class LeanQueue:
    """First in, first out; `get`, `put`, `join` and `task_done` as asyncio.Queue's."""

    __slots__ = ("_finished", "_getters", "_items", "_unfinished")

    def __init__(self) -> None:
        self._items: list[Any] = []  # short (the outgoing one is capped): pop(0) is cheap
        self._getters: list[asyncio.Future[Any]] = []
        self._unfinished = 0
        self._finished: asyncio.Future[None] | None = None  # made only while joined

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: Any) -> None:
        self._unfinished += 1
        while self._getters:
            getter = self._getters.pop(0)
            if not getter.done():  # a getter that timed out or was cancelled is gone
                getter.set_result(item)
                return
        self._items.append(item)

    async def put(self, item: Any) -> None:
        self.put_nowait(item)

    def get_nowait(self) -> Any:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.pop(0)

    def get(self) -> asyncio.Future[Any]:
        """A future of the next item. Cancelling it (a timeout) gives up the place in line
        and loses nothing: an item is only ever handed to a getter still waiting. Cancelling
        the task that awaits it after an item was handed over does lose that item (unlike
        asyncio.Queue): both users cancel only a connection that is ending."""
        getter = asyncio.get_running_loop().create_future()
        if self._items:
            getter.set_result(self._items.pop(0))
        else:
            self._getters.append(getter)
        return getter

    def task_done(self) -> None:
        if self._unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished -= 1
        if self._unfinished == 0 and self._finished is not None:
            if not self._finished.done():
                self._finished.set_result(None)
            self._finished = None

    async def join(self) -> None:
        if self._unfinished == 0:
            return
        if self._finished is None:
            self._finished = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._finished)


class Outbox(LeanQueue):
    """A connection's outgoing Engine.IO packets (python-engineio's `create_queue`) that go
    straight to the websocket when nothing waits before them.

    Queued, each packet costs a hand-over to the connection's writer task: a future set, a
    loop pass and a wake-up, per packet and per recipient. Once the websocket's writer runs
    (its ASGI `send` attached, and where uvicorn serves it a `write` of a frame), a packet
    put while nothing is `unsent` is written then and there; otherwise it is queued (behind
    what is queued, so the order never changes), and the writer counts each one `written`
    when it is out. A client that reads too slowly makes its packets queue, and the queue's
    cap (send_queue_limit) decides when it is dropped."""

    __slots__ = ("ended", "send", "unsent", "write")

    def __init__(self) -> None:
        super().__init__()
        self.send: Send | None = None  # set only while a websocket writer runs
        # Where uvicorn serves that websocket: a text written at once as a frame, or False
        # when the writer must send it (app/realtime/frames.py `write_frame`).
        self.write: Callable[[str], bool] | None = None
        self.unsent = 0  # packets queued (or handed to the writer) and not yet written
        self.ended = False  # its end was put: the connection is closing, nothing more goes

    def put_nowait(self, item: Any) -> None:
        if item is None:  # the writer's end, always through the queue, and no packet
            self.ended = True
            super().put_nowait(item)
            return
        if self.unsent or self.write is None or not self.send_now(item.encode()):
            self.put_behind(item)

    def put_behind(self, item: Any) -> None:
        """Queues a packet for the writer, behind whatever is unsent: for a caller whose
        `send_now` of its text was just refused (nothing to try again)."""
        self.unsent += 1
        super().put_nowait(item)

    def send_now(self, text: str) -> bool:
        """Writes `text` (a packet's encoding) at once, as a frame of its own (`write`), if
        nothing waits before it: True once written. False, and nothing done, otherwise (a
        slow reader, a closing websocket, one not served by uvicorn; nothing after its end,
        which may be uvicorn's close frame already): the caller queues it."""
        return not (self.unsent or self.ended) and self.write is not None and self.write(text)

    def written(self) -> None:
        self.unsent -= 1

    def after(self, first: Any) -> list[Any]:
        """`first` (just taken) and whatever else is queued behind it, up to a None (the
        end: [] if `first` is it; a None behind the others stays for the next take)."""
        self.task_done()
        if first is None:
            return []
        items = [first]
        while self._items and self._items[0] is not None:  # the end stays for the next take
            items.append(self._items.pop(0))
            self.task_done()
        return items

    @property
    def held(self) -> int:
        """What the slow-consumer cap counts: while a websocket writer runs, what it has not
        written yet (queued or taken); otherwise what is queued (long-polling, or a websocket
        upgraded from it: python-engineio's writer counts nothing `written`)."""
        return self.unsent if self.send is not None else len(self._items)
