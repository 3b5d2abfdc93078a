"""What every part of the PostgreSQL store shares: the pool, the schema's lock and the way a
write reaches the database (:class:`PostgresCore`); the parts by what they keep are
:mod:`server.store.postgres_games`, :mod:`~server.store.postgres_accounts`,
:mod:`~server.store.postgres_ratings` and :mod:`~server.store.postgres_moderation`, composed
into :class:`server.store.postgres.PostgresStore`, the store that several server nodes share.

How the store keeps the promises of the interface:

* **Its own schema.** The tables live in one PostgreSQL schema (``castell`` unless the URL says
  ``?schema=NAME``), created at the first open; every connection of the pool has its
  ``search_path`` set to it, so several Castell installations (or test runs) can share one
  database without touching each other's rooms.
* **Migrations under a lock.** Opening checks the schema's ``schema_version`` and runs the
  missing migrations of :data:`~server.store.migrations.POSTGRES_MIGRATIONS` in one transaction
  holding an advisory lock, so nodes starting together migrate once; a schema written by a
  newer Castell, or one holding another program's tables, is refused and left untouched (the
  transaction is rolled back).
* **Acknowledged means durable.** Every write is one transaction, and ``synchronous_commit``
  is forced ``on`` for our connections: a commit returns once the write-ahead log is on disk,
  whatever the database's default.
* **One server, or one cluster.** Like the SQLite file, a schema is held by one server: the
  store keeps a session advisory lock on it from open to close (PostgreSQL drops it when the
  process dies), so a second castell-server is refused with ``database_in_use``, after
  waiting :data:`LOCK_WAIT` for the lock (a server killed a moment ago, then started
  again, finds the lock let go once PostgreSQL has seen its socket close). Should
  that session end under it (killed with ``pg_terminate_backend``, PostgreSQL restarted, the
  network cut), the store logs it, takes the lock back at once, and makes no write until it
  holds it again: a write meanwhile waits for it, or is refused when another server took the
  lock first (``database_in_use``). The store may hear of the end late (a network can lose
  it), so each write's own transaction checks, before anything else, that the lock's session
  still holds the lock (:data:`_STILL_HELD`, in ``pg_locks``); when it does not, the
  transaction is rolled back, the lock taken back (or the write refused) and the write run
  again. That check takes a second advisory lock, the *writes* lock, shared, until its
  transaction ends, and a server that takes the schema's lock waits for the writes lock
  alone once before it opens: so a write that passed its check commits before another
  server's first write, and one that did not is refused. A store
  opened ``shared`` takes the lock in shared mode instead: the nodes of a cluster share the
  schema with each other, and with no lone server. What keeps two nodes from writing one
  room is then the room's lease (``server.cluster.node``) and, should a stale holder try anyway,
  ``expect_version``: a write checks the room's stored version under a row lock
  (``SELECT … FOR UPDATE``) in its transaction.
* **Writes about one room in order.** The pool runs statements on several connections; a
  first-come, first-served lock per room keeps the writes about one room in the order they
  were awaited.
* **Group commit.** Unless ``group_commit=False``, writes are not each their own
  transaction: those that arrive while a commit is in flight wait in a queue and go together
  in the next one (one WAL flush for many rooms), each inside its own savepoint. A write that
  fails (a fenced write's ``version_conflict``, a finished room) is rolled back to its
  savepoint and fails alone; the others of its batch are committed. A write's coroutine
  returns only once its batch's COMMIT did; when the COMMIT (or the connection) fails, every
  write of the batch fails, and no other.

``asyncpg`` is imported when a store opens, so a server on SQLite never needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs

from server.core import names
from server.store.errors import StoreError
from server.store.migrations import (
    APPLICATION,
    LATEST,
    POSTGRES_MIGRATIONS,
    POSTGRES_TABLES,
    Rewrite,
)
from server.store.records import (
    RoomRecord,
    schema_too_new,
    unpack_offers,
    version_conflict,
)
from shared.view import RoomStatus

if TYPE_CHECKING:
    import asyncpg

T = TypeVar("T")


log = logging.getLogger("castell.store")


DEFAULT_SCHEMA = "castell"


ROOM_COLUMNS = ", ".join(f.name for f in attrs.fields(RoomRecord))

#: Seconds opening waits for the schema's lock when another session holds it, before it is
#: refused (``database_in_use``): long enough for the session of a server killed a moment
#: ago to end (PostgreSQL lets its locks go once it sees the socket closed).
LOCK_WAIT = 1.0

#: Whether the lock's session (its pid, $2) still holds the schema's lock ($3, hashed as the
#: lock is taken), checked first in every write's transaction: after taking the writes lock
#: ($1) shared for the transaction — refused (false) while a server opening waits for it.
_STILL_HELD = """
    SELECT CASE WHEN pg_try_advisory_xact_lock_shared(hashtext($1)) THEN EXISTS (
        SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND pid = $2 AND objsubid = 1
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid::bigint = ((hashtext($3)::bigint >> 32) & 4294967295)
          AND objid::bigint = (hashtext($3)::bigint & 4294967295))
    ELSE false END
