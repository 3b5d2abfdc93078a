"""The SQLite store's moderation (schemas 6 and 10): the bans, mutes and kicks the host
set (:class:`SQLiteModeration`)."""

from __future__ import annotations

import sqlite3

import attrs

from server.store.base import ModerationStore
from server.store.records import (
    BanRecord,
    KickRecord,
    MuteRecord,
)
from server.store.sqlite_core import SQLiteCore


class SQLiteModeration(SQLiteCore, ModerationStore):
    """Bans, mutes and kicks (:class:`~server.store.base.ModerationStore`)."""

    async def put_ban(self, ban: BanRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO bans (kind, value, until, reason, created_at, name) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, value) DO UPDATE SET "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(ban))

        await self._write(work)

    async def delete_ban(self, kind: str, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM bans WHERE kind = ? AND value = ?",
                                (kind, value)).rowcount > 0

        return await self._write(work)

    async def list_bans(self) -> list[BanRecord]:
        def work(conn: sqlite3.Connection) -> list[BanRecord]:
            rows = conn.execute("SELECT kind, value, until, reason, created_at, "
                                "coalesce(name, '') FROM bans ORDER BY created_at").fetchall()
            return [BanRecord(*row) for row in rows]

        return await self._read(work)

    async def put_mute(self, mute: MuteRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO mutes (value, until, reason, created_at, name) "
                         "VALUES (?, ?, ?, ?, ?) ON CONFLICT (value) DO UPDATE SET "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(mute))

        await self._write(work)

    async def delete_mute(self, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM mutes WHERE value = ?", (value,)).rowcount > 0

        return await self._write(work)

    async def list_mutes(self) -> list[MuteRecord]:
        def work(conn: sqlite3.Connection) -> list[MuteRecord]:
            rows = conn.execute("SELECT value, until, reason, created_at, coalesce(name, '') "
                                "FROM mutes ORDER BY created_at").fetchall()
            return [MuteRecord(*row) for row in rows]

        return await self._read(work)

    async def put_kick(self, kick: KickRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO kicks (room, value, account, seat, until, reason, "
                         "created_at, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT (room, value) "
                         "DO UPDATE SET account = excluded.account, seat = excluded.seat, "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(kick))

        await self._write(work)

    async def delete_kick(self, room: str, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM kicks WHERE room = ? AND value = ?",
                                (room, value)).rowcount > 0

        return await self._write(work)

    async def list_kicks(self) -> list[KickRecord]:
        def work(conn: sqlite3.Connection) -> list[KickRecord]:
            rows = conn.execute("SELECT room, value, account, seat, until, reason, created_at, "
                                "coalesce(name, '') FROM kicks ORDER BY created_at").fetchall()
            return [KickRecord(*row) for row in rows]

        return await self._read(work)
