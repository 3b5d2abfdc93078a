"""The PostgreSQL store's games: rooms, their seats, actions, results and where each game
stands (:class:`PostgresGames`); and what a game keeps beside them, its chat lines and its
rematch link (:class:`PostgresGameExtras`). Together, :class:`~server.store.base.GamesStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from server.store.base import GamesStore
from server.store.errors import StoreError
from server.store.postgres_core import ROOM_COLUMNS, PostgresCore, marks, room_of
from server.store.postgres_ratings import store_ratings
from server.store.records import (
    CHAT_KEPT,
    ActionRecord,
    ChatRecord,
    GameRecord,
    Placing,
    Progress,
    RatedGame,
    RoomRecord,
    SeatRecord,
    StoredRoom,
    assemble_games,
    pack_result,
    room_changes,
    room_values,
    seq_refused,
    version_conflict,
)
from shared.view import RoomStatus

if TYPE_CHECKING:
    import asyncpg

_SEAT_COLUMNS = ", ".join(f.name for f in attrs.fields(SeatRecord))

_ACTION_COLUMNS = ", ".join(f.name for f in attrs.fields(ActionRecord))

#: An action's append: $1..$7 the record's fields in column order, $8 the finished status,
#: $9 the version expected (NULL: any); with ``stands``, $10 and $11 the round and turn after
#: it. Inserts one row, or none when it is refused.
_APPEND_ACTION = f"""
    WITH moved AS (
        UPDATE rooms SET version = $6{{stands}} WHERE room = $1 AND status <> $8
            AND ($9::BIGINT IS NULL OR version = $9::BIGINT)
            AND NOT EXISTS (SELECT 1 FROM actions WHERE room = $1 AND seq >= $2)
        RETURNING room
    )
    INSERT INTO actions ({_ACTION_COLUMNS})
    SELECT $1, $2, $3, $4, $5, $6, $7 FROM moved
