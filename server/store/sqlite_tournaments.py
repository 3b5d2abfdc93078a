"""The SQLite store's Swiss tournaments (schema 14): each a row with its state as a document
(:class:`SQLiteTournaments`)."""

from __future__ import annotations

import sqlite3

import attrs

from server.store.base import TournamentsStore
from server.store.records import TournamentRow
from server.store.sqlite_core import SQLiteCore

_COLUMNS = "tournament, name, status, created_at, version, doc"


class SQLiteTournaments(SQLiteCore, TournamentsStore):
    """Tournaments (:class:`~server.store.base.TournamentsStore`)."""

    async def put_tournament(self, row: TournamentRow, *, expect_version: int | None) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            if expect_version is None:
                return conn.execute(
                    f"INSERT INTO tournaments ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (tournament) DO NOTHING", attrs.astuple(row)).rowcount > 0
            return conn.execute(
                "UPDATE tournaments SET name = ?, status = ?, version = ?, doc = ? "
                "WHERE tournament = ? AND version = ?",
                (row.name, row.status, row.version, row.doc, row.tournament,
                 expect_version)).rowcount > 0

        return await self._write(work)

    async def load_tournament(self, tournament: str) -> TournamentRow | None:
        def work(conn: sqlite3.Connection) -> TournamentRow | None:
            row = conn.execute(f"SELECT {_COLUMNS} FROM tournaments WHERE tournament = ?",
                               (tournament,)).fetchone()
            return None if row is None else TournamentRow(*row)

        return await self._read(work)

    async def list_tournaments(self, statuses: tuple[str, ...], limit: int | None = 50, *,
                               newest_first: bool = False) -> list[TournamentRow]:
        order = "DESC" if newest_first else "ASC"

        def work(conn: sqlite3.Connection) -> list[TournamentRow]:
            marks = ", ".join("?" for _ in statuses)
            rows = conn.execute(f"SELECT {_COLUMNS} FROM tournaments WHERE status IN ({marks}) "
                                f"ORDER BY created_at {order}, tournament {order} LIMIT ?",
                                (*statuses, -1 if limit is None else limit)).fetchall()
            return [TournamentRow(*row) for row in rows]

        return await self._read(work)
