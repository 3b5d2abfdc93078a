"""The server's identity (server.features.identity): made once, kept in the store across restarts
(the
SQLite file, the PostgreSQL schema that every node of a cluster shares), and said by real
servers on 127.0.0.1 in ``welcome`` and, before ``hello``, in reply to ``identify``."""

from __future__ import annotations

import pytest

from client.net.net import GameClient
from server.store.postgres import PostgresStore
from server.store.sqlite import SQLiteStore
from shared import messages as m
from tests.support.servers import serving
from tests.support.services import store_schema

pytestmark = pytest.mark.timeout(60)


async def identity_of(url: str) -> tuple[str, str | None]:
    """What the server at ``url`` says it is: before ``hello`` and in ``welcome``."""
    async with await GameClient.connect(url) as client:
        before = await client.request(m.Identify)
        welcome = await client.hello("Anna")
    assert isinstance(before, m.Identity)
    return before.server_id, welcome.server_id


async def test_a_server_says_who_it_is_before_hello_and_keeps_it_across_restarts(tmp_path):
    path = tmp_path / "castell.db"
    async with serving(SQLiteStore(path)) as (_, url):
        first, in_welcome = await identity_of(url)
    assert first == in_welcome and first.startswith("srv-")
    async with serving(SQLiteStore(path)) as (_, url):
        assert await identity_of(url) == (first, first)
    # Another store is another server.
    async with serving(SQLiteStore(tmp_path / "other.db")) as (_, url):
        other, _ = await identity_of(url)
    assert other != first


async def test_two_servers_on_one_postgresql_schema_are_one_server():
    async with store_schema() as db:
        async with serving(PostgresStore(db, shared=True, pool_size=1)) as (_, a), \
                serving(PostgresStore(db, shared=True, pool_size=1)) as (_, b):
            said_a, said_b = await identity_of(a), await identity_of(b)
        assert said_a == said_b and said_a[0] == said_a[1]
        async with serving(PostgresStore(db, shared=True, pool_size=1)) as (_, again):
            assert await identity_of(again) == said_a
