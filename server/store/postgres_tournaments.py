"""The PostgreSQL store's Swiss tournaments (schema 14): each a row with its state as a
document (:class:`PostgresTournaments`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from server.store.base import TournamentsStore
from server.store.postgres_core import PostgresCore
from server.store.records import TournamentRow

if TYPE_CHECKING:
    import asyncpg

_COLUMNS = "tournament, name, status, created_at, version, doc"


class PostgresTournaments(PostgresCore, TournamentsStore):
    """Tournaments (:class:`~server.store.base.TournamentsStore`)."""

    async def put_tournament(self, row: TournamentRow, *, expect_version: int | None) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            if expect_version is None:
                done = await conn.execute(
                    f"INSERT INTO tournaments ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) "
                    "ON CONFLICT (tournament) DO NOTHING", *attrs.astuple(row))
            else:
                done = await conn.execute(
                    "UPDATE tournaments SET name = $1, status = $2, version = $3, doc = $4 "
                    "WHERE tournament = $5 AND version = $6",
                    row.name, row.status, row.version, row.doc, row.tournament,
                    expect_version)
            return bool(done.split()[-1] != "0")

        return await self._write(f"tournament:{row.tournament}", work)

    async def load_tournament(self, tournament: str) -> TournamentRow | None:
        async def work(conn: asyncpg.Connection) -> TournamentRow | None:
            row = await conn.fetchrow(
                f"SELECT {_COLUMNS} FROM tournaments WHERE tournament = $1", tournament)
            return None if row is None else TournamentRow(*row)

        return await self._read(work)

    async def list_tournaments(self, statuses: tuple[str, ...], limit: int | None = 50, *,
                               newest_first: bool = False) -> list[TournamentRow]:
        order = "DESC" if newest_first else "ASC"

        async def work(conn: asyncpg.Connection) -> list[TournamentRow]:
            rows = await conn.fetch(
                f"SELECT {_COLUMNS} FROM tournaments WHERE status = ANY($1::text[]) "
                f"ORDER BY created_at {order}, tournament {order} LIMIT $2",
                list(statuses), limit)
            return [TournamentRow(*row) for row in rows]

        return await self._read(work)
