"""The real PostgreSQL and Redis the scale-out tests run against, and how each test gets a
corner of them to itself.

Both listen on 127.0.0.1 (``.ci/run`` checks that they answer before the tests start);
``CASTELL_TEST_POSTGRES`` and ``CASTELL_TEST_REDIS`` point elsewhere. A test never shares data
with another: it gets a PostgreSQL schema of its own and a fresh Redis key prefix (its keys
deleted afterwards).

A schema is either new and empty (:func:`fresh_schema`, dropped afterwards: for what opening
an empty or a foreign schema does), or one for a store (:func:`store_schema`): a schema an
earlier test of this process used, with every row its test wrote deleted, where there is one.
Its tables are made, so opening it migrates nothing: migrating a new schema takes PostgreSQL
about 0.1 s of CPU, which a hundred tests paid for the same 25 empty tables.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

POSTGRES_URL = os.environ.get(
    "CASTELL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("CASTELL_TEST_REDIS", "redis://127.0.0.1:6379/0")


def with_schema(schema: str, url: str = POSTGRES_URL) -> str:
    """The store URL of ``schema`` in the test database."""
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


@contextlib.asynccontextmanager
async def fresh_schema() -> AsyncIterator[str]:
    """A new, empty PostgreSQL schema's store URL; the schema is dropped afterwards."""
    schema = "test_" + secrets.token_hex(6)
    try:
        yield with_schema(schema)
    finally:
        await _drop(schema)


#: Schemas a test of this process left at the current version, emptied of rows, for the next
#: :func:`store_schema`; dropped at the end of the session (:func:`drop_spare_schemas`).
_spare: list[str] = []


@contextlib.asynccontextmanager
async def store_schema() -> AsyncIterator[str]:
    """A PostgreSQL schema's store URL, for a store: its tables made and empty where an earlier
    test left one (else new and empty: the store makes them). Afterwards it is emptied and
    kept for the next test, or dropped where its test changed more than rows (its version,
    its tables) or a session still holds it (a store left open, a server killed)."""
    schema = _spare.pop() if _spare else "test_" + secrets.token_hex(6)
    try:
        yield with_schema(schema)
    finally:
        if await _emptied(schema):
            _spare.append(schema)
        else:
            await _drop(schema)


async def _emptied(schema: str) -> bool:
    """Whether ``schema`` is as its migration left it once its rows are deleted: its tables
    and version the current ones, no session holding its lock (then its rows are deleted)."""
    import asyncpg

    from server.core.names import KEY_VERSION
    from server.store.migrations import LATEST, POSTGRES_TABLES
    from server.store.postgres import PostgresStore

    conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
    try:
        # a row a session still holds is not waited for: the schema is dropped instead
        await conn.execute("SET lock_timeout = '2s'")
        tables = {r[0] for r in await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)}
        if tables != set(POSTGRES_TABLES):
            return False
        name = f'"{schema}"'
        versions = await conn.fetch(f"SELECT application, version FROM {name}.schema_version")
        keys = await conn.fetch(f"SELECT version FROM {name}.name_keys")
        if [tuple(r) for r in versions] != [("castell", LATEST)] \
                or [r[0] for r in keys] != [KEY_VERSION]:
            return False
        store: Any = PostgresStore(with_schema(schema))
        async with conn.transaction():
            for key in (store._lock_key, store._writes_key):
                if not await conn.fetchval("SELECT pg_try_advisory_xact_lock(hashtext($1))", key):
                    return False
            # Children before the tables they refer to: a table refers only to those made
            # before it.
            for table in reversed(POSTGRES_TABLES):
                if table not in ("schema_version", "name_keys"):
                    await conn.execute(f'DELETE FROM {name}."{table}"')
            await conn.execute(
                "SELECT setval(format('%I.%I', schemaname, sequencename)::regclass, start_value,"
                " false) FROM pg_sequences WHERE schemaname = $1", schema)
        return True
    except asyncpg.PostgresError:
        return False
    finally:
        await conn.close()


async def _drop(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
    try:
        await conn.execute("SET lock_timeout = '10s'")
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


async def drop_spare_schemas() -> None:
    """Drop the schemas kept for the next test (at the end of the session)."""
    while _spare:
        await _drop(_spare.pop())


@contextlib.asynccontextmanager
async def fresh_prefix() -> AsyncIterator[str]:
    """A new Redis key prefix; every key under it is deleted afterwards."""
    import redis.asyncio as redis

    prefix = f"castell-test-{secrets.token_hex(6)}:"
    try:
        yield prefix
    finally:
        client = redis.Redis.from_url(REDIS_URL)
        try:
            keys = [key async for key in client.scan_iter(match=prefix + "*", count=500)]
            if keys:
                await client.delete(*keys)
        finally:
            await client.aclose()
