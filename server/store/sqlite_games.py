"""The SQLite store's games: rooms, their seats, actions, results and where each game
stands (:class:`SQLiteGames`); and what a game keeps beside them, its chat lines and its
rematch link (:class:`SQLiteGameExtras`). Together, :class:`~server.store.base.GamesStore`."""

from __future__ import annotations

import sqlite3
from typing import Any

import attrs

from server.store.base import GamesStore
from server.store.errors import StoreError
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
from server.store.sqlite_core import ROOM_COLUMNS, SQLiteCore, room_of
from server.store.sqlite_ratings import store_ratings
from shared.view import RoomStatus

_SEAT_COLUMNS = ", ".join(f.name for f in attrs.fields(SeatRecord))

_ACTION_COLUMNS = ", ".join(f.name for f in attrs.fields(ActionRecord))

_CHAT_COLUMNS = ", ".join(f.name for f in attrs.fields(ChatRecord))


def _seat(row: tuple) -> SeatRecord:
    room, seat, name, bot, bot_level, token_hash = row
    return SeatRecord(room, seat, name, bool(bot), bot_level, token_hash)


def _action(row: tuple) -> ActionRecord:
    values = list(row)
    values[6] = bool(values[6])  # timed_out
    return ActionRecord(*values)


class SQLiteGames(SQLiteCore, GamesStore):
    """Rooms, seats, actions, results and progress, every write about a room fenced."""

    async def create_room(self, room: RoomRecord) -> None:
        await self._write(self._create_room, room)

    def _create_room(self, conn: sqlite3.Connection, room: RoomRecord) -> None:
        if conn.execute("SELECT 1 FROM rooms WHERE room = ?", (room.room,)).fetchone():
            raise StoreError(
                f"room {room.room} is already stored", code="room_exists", path=self.path
            )
        values = room_values(room)
        marks = ", ".join("?" * len(values))
        conn.execute(f"INSERT INTO rooms ({ROOM_COLUMNS}) VALUES ({marks})", values)

    def _set_version(self, conn: sqlite3.Connection, room: str, version: int | None) -> None:
        if version is not None:
            conn.execute("UPDATE rooms SET version = ? WHERE room = ?", (version, room))

    async def put_seat(
        self, seat: SeatRecord, *, version: int | None = None, expect_version: int | None = None
    ) -> None:
        await self._write(self._put_seat, seat, version, expect_version)

    def _put_seat(
        self,
        conn: sqlite3.Connection,
        seat: SeatRecord,
        version: int | None,
        expect_version: int | None,
    ) -> None:
        if expect_version is not None:
            self._status(conn, seat.room, expect_version)
        row = conn.execute("SELECT seats FROM rooms WHERE room = ?", (seat.room,)).fetchone()
        if row is None:
            raise StoreError(
                f"room {seat.room} is not stored", code="unknown_room", path=self.path
            )
        if not 0 <= seat.seat < row[0]:
            raise StoreError(
                f"room {seat.room} has seats 0–{row[0] - 1}, not {seat.seat}",
                code="invalid_record",
                path=self.path,
            )
        conn.execute(
            f"INSERT INTO seats ({_SEAT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (room, seat) DO UPDATE SET name = excluded.name, bot = excluded.bot, "
            "bot_level = excluded.bot_level, token_hash = excluded.token_hash",
            attrs.astuple(seat, recurse=False),
        )
        self._set_version(conn, seat.room, version)

    async def remove_seat(
        self, room: str, seat: int, *, version: int | None = None,
        expect_version: int | None = None,
    ) -> None:
        await self._write(self._remove_seat, room, seat, version, expect_version)

    def _remove_seat(
        self,
        conn: sqlite3.Connection,
        room: str,
        seat: int,
        version: int | None,
        expect_version: int | None,
    ) -> None:
        if expect_version is not None or version is not None:
            self._status(conn, room, expect_version)
        conn.execute("DELETE FROM seats WHERE room = ? AND seat = ?", (room, seat))
        self._set_version(conn, room, version)

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
        await self._write(self._update_room, room, given, expect_version)

    def _update_room(
        self,
        conn: sqlite3.Connection,
        room: str,
        given: dict[str, Any],
        expect_version: int | None,
    ) -> None:
        self._status(conn, room, expect_version)
        if given:
            assignments = ", ".join(f"{name} = ?" for name in given)
            conn.execute(
                f"UPDATE rooms SET {assignments} WHERE room = ?", (*given.values(), room)
            )

    async def append_action(
        self, action: ActionRecord, *, expect_version: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        await self._write(self._append_action, action, expect_version, progress)

    def _append_action(
        self, conn: sqlite3.Connection, action: ActionRecord, expect_version: int | None,
        progress: Progress | None = None,
    ) -> None:
        # One statement checks what an action needs (the room is stored, not finished, at
        # the version expected, and holds no action from this seq on) and moves the room's
        # version (and where its game stands); only when it moved nothing are the reasons
        # looked up, to say which.
        stands = () if progress is None else (progress.round, progress.turn)
        moved = conn.execute(
            f"UPDATE rooms SET version = ?{', round = ?, turn = ?' if stands else ''} "
            "WHERE room = ? AND status != ? AND (? IS NULL OR version = ?) "
            "AND NOT EXISTS (SELECT 1 FROM actions WHERE room = ? AND seq >= ?)",
            (action.version, *stands, action.room, RoomStatus.FINISHED.value, expect_version,
             expect_version, action.room, action.seq),
        ).rowcount
        if moved != 1:
            self._refuse_finished(conn, action.room, f"action {action.seq}", expect_version)
            (last,) = conn.execute(
                "SELECT max(seq) FROM actions WHERE room = ?", (action.room,)
            ).fetchone()
            stored = conn.execute(
                "SELECT 1 FROM actions WHERE room = ? AND seq = ?", (action.room, action.seq)
            ).fetchone()
            raise seq_refused(action, last, stored is not None, self.path)
        conn.execute(
            f"INSERT INTO actions ({_ACTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            attrs.astuple(action, recurse=False),
        )

    async def finish(self, room: str, result: dict[str, Any], finished_at: float, *,
                     expect_version: int | None = None,
                     placings: tuple[Placing, ...] = ()) -> list[RatedGame]:
        return await self._write(
            self._finish, room, pack_result(result, room), finished_at, expect_version,
            placings,
        )

    def _finish(
        self,
        conn: sqlite3.Connection,
        room: str,
        result: bytes,
        finished_at: float,
        expect_version: int | None,
        placings: tuple[Placing, ...] = (),
    ) -> list[RatedGame]:
        self._refuse_finished(conn, room, "a second result", expect_version)
        conn.execute("INSERT INTO results (room, result) VALUES (?, ?)", (room, result))
        conn.execute(
            "UPDATE rooms SET status = 'finished', finished_at = ? WHERE room = ?",
            (finished_at, room),
        )
        return store_ratings(conn, room, finished_at, placings)

    async def delete_room(self, room: str, *, expect_version: int | None = None) -> None:
        await self._write(self._delete_room, room, expect_version)

    def _delete_room(
        self, conn: sqlite3.Connection, room: str, expect_version: int | None
    ) -> None:
        if expect_version is not None:
            row = conn.execute("SELECT version FROM rooms WHERE room = ?", (room,)).fetchone()
            if row is not None and row[0] != expect_version:
                raise version_conflict(room, row[0], expect_version, self.path)
        # Seats, actions and the result go with it (ON DELETE CASCADE).
        conn.execute("DELETE FROM rooms WHERE room = ?", (room,))

    async def load(self, room: str) -> GameRecord | None:
        games = await self._read(self._load_games, "room = ?", (room,))
        return games[0] if games else None

    async def room_by_code(self, code: str) -> str | None:
        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT room FROM rooms WHERE code = ? "
                               "ORDER BY created_at DESC LIMIT 1",
                               (code,)).fetchone()
            return None if row is None else str(row[0])

        return await self._read(work)

    async def stored_version(self, room: str) -> int | None:
        def work(conn: sqlite3.Connection) -> int | None:
            row = conn.execute("SELECT version FROM rooms WHERE room = ?", (room,)).fetchone()
            return None if row is None else int(row[0])

        return await self._read(work)

    async def load_unfinished(self) -> list[GameRecord]:
        return await self._read(self._load_games, "status != 'finished'", ())

    def _load_games(
        self, conn: sqlite3.Connection, where: str, args: tuple
    ) -> list[GameRecord]:
        """Every room matching ``where`` with its seats, actions and result, in three reads."""
        rooms = [
            room_of(row)
            for row in conn.execute(
                f"SELECT {ROOM_COLUMNS} FROM rooms WHERE {where} ORDER BY created_at, room",
                args,
            )
        ]
        if not rooms:
            return []
        chosen = f"room IN (SELECT room FROM rooms WHERE {where})"
        seats = conn.execute(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE {chosen} ORDER BY room, seat", args
        )
        actions = conn.execute(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE {chosen} ORDER BY room, seq", args
        )
        return assemble_games(
            rooms,
            [_seat(row) for row in seats],
            [_action(row) for row in actions],
            dict(conn.execute(f"SELECT room, result FROM results WHERE {chosen}", args)),
        )

    async def unfinished_rooms(self) -> list[str]:
        return await self._read(
            lambda conn: [
                row[0]
                for row in conn.execute(
                    "SELECT room FROM rooms WHERE status != 'finished' ORDER BY created_at, room"
                )
            ]
        )

    async def unfinished_summaries(self) -> list[StoredRoom]:
        return await self._read(
            lambda conn: [
                StoredRoom(room_of(row[:-1]), row[-1])
                for row in conn.execute(
                    f"SELECT {ROOM_COLUMNS}, (SELECT count(*) FROM seats WHERE "
                    "seats.room = rooms.room AND seats.bot = 1) FROM rooms "
                    "WHERE status != 'finished' ORDER BY created_at, room"
                )
            ]
        )

    async def list_finished(self, limit: int = 50) -> list[RoomRecord]:
        return await self._read(self._list_finished, max(0, limit))

    def _list_finished(self, conn: sqlite3.Connection, limit: int) -> list[RoomRecord]:
        rows = conn.execute(
            f"SELECT {ROOM_COLUMNS} FROM rooms WHERE status = 'finished' "
            "ORDER BY finished_at DESC, room LIMIT ?",
            (limit,),
        )
        return [room_of(row) for row in rows]

    async def fill_progress(self, room: str, version: int, progress: Progress) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute(
                "UPDATE rooms SET round = ?, turn = ? WHERE room = ? AND version = ? "
                "AND round IS NULL", (progress.round, progress.turn, room, version),
            ).rowcount == 1

        return await self._write(work)


