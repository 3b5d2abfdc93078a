"""The PostgreSQL store's friends, blocks and inbox (schema 15): :class:`PostgresSocial`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from server.store.base import SocialStore
from server.store.postgres_core import PostgresCore
from server.store.records import FollowRecord, NoteRecord

if TYPE_CHECKING:
    import asyncpg

_NOTE_COLUMNS = "id, account, kind, text, data, created_at, read"


def _note(row: Any) -> NoteRecord:
    ident, account, kind, text, data, at, read = row
    return NoteRecord(int(ident), account, kind, text, json.loads(data), float(at), bool(read))


def _changed(done: str) -> int:
    return int(done.split()[-1])


class PostgresSocial(PostgresCore, SocialStore):
    """Follows, blocks, hidden presence and notifications
    (:class:`~server.store.base.SocialStore`). Writes of one account go in order (keyed
    ``social:ACCOUNT``)."""

    async def follow(self, account: str, target: str, at: float) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute("INSERT INTO follows (account, target, created_at) "
                               "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", account, target, at)

        await self._write(f"social:{account}", work)

    async def unfollow(self, account: str, target: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            return _changed(await conn.execute(
                "DELETE FROM follows WHERE account = $1 AND target = $2", account, target)) > 0

        return await self._write(f"social:{account}", work)

    async def following(self, account: str) -> list[FollowRecord]:
        async def work(conn: asyncpg.Connection) -> list[FollowRecord]:
            rows = await conn.fetch(
                "SELECT a.account, a.name, "
                "EXISTS (SELECT 1 FROM follows b WHERE b.account = f.target "
                "AND b.target = f.account), a.last_seen, "
                "EXISTS (SELECT 1 FROM presence_hidden h WHERE h.account = f.target) "
                "FROM follows f JOIN accounts a ON a.account = f.target "
                "WHERE f.account = $1 ORDER BY a.name_key", account)
            return [FollowRecord(r[0], r[1], bool(r[2]), float(r[3]), bool(r[4]))
                    for r in rows]

        return await self._read(work)

    async def block(self, account: str, target: str, at: float) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute("INSERT INTO blocks (account, target, created_at) "
                               "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", account, target, at)

        await self._write(f"social:{account}", work)

    async def unblock(self, account: str, target: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            return _changed(await conn.execute(
                "DELETE FROM blocks WHERE account = $1 AND target = $2", account, target)) > 0

        return await self._write(f"social:{account}", work)

    async def blocked(self, account: str) -> list[tuple[str, str]]:
        async def work(conn: asyncpg.Connection) -> list[tuple[str, str]]:
            rows = await conn.fetch(
                "SELECT a.account, a.name FROM blocks b JOIN accounts a "
                "ON a.account = b.target WHERE b.account = $1 ORDER BY a.name_key", account)
            return [(r[0], r[1]) for r in rows]

        return await self._read(work)

    async def is_blocked(self, account: str, target: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            return await conn.fetchval(
                "SELECT 1 FROM blocks WHERE account = $1 AND target = $2",
                account, target) is not None

        return await self._read(work)

    async def set_hidden(self, account: str, hidden: bool) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            if hidden:
                await conn.execute("INSERT INTO presence_hidden (account) VALUES ($1) "
                                   "ON CONFLICT DO NOTHING", account)
            else:
                await conn.execute("DELETE FROM presence_hidden WHERE account = $1", account)

        await self._write(f"social:{account}", work)

    async def hidden(self, account: str) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            return await conn.fetchval("SELECT 1 FROM presence_hidden WHERE account = $1",
                                       account) is not None

        return await self._read(work)

    async def accounts_seen_since(self, at: float) -> list[str]:
        async def work(conn: asyncpg.Connection) -> list[str]:
            rows = await conn.fetch("SELECT account FROM accounts WHERE last_seen >= $1 "
                                    "ORDER BY account", at)
            return [r[0] for r in rows]

        return await self._read(work)

    async def touch_account(self, account: str, at: float) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute("UPDATE accounts SET last_seen = greatest(last_seen, $1) "
                               "WHERE account = $2", at, account)

        await self._write(f"social:{account}", work)

    async def add_note(self, account: str, kind: str, text: str, data: dict[str, Any],
                       at: float, keep: int) -> NoteRecord:
        packed = json.dumps(data, separators=(",", ":"))

        async def work(conn: asyncpg.Connection) -> NoteRecord:
            ident = await conn.fetchval(
                "INSERT INTO notes (account, kind, text, data, created_at) "
                "VALUES ($1, $2, $3, $4, $5) RETURNING id", account, kind, text, packed, at)
            await conn.execute("DELETE FROM notes WHERE account = $1 AND id NOT IN "
                               "(SELECT id FROM notes WHERE account = $1 "
                               "ORDER BY id DESC LIMIT $2)", account, keep)
            return NoteRecord(int(ident), account, kind, text, data, at)

        return await self._write(f"notes:{account}", work)

    async def notes(self, account: str, limit: int) -> list[NoteRecord]:
        async def work(conn: asyncpg.Connection) -> list[NoteRecord]:
            rows = await conn.fetch(f"SELECT {_NOTE_COLUMNS} FROM notes WHERE account = $1 "
                                    "ORDER BY id DESC LIMIT $2", account, limit)
            return [_note(r) for r in rows]

        return await self._read(work)

    async def read_notes(self, account: str) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute("UPDATE notes SET read = TRUE WHERE account = $1 AND NOT read",
                               account)

        await self._write(f"notes:{account}", work)

    async def clear_notes(self, account: str) -> int:
        async def work(conn: asyncpg.Connection) -> int:
            return _changed(await conn.execute("DELETE FROM notes WHERE account = $1", account))

        return await self._write(f"notes:{account}", work)