"""


class _LockLost(Exception):
    """A write's transaction found the schema's lock no longer held by the session ``pid``."""

    def __init__(self, pid: int) -> None:
        super().__init__(pid)
        self.pid = pid


def marks(count: int) -> str:
    """``$1, $2, ...`` up to ``$count``: the placeholders of a statement."""
    return ", ".join(f"${n}" for n in range(1, count + 1))


def redact(url: str) -> str:
    """``url`` without its password, fit for a log line or an error message."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def split_schema(url: str) -> tuple[str, str]:
    """The connection URL without our ``schema`` parameter, and that schema (default
    :data:`DEFAULT_SCHEMA`); every other parameter goes to ``asyncpg`` as it is."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = DEFAULT_SCHEMA
    kept = []
    for key, value in query:
        if key == "schema":
            schema = value
        else:
            kept.append((key, value))
    if not schema:
        raise StoreError(f"{redact(url)}: ?schema= needs a name", code="cannot_open")
    return urlunsplit(parts._replace(query=urlencode(kept))), schema


def _ident(name: str) -> str:
    """``name`` quoted as a PostgreSQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def room_of(row: Any) -> RoomRecord:
    """A room's row (:data:`ROOM_COLUMNS`) as its record."""
    values = list(row)
    values[15] = unpack_offers(values[15])
    return RoomRecord(*values)