class SQLiteGameExtras(SQLiteCore, GamesStore):
    """A room's chat lines (the last :data:`~server.store.records.CHAT_KEPT`) and its rematch
    link (schema 8)."""

    async def append_chat(self, line: ChatRecord, *, expect_version: int | None = None) -> None:
        await self._write(self._append_chat, line, expect_version)

    def _append_chat(
        self, conn: sqlite3.Connection, line: ChatRecord, expect_version: int | None
    ) -> None:
        self._status(conn, line.room, expect_version)
        conn.execute(
            f"INSERT INTO chat ({_CHAT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            attrs.astuple(line, recurse=False),
        )
        conn.execute(
            "DELETE FROM chat WHERE room = ? AND line <= (SELECT line FROM chat WHERE room = ? "
            "ORDER BY line DESC LIMIT 1 OFFSET ?)",
            (line.room, line.room, CHAT_KEPT),
        )

    async def load_chat(self, room: str) -> list[ChatRecord]:
        return await self._read(
            lambda conn: [
                ChatRecord(*row)
                for row in conn.execute(
                    f"SELECT {_CHAT_COLUMNS} FROM chat WHERE room = ? ORDER BY line", (room,)
                )
            ]
        )

    async def link_rematch(self, room: str, rematch: str) -> str | None:
        def work(conn: sqlite3.Connection) -> str | None:
            stored = conn.execute("SELECT count(*) FROM rooms WHERE room IN (?, ?)",
                                  (room, rematch)).fetchone()[0]
            if stored < 2:
                return None
            conn.execute("INSERT INTO rematches (room, rematch) VALUES (?, ?) "
                         "ON CONFLICT (room) DO NOTHING", (room, rematch))
            row = conn.execute("SELECT rematch FROM rematches WHERE room = ?",
                               (room,)).fetchone()
            return str(row[0])

        return await self._write(work)

    async def rematch_of(self, room: str) -> str | None:
        def work(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT rematch FROM rematches WHERE room = ?",
                               (room,)).fetchone()
            return None if row is None else str(row[0])

        return await self._read(work)
