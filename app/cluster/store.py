"""The store a cluster node's rooms save to (app/cluster/node.py): Redis, each write fenced
by the node's lease on the table."""

from __future__ import annotations

from app.cluster.ownership import Ownership
from app.stores import LeaseLost, Savable, Snapshot, StoreError
from app.stores.redis import NotHeld, RedisStore


class ClusterStore:
    """Rooms' store on a cluster node: Redis, with every save and delete fenced by this
    node's lease (LeaseLost if another process holds the table). Closing it releases the
    node's leases: its tables were written just before, another process may take them."""

    def __init__(self, redis: RedisStore, ownership: Ownership) -> None:
        self.redis, self.ownership, self.node = redis, ownership, ownership.node

    async def open(self) -> None:
        await self.redis.open()

    async def close(self) -> None:
        await self.ownership.stop()
        await self.redis.close()

    async def save(self, code: str, snapshot: Savable, seen_at: float | None = None) -> None:
        token = self.ownership.token(code)
        if token is None:
            raise LeaseLost(f"table {code}: not held by {self.node}")
        try:
            await self.redis.save_fenced(code, self.node, token, snapshot, seen_at)
        except LeaseLost:
            # A lease Redis lost (it restarted empty) nobody took: take it back if nobody
            # wrote the table since, and write; else the table is another's.
            if not await self.ownership.keep(code):
                raise
            await self.redis.save_fenced(code, self.node, token, snapshot, seen_at)

    async def save_many(
        self, items: list[tuple[str, Savable, float | None]]
    ) -> list[BaseException | None]:
        """A beat's tables in one round trip (app/stores/saver.py): each fenced as `save`;
        one refused for want of a lease goes through `save` again (a lease Redis lost is
        taken back there, if nobody wrote the table since)."""
        outcomes: list[BaseException | None] = []
        ours: list[int] = []  # the items held here, by their place in `items`
        fenced: list[tuple[str, int, Savable, float | None]] = []
        for index, (code, snapshot, seen) in enumerate(items):
            token = self.ownership.token(code)
            if token is None:
                outcomes.append(LeaseLost(f"table {code}: not held by {self.node}"))
                continue
            outcomes.append(None)
            ours.append(index)
            fenced.append((code, token, snapshot, seen))
        written = await self.redis.save_fenced_many(self.node, fenced)
        for index, outcome in zip(ours, written, strict=True):
            if isinstance(outcome, NotHeld):
                code, snapshot, seen = items[index]
                try:
                    await self.save(code, snapshot, seen)
                    outcome = None
                except StoreError as error:
                    outcome = error
            outcomes[index] = outcome
        return outcomes

    async def load(self, code: str) -> Snapshot | None:
        return await self.redis.load(code)

    async def delete(self, code: str) -> None:
        """The room closed for good: its table goes, with its lease."""
        token = self.ownership.token(code)
        if token is None:
            raise LeaseLost(f"table {code}: not held by {self.node}")
        await self.redis.delete_fenced(code, self.node, token)
        self.ownership.forget(code)

    async def codes(self) -> list[str]:
        return await self.redis.codes()

    async def exists(self, code: str) -> bool:
        return await self.redis.exists(code)

    async def purge_expired(self, older_than_seconds: float) -> list[str]:
        return await self.redis.purge_expired(older_than_seconds)

    async def left_by(self, codes: list[str]) -> dict[str, str]:
        return await self.redis.left_by(codes)
