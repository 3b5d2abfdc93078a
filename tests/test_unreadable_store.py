"""Stored data that cannot be read back is refused plainly, never with a traceback: a
database whose schema or records hold text that is not UTF-8 (another program wrote it), and
a stored action that no longer decodes or replays."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3

import msgpack
import pytest

from client.net.net import GameClient, ServerError
from server.store import SQLiteStore
from shared import messages as m
from tests.support.servers import run_server_cli, serving

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
        "'waiting', 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL)",
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


async def _game_then_stop(db: str) -> tuple[str, list[str]]:
    """Two players start a game and play a little on a server that then stops."""
    from server.store import open_store
    from tests.support.wire import play_legal

    async with serving(open_store(db)) as (_server, url):
        a = await GameClient.connect(url)
        await a.hello("Anna")
        joined_a = await a.request(m.CreateRoom, name="Kept", seats=2)
        b = await GameClient.connect(url)
        await b.hello("Bru")
        joined_b = await b.request(m.JoinRoom, room=joined_a.room)
        await a.request(m.StartGame)
        for c in (a, b):
            await c.wait_state(lambda p: p.view["status"] == "playing")
        await play_legal([a, b], random.Random(3), actions=3, end_bias=0.5)
        for c in (a, b):
            await c.close()
    return joined_a.room, [joined_a.token, joined_b.token]


#: A stored action damaged two ways: bytes that are no action, and an action the rules refuse
#: at that point of the game (an unknown region).
_BAD_ACTIONS = {
    "undecodable": b"\xc1 not msgpack",
    "illegal": msgpack.packb({"kind": "move", "region": "nowhere"}),
}


@pytest.mark.parametrize("how", sorted(_BAD_ACTIONS))
async def test_a_corrupted_stored_action_is_internal_error_and_logged(tmp_path, caplog, how):
    from server.store import open_store

    db = str(tmp_path / "games.sqlite3")
    room, tokens = await _game_then_stop(db)
    conn = sqlite3.connect(db, isolation_level=None)
    changed = conn.execute("UPDATE actions SET action = ? WHERE room = ? AND seq = 1",
                           (_BAD_ACTIONS[how], room)).rowcount
    conn.close()
    assert changed == 1
    caplog.set_level(logging.INFO)
    async with serving(open_store(db)) as (server, url):
        c = await GameClient.connect(url)
        await c.hello("Anna")
        with pytest.raises(ServerError) as refused:
            await c.request(m.JoinRoom, room=room, token=tokens[0])
        assert refused.value.code == "internal_error"
        assert "saved record" in refused.value.message
        assert room not in server.lobby.rooms
        # the connection goes on: the lobby still answers it
        listing = await c.request(m.ListRooms)
        assert room not in {r.room for r in listing.rooms}
        await c.close()
    told = [r for r in caplog.records if r.levelno >= logging.ERROR and room in r.getMessage()]
    assert told, "the operator is told which room cannot be read back"
