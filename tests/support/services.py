"""The real PostgreSQL and Redis the scale-out tests run against, and how each test gets a
corner of them to itself.

Both listen on 127.0.0.1 (``.ci/run`` checks that they answer before the tests start);
``CASTELL_TEST_POSTGRES`` and ``CASTELL_TEST_REDIS`` point elsewhere. A test never shares data
with another: it gets a fresh PostgreSQL schema (dropped afterwards) and a fresh Redis key
prefix (its keys deleted afterwards).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator

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
    import asyncpg

    schema = "test_" + secrets.token_hex(6)
    try:
        yield with_schema(schema)
    finally:
        conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
        try:
            await conn.execute("SET lock_timeout = '10s'")
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()


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