"""
#: The same, also storing where the game stands (server.store.base.Progress).
_APPEND_ACTION_STANDS = _APPEND_ACTION.format(stands=", round = $10, turn = $11")
_APPEND_ACTION = _APPEND_ACTION.format(stands="")
_CHAT_COLUMNS = ", ".join(f.name for f in attrs.fields(ChatRecord))


class PostgresGames(PostgresCore, GamesStore):
    """Rooms, seats, actions, results and progress, every write about a room fenced."""

    async def create_room(self, room: RoomRecord) -> None:
        import asyncpg

        values = room_values(room)

        async def work(conn: asyncpg.Connection) -> None:
            try:
                await conn.execute(
                    f"INSERT INTO rooms ({ROOM_COLUMNS}) VALUES ({marks(len(values))})",
                    *values,
                )
            except asyncpg.UniqueViolationError:
                raise StoreError(
                    f"room {room.room} is already stored", code="room_exists", path=self.path
                ) from None

        await self._write(room.room, work)

    async def _set_version(
        self, conn: asyncpg.Connection, room: str, version: int | None
    ) -> None:
        if version is not None:
            await conn.execute("UPDATE rooms SET version = $1 WHERE room = $2", version, room)

    async def put_seat(
        self, seat: SeatRecord, *, version: int | None = None, expect_version: int | None = None
    ) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            if expect_version is not None:
                await self._status(conn, seat.room, expect_version)
            seats = await conn.fetchval("SELECT seats FROM rooms WHERE room = $1", seat.room)
            if seats is None:
                raise StoreError(
                    f"room {seat.room} is not stored", code="unknown_room", path=self.path
                )
            if not 0 <= seat.seat < seats:
                raise StoreError(
                    f"room {seat.room} has seats 0–{seats - 1}, not {seat.seat}",
                    code="invalid_record",
                    path=self.path,
                )
            await conn.execute(
                f"INSERT INTO seats ({_SEAT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) "
                "ON CONFLICT (room, seat) DO UPDATE SET name = excluded.name, "
                "bot = excluded.bot, bot_level = excluded.bot_level, "
                "token_hash = excluded.token_hash",
                *attrs.astuple(seat, recurse=False),
            )
            await self._set_version(conn, seat.room, version)

        await self._write(seat.room, work)

    async def remove_seat(
        self, room: str, seat: int, *, version: int | None = None,
        expect_version: int | None = None,
    ) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            if expect_version is not None or version is not None:
                await self._status(conn, room, expect_version)
            await conn.execute("DELETE FROM seats WHERE room = $1 AND seat = $2", room, seat)
            await self._set_version(conn, room, version)

        await self._write(room, work)

    async def update_room(
        self,
        room: str,
        *,
        status: str | None = None,
        version: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        expect_version: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        given = room_changes(status, version, started_at, finished_at, self.path, progress)

        async def work(conn: asyncpg.Connection) -> None:
            await self._status(conn, room, expect_version)
            if given:
                assignments = ", ".join(
                    f"{name} = ${n}" for n, name in enumerate(given, start=2)
                )
                await conn.execute(
                    f"UPDATE rooms SET {assignments} WHERE room = $1", room, *given.values()
                )

        await self._write(room, work)

    async def append_action(
        self, action: ActionRecord, *, expect_version: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        stands = () if progress is None else (progress.round, progress.turn)

        async def work(conn: asyncpg.Connection) -> None:
            # One statement, one round trip: the room's row is moved to the new version
            # (and where its game stands, and locked) only when it is stored, not finished,
            # at the version expected and holds no action from this seq on, and the action
            # is inserted only then; when nothing was inserted, the reasons are looked up,
            # to say which.
            status = await conn.execute(_APPEND_ACTION_STANDS if stands else _APPEND_ACTION,
                                        *attrs.astuple(action, recurse=False),
                                        RoomStatus.FINISHED.value, expect_version, *stands)
            if status == "INSERT 0 1":
                return
            await self._refuse_finished(
                conn, action.room, f"action {action.seq}", expect_version
            )
            last = await conn.fetchval(
                "SELECT max(seq) FROM actions WHERE room = $1", action.room
            )
            stored = await conn.fetchval(
                "SELECT 1 FROM actions WHERE room = $1 AND seq = $2",
                action.room,
                action.seq,
            )
            raise seq_refused(action, last, stored is not None, self.path)

        await self._write(action.room, work)

    async def finish(self, room: str, result: dict[str, Any], finished_at: float, *,
                     expect_version: int | None = None,
                     placings: tuple[Placing, ...] = ()) -> list[RatedGame]:
        packed = pack_result(result, room)

        async def work(conn: asyncpg.Connection) -> list[RatedGame]:
            await self._refuse_finished(conn, room, "a second result", expect_version)
            await conn.execute("INSERT INTO results (room, result) VALUES ($1, $2)", room, packed)
            await conn.execute(
                "UPDATE rooms SET status = 'finished', finished_at = $1 WHERE room = $2",
                finished_at,
                room,
            )
            return await store_ratings(conn, room, finished_at, placings)

        return await self._write(room, work)

    async def delete_room(self, room: str, *, expect_version: int | None = None) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            if expect_version is not None:
                stored = await conn.fetchval(
                    "SELECT version FROM rooms WHERE room = $1 FOR UPDATE", room
                )
                if stored is not None and stored != expect_version:
                    raise version_conflict(room, stored, expect_version, self.path)
            # Seats, actions and the result go with it (ON DELETE CASCADE).
            await conn.execute("DELETE FROM rooms WHERE room = $1", room)

        await self._write(room, work)

    async def load(self, room: str) -> GameRecord | None:
        games = await self._read(lambda conn: self._load_games(conn, "room = $1", (room,)))
        return games[0] if games else None

    async def room_by_code(self, code: str) -> str | None:
        async def work(conn: asyncpg.Connection) -> str | None:
            value = await conn.fetchval("SELECT room FROM rooms WHERE code = $1 "
                                        "ORDER BY created_at DESC LIMIT 1", code)
            return None if value is None else str(value)

        return await self._read(work)

    async def stored_version(self, room: str) -> int | None:
        async def work(conn: asyncpg.Connection) -> int | None:
            value = await conn.fetchval("SELECT version FROM rooms WHERE room = $1", room)
            return None if value is None else int(value)

        return await self._read(work)

    async def load_unfinished(self) -> list[GameRecord]:
        return await self._read(
            lambda conn: self._load_games(conn, "status <> 'finished'", ())
        )

    async def _load_games(
        self, conn: asyncpg.Connection, where: str, args: tuple
    ) -> list[GameRecord]:
        """Every room matching ``where`` with its seats, actions and result, in four reads of
        one snapshot."""
        rooms = [
            room_of(row)
            for row in await conn.fetch(
                f"SELECT {ROOM_COLUMNS} FROM rooms WHERE {where} ORDER BY created_at, room",
                *args,
            )
        ]
        if not rooms:
            return []
        chosen = f"room IN (SELECT room FROM rooms WHERE {where})"
        seats = await conn.fetch(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE {chosen} ORDER BY room, seat", *args
        )
        actions = await conn.fetch(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE {chosen} ORDER BY room, seq", *args
        )
        results = await conn.fetch(f"SELECT room, result FROM results WHERE {chosen}", *args)
        return assemble_games(
            rooms,
            [SeatRecord(*row) for row in seats],
            [ActionRecord(*row) for row in actions],
            {row[0]: row[1] for row in results},
        )

    async def unfinished_rooms(self) -> list[str]:
        async def work(conn: asyncpg.Connection) -> list[str]:
            rows = await conn.fetch(
                "SELECT room FROM rooms WHERE status <> 'finished' ORDER BY created_at, room"
            )
            return [row[0] for row in rows]

        return await self._read(work)

    async def unfinished_summaries(self) -> list[StoredRoom]:
        async def work(conn: asyncpg.Connection) -> list[StoredRoom]:
            rows = await conn.fetch(
                f"SELECT {ROOM_COLUMNS}, (SELECT count(*) FROM seats WHERE "
                "seats.room = rooms.room AND seats.bot) AS bots FROM rooms "
                "WHERE status <> 'finished' ORDER BY created_at, room"
            )
            return [StoredRoom(room_of(tuple(row)[:-1]), row[-1]) for row in rows]

        return await self._read(work)

    async def list_finished(self, limit: int = 50) -> list[RoomRecord]:
        async def work(conn: asyncpg.Connection) -> list[RoomRecord]:
            rows = await conn.fetch(
                f"SELECT {ROOM_COLUMNS} FROM rooms WHERE status = 'finished' "
                "ORDER BY finished_at DESC, room LIMIT $1",
                max(0, limit),
            )
            return [room_of(row) for row in rows]

        return await self._read(work)

    async def fill_progress(self, room: str, version: int, progress: Progress) -> bool:
        async def work(conn: asyncpg.Connection) -> bool:
            status = await conn.execute(
                "UPDATE rooms SET round = $3, turn = $4 WHERE room = $1 AND version = $2 "
                "AND round IS NULL", room, version, progress.round, progress.turn)
            return bool(status == "UPDATE 1")

        return await self._write(room, work)


class PostgresGameExtras(PostgresCore, GamesStore):
    """A room's chat lines (the last :data:`~server.store.records.CHAT_KEPT`) and its rematch
    link (schema 8)."""

    async def append_chat(self, line: ChatRecord, *, expect_version: int | None = None) -> None:
        async def work(conn: asyncpg.Connection) -> None:
            await self._status(conn, line.room, expect_version)
            await conn.execute(
                f"INSERT INTO chat ({_CHAT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)",
                *attrs.astuple(line, recurse=False),
            )
            await conn.execute(
                "DELETE FROM chat WHERE room = $1 AND line <= (SELECT line FROM chat "
                "WHERE room = $1 ORDER BY line DESC LIMIT 1 OFFSET $2)",
                line.room, CHAT_KEPT,
            )

        await self._write(line.room, work)

    async def load_chat(self, room: str) -> list[ChatRecord]:
        async def work(conn: asyncpg.Connection) -> list[ChatRecord]:
            rows = await conn.fetch(
                f"SELECT {_CHAT_COLUMNS} FROM chat WHERE room = $1 ORDER BY line", room
            )
            return [ChatRecord(*row) for row in rows]

        return await self._read(work)

    async def link_rematch(self, room: str, rematch: str) -> str | None:
        async def work(conn: asyncpg.Connection) -> str | None:
            stored = await conn.fetchval("SELECT count(*) FROM rooms WHERE room IN ($1, $2)",
                                         room, rematch)
            if stored < 2:
                return None
            await conn.execute("INSERT INTO rematches (room, rematch) VALUES ($1, $2) "
                               "ON CONFLICT (room) DO NOTHING", room, rematch)
            linked = await conn.fetchval("SELECT rematch FROM rematches WHERE room = $1",
                                         room)
            return None if linked is None else str(linked)

        return await self._write(room, work)

    async def rematch_of(self, room: str) -> str | None:
        async def work(conn: asyncpg.Connection) -> str | None:
            linked = await conn.fetchval("SELECT rematch FROM rematches WHERE room = $1",
                                         room)
            return None if linked is None else str(linked)

        return await self._read(work)
