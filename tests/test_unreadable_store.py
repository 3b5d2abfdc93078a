"""Stored data that cannot be read back is refused plainly, never with a traceback: a
database whose schema or records hold text that is not UTF-8 (another program wrote it), and
a stored action that no longer decodes or replays."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest

from client.net import GameClient, ServerError
from server.store import SQLiteStore
from shared import messages as m
from tests.support.servers import ServerProcess, run_server_cli

#: SQL that another program might run on a Castell file: each leaves a text that is not UTF-8.
_DAMAGE = {
    # a table whose name (in the schema itself) is not UTF-8
    "table name": [
        "CREATE TABLE extra (a)",
        "PRAGMA writable_schema = ON",
        "UPDATE sqlite_master SET name = CAST(X'6578ff' AS TEXT), "
        "sql = CAST(X'435245415445205441424c4520226578ff222028612920' AS TEXT) "
        "WHERE name = 'extra'",
    ],
    # a column of Castell's own metadata renamed so
    "column name": [
        "PRAGMA writable_schema = ON",
        "UPDATE sqlite_master SET sql = replace(sql, 'version INTEGER', "
        "CAST(X'7665ff' AS TEXT) || ' INTEGER') WHERE name = 'schema_version'",
    ],
    # Castell's own metadata holding such a text
    "metadata": ["UPDATE schema_version SET version = CAST(X'31ff' AS TEXT)"],
    # a stored room whose id is such a text
    "room record": [
        "INSERT INTO rooms VALUES (CAST(X'72ff' AS TEXT), 'n', 2, 'base', NULL, 0, NULL, 1, "
        "'waiting', 0, 0, NULL, NULL)",
    ],
}


async def _damaged(path, how: str) -> None:
    async with SQLiteStore(path):
        pass
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _DAMAGE[how]:
        conn.execute(statement)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.mark.parametrize("how", sorted(_DAMAGE))
async def test_text_that_is_not_utf8_is_a_plain_refusal(tmp_path, how):
    db = tmp_path / "games.sqlite3"
    await _damaged(db, how)
    before = db.read_bytes()
    done = await asyncio.to_thread(run_server_cli, "--db", str(db), "--port", "0")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("castell-server: "), done.stderr
    assert str(db) in lines[0] and "damaged" in lines[0]
    if how != "room record":  # refused while checking the schema: not even the journal moved
        assert db.read_bytes() == before


@pytest.mark.parametrize("how", sorted(_DAMAGE))
async def test_the_store_says_corrupt_database(tmp_path, how):
    from server.store import StoreError

    db = tmp_path / "games.sqlite3"
    await _damaged(db, how)
    with pytest.raises(StoreError) as refused:
        async with SQLiteStore(db) as store:
            await store.load_unfinished()
    assert refused.value.code == "corrupt_database"
