"""The default :class:`~server.store.base.Store`: one SQLite file, on the stdlib ``sqlite3``.

How it keeps its promises:

* **One worker thread.** The connection lives on a single dedicated thread and every call runs
  there in submission order, so the event loop never blocks on the disk and writes about one
  room land in the order they were awaited. (A caller cancelled while waiting does not undo its
  write: the worker finishes it.) A database in memory has no disk to wait on: its calls run
  on the event loop's thread, in the same order, unless ``thread=True`` asks for the worker.
* **Acknowledged means durable.** WAL journal with ``synchronous=FULL``: every commit fsyncs the
  log before the coroutine returns, so an acknowledged action survives a crash of the process
  *and* of the machine. ``NORMAL`` would skip that fsync and could lose the last actions on a
  power cut — actions players were already told were applied. ``fullfsync`` makes macOS flush
  the drive's cache too. ``python -m bench.store`` measures what this costs.
* **Group commit.** One fsync per write would cap a server at a few hundred writes a second
  whatever its cores. So (unless ``group_commit=False``) the writes that arrive while a commit
  is in flight wait in a queue, and all of them go to the worker together: one transaction,
  one fsync, each write inside its own savepoint. A write that fails (a fenced write's
  ``version_conflict``, a finished room) is rolled back to its savepoint and fails alone; the
  others of its batch are committed. Each write's coroutine returns (or raises) only once
  its batch's COMMIT did: when the COMMIT fails, every write of the batch fails with it, and
  no other. The queue keeps submission order, so the writes about one room still land in
  the order they were awaited. (A database in memory has no fsync to share: its writes run
  one at a time, as below.)
* **One server per file.** A store that writes holds an exclusive ``flock`` on the database
  file from open to close (``flock`` locks are apart from the POSIX locks SQLite takes, and
  the descriptor is closed only after SQLite's connection), so a second castell-server on
  the same file is refused at open with ``database_in_use`` instead of sharing it. The lock dies
  with the process. Readers are welcome meanwhile (WAL lets them read while the server
  writes): ``read_only=True`` opens a store that only reads — what ``castell-server
  export`` uses on a running server's file.
* **Nothing is overwritten on error.** The file is checked (is it SQLite, is it Castell's,
  which schema version) inside the transaction that would migrate it; a refusal rolls back, so
  a foreign, damaged or newer file is left byte for byte as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import attrs
import platformdirs

from server import names, ratings
from server.store.base import (
    CHAT_KEPT,
    AccountGame,
    AccountRecord,
    ActionRecord,
    BanRecord,
    ChatRecord,
    GameRecord,
    KickRecord,
    MuteRecord,
    Placing,
    Progress,
    RatedGame,
    RatingRecord,
    Refusal,
    Registration,
    RoomRecord,
    SeatRecord,
    Store,
    StoredRoom,
    assemble_games,
    pack_result,
    room_changes,
    room_values,
    schema_too_new,
    seq_refused,
    unpack_offers,
    unpack_result,
    version_conflict,
)
from server.store.errors import StoreError
from server.store.migrations import APPLICATION_ID, LATEST, MIGRATIONS, Rewrite
from shared.view import RoomStatus

log = logging.getLogger("castell.store")

MEMORY = ":memory:"
SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")

_ROOM_COLUMNS = ", ".join(f.name for f in attrs.fields(RoomRecord))
_SEAT_COLUMNS = ", ".join(f.name for f in attrs.fields(SeatRecord))
_ACTION_COLUMNS = ", ".join(f.name for f in attrs.fields(ActionRecord))
_CHAT_COLUMNS = ", ".join(f.name for f in attrs.fields(ChatRecord))
_ACCOUNT_COLUMNS = ", ".join(f.name for f in attrs.fields(AccountRecord))
#: A rating's columns (server.store.base.RatingRecord) and the leaderboard's order.
_RATING_SELECT = ("ratings.account, accounts.name, mu, sigma, games, wins FROM ratings "
                  "JOIN accounts USING (account)")
_RATING_ORDER = "mu - 3 * sigma DESC, accounts.name_key"
#: How many distinct accounts a rating's account has met in rated games.
_OPPONENTS = ("(SELECT count(DISTINCT o.account) FROM rated_games g JOIN rated_games o "
              "ON o.room = g.room AND o.account <> g.account "
              "WHERE g.account = ratings.account)")

T = TypeVar("T")

#: What reading the file may raise: SQLite's errors, and a text (a table's name in the
#: schema, a stored value) whose bytes are not UTF-8, written there by another program.
_FILE_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def default_db_path() -> Path:
    """``castell.sqlite3`` in the user's data folder (created if missing), e.g.
    ``~/.local/share/castell/castell.sqlite3`` on Linux."""
    folder = platformdirs.user_data_path("castell", appauthor=False)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "castell.sqlite3"


def _room(row: tuple) -> RoomRecord:
    values = list(row)
    values[5] = bool(values[5])  # private
    values[14] = bool(values[14])  # rated
    values[15] = unpack_offers(values[15])
    return RoomRecord(*values)


def _seat(row: tuple) -> SeatRecord:
    room, seat, name, bot, bot_level, token_hash = row
    return SeatRecord(room, seat, name, bool(bot), bot_level, token_hash)


def _action(row: tuple) -> ActionRecord:
    values = list(row)
    values[6] = bool(values[6])  # timed_out
    return ActionRecord(*values)


class SQLiteStore(Store):
    """A :class:`Store` in the SQLite file at ``path`` (``":memory:"`` for a throwaway one).

    ``synchronous`` is the SQLite setting for every commit (``FULL`` unless you are measuring);
    ``busy_timeout`` how long, in seconds, open waits for another holder of the file to let go
    before it gives up with ``database_in_use``. ``thread`` says whether calls run on the
    worker thread: by default yes for a file, and no for ``":memory:"``, which never waits on a
    disk — there a hop to the thread and back would only add latency (and GIL hand-offs with
    the event loop) to every acknowledged action.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = MEMORY,
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 1.0,
        thread: bool | None = None,
        read_only: bool = False,
        group_commit: bool = True,
    ) -> None:
        if synchronous.upper() not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS}, not {synchronous!r}")
        self.path: str = MEMORY if str(path) == MEMORY else str(Path(path).expanduser())
        self.synchronous = synchronous.upper()
        self.busy_timeout = busy_timeout
        self.thread = self.path != MEMORY if thread is None else thread
        self.read_only = read_only
        #: Whether writes that arrive during a commit are committed together (see the
        #: module docstring); only on the worker thread, where a commit waits on the disk.
        self.group_commit = group_commit and self.thread
        self._queue: list[tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None
        #: Batches committed, and the writes they held (what ``python -m bench`` reports).
        self.batches = 0
        self.batched_writes = 0
        self._lock_file: int | None = None
        #: The journal mode SQLite granted (``wal``; ``memory`` for ``":memory:"``).
        self.journal_mode: str | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # -- life -------------------------------------------------------------------------------

    async def open(self) -> None:
        if self._executor is not None:
            return
        executor = ThreadPoolExecutor(1, thread_name_prefix="castell-store")
        try:
            await self._run(executor, self._open)
        except BaseException:
            # Cancelled or refused: make sure no connection (and so no lock) outlives us.
            executor.submit(self._close)
            executor.shutdown(wait=False)
            raise
        self._executor = executor

    async def close(self) -> None:
        committer = self._committer
        if committer is not None:  # the writes queued are committed (or fail) first
            with contextlib.suppress(Exception):
                await asyncio.shield(committer)
        executor, self._executor = self._executor, None
        if executor is None:
            return
        try:
            await self._run(executor, self._close)
        finally:
            executor.shutdown(wait=False)

    def _check_path(self) -> None:
        """Say plainly why a file path cannot work, before SQLite says "unable to open"."""
        path = Path(self.path)
        parent = path.parent
        if path.is_dir():
            self._cannot_open(f"cannot open the database {path}: it is a directory")
        if not parent.exists():
            self._cannot_open(
                f"cannot create the database {path}: the folder {parent} does not exist"
            )
        if not parent.is_dir():
            self._cannot_open(f"cannot create the database {path}: {parent} is not a folder")
        if path.exists() and not os.access(path, os.R_OK | os.W_OK):
            self._cannot_open(f"cannot open the database {path}: permission denied")
        if not os.access(parent, os.W_OK | os.X_OK):
            # SQLite writes its journal beside the database, so the folder must be writable.
            self._cannot_open(
                f"cannot open the database {path}: no permission to create files in {parent}"
            )

    def _cannot_open(self, message: str) -> None:
        raise StoreError(message, code="cannot_open", path=self.path)

    def _take_lock(self) -> None:
        """The one-writer-per-file lock (see the module docstring)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(
                f"another castell-server (or another program) is using {self.path}; stop it, "
                "or give this server another database",
                code="database_in_use",
                path=self.path,
            ) from None
        self._lock_file = fd

    def _drop_lock(self) -> None:
        fd, self._lock_file = self._lock_file, None
        if fd is not None:
            os.close(fd)  # releases the flock; SQLite's connection is closed before this

    def _open_read_only(self) -> None:
        """A connection that can only read: no lock file, no migration, no journal change."""
        if not Path(self.path).is_file():
            self._cannot_open(f"cannot open the database {self.path}: there is no such file")
        try:
            conn = sqlite3.connect(f"file:{quote(self.path)}?mode=ro", uri=True,
                                   timeout=self.busy_timeout, isolation_level=None)
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
            if application_id != APPLICATION_ID:
                conn.close()
                raise StoreError(f"{self.path} is not a Castell database",
                                 code="not_castell_database", path=self.path)
            version = conn.execute("SELECT version FROM schema_version").fetchone()[0]
        except _FILE_ERRORS as exc:
            raise self._translate(exc) from exc
        if version != LATEST:
            conn.close()
            raise schema_too_new(self.path, version, LATEST, self.path) if version > LATEST \
                else StoreError(f"{self.path} has an older schema ({version}); start "
                                "castell-server on it once to upgrade it",
                                code="schema_too_old", path=self.path)
        self._conn = conn

    def _open(self) -> None:
        if self.path != MEMORY:
            self._check_path()
            if self.read_only:
                self._open_read_only()
                return
            self._take_lock()
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None
            )
        except sqlite3.Error as exc:
            self._drop_lock()
            raise self._translate(exc) from exc
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._migrate(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            # Switched after the check, so that a refused file never had its journal changed.
            self.journal_mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute("PRAGMA fullfsync = ON")
            conn.execute("PRAGMA checkpoint_fullfsync = ON")
        except _FILE_ERRORS as exc:
            conn.close()
            self._drop_lock()
            raise self._translate(exc) from exc
        except BaseException:
            conn.close()
            self._drop_lock()
            raise
        self._conn = conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring the schema to :data:`LATEST`, or refuse a file that is not ours to change."""
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if objects == 0 and application_id == 0:
            current = 0  # a new, empty database
        elif application_id != APPLICATION_ID:
            raise StoreError(
                f"{self.path} is not a Castell database (it is another program's SQLite "
                "database); give castell-server another path. Nothing in it was changed.",
                code="not_castell_database",
                path=self.path,
            )
        else:
            try:
                rows = conn.execute("SELECT version FROM schema_version").fetchall()
            except sqlite3.OperationalError:
                rows = []
            if len(rows) != 1 or not isinstance(rows[0][0], int):
                raise StoreError(
                    f"{self.path} is damaged: its schema version is missing. Nothing in it "
                    "was changed; restore it from a backup or give castell-server another path.",
                    code="corrupt_database",
                    path=self.path,
                )
            current = rows[0][0]
        if current > LATEST:
            raise schema_too_new(self.path, current, LATEST, self.path)
        for version in range(current + 1, LATEST + 1):
            for step in MIGRATIONS[version - 1]:
                if isinstance(step, Rewrite):
                    self._rewrite(conn, step)
                else:
                    conn.execute(step)
            conn.execute("UPDATE schema_version SET version = ?", (version,))
        self._rekey(conn)

    def _rekey(self, conn: sqlite3.Connection) -> None:
        """Make the stored name keys anew when they were made another way than
        :func:`server.names.name_key` makes them now (the accounts' and the bans by name)."""
        row = conn.execute("SELECT version FROM name_keys").fetchone()
        if row is not None and row[0] == names.KEY_VERSION:
            return
        keys = names.rekeyed(conn.execute("SELECT account, name, created_at FROM accounts"))
        # Every key out of the way first, then each in place: no two rows share one between.
        conn.execute("UPDATE accounts SET name_key = ? || account", (names.KEY_APART,))
        conn.executemany("UPDATE accounts SET name_key = ? WHERE account = ?",
                         [(key, account) for account, key in keys.items()])
        for (value,) in conn.execute("SELECT value FROM bans WHERE kind = 'name'").fetchall():
            conn.execute("UPDATE OR REPLACE bans SET value = ? WHERE kind = 'name' AND value = ?",
                         (names.name_key(value), value))
        conn.execute("DELETE FROM name_keys")
        conn.execute("INSERT INTO name_keys (version) VALUES (?)", (names.KEY_VERSION,))
        log.info("%s: the name keys of %d accounts were made anew (%s)", self.path, len(keys),
                 names.KEY_VERSION)

    def _rewrite(self, conn: sqlite3.Connection, step: Rewrite, batch: int = 500) -> None:
        """Run a :class:`Rewrite` step, ``batch`` rows at a time in key order."""
        key = ", ".join(step.key)
        after = f"({key}) > ({', '.join('?' * len(step.key))})"
        last: tuple = ()
        while True:
            rows = conn.execute(
                f"SELECT {key}, {step.column} FROM {step.table}"
                f"{' WHERE ' + after if last else ''} ORDER BY {key} LIMIT ?",
                (*last, batch),
            ).fetchall()
            changed = []
            for row in rows:
                *row_key, value = row
                new = step.change(value)
                if new is None:
                    log.warning("%s: %s %s has a %s that cannot be read; it is left as it was",
                                self.path, step.table, tuple(row_key), step.column)
                elif new != value:
                    changed.append((new, *row_key))
            conn.executemany(
                f"UPDATE {step.table} SET {step.column} = ? WHERE "
                + " AND ".join(f"{name} = ?" for name in step.key),
                changed,
            )
            if len(rows) < batch:
                return
            last = tuple(rows[-1][:-1])

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        self._drop_lock()

    def _translate(self, exc: sqlite3.Error | UnicodeDecodeError) -> StoreError:
        """The StoreError that says, for a person, what SQLite's error means for this file."""
        primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        path = self.path
        if isinstance(exc, UnicodeDecodeError) or "decode to UTF-8" in str(exc):
            # Python's sqlite3 reads every text as UTF-8; SQLite itself never checks it.
            return StoreError(
                f"{path} is damaged: it holds text that is not UTF-8 (in its schema or its "
                "records), which Castell never writes. Nothing in it was changed; restore it "
                "from a backup or give castell-server another path.",
                code="corrupt_database",
                path=path,
            )
        if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return StoreError(
                f"another castell-server (or another program) is using {path}; stop it, or "
                "give this server another database",
                code="database_in_use",
                path=path,
            )
        if primary == sqlite3.SQLITE_NOTADB:
            return StoreError(
                f"{path} is not a Castell database (SQLite: file is not a database); give "
                "castell-server another path. Nothing in it was changed.",
                code="not_a_database",
                path=path,
            )
        if primary == sqlite3.SQLITE_CORRUPT:
            return StoreError(
                f"{path} is damaged (SQLite: {exc}); restore it from a backup or give "
                "castell-server another path",
                code="corrupt_database",
                path=path,
            )
        if primary == sqlite3.SQLITE_CONSTRAINT:
            return StoreError(
                f"a record was refused by {path}: {exc}", code="invalid_record", path=path
            )
        if primary in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY):
            return StoreError(
                f"cannot open the database {path} (SQLite: {exc})", code="cannot_open", path=path
            )
        return StoreError(f"the database {path} failed: {exc}", code="store_failed", path=path)

    # -- running on the worker --------------------------------------------------------------

    async def _call(self, work: Callable[..., T], *args: Any) -> T:
        executor = self._executor
        if executor is None:
            raise StoreError(
                f"the store {self.path} is not open", code="store_closed", path=self.path
            )
        return await self._run(executor, work, *args)

    async def _run(self, executor: ThreadPoolExecutor, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the worker thread, or at once on this one (see ``thread``)."""
        if not self.thread:
            return work(*args)
        return await asyncio.get_running_loop().run_in_executor(executor, work, *args)

    def _transaction(self, work: Callable[..., T], *args: Any, write: bool = True) -> T:
        """Run ``work(conn, *args)`` in one transaction on the worker thread.

        A write takes the write lock first (BEGIN IMMEDIATE); anything raised rolls it back.
        """
        conn = self._conn
        if conn is None:
            raise StoreError(
                f"the store {self.path} is not open", code="store_closed", path=self.path
            )
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                result = work(conn, *args)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except (sqlite3.InterfaceError, sqlite3.ProgrammingError, OverflowError) as exc:
            # A value SQLite cannot take as given: a record with a field of the wrong type.
            raise StoreError(
                f"a record cannot be stored in {self.path}: {exc}",
                code="invalid_record",
                path=self.path,
            ) from exc
        except _FILE_ERRORS as exc:
            raise self._translate(exc) from exc
        return result

    async def _write(self, work: Callable[..., T], *args: Any) -> T:
        if self.read_only:
            raise StoreError(f"the store {self.path} was opened read-only", code="read_only",
                             path=self.path)
        if not self.group_commit:
            return await self._call(self._transaction, work, *args)
        if self._executor is None:
            raise StoreError(
                f"the store {self.path} is not open", code="store_closed", path=self.path
            )
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.append((work, args, future))
        if self._committer is None or self._committer.done():
            self._committer = loop.create_task(self._commit_queued())
        return await future

    async def _commit_queued(self) -> None:
        """Commit the queued writes, a batch at a time: all those queued when the worker is
        free go in one transaction (:meth:`_batch`); those that come meanwhile, in the next."""
        while self._queue:
            batch, self._queue = self._queue, []
            executor = self._executor
            try:
                if executor is None:
                    raise StoreError(f"the store {self.path} is not open", code="store_closed",
                                     path=self.path)
                outcomes = await asyncio.get_running_loop().run_in_executor(
                    executor, self._batch, [(work, args) for work, args, _ in batch])
            except Exception as exc:  # the batch as a whole failed: each of its writes too
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.batches += 1
            self.batched_writes += len(batch)
            for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
                if future.done():  # its caller was cancelled: the write stands all the same
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    def _batch(self, items: list[tuple[Callable[..., Any], tuple[Any, ...]]],
               ) -> list[tuple[bool, Any]]:
        """Run each write of ``items`` in its own savepoint of one transaction, on the worker
        thread; returns, in order, (True, its result) or (False, its error). A write that
        raises is rolled back to its savepoint and the others go on; anything that fails the
        transaction itself (its COMMIT included) raises, and nothing of it is kept."""
        conn = self._conn
        if conn is None:
            raise StoreError(
                f"the store {self.path} is not open", code="store_closed", path=self.path
            )
        outcomes: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for work, args in items:
                    conn.execute("SAVEPOINT write")
                    try:
                        value = work(conn, *args)
                    except Exception as exc:
                        if not conn.in_transaction:  # SQLite rolled it all back: all fail
                            raise
                        conn.execute("ROLLBACK TO write")
                        conn.execute("RELEASE write")
                        outcomes.append((False, self._write_error(exc)))
                    else:
                        conn.execute("RELEASE write")
                        outcomes.append((True, value))
                conn.execute("COMMIT")
            except BaseException:
                # (a COMMIT refused by a deferred check leaves the transaction open)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except Exception as exc:
            error = self._write_error(exc)
            if error is exc:
                raise
            raise error from exc
        return outcomes

    def _write_error(self, exc: Exception) -> Exception:
        """What a write that raised ``exc`` fails with (as :meth:`_transaction` says it)."""
        error: Exception = exc
        if isinstance(exc, sqlite3.InterfaceError | sqlite3.ProgrammingError | OverflowError):
            error = StoreError(f"a record cannot be stored in {self.path}: {exc}",
                               code="invalid_record", path=self.path)
        elif isinstance(exc, _FILE_ERRORS):
            error = self._translate(exc)
        if error is not exc:
            error.__cause__ = exc
        return error

    async def _read(self, work: Callable[..., T], *args: Any) -> T:
        return await self._call(functools.partial(self._transaction, work, *args, write=False))

    def _status(
        self, conn: sqlite3.Connection, room: str, expect_version: int | None = None
    ) -> str:
        row = conn.execute(
            "SELECT status, version FROM rooms WHERE room = ?", (room,)
        ).fetchone()
        if row is None:
            raise StoreError(f"room {room} is not stored", code="unknown_room", path=self.path)
        if expect_version is not None and row[1] != expect_version:
            raise version_conflict(room, row[1], expect_version, self.path)
        return row[0]

    def _refuse_finished(
        self,
        conn: sqlite3.Connection,
        room: str,
        what: str,
        expect_version: int | None = None,
    ) -> None:
        if self._status(conn, room, expect_version) == RoomStatus.FINISHED:
            raise StoreError(
                f"room {room} is finished: {what} refused", code="room_finished", path=self.path
            )

    # -- writes -----------------------------------------------------------------------------

    async def create_room(self, room: RoomRecord) -> None:
        await self._write(self._create_room, room)

    def _create_room(self, conn: sqlite3.Connection, room: RoomRecord) -> None:
        if conn.execute("SELECT 1 FROM rooms WHERE room = ?", (room.room,)).fetchone():
            raise StoreError(
                f"room {room.room} is already stored", code="room_exists", path=self.path
            )
        values = room_values(room)
        marks = ", ".join("?" * len(values))
        conn.execute(f"INSERT INTO rooms ({_ROOM_COLUMNS}) VALUES ({marks})", values)

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

    # -- reads ------------------------------------------------------------------------------

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
            _room(row)
            for row in conn.execute(
                f"SELECT {_ROOM_COLUMNS} FROM rooms WHERE {where} ORDER BY created_at, room",
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
                StoredRoom(_room(row[:-1]), row[-1])
                for row in conn.execute(
                    f"SELECT {_ROOM_COLUMNS}, (SELECT count(*) FROM seats WHERE "
                    "seats.room = rooms.room AND seats.bot = 1) FROM rooms "
                    "WHERE status != 'finished' ORDER BY created_at, room"
                )
            ]
        )

    async def list_finished(self, limit: int = 50) -> list[RoomRecord]:
        return await self._read(self._list_finished, max(0, limit))

    def _list_finished(self, conn: sqlite3.Connection, limit: int) -> list[RoomRecord]:
        rows = conn.execute(
            f"SELECT {_ROOM_COLUMNS} FROM rooms WHERE status = 'finished' "
            "ORDER BY finished_at DESC, room LIMIT ?",
            (limit,),
        )
        return [_room(row) for row in rows]

    # -- accounts (schema 4) ----------------------------------------------------------------

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

    async def fill_progress(self, room: str, version: int, progress: Progress) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute(
                "UPDATE rooms SET round = ?, turn = ? WHERE room = ? AND version = ? "
                "AND round IS NULL", (progress.round, progress.turn, room, version),
            ).rowcount == 1

        return await self._write(work)

    async def account_games(self, account: str, *, finished: bool | None = None,
                            limit: int = 20) -> list[AccountGame]:
        return await self._read(self._account_games, account, finished, max(0, limit))

    def _account_games(self, conn: sqlite3.Connection, account: str, finished: bool | None,
                       limit: int) -> list[AccountGame]:
        status = "" if finished is None else \
            " AND rooms.status = 'finished'" if finished else " AND rooms.status != 'finished'"
        columns = ", ".join(f"rooms.{name}" for name in _ROOM_COLUMNS.split(", "))
        rows = conn.execute(
            f"SELECT {columns}, account_seats.seat FROM account_seats JOIN rooms USING (room) "
            f"WHERE account_seats.account = ?{status} "
            "ORDER BY rooms.created_at DESC, rooms.room LIMIT ?", (account, limit)).fetchall()
        rooms = [(_room(row[:-1]), int(row[-1])) for row in rows]
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

    # -- ratings (schema 5) -----------------------------------------------------------------

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

    # -- the server itself ---------------------------------------------------------------------

    async def server_meta(self, name: str, made: str) -> str:
        def work(conn: sqlite3.Connection) -> str:
            conn.execute("INSERT INTO server_meta (name, value) VALUES (?, ?) "
                         "ON CONFLICT (name) DO NOTHING", (name, made))
            row = conn.execute("SELECT value FROM server_meta WHERE name = ?",
                               (name,)).fetchone()
            return str(row[0])

        return await self._write(work)

    # -- bans ----------------------------------------------------------------------------------

    async def put_ban(self, ban: BanRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO bans (kind, value, until, reason, created_at, name) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, value) DO UPDATE SET "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(ban))

        await self._write(work)

    async def delete_ban(self, kind: str, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM bans WHERE kind = ? AND value = ?",
                                (kind, value)).rowcount > 0

        return await self._write(work)

    async def list_bans(self) -> list[BanRecord]:
        def work(conn: sqlite3.Connection) -> list[BanRecord]:
            rows = conn.execute("SELECT kind, value, until, reason, created_at, "
                                "coalesce(name, '') FROM bans ORDER BY created_at").fetchall()
            return [BanRecord(*row) for row in rows]

        return await self._read(work)

    # -- rematches -----------------------------------------------------------------------------

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

    # -- mutes and kicks -------------------------------------------------------------------

    async def put_mute(self, mute: MuteRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO mutes (value, until, reason, created_at, name) "
                         "VALUES (?, ?, ?, ?, ?) ON CONFLICT (value) DO UPDATE SET "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(mute))

        await self._write(work)

    async def delete_mute(self, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM mutes WHERE value = ?", (value,)).rowcount > 0

        return await self._write(work)

    async def list_mutes(self) -> list[MuteRecord]:
        def work(conn: sqlite3.Connection) -> list[MuteRecord]:
            rows = conn.execute("SELECT value, until, reason, created_at, coalesce(name, '') "
                                "FROM mutes ORDER BY created_at").fetchall()
            return [MuteRecord(*row) for row in rows]

        return await self._read(work)

    async def put_kick(self, kick: KickRecord) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO kicks (room, value, account, seat, until, reason, "
                         "created_at, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT (room, value) "
                         "DO UPDATE SET account = excluded.account, seat = excluded.seat, "
                         "until = excluded.until, reason = excluded.reason, "
                         "created_at = excluded.created_at, name = excluded.name",
                         attrs.astuple(kick))

        await self._write(work)

    async def delete_kick(self, room: str, value: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM kicks WHERE room = ? AND value = ?",
                                (room, value)).rowcount > 0

        return await self._write(work)

    async def list_kicks(self) -> list[KickRecord]:
        def work(conn: sqlite3.Connection) -> list[KickRecord]:
            rows = conn.execute("SELECT room, value, account, seat, until, reason, created_at, "
                                "coalesce(name, '') FROM kicks ORDER BY created_at").fetchall()
            return [KickRecord(*row) for row in rows]

        return await self._read(work)