class PostgresCore:
    """The PostgreSQL schema and the machinery every part of the store runs on: open and
    close (the schema's lock, the checks, the migrations), the lock kept and taken back, one
    snapshot per read, writes about one room in order and committed in groups, and the fence
    (:meth:`_status`). Its parameters are :class:`~server.store.postgres.PostgresStore`'s."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        shared: bool = False,
        pool_size: int = 8,
        connect_timeout: float = 10.0,
        group_commit: bool = True,
    ) -> None:
        self.dsn, url_schema = split_schema(url)
        self.schema = schema or url_schema
        #: The database as errors and logs name it: the URL without its password.
        self.path = redact(url)
        self.shared = shared
        self.pool_size = pool_size
        self.connect_timeout = connect_timeout
        self._pool: asyncpg.Pool | None = None
        self._holder: asyncpg.Connection | None = None
        self._room_locks: dict[str, tuple[asyncio.Lock, int]] = {}
        #: Whether writes arriving during a commit are committed together (module docstring).
        self.group_commit = group_commit
        self._queue: list[tuple[Callable[[asyncpg.Connection], Awaitable[Any]],
                                asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None
        #: Batches committed, and the writes they held.
        self.batches = 0
        self.batched_writes = 0
        #: Batches in which a write failed, run again with a savepoint per write.
        self.batches_retried = 0
        self._relock = asyncio.Lock()
        self._retaking: asyncio.Task[None] | None = None
        #: The pid of the session holding the schema's lock, as PostgreSQL names it.
        self._holder_pid = 0
        #: Writes' transactions that found the lock gone (their writes were run again).
        self.lock_checks_failed = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, schema={self.schema!r})"

    async def open(self) -> None:
        if self._pool is not None:
            return
        try:
            import asyncpg
        except ImportError as exc:  # the optional `cluster` extra is not installed
            raise StoreError(
                "a PostgreSQL database needs the asyncpg package: install castell[cluster]",
                code="unsupported_backend",
                path=self.path,
            ) from exc
        holder = await self._hold_lock(asyncpg)
        try:
            pool = await asyncpg.create_pool(
                self.dsn,
                min_size=1,
                max_size=self.pool_size,
                timeout=self.connect_timeout,
                server_settings={
                    "search_path": self.schema,
                    "synchronous_commit": "on",
                    "application_name": "castell-server",
                },
            )
        except BaseException as exc:
            await holder.close()
            if isinstance(exc, Exception):
                raise self._translate(exc, opening=True) from exc
            raise
        try:
            async with pool.acquire() as conn, conn.transaction():
                await self._migrate(conn)
        except BaseException as exc:
            await pool.close()
            await holder.close()
            if isinstance(exc, Exception) and not isinstance(exc, StoreError):
                raise self._translate(exc, opening=True) from exc
            raise
        self._pool, self._holder = pool, holder
        self._holder_pid = holder.get_server_pid()
        holder.add_termination_listener(self._lock_lost)

    def _lock_lost(self, conn: asyncpg.Connection) -> None:
        """The session holding the schema's lock ended (killed, the server restarted, the
        network cut): the lock went with it. Retake it at once; no write is made until it
        is held again (see :meth:`_check_lock`)."""
        if conn is not self._holder or self._pool is None:
            return  # closed by close(), or an older session
        log.error("%s (schema %s): the session holding this server's lock on the schema "
                  "was lost; no write is made until the lock is taken again",
                  self.path, self.schema)
        if self._retaking is None or self._retaking.done():
            self._retaking = asyncio.get_running_loop().create_task(self._retake())

    async def _retake(self) -> None:
        """Try to take the lock back until it is held (or the store is closed)."""
        delay = 0.0
        while self._pool is not None:
            await asyncio.sleep(delay)
            try:
                await self._check_lock()
                return
            except StoreError:
                delay = min(5.0, delay * 2 or 0.25)

    async def _check_lock(self) -> None:
        """Before a write: the schema's lock must be held by this store, retaken if its
        session was lost; refused (``database_in_use``, or ``store_failed`` when PostgreSQL
        does not answer) otherwise, so that no write is made without it."""
        holder = self._holder
        if holder is not None and not holder.is_closed():
            return
        import asyncpg

        async with self._relock:
            holder = self._holder
            if holder is not None and not holder.is_closed():
                return
            try:
                new = await self._hold_lock(asyncpg)
            except StoreError as exc:
                if exc.code == "database_in_use":
                    log.error("%s (schema %s): this server lost its lock on the schema and "
                              "another server holds it now: no write is made", self.path,
                              self.schema)
                raise StoreError(f"{exc}", code="store_failed" if exc.code == "cannot_open"
                                 else exc.code, path=self.path) from exc
            if self._pool is None:
                await new.close()
                raise StoreError(
                    f"the store {self.path} is not open", code="store_closed", path=self.path
                )
            self._holder, self._holder_pid = new, new.get_server_pid()
            new.add_termination_listener(self._lock_lost)
            log.warning("%s (schema %s): the lock on the schema is held again", self.path,
                        self.schema)

    @property
    def _lock_key(self) -> str:
        return f"castell-server:{self.schema}"

    @property
    def _writes_key(self) -> str:
        return f"castell-writes:{self.schema}"

    async def _lock_held(self, conn: asyncpg.Connection) -> None:
        """First in a write's transaction: the lock must still be this store's session's
        (see the module docstring), else :class:`_LockLost`."""
        pid = self._holder_pid
        if not await conn.fetchval(_STILL_HELD, self._writes_key, pid, self._lock_key):
            raise _LockLost(pid)

    async def _lock_gone(self, lost: _LockLost, attempt: int) -> None:
        """A write's check found the lock gone: forget its session and take it back (or be
        refused, ``database_in_use``, when another server has it); the write runs again,
        once."""
        self.lock_checks_failed += 1
        if attempt > 0:
            raise StoreError(f"{self.path} (schema {self.schema}): the lock on the schema "
                             "was taken again but a write still finds it gone; no write is "
                             "made", code="store_failed", path=self.path)
        async with self._relock:
            holder = self._holder
            if holder is not None and not holder.is_closed() and self._holder_pid == lost.pid:
                log.error("%s (schema %s): the session holding this server's lock on the "
                          "schema no longer holds it; no write is made until the lock is "
                          "taken again", self.path, self.schema)
                self._holder = None
                holder.terminate()
        await self._check_lock()

    async def _hold_lock(self, asyncpg: Any) -> asyncpg.Connection:
        """A connection holding the schema's advisory lock (shared or not), or a refusal.
        Taken alone, it waits until no write of a server that held it before is under way
        (the writes lock, taken and let go at once)."""
        try:
            holder = await asyncpg.connect(
                self.dsn, timeout=self.connect_timeout,
                server_settings={"application_name": "castell-server"},
            )
        except Exception as exc:
            raise self._translate(exc, opening=True) from exc
        mode = "_shared" if self.shared else ""
        try:
            # Waited for, a moment: the session of a server killed just before (kill -9, then
            # a restart at once) ends only once PostgreSQL sees its socket closed, and its
            # lock goes with it; a server that is still running keeps its lock for good.
            held = True
            try:
                async with holder.transaction():
                    await holder.execute(
                        f"SET LOCAL lock_timeout = {max(1, round(LOCK_WAIT * 1000))}")
                    await holder.execute(f"SELECT pg_advisory_lock{mode}(hashtext($1))",
                                         self._lock_key)
            except asyncpg.exceptions.LockNotAvailableError:
                held = False
            if held and not self.shared:
                async with holder.transaction():
                    wait_ms = max(1, round(self.connect_timeout * 1000))
                    await holder.execute(f"SET LOCAL lock_timeout = {wait_ms}")
                    await holder.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                                         self._writes_key)
        except BaseException as exc:
            await holder.close()
            if isinstance(exc, Exception):
                raise self._translate(exc, opening=True) from exc
            raise
        if not held:
            await holder.close()
            raise StoreError(
                f"another castell-server is using the schema {self.schema} of {self.path}: "
                + ("a lone server holds it; stop it, or run every server as a node of one "
                   "cluster (--redis)" if self.shared else
                   "stop it, give this server another schema (?schema=NAME), or run every "
                   "server as a node of one cluster (--redis)"),
                code="database_in_use",
                path=self.path,
            )
        return holder

    async def close(self) -> None:
        committer = self._committer
        if committer is not None:  # the writes queued are committed (or fail) first
            with contextlib.suppress(Exception):
                await asyncio.shield(committer)
        pool, self._pool = self._pool, None
        holder, self._holder = self._holder, None
        if self._retaking is not None:
            self._retaking.cancel()
            self._retaking = None
        if pool is not None:
            await pool.close()
        if holder is not None:
            await holder.close()  # and with the session, the lock goes

    async def _migrate(self, conn: asyncpg.Connection) -> None:
        """Bring the schema to :data:`LATEST`, or refuse one that is not ours to change.

        Runs in the caller's transaction, under an advisory lock named after the schema, so
        that nodes opening the same schema together check and migrate it one after another.
        """
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))", f"castell-schema:{self.schema}"
        )
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {_ident(self.schema)}")
        tables = {
            row[0]
            for row in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1", self.schema
            )
        }
        ours = tables & set(POSTGRES_TABLES)
        if "schema_version" not in tables:
            if ours:
                self._not_ours(f"it has a {sorted(ours)[0]} table but no schema_version")
            current = 0
        else:
            import asyncpg

            try:
                rows = await conn.fetch(
                    "SELECT version FROM schema_version WHERE application = $1", APPLICATION
                )
            except asyncpg.UndefinedColumnError:
                self._not_ours("its schema_version table is another program's")
            if not rows:
                self._not_ours("its schema_version table is another program's")
            if len(rows) != 1:
                raise StoreError(
                    f"{self.path} (schema {self.schema}) is damaged: it records "
                    f"{len(rows)} schema versions. Nothing in it was changed.",
                    code="corrupt_database",
                    path=self.path,
                )
            current = rows[0][0]
        if current > LATEST:
            raise schema_too_new(
                f"{self.path} (schema {self.schema})", current, LATEST, self.path
            )
        for version in range(current + 1, LATEST + 1):
            for step in POSTGRES_MIGRATIONS[version - 1]:
                if isinstance(step, Rewrite):
                    await self._rewrite(conn, step)
                else:
                    await conn.execute(step)
            await conn.execute(
                "UPDATE schema_version SET version = $1 WHERE application = $2",
                version,
                APPLICATION,
            )
        await self._rekey(conn)

    async def _rekey(self, conn: asyncpg.Connection) -> None:
        """Make the stored name keys anew when they were made another way than
        :func:`server.core.names.name_key` makes them now (the accounts' and the bans by name)."""
        version = await conn.fetchval("SELECT version FROM name_keys LIMIT 1")
        if version == names.KEY_VERSION:
            return
        keys = names.rekeyed(tuple(row) for row in await conn.fetch(
            "SELECT account, name, created_at FROM accounts"))
        # Every key out of the way first, then each in place: no two rows share one between.
        await conn.execute("UPDATE accounts SET name_key = $1 || account", names.KEY_APART)
        await conn.executemany("UPDATE accounts SET name_key = $1 WHERE account = $2",
                               [(key, account) for account, key in keys.items()])
        for row in await conn.fetch("SELECT value FROM bans WHERE kind = 'name'"):
            value = row[0]
            key = names.name_key(value)
            if key != value:
                await conn.execute(
                    "INSERT INTO bans (kind, value, until, reason, created_at) "
                    "SELECT kind, $1, until, reason, created_at FROM bans "
                    "WHERE kind = 'name' AND value = $2 ON CONFLICT DO NOTHING", key, value)
                await conn.execute("DELETE FROM bans WHERE kind = 'name' AND value = $1",
                                   value)
        await conn.execute("DELETE FROM name_keys")
        await conn.execute("INSERT INTO name_keys (version) VALUES ($1)", names.KEY_VERSION)
        log.info("%s (schema %s): the name keys of %d accounts were made anew (%s)",
                 self.path, self.schema, len(keys), names.KEY_VERSION)

    async def _rewrite(self, conn: asyncpg.Connection, step: Rewrite, batch: int = 500) -> None:
        """Run a :class:`Rewrite` step, ``batch`` rows at a time in key order."""
        key = ", ".join(step.key)
        width = len(step.key)
        after = f"({key}) > ({marks(width)})"
        last: tuple = ()
        while True:
            rows = await conn.fetch(
                f"SELECT {key}, {step.column} FROM {step.table}"
                f"{' WHERE ' + after if last else ''} ORDER BY {key} LIMIT ${len(last) + 1}",
                *last, batch,
            )
            changed = []
            for row in rows:
                row_key, value = tuple(row[:width]), row[width]
                new = step.change(value)
                if new is None:
                    log.warning("%s (schema %s): %s %s has a %s that cannot be read; it is "
                                "left as it was", self.path, self.schema, step.table, row_key,
                                step.column)
                elif new != value:
                    changed.append((new, *row_key))
            if changed:
                await conn.executemany(
                    f"UPDATE {step.table} SET {step.column} = $1 WHERE "
                    + " AND ".join(f"{name} = ${n}" for n, name in enumerate(step.key, start=2)),
                    changed,
                )
            if len(rows) < batch:
                return
            last = tuple(rows[-1][:width])

    def _not_ours(self, why: str) -> None:
        raise StoreError(
            f"the schema {self.schema} of {self.path} is not a Castell schema ({why}); give "
            "castell-server another schema with ?schema=NAME. Nothing in it was changed.",
            code="not_castell_database",
            path=self.path,
        )

    def _translate(self, exc: BaseException, *, opening: bool = False) -> StoreError:
        """The StoreError that says, for a person, what went wrong with the database."""
        import asyncpg

        path = self.path
        if isinstance(exc, StoreError):
            return exc
        if isinstance(
            exc,
            asyncpg.InvalidCatalogNameError
            | asyncpg.InvalidAuthorizationSpecificationError
            | asyncpg.InvalidPasswordError
            | asyncpg.InsufficientPrivilegeError,
        ):
            return StoreError(
                f"cannot open the database {path} (PostgreSQL: {exc})", code="cannot_open",
                path=path,
            )
        if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
            return StoreError(
                f"a record was refused by {path}: {exc}", code="invalid_record", path=path
            )
        if isinstance(exc, asyncpg.DataError | OverflowError):
            return StoreError(
                f"a record cannot be stored in {path}: {exc}", code="invalid_record", path=path
            )
        if opening and isinstance(exc, OSError | TimeoutError | asyncpg.InterfaceError):
            return StoreError(
                f"cannot connect to the PostgreSQL server of {path} ({exc}); is it running, "
                "and is the address right?",
                code="cannot_open",
                path=path,
            )
        return StoreError(f"the database {path} failed: {exc}", code="store_failed", path=path)

    def _need_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreError(
                f"the store {self.path} is not open", code="store_closed", path=self.path
            )
        return self._pool

    @contextlib.asynccontextmanager
    async def _room_turn(self, room: str) -> AsyncIterator[None]:
        """Wait for this room's earlier writes: asyncio's lock serves waiters in order."""
        lock, users = self._room_locks.get(room, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._room_locks[room] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._room_locks[room]
            if users == 1:
                del self._room_locks[room]
            else:
                self._room_locks[room] = (lock, users - 1)

    async def probe(self) -> None:
        """A transaction that writes nothing, checked as every write is (the schema's lock
        still this store's): refused while the database or the lock is not there."""

        async def nothing(conn: asyncpg.Connection) -> None:
            await conn.execute("SELECT 1")

        await self._write("", nothing)

    async def _write(
        self, room: str, work: Callable[[asyncpg.Connection], Awaitable[T]]
    ) -> T:
        """Run ``work(conn)`` in one transaction, after this room's earlier writes."""
        pool = self._need_pool()
        async with self._room_turn(room):
            await self._check_lock()
            if self.group_commit:
                loop = asyncio.get_running_loop()
                future: asyncio.Future[T] = loop.create_future()
                self._queue.append((work, future))
                if self._committer is None or self._committer.done():
                    self._committer = loop.create_task(self._commit_queued())
                return await future
            for attempt in range(2):
                try:
                    async with pool.acquire() as conn, conn.transaction():
                        await self._lock_held(conn)
                        return await work(conn)
                except _LockLost as lost:
                    await self._lock_gone(lost, attempt)  # rolled back: taken back, or not
                except StoreError:
                    raise
                except Exception as exc:
                    raise self._translate(exc) from exc
            raise AssertionError("a second lost lock raises")

    async def _commit_queued(self) -> None:
        """Commit the queued writes a batch at a time: all those queued when the previous
        commit is done go in one transaction. The batch is tried first as it is, each
        write's statements one after another; should any write fail, that transaction is
        rolled back whole and the batch is run again with each write in a savepoint of its
        own, so that only the failing ones fail. (A savepoint costs two round trips per
        write, as many as a whole action's append.)"""
        while self._queue:
            batch, self._queue = self._queue, []
            outcomes: list[tuple[bool, Any]] = []
            try:
                for attempt in range(2):
                    pool = self._need_pool()
                    try:
                        async with pool.acquire() as conn:
                            if not await self._batch_at_once(conn, batch, outcomes):
                                self.batches_retried += 1
                                await self._batch_by_savepoints(conn, batch, outcomes)
                        break
                    except _LockLost as lost:
                        await self._lock_gone(lost, attempt)  # rolled back: taken back, or not
            except Exception as exc:  # the batch as a whole failed: each of its writes too
                failure = exc if isinstance(exc, StoreError) else self._translate(exc)
                if failure is not exc:
                    failure.__cause__ = exc
                for _, future in batch:
                    if not future.done():
                        future.set_exception(failure)
                continue
            self.batches += 1
            self.batched_writes += len(batch)
            for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
                if future.done():  # its caller was cancelled: the write stands all the same
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    async def _read(self, work: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """Run ``work(conn)`` in one read-only snapshot (REPEATABLE READ)."""
        pool = self._need_pool()
        try:
            async with pool.acquire() as conn, conn.transaction(
                isolation="repeatable_read", readonly=True
            ):
                return await work(conn)
        except StoreError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc

    async def _batch_at_once(self, conn: asyncpg.Connection,
                             batch: list[tuple[Callable[[asyncpg.Connection], Awaitable[Any]],
                                               asyncio.Future[Any]]],
                             outcomes: list[tuple[bool, Any]]) -> bool:
        """Every write of ``batch`` in one transaction, without savepoints; whether all of
        them succeeded and were committed (their values added to ``outcomes``). When one
        fails, nothing of the batch is kept (and a failure of the connection raises)."""
        values: list[tuple[bool, Any]] = []
        try:
            async with conn.transaction():
                await self._lock_held(conn)
                for work, _ in batch:
                    values.append((True, await work(conn)))
        except _LockLost:
            raise
        except Exception:
            if conn.is_closed():
                raise
            return False
        outcomes.extend(values)
        return True

    async def _batch_by_savepoints(
            self, conn: asyncpg.Connection,
            batch: list[tuple[Callable[[asyncpg.Connection], Awaitable[Any]],
                              asyncio.Future[Any]]],
            outcomes: list[tuple[bool, Any]]) -> None:
        """Every write of ``batch`` in one transaction, each in a savepoint: a write that
        fails is rolled back alone (its error added to ``outcomes``) and the rest commit."""
        async with conn.transaction():
            await self._lock_held(conn)
            for work, _ in batch:
                try:
                    async with conn.transaction():  # a savepoint
                        value = await work(conn)
                except Exception as exc:
                    if conn.is_closed():
                        raise
                    error = exc if isinstance(exc, StoreError) else self._translate(exc)
                    if error is not exc:
                        error.__cause__ = exc
                    outcomes.append((False, error))
                else:
                    outcomes.append((True, value))

    async def _status(
        self, conn: asyncpg.Connection, room: str, expect_version: int | None = None
    ) -> str:
        """The room's status, its row locked for this transaction; checks the fence."""
        row = await conn.fetchrow(
            "SELECT status, version FROM rooms WHERE room = $1 FOR UPDATE", room
        )
        if row is None:
            raise StoreError(f"room {room} is not stored", code="unknown_room", path=self.path)
        if expect_version is not None and row[1] != expect_version:
            raise version_conflict(room, row[1], expect_version, self.path)
        return row[0]

    async def _refuse_finished(
        self,
        conn: asyncpg.Connection,
        room: str,
        what: str,
        expect_version: int | None = None,
    ) -> None:
        if await self._status(conn, room, expect_version) == RoomStatus.FINISHED:
            raise StoreError(
                f"room {room} is finished: {what} refused", code="room_finished", path=self.path
            )
