"""A lone server on PostgreSQL holds its schema's lock for as long as it writes: when the
lock's session is killed (``pg_terminate_backend``), it says so and takes the lock back before
any further write, so a second lone server on the same schema is still refused. Each write's
own transaction checks that the lock's session still holds the lock: a write made before the
store heard of the kill (the end of the session hidden by a proxy, as a network can lose it)
takes the lock back first, or is refused when another server took it.

Real PostgreSQL, a schema of its own per test (tests/support/services.py); real server processes.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

import asyncpg
import pytest

from client.net.net import GameClient
from server.store import RoomRecord, SeatRecord
from server.store.errors import StoreError
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.proxy import cutting_proxy, through
from tests.support.servers import ServerProcess
from tests.support.services import POSTGRES_URL, store_schema

pytestmark = pytest.mark.timeout(60)

# The session holding a schema's lock: the advisory lock on hashtext('castell-server:SCHEMA'),
# whose low 32 bits PostgreSQL shows as objid.
_HOLDERS = """
SELECT pid FROM pg_locks
WHERE locktype = 'advisory' AND objsubid = 1 AND granted
  AND objid::bigint = (hashtext($1)::bigint & 4294967295)
"""


async def lock_holders(schema: str) -> list[int]:
    conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
    try:
        return sorted(row[0] for row in await conn.fetch(_HOLDERS, f"castell-server:{schema}"))
    finally:
        await conn.close()


async def kill_lock_session(schema: str) -> int:
    """Kill the session holding the schema's lock; returns once it is gone (PostgreSQL waits
    for the end with a timeout given), and its lock with it."""
    [pid] = await lock_holders(schema)
    conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1, 10000)", pid)
    finally:
        await conn.close()
    return pid


async def retaken(schema: str, killed: int, within: float = 10.0) -> list[int]:
    """The lock's holders once the killed session is gone and another session holds the
    lock (none, if nobody took it within ``within`` seconds)."""
    holders = [killed]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within):
            while not holders or killed in holders:
                await asyncio.sleep(0.05)
                holders = await lock_holders(schema)
    return [pid for pid in holders if pid != killed]


#: The sessions waiting for a schema's lock (as :data:`_HOLDERS`, not granted yet).
_WAITERS = _HOLDERS.replace("AND granted", "AND NOT granted")


async def test_a_server_started_as_the_last_one_dies_waits_for_its_lock_to_be_let_go():
    # kill -9, then a restart at once: the killed server's session ends only once PostgreSQL
    # sees its socket closed, a moment later. Opening waits that moment for the lock rather
    # than refuse the schema (it was refused at once, and a test that restarted a killed
    # writer failed so, one run in a dozen).
    async with store_schema() as url:
        schema = PostgresStore(url).schema
        dying = await asyncpg.connect(POSTGRES_URL, timeout=10)
        await dying.execute("SELECT pg_advisory_lock(hashtext($1))", f"castell-server:{schema}")
        killed = dying.get_server_pid()
        store = PostgresStore(url, pool_size=1)
        opening = asyncio.create_task(store.open())
        try:
            checker = await asyncpg.connect(POSTGRES_URL, timeout=10)
            try:
                async with asyncio.timeout(10):
                    while not await checker.fetch(_WAITERS, f"castell-server:{schema}"):
                        if opening.done():
                            await opening  # refused without waiting: this raises
                        await asyncio.sleep(0.01)
            finally:
                await checker.close()
            dying.terminate()  # its socket closed, as a killed process's is
            await opening
            holders = await lock_holders(schema)
            assert holders and killed not in holders  # the new store holds the lock
        finally:
            dying.terminate()
            opening.cancel()  # (still waiting only when the test failed before it ended)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await opening
            await store.close()


async def test_a_store_whose_lock_session_is_killed_takes_it_back_before_it_writes():
    async with store_schema() as url:
        store = PostgresStore(url, pool_size=2)
        schema = store.schema
        await store.open()
        try:
            await store.create_room(RoomRecord("r1", "Lock", 2, "normal", None, False, None, 1))
            killed = await kill_lock_session(schema)
            await store.put_seat(SeatRecord("r1", 0, "Anna"))  # after the lock is held again
            holders = await lock_holders(schema)
            assert holders and killed not in holders
            second = PostgresStore(url, pool_size=2)
            with pytest.raises(StoreError) as refused:
                await second.open()
            assert refused.value.code == "database_in_use"
        finally:
            await store.close()


async def test_a_lone_server_whose_lock_session_is_killed_keeps_the_schema_to_itself():
    async with store_schema() as url:
        schema = PostgresStore(url).schema
        with ServerProcess("--db", url, "--log-level", "warning") as first:
            anna = await GameClient.connect(first.url)
            await anna.hello("Anna")
            made = await anna.request(m.CreateRoom, name="Alone", seats=2)
            killed = await kill_lock_session(schema)
            # Without a write in between, the server notices by itself and takes it back.
            assert await retaken(schema, killed), "nobody holds the schema's lock"
            with pytest.raises(RuntimeError, match="another castell-server"):
                ServerProcess("--db", url, timeout=15)
            biel = await GameClient.connect(first.url)
            await biel.hello("Biel")
            joined = await biel.request(m.JoinRoom, room=made.room)
            assert joined.seat == 1
            for client in (anna, biel):
                await client.close()
            first.terminate()
            log = first.stderr()
        assert "the session holding this server's lock on the schema was lost" in log
        assert "the lock on the schema is held again" in log


@pytest.mark.parametrize("group_commit", [True, False], ids=["group-commit", "one-by-one"])
async def test_a_write_after_an_unnoticed_kill_is_refused_once_another_server_holds_the_lock(
        group_commit):
    async with store_schema() as url:
        parts = urlsplit(url)
        async with cutting_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
            proxy.hide_closes()
            store = PostgresStore(through(url, proxy.port), pool_size=2,
                                  group_commit=group_commit)
            await store.open()
            rival = PostgresStore(url, pool_size=2)
            try:
                await store.create_room(RoomRecord("r1", "Lock", 2, "normal", None, False,
                                                   None, 1))
                killed = await kill_lock_session(store.schema)
                assert await lock_holders(store.schema) == []
                await rival.open()  # the schema is the rival's now; the store never heard
                assert killed not in await lock_holders(store.schema)
                with pytest.raises(StoreError) as refused:
                    await store.put_seat(SeatRecord("r1", 0, "Anna"))
                assert refused.value.code == "database_in_use"
                record = await rival.load("r1")
                assert record is not None and not record.seats  # nothing was written
            finally:
                await rival.close()
                await store.close()


async def test_a_write_after_an_unnoticed_kill_takes_the_lock_back_first():
    async with store_schema() as url:
        parts = urlsplit(url)
        async with cutting_proxy(parts.hostname or "127.0.0.1", parts.port or 5432) as proxy:
            proxy.hide_closes()
            store = PostgresStore(through(url, proxy.port), pool_size=2)
            await store.open()
            try:
                await store.create_room(RoomRecord("r1", "Lock", 2, "normal", None, False,
                                                   None, 1))
                killed = await kill_lock_session(store.schema)
                await store.put_seat(SeatRecord("r1", 0, "Anna"))
                holders = await lock_holders(store.schema)
                assert holders and killed not in holders
                second = PostgresStore(url, pool_size=2)
                with pytest.raises(StoreError) as refused:
                    await second.open()
                assert refused.value.code == "database_in_use"
            finally:
                await store.close()
