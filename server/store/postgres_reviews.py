"""The PostgreSQL store's reviews (schema 13): one review per finished game, which every
node of a cluster reads (:class:`PostgresReviews`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.store.base import ReviewsStore
from server.store.postgres_core import PostgresCore

if TYPE_CHECKING:
    import asyncpg


class PostgresReviews(PostgresCore, ReviewsStore):
    """Finished games' reviews (:class:`~server.store.base.ReviewsStore`)."""

    async def put_review(self, room: str, data: bytes, made_at: float) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            done = await conn.execute(
                "INSERT INTO reviews (room, data, made_at) VALUES ($1, $2, $3) "
                "ON CONFLICT (room) DO NOTHING", room, data, made_at)
            return bool(done.split()[-1] != "0")

        return await self._write(room, work)

    async def review(self, room: str) -> bytes | None:
        async def work(conn: asyncpg.Connection) -> bytes | None:
            data = await conn.fetchval("SELECT data FROM reviews WHERE room = $1", room)
            return None if data is None else bytes(data)

        return await self._read(work)
