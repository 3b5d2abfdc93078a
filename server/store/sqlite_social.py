"""The SQLite store's friends, blocks and inbox (schema 15): :class:`SQLiteSocial`."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from server.store.base import SocialStore
from server.store.records import FollowRecord, NoteRecord
from server.store.sqlite_core import SQLiteCore

_NOTE_COLUMNS = "id, account, kind, text, data, created_at, read"


def _note(row: tuple[Any, ...]) -> NoteRecord:
    ident, account, kind, text, data, at, read = row
    return NoteRecord(int(ident), account, kind, text, json.loads(data), float(at), bool(read))


class SQLiteSocial(SQLiteCore, SocialStore):
    """Follows, blocks, hidden presence and notifications
    (:class:`~server.store.base.SocialStore`)."""

    async def follow(self, account: str, target: str, at: float) -> None:
        await self._write(lambda conn: conn.execute(
            "INSERT INTO follows (account, target, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING", (account, target, at)))

    async def unfollow(self, account: str, target: str) -> bool:
        return await self._write(lambda conn: conn.execute(
            "DELETE FROM follows WHERE account = ? AND target = ?",
            (account, target)).rowcount > 0)

    async def following(self, account: str) -> list[FollowRecord]:
        def work(conn: sqlite3.Connection) -> list[FollowRecord]:
            rows = conn.execute(
                "SELECT a.account, a.name, "
                "EXISTS (SELECT 1 FROM follows b WHERE b.account = f.target "
                "AND b.target = f.account), a.last_seen, "
                "EXISTS (SELECT 1 FROM presence_hidden h WHERE h.account = f.target) "
                "FROM follows f JOIN accounts a ON a.account = f.target "
                "WHERE f.account = ? ORDER BY a.name_key", (account,)).fetchall()
            return [FollowRecord(r[0], r[1], bool(r[2]), float(r[3]), bool(r[4]))
                    for r in rows]

        return await self._read(work)

    async def block(self, account: str, target: str, at: float) -> None:
        await self._write(lambda conn: conn.execute(
            "INSERT INTO blocks (account, target, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING", (account, target, at)))

    async def unblock(self, account: str, target: str) -> bool:
        return await self._write(lambda conn: conn.execute(
            "DELETE FROM blocks WHERE account = ? AND target = ?",
            (account, target)).rowcount > 0)

    async def blocked(self, account: str) -> list[tuple[str, str]]:
        def work(conn: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = conn.execute(
                "SELECT a.account, a.name FROM blocks b JOIN accounts a "
                "ON a.account = b.target WHERE b.account = ? ORDER BY a.name_key",
                (account,)).fetchall()
            return [(r[0], r[1]) for r in rows]

        return await self._read(work)

    async def is_blocked(self, account: str, target: str) -> bool:
        return await self._read(lambda conn: conn.execute(
            "SELECT 1 FROM blocks WHERE account = ? AND target = ?",
            (account, target)).fetchone() is not None)

    async def set_hidden(self, account: str, hidden: bool) -> None:
        def work(conn: sqlite3.Connection) -> None:
            if hidden:
                conn.execute("INSERT INTO presence_hidden (account) VALUES (?) "
                             "ON CONFLICT DO NOTHING", (account,))
            else:
                conn.execute("DELETE FROM presence_hidden WHERE account = ?", (account,))

        await self._write(work)

    async def hidden(self, account: str) -> bool:
        return await self._read(lambda conn: conn.execute(
            "SELECT 1 FROM presence_hidden WHERE account = ?",
            (account,)).fetchone() is not None)

    async def accounts_seen_since(self, at: float) -> list[str]:
        return await self._read(lambda conn: [r[0] for r in conn.execute(
            "SELECT account FROM accounts WHERE last_seen >= ? ORDER BY account",
            (at,)).fetchall()])

    async def touch_account(self, account: str, at: float) -> None:
        await self._write(lambda conn: conn.execute(
            "UPDATE accounts SET last_seen = max(last_seen, ?) WHERE account = ?",
            (at, account)))

    async def add_note(self, account: str, kind: str, text: str, data: dict[str, Any],
                       at: float, keep: int) -> NoteRecord:
        packed = json.dumps(data, separators=(",", ":"))

        def work(conn: sqlite3.Connection) -> NoteRecord:
            ident = conn.execute(
                "INSERT INTO notes (account, kind, text, data, created_at) "
                "VALUES (?, ?, ?, ?, ?)", (account, kind, text, packed, at)).lastrowid
            conn.execute("DELETE FROM notes WHERE account = ? AND id NOT IN "
                         "(SELECT id FROM notes WHERE account = ? ORDER BY id DESC LIMIT ?)",
                         (account, account, keep))
            return NoteRecord(int(ident or 0), account, kind, text, data, at)

        return await self._write(work)

    async def notes(self, account: str, limit: int) -> list[NoteRecord]:
        return await self._read(lambda conn: [_note(r) for r in conn.execute(
            f"SELECT {_NOTE_COLUMNS} FROM notes WHERE account = ? ORDER BY id DESC LIMIT ?",
            (account, limit)).fetchall()])

    async def read_notes(self, account: str) -> None:
        await self._write(lambda conn: conn.execute(
            "UPDATE notes SET read = 1 WHERE account = ? AND read = 0", (account,)))

    async def clear_notes(self, account: str) -> int:
        return await self._write(lambda conn: conn.execute(
            "DELETE FROM notes WHERE account = ?", (account,)).rowcount)
