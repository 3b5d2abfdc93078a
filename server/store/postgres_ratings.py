"""The PostgreSQL store's ratings (schema 5): each account's rating, its rated games and
the leaderboard (:class:`PostgresRatings`); a rated game's ratings are written by
:func:`store_ratings`, in the transaction that stores its result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.features import ratings
from server.store.base import RatingsStore
from server.store.postgres_core import PostgresCore
from server.store.records import (
    Placing,
    RatedGame,
    RatingRecord,
)

if TYPE_CHECKING:
    import asyncpg

#: A rating's columns (server.store.base.RatingRecord) and the leaderboard's order.
_RATING_SELECT = ("ratings.account, accounts.name, mu, sigma, games, wins FROM ratings "
                  "JOIN accounts USING (account)")

_RATING_ORDER = "mu - 3 * sigma DESC, accounts.name_key"

#: How many distinct accounts a rating's account has met in rated games.
_OPPONENTS = ("(SELECT count(DISTINCT o.account) FROM rated_games g JOIN rated_games o "
              "ON o.room = g.room AND o.account <> g.account "
              "WHERE g.account = ratings.account)")


async def store_ratings(conn: asyncpg.Connection, room: str, finished_at: float,
                        placings: tuple[Placing, ...]) -> list[RatedGame]:
    """A rated game's ratings, in the transaction of its result
    (:meth:`PostgresGames.finish`), by seat (none for an unrated game): the accounts' rows are
    locked in account order (two games finishing at once on two nodes wait, never
    deadlock, and neither update is lost)."""
    if not placings:
        return []
    accounts = sorted(p.account for p in placings)
    rows = await conn.fetch(
        "SELECT account, mu, sigma FROM ratings WHERE account = ANY($1::text[]) "
        "ORDER BY account FOR UPDATE", accounts)
    current = {row[0]: (row[1], row[2]) for row in rows}
    after = ratings.rate(current, placings)
    out = []
    for p in placings:
        mu0, sigma0 = current.get(p.account, (ratings.MU, ratings.SIGMA))
        mu1, sigma1 = after[p.account]
        await conn.execute(
            "INSERT INTO ratings (account, mu, sigma, games, wins) VALUES ($1, $2, $3, 1, "
            "$4) ON CONFLICT (account) DO UPDATE SET mu = excluded.mu, sigma = "
            "excluded.sigma, games = ratings.games + 1, wins = ratings.wins + excluded.wins",
            p.account, mu1, sigma1, int(p.place == 1))
        game = RatedGame(room, p.seat, len(placings), p.place, mu0, sigma0, mu1, sigma1,
                         finished_at, p.account)
        await conn.execute(
            "INSERT INTO rated_games (room, seat, account, seats, place, mu_before, "
            "sigma_before, mu_after, sigma_after, at) VALUES ($1, $2, $3, $4, $5, $6, $7, "
            "$8, $9, $10)", room, p.seat, p.account, game.seats, p.place, mu0, sigma0, mu1,
            sigma1, finished_at)
        out.append(game)
    return out


class PostgresRatings(PostgresCore, RatingsStore):
    """Ratings, rated games and the leaderboard (:class:`~server.store.base.RatingsStore`)."""

    async def ratings(self, accounts: tuple[str, ...]) -> dict[str, RatingRecord]:
        async def work(conn: asyncpg.Connection) -> dict[str, RatingRecord]:
            rows = await conn.fetch(
                f"SELECT {_RATING_SELECT} WHERE ratings.account = ANY($1::text[])",
                list(accounts))
            return {row[0]: RatingRecord(*row) for row in rows}

        return await self._read(work) if accounts else {}

    async def leaderboard(self, min_games: int, limit: int, offset: int = 0,
                          min_opponents: int = 0) -> list[RatingRecord]:
        async def work(conn: asyncpg.Connection) -> list[RatingRecord]:
            rows = await conn.fetch(
                f"SELECT {_RATING_SELECT} WHERE ratings.games >= $1 AND {_OPPONENTS} >= $4 "
                f"ORDER BY {_RATING_ORDER} LIMIT $2 OFFSET $3", min_games, max(0, limit),
                max(0, offset), min_opponents)
            return [RatingRecord(*row) for row in rows]

        return await self._read(work)

    async def rank_of(self, account: str, min_games: int,
                      min_opponents: int = 0) -> int | None:
        async def work(conn: asyncpg.Connection) -> int | None:
            row = await conn.fetchrow(
                f"SELECT mu - 3 * sigma, accounts.name_key, games, {_OPPONENTS} FROM ratings "
                "JOIN accounts USING (account) WHERE account = $1", account)
            if row is None or row[2] < min_games or row[3] < min_opponents:
                return None
            return int(await conn.fetchval(
                "SELECT count(*) FROM ratings JOIN accounts USING (account) WHERE games >= $1 "
                f"AND {_OPPONENTS} >= $4 "
                "AND (mu - 3 * sigma > $2 OR (mu - 3 * sigma = $2 AND accounts.name_key < $3))",
                min_games, row[0], row[1], min_opponents))

        return await self._read(work)

    async def opponents(self, accounts: tuple[str, ...]) -> dict[str, int]:
        async def work(conn: asyncpg.Connection) -> dict[str, int]:
            rows = await conn.fetch(
                "SELECT g.account, count(DISTINCT o.account) FROM rated_games g JOIN "
                "rated_games o ON o.room = g.room AND o.account <> g.account "
                "WHERE g.account = ANY($1::text[]) GROUP BY g.account", list(accounts))
            return {row[0]: int(row[1]) for row in rows}

        return await self._read(work) if accounts else {}

    async def rated_games(self, account: str, limit: int) -> list[RatedGame]:
        async def work(conn: asyncpg.Connection) -> list[RatedGame]:
            rows = await conn.fetch(
                "SELECT room, seat, seats, place, mu_before, sigma_before, mu_after, "
                "sigma_after, at, account FROM rated_games WHERE account = $1 "
                "ORDER BY at DESC, room LIMIT $2", account, max(0, limit))
            return [RatedGame(*row) for row in rows]

        return await self._read(work)

    async def wins_by_seats(self, account: str) -> dict[int, tuple[int, int]]:
        async def work(conn: asyncpg.Connection) -> dict[int, tuple[int, int]]:
            rows = await conn.fetch(
                "SELECT seats, count(*), count(*) FILTER (WHERE place = 1) FROM rated_games "
                "WHERE account = $1 GROUP BY seats", account)
            return {int(r[0]): (int(r[1]), int(r[2])) for r in rows}

        return await self._read(work)
