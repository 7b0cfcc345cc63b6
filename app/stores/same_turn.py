"""Commands asked in the same turn of the event loop, sent to Redis in one pipeline
(app/stores/redis.py: a takeover's takes, its tables' reads, a stopping process's
releases)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError


class SameTurn:
    """Commands of one kind asked in the same turn of the event loop, sent together in one
    pipeline as the turn ends. A takeover's claims wake together: hundreds of tables' leases
    and snapshots then cost a round trip each kind, where one command each went through the
    pool in waves of its size, the next wave waiting for this process to have restored the
    tables of the last.

        take = SameTurn(client, lambda pipe, code: pipe.hget(f"table:{code}", "snapshot"))
        raw = await take("ABCD")  # the command's answer, or its error raised
    """

    def __init__(self, client: Any, queue: Callable[..., Any]) -> None:
        self.client, self.queue = client, queue
        self._asked: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._sending: set[asyncio.Task[None]] = set()  # held until done: tasks are weak

    async def __call__(self, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        if not self._asked:
            loop.call_soon(self._send_asked)
        self._asked.append((args, answer))
        return await answer

    def _send_asked(self) -> None:
        asked = [(args, answer) for args, answer in self._asked if not answer.done()]
        self._asked = []  # a caller cancelled before the send: its command is not sent
        if asked:
            task = asyncio.get_running_loop().create_task(self._send(asked))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, asked: list[tuple[tuple[Any, ...], asyncio.Future[Any]]]) -> None:
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for args, _ in asked:
                    await _awaited(self.queue(pipe, *args))
                answers = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as error:
            answers = [error] * len(asked)
        except BaseException as error:  # cancelled (the store closing): nobody is left hanging
            for _, answer in asked:
                if not answer.done():
                    answer.set_exception(RedisError(f"not sent: {error!r}"))
            raise
        for (_, answer), given in zip(asked, answers, strict=True):
            if answer.done():
                continue
            if isinstance(given, Exception):
                answer.set_exception(given)
            else:
                answer.set_result(given)


async def _awaited(queued: Any) -> None:
    """A pipeline's command queues synchronously; a script's (`Script.__call__`) is awaited."""
    if asyncio.iscoroutine(queued):
        await queued
