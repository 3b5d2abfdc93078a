"""The SQLite store's reviews (schema 13): one review per finished game
(:class:`SQLiteReviews`)."""

from __future__ import annotations

import sqlite3

from server.store.base import ReviewsStore
from server.store.sqlite_core import SQLiteCore


class SQLiteReviews(SQLiteCore, ReviewsStore):
    """Finished games' reviews (:class:`~server.store.base.ReviewsStore`)."""

    async def put_review(self, room: str, data: bytes, made_at: float) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("INSERT INTO reviews (room, data, made_at) VALUES (?, ?, ?) "
                                "ON CONFLICT (room) DO NOTHING",
                                (room, data, made_at)).rowcount > 0

        return await self._write(work)

    async def review(self, room: str) -> bytes | None:
        def work(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute("SELECT data FROM reviews WHERE room = ?", (room,)).fetchone()
            return None if row is None else bytes(row[0])

        return await self._read(work)
