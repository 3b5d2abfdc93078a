"""What every part of the SQLite store shares: the file, its connection and the way a call
reaches it (:class:`SQLiteCore`); the parts by what they keep are :mod:`server.store.sqlite_games`,
:mod:`~server.store.sqlite_accounts`, :mod:`~server.store.sqlite_ratings` and
:mod:`~server.store.sqlite_moderation`, composed into :class:`server.store.sqlite.SQLiteStore`.

How the store keeps its promises:

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

from server.core import names
from server.store.errors import StoreError
from server.store.migrations import APPLICATION_ID, LATEST, MIGRATIONS, Rewrite
from server.store.records import (
    RoomRecord,
    schema_too_new,
    unpack_offers,
    version_conflict,
)
from shared.view import RoomStatus

log = logging.getLogger("castell.store")


MEMORY = ":memory:"


SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")


ROOM_COLUMNS = ", ".join(f.name for f in attrs.fields(RoomRecord))

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


def room_of(row: tuple) -> RoomRecord:
    """A room's row (:data:`ROOM_COLUMNS`) as its record."""
    values = list(row)
    values[5] = bool(values[5])  # private
    values[14] = bool(values[14])  # rated
    values[15] = unpack_offers(values[15])
    return RoomRecord(*values)


class SQLiteCore:
    """The SQLite file and the machinery every part of the store runs on: open and close
    (the lock, the checks, the migrations), the worker thread, one transaction per read,
    group commit for writes, and the fence (:meth:`_status`). Its parameters are
    :class:`~server.store.sqlite.SQLiteStore`'s."""

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
        return f"{type(self).__name__}({self.path!r})"

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
        :func:`server.core.names.name_key` makes them now (the accounts' and the bans by name)."""
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

    async def probe(self) -> None:
        """A write transaction that writes nothing: it takes the file's write lock as a
        write would (BEGIN IMMEDIATE), so it is refused while another program holds it."""
        await self._write(lambda conn: None)

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
