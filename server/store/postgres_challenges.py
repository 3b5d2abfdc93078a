"""The PostgreSQL store's challenges by name (schema 16): open challenges and who accepted
them (:class:`PostgresChallenges`). A challenge is ended by one ``UPDATE … WHERE ended IS
NULL``: of the nodes that end it at once (an accept and an expiry), one wins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.store.base import ChallengesStore
from server.store.postgres_core import PostgresCore
from server.store.records import ChallengeRecord, challenge_of, challenge_values

if TYPE_CHECKING:
    import asyncpg

_COLUMNS = ("id, from_account, from_name, to_accounts, to_names, seats, variant, "
            "turn_seconds, rated, created_at, expires_at")


async def _load(conn: asyncpg.Connection, challenge: str, *,
                lock: bool = False) -> ChallengeRecord | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM challenges WHERE id = $1 "
                              "AND ended IS NULL" + (" FOR UPDATE" if lock else ""), challenge)
    if row is None:
        return None
    accepted = [r[0] for r in await conn.fetch(
        "SELECT account FROM challenge_accepts WHERE challenge = $1", challenge)]
    return challenge_of(row, accepted)


class PostgresChallenges(PostgresCore, ChallengesStore):
    """Challenges by name (:class:`~server.store.base.ChallengesStore`)."""

    async def put_challenge(self, challenge: ChallengeRecord) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await conn.execute(f"INSERT INTO challenges ({_COLUMNS}) VALUES "
                               "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                               *challenge_values(challenge))

        await self._write(f"challenge:{challenge.id}", work)

    async def open_challenge(self, challenge: str) -> ChallengeRecord | None:
        return await self._read(lambda conn: _load(conn, challenge))

    async def open_challenges(self) -> list[ChallengeRecord]:
        async def work(conn: asyncpg.Connection) -> list[ChallengeRecord]:
            ids = [r[0] for r in await conn.fetch(
                "SELECT id FROM challenges WHERE ended IS NULL ORDER BY expires_at")]
            return [c for i in ids if (c := await _load(conn, i)) is not None]

        return await self._read(work)

    async def accept_challenge(self, challenge: str, account: str) -> ChallengeRecord | None:
        async def work(conn: asyncpg.Connection) -> ChallengeRecord | None:
            if await _load(conn, challenge, lock=True) is None:
                return None
            await conn.execute("INSERT INTO challenge_accepts (challenge, account) "
                               "VALUES ($1, $2) ON CONFLICT DO NOTHING", challenge, account)
            return await _load(conn, challenge)

        return await self._write(f"challenge:{challenge}", work)

    async def end_challenge(self, challenge: str, why: str,
                            at: float) -> ChallengeRecord | None:
        async def work(conn: asyncpg.Connection) -> ChallengeRecord | None:
            found = await _load(conn, challenge, lock=True)
            if found is None:
                return None
            await conn.execute("UPDATE challenges SET ended = $2, ended_at = $3 "
                               "WHERE id = $1 AND ended IS NULL", challenge, why, at)
            return found

        return await self._write(f"challenge:{challenge}", work)

    async def challenges_since(self, account: str, since: float) -> int:
        async def work(conn: asyncpg.Connection) -> int:
            return int(await conn.fetchval(
                "SELECT count(*) FROM challenges WHERE from_account = $1 "
                "AND created_at >= $2", account, since))

        return await self._read(work)
