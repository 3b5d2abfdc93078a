"""The PostgreSQL store's accounts (schema 4): accounts and their name keys,
registrations, the seats that belong to accounts and the games an account holds, and the
server's own identity (:class:`PostgresAccounts`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from server.store.base import AccountsStore
from server.store.postgres_core import ROOM_COLUMNS, PostgresCore, log, marks, room_of
from server.store.records import (
    AccountGame,
    AccountRecord,
    Refusal,
    Registration,
    unpack_result,
)

if TYPE_CHECKING:
    import asyncpg

_ACCOUNT_COLUMNS = ", ".join(f.name for f in attrs.fields(AccountRecord))

#: What account writes line up behind (they are about no room): one registration at a time.
_ACCOUNTS = "\x00accounts"


class PostgresAccounts(PostgresCore, AccountsStore):
    """Accounts, registrations, account seats and ``server_meta``
    (:class:`~server.store.base.AccountsStore`)."""

    async def sign_in(self, account: AccountRecord, registration: Registration | None = None
                      ) -> AccountRecord | Refusal | None:
        values = attrs.astuple(account, recurse=False)

        async def work(conn: asyncpg.Connection) -> AccountRecord | Refusal | None:
            row = await conn.fetchrow(
                f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE key_hash = $1",
                account.key_hash)
            if row is not None:
                await conn.execute("UPDATE accounts SET last_seen = greatest(last_seen, $1) "
                                   "WHERE account = $2", account.created_at, row[0])
                return AccountRecord(*row)
            if registration is not None:
                # Registrations one after another, over every node: the counts hold.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                                   f"castell-registrations:{self.schema}")
            holder = await conn.fetchrow(
                "SELECT account, last_seen FROM accounts WHERE name_key = $1",
                account.name_key)
            if holder is not None and not await self._releases(conn, holder, registration):
                return None
            if registration is not None:
                await conn.execute("DELETE FROM registrations WHERE at <= $1",
                                   registration.since)
                counts = await conn.fetchrow(
                    "SELECT count(*) FILTER (WHERE address = $1), count(*) FROM registrations "
                    "WHERE network = $2", registration.address, registration.network)
                if counts[0] >= registration.per_address \
                        or counts[1] >= registration.per_network:
                    return Refusal.TOO_MANY
            if holder is not None:
                await self._release(conn, holder[0])
            # Registrations of one name or key on two nodes: the unique indexes pick one.
            await conn.execute(
                f"INSERT INTO accounts ({_ACCOUNT_COLUMNS}, last_seen) "
                f"VALUES ({marks(len(values) + 1)}) ON CONFLICT DO NOTHING",
                *values, account.created_at)
            row = await conn.fetchrow(
                f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE key_hash = $1",
                account.key_hash)
            if row is None:
                return None
            if registration is not None and row[0] == account.account:
                await conn.execute(
                    "INSERT INTO registrations (address, network, at) VALUES ($1, $2, $3)",
                    registration.address, registration.network, account.created_at)
            return AccountRecord(*row)

        return await self._write(_ACCOUNTS, work)

    @staticmethod
    async def _releases(conn: asyncpg.Connection, holder: Any,
                        registration: Registration | None) -> bool:
        """Whether the account ``holder`` (id, last seen) gives up its name: unseen since
        ``registration.release_before`` and without a finished game."""
        if registration is None or registration.release_before is None \
                or holder[1] >= registration.release_before:
            return False
        return await conn.fetchval(
            "SELECT 1 FROM account_seats JOIN results USING (room) WHERE account = $1 "
            "UNION ALL SELECT 1 FROM ratings WHERE account = $1 LIMIT 1", holder[0]) is None

    async def _release(self, conn: asyncpg.Connection, account: str) -> None:
        for table in ("account_seats", "rated_games", "ratings", "accounts"):
            await conn.execute(f"DELETE FROM {table} WHERE account = $1", account)
        log.info("%s (schema %s): account %s gave up its name (unused)", self.path,
                 self.schema, account)

    async def account_named(self, name_key: str) -> AccountRecord | None:
        async def work(conn: asyncpg.Connection) -> AccountRecord | None:
            row = await conn.fetchrow(
                f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE name_key = $1", name_key)
            return None if row is None else AccountRecord(*row)

        return await self._read(work)

    async def claim_seat(self, room: str, seat: int, account: str | None, *,
                         expect_version: int | None = None) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await self._status(conn, room, expect_version)
            if account is None:
                await conn.execute("DELETE FROM account_seats WHERE room = $1 AND seat = $2",
                                   room, seat)
            else:
                await conn.execute(
                    "INSERT INTO account_seats (room, seat, account) VALUES ($1, $2, $3) "
                    "ON CONFLICT (room, seat) DO UPDATE SET account = excluded.account",
                    room, seat, account)

        await self._write(room, work)

    async def seat_accounts(self, room: str) -> dict[int, str]:
        async def work(conn: asyncpg.Connection) -> dict[int, str]:
            rows = await conn.fetch(
                "SELECT seat, account FROM account_seats WHERE room = $1", room)
            return {int(row[0]): str(row[1]) for row in rows}

        return await self._read(work)

    async def account_games(self, account: str, *, finished: bool | None = None,
                            limit: int = 20) -> list[AccountGame]:
        status = "" if finished is None else \
            " AND rooms.status = 'finished'" if finished else " AND rooms.status <> 'finished'"
        columns = ", ".join(f"rooms.{name}" for name in ROOM_COLUMNS.split(", "))

        async def work(conn: asyncpg.Connection) -> list[AccountGame]:
            rows = await conn.fetch(
                f"SELECT {columns}, account_seats.seat FROM account_seats JOIN rooms "
                f"USING (room) WHERE account_seats.account = $1{status} "
                "ORDER BY rooms.created_at DESC, rooms.room LIMIT $2", account, max(0, limit))
            rooms = [(room_of(tuple(row)[:-1]), int(row[-1])) for row in rows]
            ids = [room.room for room, _ in rooms]
            seats = await conn.fetch(
                "SELECT room, seat, name FROM seats WHERE room = ANY($1::text[])", ids)
            results = {row[0]: row[1] for row in await conn.fetch(
                "SELECT room, result FROM results WHERE room = ANY($1::text[])", ids)}
            out = []
            for room, seat in rooms:
                names: list[str | None] = [None] * room.seats
                for row in seats:
                    if row[0] == room.room and 0 <= row[1] < room.seats:
                        names[row[1]] = row[2]
                packed = results.get(room.room)
                out.append(AccountGame(room, seat, tuple(names),
                                       unpack_result(packed) if packed else None))
            return out

        return await self._read(work)

    async def server_meta(self, name: str, made: str) -> str:
        async def work(conn: asyncpg.Connection) -> str:
            await conn.execute("INSERT INTO server_meta (name, value) VALUES ($1, $2) "
                               "ON CONFLICT (name) DO NOTHING", name, made)
            return str(await conn.fetchval("SELECT value FROM server_meta WHERE name = $1",
                                           name))

        return await self._write(f"meta:{name}", work)
