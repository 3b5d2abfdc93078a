"""The SQLite store's accounts (schema 4): accounts and their name keys, registrations,
the seats that belong to accounts and the games an account holds, and the server's own
identity (:class:`SQLiteAccounts`)."""

from __future__ import annotations

import sqlite3

import attrs

from server.store.base import AccountsStore
from server.store.records import (
    AccountGame,
    AccountRecord,
    Refusal,
    Registration,
    unpack_result,
)
from server.store.sqlite_core import ROOM_COLUMNS, SQLiteCore, log, room_of

_ACCOUNT_COLUMNS = ", ".join(f.name for f in attrs.fields(AccountRecord))


class SQLiteAccounts(SQLiteCore, AccountsStore):
    """Accounts, registrations, account seats and ``server_meta``
    (:class:`~server.store.base.AccountsStore`)."""

    async def sign_in(self, account: AccountRecord, registration: Registration | None = None
                      ) -> AccountRecord | Refusal | None:
        return await self._write(self._sign_in, account, registration)

    def _sign_in(self, conn: sqlite3.Connection, account: AccountRecord,
                 registration: Registration | None) -> AccountRecord | Refusal | None:
        row = conn.execute(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE key_hash = ?",
                           (account.key_hash,)).fetchone()
        if row is not None:
            known = AccountRecord(*row)
            conn.execute("UPDATE accounts SET last_seen = max(last_seen, ?) WHERE account = ?",
                         (account.created_at, known.account))
            return known
        holder = conn.execute("SELECT account, last_seen FROM accounts WHERE name_key = ?",
                              (account.name_key,)).fetchone()
        if holder is not None and not self._releases(conn, holder, registration):
            return None
        if registration is not None:
            conn.execute("DELETE FROM registrations WHERE at <= ?", (registration.since,))
            by_address, by_network = conn.execute(
                "SELECT sum(address = ?), count(*) FROM registrations WHERE network = ?",
                (registration.address, registration.network)).fetchone()
            if (by_address or 0) >= registration.per_address \
                    or by_network >= registration.per_network:
                return Refusal.TOO_MANY
        if holder is not None:
            self._release(conn, holder[0])
        conn.execute(f"INSERT INTO accounts ({_ACCOUNT_COLUMNS}, last_seen) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     (*attrs.astuple(account, recurse=False), account.created_at))
        if registration is not None:
            conn.execute("INSERT INTO registrations (address, network, at) VALUES (?, ?, ?)",
                         (registration.address, registration.network, account.created_at))
        return account

    @staticmethod
    def _releases(conn: sqlite3.Connection, holder: tuple[str, float],
                  registration: Registration | None) -> bool:
        """Whether the account ``holder`` (id, last seen) gives up its name: unseen since
        ``registration.release_before`` and without a finished game."""
        if registration is None or registration.release_before is None \
                or holder[1] >= registration.release_before:
            return False
        return conn.execute(
            "SELECT 1 FROM account_seats JOIN results USING (room) WHERE account = ? "
            "UNION ALL SELECT 1 FROM ratings WHERE account = ? LIMIT 1",
            (holder[0], holder[0])).fetchone() is None

    def _release(self, conn: sqlite3.Connection, account: str) -> None:
        for table in ("account_seats", "rated_games", "ratings", "accounts"):
            conn.execute(f"DELETE FROM {table} WHERE account = ?", (account,))
        log.info("%s: account %s gave up its name (unused)", self.path, account)

    async def account_named(self, name_key: str) -> AccountRecord | None:
        def work(conn: sqlite3.Connection) -> AccountRecord | None:
            row = conn.execute(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE name_key = ?",
                               (name_key,)).fetchone()
            return None if row is None else AccountRecord(*row)

        return await self._read(work)

    async def claim_seat(self, room: str, seat: int, account: str | None, *,
                         expect_version: int | None = None) -> None:
        await self._write(self._claim_seat, room, seat, account, expect_version)

    def _claim_seat(self, conn: sqlite3.Connection, room: str, seat: int,
                    account: str | None, expect_version: int | None) -> None:
        self._status(conn, room, expect_version)
        if account is None:
            conn.execute("DELETE FROM account_seats WHERE room = ? AND seat = ?", (room, seat))
        else:
            conn.execute("INSERT INTO account_seats (room, seat, account) VALUES (?, ?, ?) "
                         "ON CONFLICT (room, seat) DO UPDATE SET account = excluded.account",
                         (room, seat, account))

    async def seat_accounts(self, room: str) -> dict[int, str]:
        return await self._read(lambda conn: {
            int(seat): str(account) for seat, account in conn.execute(
                "SELECT seat, account FROM account_seats WHERE room = ?", (room,))
        })

    async def account_games(self, account: str, *, finished: bool | None = None,
                            limit: int = 20) -> list[AccountGame]:
        return await self._read(self._account_games, account, finished, max(0, limit))

    def _account_games(self, conn: sqlite3.Connection, account: str, finished: bool | None,
                       limit: int) -> list[AccountGame]:
        status = "" if finished is None else \
            " AND rooms.status = 'finished'" if finished else " AND rooms.status != 'finished'"
        columns = ", ".join(f"rooms.{name}" for name in ROOM_COLUMNS.split(", "))
        rows = conn.execute(
            f"SELECT {columns}, account_seats.seat FROM account_seats JOIN rooms USING (room) "
            f"WHERE account_seats.account = ?{status} "
            "ORDER BY rooms.created_at DESC, rooms.room LIMIT ?", (account, limit)).fetchall()
        rooms = [(room_of(row[:-1]), int(row[-1])) for row in rows]
        # The page's seats and results in one query each, not two a game.
        ids = [room.room for room, _ in rooms]
        marks = ", ".join("?" * len(ids))
        names: dict[str, list[str | None]] = {room.room: [None] * room.seats
                                               for room, _ in rooms}
        for room_id, seat, name in conn.execute(
                f"SELECT room, seat, name FROM seats WHERE room IN ({marks})", ids):
            if 0 <= seat < len(names[room_id]):
                names[room_id][seat] = name
        results = dict(conn.execute(
            f"SELECT room, result FROM results WHERE room IN ({marks})", ids).fetchall())
        return [AccountGame(room, seat, tuple(names[room.room]),
                            unpack_result(results[room.room]) if room.room in results
                            else None)
                for room, seat in rooms]

    async def server_meta(self, name: str, made: str) -> str:
        def work(conn: sqlite3.Connection) -> str:
            conn.execute("INSERT INTO server_meta (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO NOTHING", (name, made))
            row = conn.execute("SELECT value FROM server_meta WHERE name = ?",
                               (name,)).fetchone()
            return str(row[0])

        return await self._write(work)
