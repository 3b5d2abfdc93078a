"""The SQLite store's challenges by name (schema 16): open challenges and who accepted them
(:class:`SQLiteChallenges`)."""

from __future__ import annotations

import sqlite3

from server.store.base import ChallengesStore
from server.store.records import ChallengeRecord, challenge_of, challenge_values
from server.store.sqlite_core import SQLiteCore

_COLUMNS = ("id, from_account, from_name, to_accounts, to_names, seats, variant, "
            "turn_seconds, rated, created_at, expires_at")


class SQLiteChallenges(SQLiteCore, ChallengesStore):
    """Challenges by name (:class:`~server.store.base.ChallengesStore`)."""

    async def put_challenge(self, challenge: ChallengeRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute(f"INSERT INTO challenges ({_COLUMNS}) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         challenge_values(challenge))

        await self._write(work)

    @staticmethod
    def _load(conn: sqlite3.Connection, challenge: str, *,
              open_only: bool = True) -> ChallengeRecord | None:
        row = conn.execute(f"SELECT {_COLUMNS} FROM challenges WHERE id = ?"
                           + (" AND ended IS NULL" if open_only else ""),
                           (challenge,)).fetchone()
        if row is None:
            return None
        accepted = [a for (a,) in conn.execute(
            "SELECT account FROM challenge_accepts WHERE challenge = ?", (challenge,))]
        return challenge_of(row, accepted)

    async def open_challenge(self, challenge: str) -> ChallengeRecord | None:
        return await self._read(lambda conn: self._load(conn, challenge))

    async def open_challenges(self) -> list[ChallengeRecord]:
        def work(conn: sqlite3.Connection) -> list[ChallengeRecord]:
            ids = [i for (i,) in conn.execute(
                "SELECT id FROM challenges WHERE ended IS NULL ORDER BY expires_at")]
            return [c for i in ids if (c := self._load(conn, i)) is not None]

        return await self._read(work)

    async def accept_challenge(self, challenge: str, account: str) -> ChallengeRecord | None:
        def work(conn: sqlite3.Connection) -> ChallengeRecord | None:
            if self._load(conn, challenge) is None:
                return None
            conn.execute("INSERT OR IGNORE INTO challenge_accepts (challenge, account) "
                         "VALUES (?, ?)", (challenge, account))
            return self._load(conn, challenge)

        return await self._write(work)

    async def end_challenge(self, challenge: str, why: str,
                            at: float) -> ChallengeRecord | None:
        def work(conn: sqlite3.Connection) -> ChallengeRecord | None:
            found = self._load(conn, challenge)
            if found is None:
                return None
            conn.execute("UPDATE challenges SET ended = ?, ended_at = ? "
                         "WHERE id = ? AND ended IS NULL", (why, at, challenge))
            return found

        return await self._write(work)

    async def challenges_since(self, account: str, since: float) -> int:
        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT count(*) FROM challenges "
                               "WHERE from_account = ? AND created_at >= ?",
                               (account, since)).fetchone()
            return int(row[0])

        return await self._read(work)
