"""The PostgreSQL store's moderation (schemas 6 and 10): the bans, mutes and kicks the
host set (:class:`PostgresModeration`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from server.store.base import ModerationStore
from server.store.postgres_core import PostgresCore
from server.store.records import (
    BanRecord,
    KickRecord,
    MuteRecord,
)

if TYPE_CHECKING:
    import asyncpg


class PostgresModeration(PostgresCore, ModerationStore):
    """Bans, mutes and kicks (:class:`~server.store.base.ModerationStore`)."""

    async def put_ban(self, ban: BanRecord) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute(
                "INSERT INTO bans (kind, value, until, reason, created_at, name) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kind, value) DO UPDATE SET "
                "until = excluded.until, reason = excluded.reason, "
                "created_at = excluded.created_at, name = excluded.name",
                *attrs.astuple(ban))

        await self._write(f"ban:{ban.kind}:{ban.value}", work)

    async def delete_ban(self, kind: str, value: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            done = await conn.execute("DELETE FROM bans WHERE kind = $1 AND value = $2",
                                      kind, value)
            return bool(done.split()[-1] != "0")

        return await self._write(f"ban:{kind}:{value}", work)

    async def list_bans(self) -> list[BanRecord]:
        async def work(conn: asyncpg.Connection) -> list[BanRecord]:
            rows = await conn.fetch("SELECT kind, value, until, reason, created_at, "
                                    "coalesce(name, '') FROM bans ORDER BY created_at")
            return [BanRecord(*row) for row in rows]

        return await self._read(work)

    async def put_mute(self, mute: MuteRecord) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute(
                "INSERT INTO mutes (value, until, reason, created_at, name) "
                "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (value) DO UPDATE SET "
                "until = excluded.until, reason = excluded.reason, "
                "created_at = excluded.created_at, name = excluded.name",
                *attrs.astuple(mute))

        await self._write(f"mute:{mute.value}", work)

    async def delete_mute(self, value: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            done = await conn.execute("DELETE FROM mutes WHERE value = $1", value)
            return bool(done.split()[-1] != "0")

        return await self._write(f"mute:{value}", work)

    async def list_mutes(self) -> list[MuteRecord]:
        async def work(conn: asyncpg.Connection) -> list[MuteRecord]:
            rows = await conn.fetch("SELECT value, until, reason, created_at, "
                                    "coalesce(name, '') FROM mutes ORDER BY created_at")
            return [MuteRecord(*row) for row in rows]

        return await self._read(work)

    async def put_kick(self, kick: KickRecord) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute(
                "INSERT INTO kicks (room, value, account, seat, until, reason, created_at, "
                "name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (room, value) "
                "DO UPDATE SET account = excluded.account, seat = excluded.seat, "
                "until = excluded.until, reason = excluded.reason, "
                "created_at = excluded.created_at, name = excluded.name",
                *attrs.astuple(kick))

        await self._write(f"kick:{kick.room}:{kick.value}", work)

    async def delete_kick(self, room: str, value: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            done = await conn.execute("DELETE FROM kicks WHERE room = $1 AND value = $2",
                                      room, value)
            return bool(done.split()[-1] != "0")

        return await self._write(f"kick:{room}:{value}", work)

    async def list_kicks(self) -> list[KickRecord]:
        async def work(conn: asyncpg.Connection) -> list[KickRecord]:
            rows = await conn.fetch("SELECT room, value, account, seat, until, reason, "
                                    "created_at, coalesce(name, '') FROM kicks "
                                    "ORDER BY created_at")
            return [KickRecord(*row) for row in rows]

        return await self._read(work)
