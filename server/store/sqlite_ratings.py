"""The SQLite store's ratings (schema 5): each account's rating, its rated games and the
leaderboard (:class:`SQLiteRatings`); a rated game's ratings are written by
:func:`store_ratings`, in the transaction that stores its result."""

from __future__ import annotations

import sqlite3

from server.features import ratings
from server.store.base import RatingsStore
from server.store.records import (
    Placing,
    RatedGame,
    RatingRecord,
)
from server.store.sqlite_core import SQLiteCore

#: A rating's columns (server.store.base.RatingRecord) and the leaderboard's order.
_RATING_SELECT = ("ratings.account, accounts.name, mu, sigma, games, wins FROM ratings "
                  "JOIN accounts USING (account)")

_RATING_ORDER = "mu - 3 * sigma DESC, accounts.name_key"

#: How many distinct accounts a rating's account has met in rated games.
_OPPONENTS = ("(SELECT count(DISTINCT o.account) FROM rated_games g JOIN rated_games o "
              "ON o.room = g.room AND o.account <> g.account "
              "WHERE g.account = ratings.account)")


def store_ratings(conn: sqlite3.Connection, room: str, finished_at: float,
                  placings: tuple[Placing, ...]) -> list[RatedGame]:
    """A rated game's ratings, in the transaction of its result (:meth:`SQLiteGames.finish`):
    each account's rating moved by the game's ``placings`` and its rated game stored; the
    rated games so stored, by seat (none for an unrated game)."""
    if not placings:
        return []
    accounts = [p.account for p in placings]
    marks = ", ".join("?" * len(accounts))
    current = {a: (mu, sigma) for a, mu, sigma in conn.execute(
        f"SELECT account, mu, sigma FROM ratings WHERE account IN ({marks})", accounts)}
    after = ratings.rate(current, placings)
    out = []
    for p in placings:
        mu0, sigma0 = current.get(p.account, (ratings.MU, ratings.SIGMA))
        mu1, sigma1 = after[p.account]
        win = int(p.place == 1)
        conn.execute(
            "INSERT INTO ratings (account, mu, sigma, games, wins) VALUES (?, ?, ?, 1, ?) "
            "ON CONFLICT (account) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma,"
            " games = ratings.games + 1, wins = ratings.wins + excluded.wins",
            (p.account, mu1, sigma1, win))
        game = RatedGame(room, p.seat, len(placings), p.place, mu0, sigma0, mu1, sigma1,
                         finished_at, p.account)
        conn.execute(
            "INSERT INTO rated_games (room, seat, account, seats, place, mu_before, "
            "sigma_before, mu_after, sigma_after, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (room, p.seat, p.account, game.seats, p.place, mu0, sigma0, mu1, sigma1,
             finished_at))
        out.append(game)
    return out


class SQLiteRatings(SQLiteCore, RatingsStore):
    """Ratings, rated games and the leaderboard (:class:`~server.store.base.RatingsStore`)."""

    async def ratings(self, accounts: tuple[str, ...]) -> dict[str, RatingRecord]:
        def work(conn: sqlite3.Connection) -> dict[str, RatingRecord]:
            marks = ", ".join("?" * len(accounts))
            return {row[0]: RatingRecord(*row) for row in conn.execute(
                f"SELECT {_RATING_SELECT} WHERE ratings.account IN ({marks})", accounts)}

        return await self._read(work) if accounts else {}

    async def leaderboard(self, min_games: int, limit: int, offset: int = 0,
                          min_opponents: int = 0) -> list[RatingRecord]:
        return await self._read(lambda conn: [RatingRecord(*row) for row in conn.execute(
            f"SELECT {_RATING_SELECT} WHERE ratings.games >= ? AND {_OPPONENTS} >= ? "
            f"ORDER BY {_RATING_ORDER} LIMIT ? OFFSET ?",
            (min_games, min_opponents, max(0, limit), max(0, offset)))])

    async def rank_of(self, account: str, min_games: int,
                      min_opponents: int = 0) -> int | None:
        def work(conn: sqlite3.Connection) -> int | None:
            row = conn.execute(
                f"SELECT mu - 3 * sigma, accounts.name_key, games, {_OPPONENTS} FROM ratings "
                "JOIN accounts USING (account) WHERE account = ?", (account,)).fetchone()
            if row is None or row[2] < min_games or row[3] < min_opponents:
                return None
            return int(conn.execute(
                "SELECT count(*) FROM ratings JOIN accounts USING (account) WHERE games >= ? "
                f"AND {_OPPONENTS} >= ? "
                "AND (mu - 3 * sigma > ? OR (mu - 3 * sigma = ? AND accounts.name_key < ?))",
                (min_games, min_opponents, row[0], row[0], row[1])).fetchone()[0])

        return await self._read(work)

    async def opponents(self, accounts: tuple[str, ...]) -> dict[str, int]:
        def work(conn: sqlite3.Connection) -> dict[str, int]:
            marks = ", ".join("?" * len(accounts))
            return {a: int(n) for a, n in conn.execute(
                "SELECT g.account, count(DISTINCT o.account) FROM rated_games g JOIN "
                "rated_games o ON o.room = g.room AND o.account <> g.account "
                f"WHERE g.account IN ({marks}) GROUP BY g.account", accounts)}

        return await self._read(work) if accounts else {}

    async def rated_games(self, account: str, limit: int) -> list[RatedGame]:
        return await self._read(lambda conn: [RatedGame(*row) for row in conn.execute(
            "SELECT room, seat, seats, place, mu_before, sigma_before, mu_after, sigma_after, "
            "at, account FROM rated_games WHERE account = ? ORDER BY at DESC, room LIMIT ?",
            (account, max(0, limit)))])

    async def wins_by_seats(self, account: str) -> dict[int, tuple[int, int]]:
        return await self._read(lambda conn: {int(n): (int(g), int(w)) for n, g, w in conn.execute(
            "SELECT seats, count(*), sum(place = 1) FROM rated_games WHERE account = ? "
            "GROUP BY seats", (account,))})
