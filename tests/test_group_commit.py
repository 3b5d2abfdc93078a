"""Group commit (server/store): writes that arrive while a commit is in flight are committed
together, each acknowledged only once its own transaction is stored; one failing write fails
alone, a failing commit fails exactly the writes of its batch; and under kill -9, with 50 rooms
writing at once, every acknowledged version is there after the restart."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import AsyncIterator

import pytest

from client.net.net import GameClient
from server.store import SQLiteStore, Store, StoreError
from server.store.errors import VersionConflict
from server.store.postgres import PostgresStore
from shared import engine
from shared import messages as m
from shared.actions import EndTurn
from shared.view import state_from_view
from tests.support.servers import ServerProcess
from tests.support.services import store_schema
from tests.test_store import a_room, an_action, sqlite_backend

ROOMS = 20


@pytest.fixture(params=["sqlite", "postgresql"])
async def grouped(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[Store]:
    """A store with group commit on, with ROOMS rooms stored (r0 …), each at version 4."""
    if request.param == "sqlite":
        async with sqlite_backend(tmp_path) as (_, new):
            store: Store = new()
            async with store:
                for i in range(ROOMS):
                    await store.create_room(a_room(f"r{i}"))
                yield store
    else:
        async with store_schema() as url:
            store = PostgresStore(url, pool_size=4)
            async with store:
                for i in range(ROOMS):
                    await store.create_room(a_room(f"r{i}"))
                yield store


async def test_writes_that_arrive_together_share_a_commit_and_a_conflict_fails_alone(grouped):
    store = grouped
    assert store.group_commit
    before = store.batches, store.batched_writes
    # every room appends an action at once, fenced on the version it holds (4); room r7 was
    # taken over meanwhile (it is at 9), so its write must fail, and only its write
    await store.update_room("r7", version=9, expect_version=4)
    writes = [store.append_action(an_action(f"r{i}", 0), expect_version=4) for i in range(ROOMS)]
    results = await asyncio.gather(*writes, return_exceptions=True)
    refused = {i: r for i, r in enumerate(results) if r is not None}
    assert list(refused) == [7] and isinstance(refused[7], VersionConflict)
    for i in range(ROOMS):
        record = await store.load(f"r{i}")
        assert record is not None
        if i == 7:
            assert record.room.version == 9 and record.actions == ()
        else:
            assert record.room.version == 10 and [a.seq for a in record.actions] == [0]
    batches = store.batches - before[0] - 1  # (the update of r7 was a batch of its own)
    writes_done = store.batched_writes - before[1] - 1
    assert writes_done == ROOMS and batches < ROOMS  # grouped: fewer commits than writes


async def test_postgresql_runs_a_batch_again_by_savepoints_only_when_one_of_its_writes_fails():
    async with store_schema() as url:
        store = PostgresStore(url, pool_size=4)
        async with store:
            for i in range(ROOMS):
                await store.create_room(a_room(f"r{i}"))
            writes = [store.append_action(an_action(f"r{i}", 0), expect_version=4)
                      for i in range(ROOMS)]
            assert await asyncio.gather(*writes) == [None] * ROOMS
            assert store.batches_retried == 0  # all went through at once, no savepoint
            writes = [store.append_action(an_action(f"r{i}", 1), expect_version=10 if i else 4)
                      for i in range(ROOMS)]
            results = await asyncio.gather(*writes, return_exceptions=True)
            assert isinstance(results[0], VersionConflict) and results[1:] == [None] * (ROOMS - 1)
            assert store.batches_retried >= 1
            r0, r1 = await store.load("r0"), await store.load("r1")
            assert r0 is not None and r0.room.version == 10 and len(r0.actions) == 1
            assert r1 is not None and r1.room.version == 12 and len(r1.actions) == 2


async def test_off_each_write_is_its_own_transaction(tmp_path):
    store = SQLiteStore(tmp_path / "off.sqlite3", group_commit=False)
    async with store:
        for i in range(4):
            await store.create_room(a_room(f"r{i}"))
        await asyncio.gather(*(store.append_action(an_action(f"r{i}", 0)) for i in range(4)))
        assert store.batches == 0  # nothing went through the queue
        assert [(await store.load(f"r{i}")).room.version for i in range(4)] == [10] * 4


async def test_a_commit_that_fails_fails_exactly_the_writes_of_its_batch(tmp_path):
    store = SQLiteStore(tmp_path / "g.sqlite3")
    async with store:
        for i in range(4):
            await store.create_room(a_room(f"r{i}"))

        def orphan(conn: sqlite3.Connection) -> None:
            # A seat of no room, its foreign key checked only at COMMIT: the whole
            # transaction is refused there, after every savepoint of the batch was released.
            conn.execute("PRAGMA defer_foreign_keys = ON")
            conn.execute("INSERT INTO seats (room, seat, name, bot) VALUES ('nowhere', 0, "
                         "'x', 0)")

        first = asyncio.ensure_future(store.append_action(an_action("r0", 0)))
        await asyncio.sleep(0)  # r0's write is in flight; the next three queue behind it
        batch = [store.append_action(an_action("r1", 0)), store._write(orphan),
                 store.append_action(an_action("r2", 0))]
        results = await asyncio.gather(first, *batch, return_exceptions=True)
        assert results[0] is None
        assert all(isinstance(r, StoreError) and r.code == "invalid_record"
                   for r in results[1:])
        # nothing of the failed batch is kept; the write after it is stored
        await store.append_action(an_action("r3", 0))
        versions = [(await store.load(f"r{i}")).room.version for i in range(4)]
        assert versions == [10, 4, 4, 10]
        await store.append_action(an_action("r1", 0))  # and r1 may write again
        assert (await store.load("r1")).room.version == 10


async def _play(client: GameClient, acked: list[int], rng: random.Random) -> None:
    """Play seat 0 of the client's room until the connection is gone, recording the version
    of every action the server acknowledged."""
    while True:
        state = client.state
        assert state is not None
        view = state.view
        if view["status"] != "playing":
            return
        if view["turn"] != 0:
            await client.wait_state(lambda p, v=state.version: p.version > v, timeout=30)
            continue
        legal = engine.legal_actions(state_from_view(view), 0)
        ends = [a for a in legal if isinstance(a, EndTurn)]
        action = ends[0] if ends and rng.random() < 0.3 else rng.choice(legal)
        version = await client.act(action)
        acked.append(version)
        await client.wait_state(lambda p, v=version: p.version >= v, timeout=30)


async def test_kill_9_with_50_rooms_writing_at_once_loses_no_acknowledged_version(tmp_path):
    db = str(tmp_path / "kill.sqlite3")
    rooms: dict[str, list[int]] = {}
    with ServerProcess("--db", db, "--bot-delay", "0", "--bot-workers", "0",
                       "--group-commit", "on") as server:

        async def a_room(i: int) -> tuple[str, GameClient]:
            client = await GameClient.connect(server.url)
            await client.hello(f"P{i}")
            joined = await client.request(m.CreateRoom, name=f"room {i}", seats=2)
            await client.request(m.AddBot, level="random")
            await client.request(m.StartGame)
            await client.wait_state(lambda p: p.view["status"] == "playing", timeout=30)
            return joined.room, client

        clients = []
        for room, client in await asyncio.gather(*(a_room(i) for i in range(50))):
            rooms[room] = []
            clients.append(client)
        tasks = [asyncio.create_task(_play(c, rooms[room], random.Random(i)))
                 for i, (c, room) in enumerate(zip(clients, rooms, strict=True))]
        deadline = time.monotonic() + 60
        while sum(map(len, rooms.values())) < 300:  # every room writing, then kill -9
            assert time.monotonic() < deadline, "the rooms did not play"
            await asyncio.sleep(0.05)
            assert not any(t.done() and t.exception() for t in tasks)
        server.kill()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in clients:
            await client.close()
    acknowledged = {room: versions for room, versions in rooms.items() if versions}
    assert len(acknowledged) >= 40  # most rooms had acknowledged actions when it was killed
    with ServerProcess("--db", db) as again:  # the restart: every game comes back
        again.terminate()
    async with SQLiteStore(db, read_only=True) as store:
        for room, versions in acknowledged.items():
            record = await store.load(room)
            assert record is not None
            stored = {a.version for a in record.actions}
            assert set(versions) <= stored, room
            assert record.room.version >= max(versions)
