"""The store gives back exactly what it was given, keeps it across crashes, and refuses what it
must without touching the database (server/store).

The behaviour tests take the ``store`` fixture, parametrised by backend: SQLite in a temporary
folder, and PostgreSQL in a fresh schema of the real server that is dropped afterwards (see
tests/support/services.py). A new backend adds its context manager to ``BACKENDS`` and runs
every one of them. Each database's own troubles (SQLite files that are directories, foreign or
locked; PostgreSQL servers that do not answer, schemas that are another program's) are tested on
that backend alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import attrs
import pytest

from server.store import (
    ActionRecord,
    GameRecord,
    RoomRecord,
    SeatRecord,
    SQLiteStore,
    Store,
    StoreError,
    default_db_path,
    hash_token,
    open_store,
    token_matches,
)
from server.store.base import KickRecord, MuteRecord, Progress
from server.store.migrations import LATEST
from server.store.postgres import PostgresStore
from server.store.records import AccountRecord, ChatRecord
from tests.support.services import POSTGRES_URL, fresh_schema, store_schema

REPO = Path(__file__).resolve().parents[1]

StoreFactory = Callable[[], Store]
#: What a backend gives a test: the URL open_store (and a subprocess) opens, and a factory of
#: new, unopened stores on that same database.
Backend = tuple[str, StoreFactory]


@contextlib.asynccontextmanager
async def sqlite_backend(tmp_path: Path) -> AsyncIterator[Backend]:
    """New stores on one SQLite file: calling the factory twice reopens the same database."""
    path = tmp_path / "castell.sqlite3"
    yield str(path), lambda: SQLiteStore(path, busy_timeout=0.05)


@contextlib.asynccontextmanager
async def postgres_backend(tmp_path: Path) -> AsyncIterator[Backend]:
    """New stores on one PostgreSQL schema of the test's own, with no rows."""
    async with store_schema() as url:
        yield url, lambda: PostgresStore(url, pool_size=4)


BACKENDS = [
    pytest.param(sqlite_backend, id="sqlite"),
    pytest.param(postgres_backend, id="postgresql"),
]


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with request.param(tmp_path) as made:
        yield made


@pytest.fixture
def new_store(backend: Backend) -> StoreFactory:
    return backend[1]


@pytest.fixture
async def store(new_store: StoreFactory):
    async with new_store() as opened:
        yield opened


def a_room(room: str = "r1", **changes) -> RoomRecord:
    """A room with every field set to something other than its default."""
    record = RoomRecord(
        room=room,
        name=f"Festa {room}",
        seats=3,
        variant="advanced",
        turn_seconds=90,
        private=True,
        code=f"code-{room}",
        seed=2**63 - 17,
        status="playing",
        version=4,
        created_at=1_700_000_000.25,
        started_at=1_700_000_060.5,
        finished_at=None,
        round=3,
        turn=1,
    )
    return attrs.evolve(record, **changes)


def an_action(room: str, seq: int) -> ActionRecord:
    return ActionRecord(
        room=room,
        seq=seq,
        seat=seq % 3,
        action=bytes([0x81, 0xA4]) + b"kind" + bytes([seq % 256]) * (seq % 5),
        at=1_700_000_100.0 + seq / 8,
        version=10 + 2 * seq,
    )


async def fill(store: Store, room: str = "r1") -> GameRecord:
    """Store a room with a player, a bot and three actions; return what was stored."""
    record = a_room(room)
    seats = (
        SeatRecord(room, 0, "Anna", bot=False, bot_level=None, token_hash=hash_token("t-anna")),
        SeatRecord(room, 2, "Bot 2", bot=True, bot_level="greedy", token_hash=None),
    )
    actions = tuple(an_action(room, seq) for seq in range(3))
    await store.create_room(record)
    for seat in seats:
        await store.put_seat(seat)
    for action in actions:
        await store.append_action(action)
    return GameRecord(attrs.evolve(record, version=actions[-1].version), seats, actions, None)


async def test_a_probe_writes_nothing_and_is_refused_once_the_store_is_closed(store: Store):
    """The probe a waiting room's retries ask (server.runtime.retries): taken while the store takes
    writes, changing nothing; refused with a StoreError as a write would be."""
    await store.create_room(a_room())
    await store.probe()
    assert await store.load("r1") is not None and await store.unfinished_rooms() == ["r1"]
    await store.close()
    with pytest.raises(StoreError):
        await store.probe()


async def test_every_record_comes_back_as_it_was_stored(store: Store):
    stored = await fill(store)
    assert await store.load("r1") == stored
    assert await store.load("nowhere") is None


async def test_a_room_with_defaults_and_nothing_else_round_trips(store: Store):
    bare = RoomRecord("r0", "Bare", 2, "normal", None, False, None, seed=0)
    await store.create_room(bare)
    assert await store.load("r0") == GameRecord(bare)


async def test_actions_come_back_in_seq_order_and_set_the_room_version(store: Store):
    await store.create_room(a_room())
    actions = [an_action("r1", seq) for seq in range(40)]
    for action in actions:
        await store.append_action(action)
    game = await store.load("r1")
    assert game.actions == tuple(actions)
    assert game.room.version == actions[-1].version


async def test_update_room_changes_only_the_fields_given(store: Store):
    await store.create_room(a_room(status="waiting", started_at=None))
    await store.update_room("r1", status="playing", started_at=1_700_000_500.0)
    await store.update_room("r1", version=77)
    got = (await store.load("r1")).room
    assert got == a_room(status="playing", started_at=1_700_000_500.0, version=77)
    with pytest.raises(StoreError) as refused:
        await store.update_room("nowhere", version=1)
    assert refused.value.code == "unknown_room"
    with pytest.raises(StoreError) as refused:
        await store.update_room("r1", status="paused")
    assert refused.value.code == "invalid_record"


async def test_where_a_game_stands_is_stored_by_the_writes_that_move_it(store: Store):
    async def stands(room: str = "r1") -> tuple[int | None, int | None]:
        got = (await store.load(room)).room
        return got.round, got.turn

    await store.create_room(a_room(status="waiting", version=0, round=None, turn=None))
    await store.update_room("r1", status="playing", version=1, progress=Progress(1, 2))
    assert await stands() == (1, 2)
    await store.append_action(ActionRecord("r1", 0, 2, b"\x80", 1.0, 2), expect_version=1,
                              progress=Progress(2, 0))
    assert await stands() == (2, 0)
    await store.append_action(ActionRecord("r1", 1, 0, b"\x80", 2.0, 3))  # none given
    assert await stands() == (2, 0)
    with pytest.raises(StoreError):  # a refused action moves nothing
        await store.append_action(ActionRecord("r1", 2, 0, b"\x80", 3.0, 4), expect_version=2,
                                  progress=Progress(9, 1))
    assert await stands() == (2, 0)
    await store.append_action(ActionRecord("r1", 2, 0, b"\x80", 3.0, 4), expect_version=3,
                              progress=Progress(10, None))
    assert await stands() == (10, None)
    # A game stored before schema 11: filled once, at the version it was replayed at.
    assert not await store.fill_progress("r1", 4, Progress(1, 1))  # it knows already
    await store.create_room(a_room("r2", version=5, round=None, turn=None))
    assert not await store.fill_progress("r2", 4, Progress(3, 0))  # it moved on since
    assert await store.fill_progress("r2", 5, Progress(3, 0))
    assert await stands("r2") == (3, 0)
    assert not await store.fill_progress("r2", 5, Progress(4, 1))
    assert await stands("r2") == (3, 0)


async def test_put_seat_replaces_the_holder_and_remove_seat_frees_it(store: Store):
    await fill(store)
    await store.put_seat(SeatRecord("r1", 0, "Bot 0", bot=True, bot_level="random"))
    await store.remove_seat("r1", 2)
    await store.remove_seat("r1", 1)  # never held: nothing happens
    assert (await store.load("r1")).seats == (
        SeatRecord("r1", 0, "Bot 0", bot=True, bot_level="random"),
    )
    with pytest.raises(StoreError) as refused:
        await store.put_seat(SeatRecord("r1", 3, "Nobody"))  # seats are 0–2
    assert refused.value.code == "invalid_record"
    with pytest.raises(StoreError) as refused:
        await store.put_seat(SeatRecord("nowhere", 0, "Nobody"))
    assert refused.value.code == "unknown_room"


async def test_a_duplicate_or_earlier_seq_is_refused_and_changes_nothing(store: Store):
    stored = await fill(store)
    with pytest.raises(StoreError) as refused:
        await store.append_action(attrs.evolve(an_action("r1", 1), version=999))
    assert refused.value.code == "duplicate_action"
    await store.append_action(an_action("r1", 5))  # gaps are allowed, going back is not
    with pytest.raises(StoreError) as refused:
        await store.append_action(an_action("r1", 4))
    assert refused.value.code == "action_out_of_order"
    game = await store.load("r1")
    assert game.actions == (*stored.actions, an_action("r1", 5))
    assert game.room.version == an_action("r1", 5).version
    with pytest.raises(StoreError) as refused:
        await store.append_action(an_action("nowhere", 0))
    assert refused.value.code == "unknown_room"


async def test_a_fenced_write_needs_the_version_it_expects(store: Store):
    await fill(store)  # the room is at version 14 (its last action's)
    await store.append_action(an_action("r1", 3), expect_version=14)
    assert (await store.load("r1")).room.version == 16
    # Another server took the room over and wrote version 17: the old holder is fenced out.
    await store.update_room("r1", version=17, expect_version=16)
    before = await store.load("r1")
    with pytest.raises(StoreError) as refused:
        await store.append_action(an_action("r1", 4), expect_version=16)
    assert refused.value.code == "version_conflict"
    assert "version 17, not 16" in str(refused.value)
    with pytest.raises(StoreError) as refused:
        await store.update_room("r1", version=18, status="finished", expect_version=16)
    assert refused.value.code == "version_conflict"
    assert await store.load("r1") == before
    with pytest.raises(StoreError) as refused:
        await store.append_action(an_action("nowhere", 0), expect_version=0)
    assert refused.value.code == "unknown_room"


async def test_every_write_about_a_room_is_fenced(store: Store):
    await fill(store)  # at version 14
    # A seat change is one write: the seat and the room's new version, fenced.
    await store.put_seat(SeatRecord("r1", 1, "Biel"), version=15, expect_version=14)
    await store.remove_seat("r1", 2, version=16, expect_version=15)
    game = await store.load("r1")
    assert game.room.version == 16 and [s.name for s in game.seats] == ["Anna", "Biel"]
    # Another server took the room over (version 17): the old holder changes nothing more.
    await store.update_room("r1", version=17, expect_version=16)
    before = await store.load("r1")
    refusals = [
        store.put_seat(SeatRecord("r1", 1, "Eve"), version=17, expect_version=16),
        store.put_seat(SeatRecord("r1", 2, "Eve"), expect_version=16),
        store.remove_seat("r1", 0, version=17, expect_version=16),
        store.finish("r1", {"winners": [0]}, 1_700_000_999.0, expect_version=16),
        store.delete_room("r1", expect_version=16),
    ]
    for write in refusals:
        with pytest.raises(StoreError) as refused:
            await write
        assert refused.value.code == "version_conflict"
    assert await store.load("r1") == before
    await store.finish("r1", {"winners": [0]}, 1_700_000_999.0, expect_version=17)
    await store.delete_room("r1", expect_version=17)
    assert await store.load("r1") is None
    await store.delete_room("r1", expect_version=17)  # not stored: nothing to refuse


async def test_creating_a_stored_room_again_is_refused(store: Store):
    stored = await fill(store)
    with pytest.raises(StoreError) as refused:
        await store.create_room(a_room(name="Impostor"))
    assert refused.value.code == "room_exists"
    assert await store.load("r1") == stored


async def test_finish_stores_the_result_and_closes_the_room(store: Store):
    await fill(store, "r1")
    await fill(store, "r2")
    await store.create_room(a_room("r3", status="waiting", created_at=1_800_000_000.0))
    result = {"scores": [{"seat": 0, "total": 41}], "winners": [0], "by_seat": {0: 41, 2: 38}}
    await store.finish("r1", result, finished_at=1_700_009_000.0)
    game = await store.load("r1")
    assert game.result == result
    assert (game.room.status, game.room.finished_at) == ("finished", 1_700_009_000.0)
    # Only unfinished rooms come back for resuming, oldest first.
    unfinished = await store.load_unfinished()
    assert [g.room.room for g in unfinished] == ["r2", "r3"]
    assert await store.unfinished_rooms() == ["r2", "r3"]
    assert unfinished[0] == await store.load("r2")
    with pytest.raises(StoreError) as refused:
        await store.append_action(an_action("r1", 3))
    assert refused.value.code == "room_finished"
    with pytest.raises(StoreError) as refused:
        await store.finish("r1", {"winners": []}, finished_at=1_700_009_001.0)
    assert refused.value.code == "room_finished"
    assert (await store.load("r1")) == game


async def test_a_result_that_is_not_plain_data_is_refused(store: Store):
    await fill(store)
    with pytest.raises(StoreError) as refused:
        await store.finish("r1", {"winners": {object()}}, finished_at=1.0)
    assert refused.value.code == "invalid_record"
    assert (await store.load("r1")).room.status == "playing"


async def test_list_finished_gives_the_latest_first(store: Store):
    for n, finished_at in enumerate([30.0, 10.0, 20.0]):
        await store.create_room(a_room(f"f{n}"))
        await store.finish(f"f{n}", {"n": n}, finished_at=finished_at)
    await store.create_room(a_room("open"))
    assert [r.room for r in await store.list_finished()] == ["f0", "f2", "f1"]
    assert [r.room for r in await store.list_finished(limit=2)] == ["f0", "f2"]
    assert all(r.status == "finished" for r in await store.list_finished())


async def test_delete_room_forgets_everything_about_it(store: Store):
    await fill(store, "r1")
    other = await fill(store, "r2")
    await store.finish("r1", {"winners": [0]}, finished_at=5.0)
    await store.delete_room("r1")
    await store.delete_room("r1")  # already gone: nothing happens
    assert await store.load("r1") is None
    bare = a_room("r1", status="waiting")
    await store.create_room(bare)  # the id is free again, with nothing left over
    assert await store.load("r1") == GameRecord(bare)
    assert await store.load("r2") == other


async def test_records_survive_close_and_reopen(new_store: StoreFactory):
    async with new_store() as first:
        stored = await fill(first)
        await first.finish("r1", {"winners": [2]}, finished_at=9.0)
        await fill(first, "r2")
    async with new_store() as second:
        game = await second.load("r1")
        assert game == attrs.evolve(
            stored,
            room=attrs.evolve(stored.room, status="finished", finished_at=9.0),
            result={"winners": [2]},
        )
        assert [g.room.room for g in await second.load_unfinished()] == ["r2"]


async def test_a_store_refuses_work_before_open_and_after_close(new_store: StoreFactory):
    store = new_store()
    with pytest.raises(StoreError) as refused:
        await store.load("r1")
    assert refused.value.code == "store_closed"
    await store.open()
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError) as refused:
        await store.create_room(a_room())
    assert refused.value.code == "store_closed"


# -- seat tokens ----------------------------------------------------------------------------


def test_a_token_matches_its_own_hash_only():
    token = "k3Jx9u2-QmZpRr0vTf8a5w"
    stored = hash_token(token)
    assert len(stored) == 32 and token.encode() not in stored
    assert token_matches(token, stored)
    assert not token_matches(token + "x", stored)
    assert not token_matches(token, None)


async def test_the_database_never_holds_a_seat_token(tmp_path: Path):
    token = "Zk2v8Qf1Xr9bN3mT6pLw0A"  # as the server makes them: 128 random bits, base64url
    path = tmp_path / "castell.sqlite3"
    async with SQLiteStore(path) as store:
        assert store.journal_mode == "wal"
        await store.create_room(a_room())
        await store.put_seat(SeatRecord("r1", 0, "Anna", token_hash=hash_token(token)))
        await store.append_action(an_action("r1", 0))
        # Both while the write-ahead log holds the seat and after it is checkpointed.
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert hash_token(token) in on_disk and token.encode() not in on_disk
        seat = (await store.load("r1")).seats[0]
        assert token_matches(token, seat.token_hash)
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert hash_token(token) in on_disk and token.encode() not in on_disk


# -- durability against a killed process ----------------------------------------------------

WRITER = """
import asyncio, sys
from server.store import ActionRecord, RoomRecord, open_store

async def main():
    async with open_store(sys.argv[1]) as store:
        await store.create_room(RoomRecord("r1", "Kill", 2, "normal", None, False, None, seed=7))
        print("ready", flush=True)
        seq = 0
        while True:
            await store.append_action(
                ActionRecord("r1", seq, seq % 2, bytes([seq % 256]) * 16, float(seq), seq + 1)
            )
            print(seq, flush=True)  # acknowledged: it must survive whatever happens next
            seq += 1

asyncio.run(main())
"""


def run_python(code: str, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=REPO, env=env, text=True, **popen
    )


@pytest.mark.timeout(60)
async def test_every_acknowledged_action_survives_a_killed_writer(backend: Backend):
    url, new_store = backend
    writer = run_python(WRITER, url, stdout=subprocess.PIPE)
    try:
        assert writer.stdout.readline() == "ready\n"
        acknowledged = [int(writer.stdout.readline()) for _ in range(25)]
        writer.kill()  # SIGKILL, most likely in the middle of the next append
        writer.wait()
        acknowledged += [int(line) for line in writer.stdout.read().split()]
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    assert acknowledged == list(range(len(acknowledged)))
    async with new_store() as store:
        game = await store.load("r1")
    seqs = [a.seq for a in game.actions]
    # Every acknowledged action is there, in order, and at most the one in flight besides.
    assert seqs[: len(acknowledged)] == acknowledged
    assert seqs == list(range(len(seqs))) and len(seqs) - len(acknowledged) in (0, 1)
    assert game.actions[-1].action == bytes([seqs[-1] % 256]) * 16
    assert game.room.version == seqs[-1] + 1


# -- files that cannot be used --------------------------------------------------------------


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


async def refused_open(path: Path | str, code: str) -> StoreError:
    store = SQLiteStore(path, busy_timeout=0.05)
    with pytest.raises(StoreError) as refused:
        await store.open()
    assert refused.value.code == code
    assert refused.value.path == str(path)
    await store.close()
    return refused.value


async def test_a_directory_is_refused(tmp_path: Path):
    error = await refused_open(tmp_path, "cannot_open")
    assert str(error) == f"cannot open the database {tmp_path}: it is a directory"


async def test_a_missing_folder_is_refused_and_not_created(tmp_path: Path):
    path = tmp_path / "nope" / "castell.sqlite3"
    error = await refused_open(path, "cannot_open")
    assert f"the folder {path.parent} does not exist" in str(error)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere"
)
async def test_a_file_without_permission_is_refused(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    async with SQLiteStore(path):
        pass
    path.chmod(0o400)
    try:
        error = await refused_open(path, "cannot_open")
    finally:
        path.chmod(0o600)
    assert "permission denied" in str(error)


async def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "notes.sqlite3"
    path.write_bytes(b"These are my notes, not a database.\n" * 200)
    before = files_in(tmp_path)
    error = await refused_open(path, "not_a_database")
    assert str(path) in str(error) and "file is not a database" in str(error)
    assert files_in(tmp_path) == before


async def test_a_damaged_database_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    async with SQLiteStore(path) as store:
        await fill(store)
    damaged = bytearray(path.read_bytes())
    damaged[100:4096] = b"\xff" * (4096 - 100)  # the first page: where the tables are listed
    path.write_bytes(damaged)
    before = files_in(tmp_path)
    error = await refused_open(path, "corrupt_database")
    assert f"{path} is damaged" in str(error)
    assert files_in(tmp_path) == before


async def test_another_programs_database_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE schema_version (version INTEGER)")
        other.execute("INSERT INTO schema_version VALUES (1)")
    other.close()
    before = files_in(tmp_path)
    error = await refused_open(path, "not_castell_database")
    assert f"{path} is not a Castell database" in str(error)
    assert files_in(tmp_path) == before


async def test_a_database_from_a_newer_castell_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    async with SQLiteStore(path) as store:
        await fill(store)
    newer = LATEST + 2
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_version SET version = ?", (newer,))
    raw.close()
    before = files_in(tmp_path)
    error = await refused_open(path, "schema_too_new")
    assert str(error) == (
        f"{path} was written by a newer Castell (schema {newer}; this version knows up to "
        f"{LATEST}); upgrade Castell"
    )
    assert files_in(tmp_path) == before


async def test_a_database_in_use_by_another_process_is_refused(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    holder_code = (
        "import asyncio, sys\n"
        "from server.store import SQLiteStore\n"
        "async def main():\n"
        "    async with SQLiteStore(sys.argv[1]):\n"
        "        print('ready', flush=True)\n"
        "        sys.stdin.readline()\n"
        "asyncio.run(main())\n"
    )
    holder = run_python(holder_code, str(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == "ready\n"
        error = await refused_open(path, "database_in_use")
        assert f"another castell-server (or another program) is using {path}" in str(error)
    finally:
        holder.stdin.close()  # the holder closes its store and exits
        holder.wait(timeout=20)
        holder.stdout.close()
    async with SQLiteStore(path) as store:  # and then the file is free again
        assert await store.load_unfinished() == []


async def test_two_stores_in_one_process_do_not_share_a_file(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    async with SQLiteStore(path) as first:
        await first.create_room(a_room())
        await refused_open(path, "database_in_use")
        assert (await first.load("r1")).room == a_room()


# -- choosing the backend -------------------------------------------------------------------


async def test_open_store_reads_paths_and_urls(tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    for where in (str(path), path, f"sqlite://{path}"):
        store = open_store(where)
        assert isinstance(store, SQLiteStore) and store.path == str(path)
    for where in (":memory:", "sqlite:///:memory:", "sqlite://"):
        async with open_store(where) as store:
            await fill(store)
            assert (await store.load("r1")).room.room == "r1"
    for where, schema in (
        ("postgresql://castell:hunter2@db.example:6543/games", "castell"),
        ("postgres://castell:hunter2@db.example:6543/games?schema=festa&sslmode=disable",
         "festa"),
    ):
        store = open_store(where, pool_size=2)
        assert isinstance(store, PostgresStore)
        assert store.schema == schema and store.pool_size == 2
        assert "schema=" not in store.dsn and "hunter2" in store.dsn
        assert store.path.startswith("postgres") and "hunter2" not in store.path
    with pytest.raises(StoreError) as refused:
        open_store("mysql://localhost/castell")
    assert refused.value.code == "unsupported_backend"


async def test_an_in_memory_store_answers_without_a_thread_hop(tmp_path: Path):
    # A database in memory never waits on a disk, so its calls run on the event loop's own
    # thread and finish within one step; a file's calls (or thread=True) wait on the worker.
    stores = {"memory": SQLiteStore(":memory:"), "hop": SQLiteStore(":memory:", thread=True),
              "file": SQLiteStore(tmp_path / "castell.sqlite3")}
    at_once = {}
    for name, store in stores.items():
        async with store:
            await store.create_room(a_room())
            call = asyncio.ensure_future(store.append_action(an_action("r1", 0)))
            await asyncio.sleep(0)  # the call takes its first step, and only that
            at_once[name] = call.done()
            await call
            assert (await store.load("r1")).actions == (an_action("r1", 0),)
    assert at_once == {"memory": True, "hop": False, "file": False}
    assert [s.thread for s in stores.values()] == [False, True, True]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME is Linux's")
def test_the_default_database_lives_in_the_users_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "castell" / "castell.sqlite3"
    assert (tmp_path / "data" / "castell").is_dir()


def test_the_benchmark_runs_and_reports_every_setting(tmp_path: Path, capsys):
    from bench import store as bench_store

    # (without its group commit case: 50 rooms for 3 s, six times over; tests/test_bench.py
    # runs that case at a tiny size)
    bench_store.main(["--count", "3", "--dir", str(tmp_path), "--writers", "0"])
    out = capsys.readouterr().out
    for label in ("memory (baseline)", "file, NORMAL", "file, FULL", "× NORMAL"):
        assert label in out
    assert list(tmp_path.iterdir()) == []  # its files are cleaned up


# -- PostgreSQL's own troubles --------------------------------------------------------------


async def schema_snapshot(url: str) -> dict[str, list]:
    """Every table of the store's schema with all its rows: to show nothing was changed."""
    import asyncpg

    schema = PostgresStore(url).schema
    conn = await asyncpg.connect(POSTGRES_URL)
    try:
        tables = [
            row[0]
            for row in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", schema
            )
        ]
        return {
            table: sorted(map(tuple, await conn.fetch(f'SELECT * FROM "{schema}"."{table}"')))
            for table in tables
        }
    finally:
        await conn.close()


async def run_sql(url: str, *statements: str) -> None:
    """Run statements in the store's schema, as another program (or a newer Castell) would."""
    import asyncpg

    schema = PostgresStore(url).schema
    conn = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    try:
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def refused_postgres_open(url: str, code: str) -> StoreError:
    store = PostgresStore(url, connect_timeout=5)
    with pytest.raises(StoreError) as refused:
        await store.open()
    assert refused.value.code == code
    await store.close()
    return refused.value


def a_closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_postgres_server_that_does_not_answer_is_refused_clearly():
    url = f"postgresql://castell:s3cret@127.0.0.1:{a_closed_port()}/castell"
    error = await refused_postgres_open(url, "cannot_open")
    assert str(error).startswith(
        "cannot connect to the PostgreSQL server of postgresql://castell:***@127.0.0.1:"
    )
    assert "is it running" in str(error) and "s3cret" not in str(error)
    assert error.path == url.replace("s3cret", "***")


async def test_a_missing_postgres_database_is_refused():
    base = POSTGRES_URL.rsplit("/", 1)[0]
    error = await refused_postgres_open(f"{base}/castell_nowhere_0a1b", "cannot_open")
    assert 'database "castell_nowhere_0a1b" does not exist' in str(error)


async def test_a_postgres_schema_from_a_newer_castell_is_refused_untouched():
    async with fresh_schema() as url:
        async with PostgresStore(url) as store:
            await fill(store)
        newer = LATEST + 2
        await run_sql(url, f"UPDATE schema_version SET version = {newer}")
        before = await schema_snapshot(url)
        error = await refused_postgres_open(url, "schema_too_new")
        assert f"was written by a newer Castell (schema {newer}; this version knows up to " \
            f"{LATEST}); upgrade Castell" in str(error)
        assert await schema_snapshot(url) == before


@pytest.mark.parametrize("foreign", [
    ("CREATE TABLE rooms (id integer PRIMARY KEY, floor integer)",
     "INSERT INTO rooms VALUES (1, 3)"),
    ("CREATE TABLE schema_version (version integer)", "INSERT INTO schema_version VALUES (1)"),
    ("CREATE TABLE schema_version (application text, version integer)",
     "INSERT INTO schema_version VALUES ('ledger', 1)"),
], ids=["rooms", "schema_version", "another_application"])
async def test_a_schema_holding_another_programs_tables_is_refused_untouched(foreign):
    async with fresh_schema() as url:
        await run_sql(url, *foreign)
        before = await schema_snapshot(url)
        error = await refused_postgres_open(url, "not_castell_database")
        assert "is not a Castell schema" in str(error)
        assert await schema_snapshot(url) == before


async def test_a_lone_server_holds_its_schema_and_cluster_nodes_share_theirs():
    async with store_schema() as url:
        async with PostgresStore(url, pool_size=1) as lone:
            await lone.create_room(a_room())
            for shared in (False, True):
                with pytest.raises(StoreError) as refused:
                    await PostgresStore(url, shared=shared, connect_timeout=5).open()
                assert refused.value.code == "database_in_use"
                assert "another castell-server is using the schema" in str(refused.value)
        async with PostgresStore(url, shared=True, pool_size=1) as node_a, \
                PostgresStore(url, shared=True, pool_size=1) as node_b:
            assert (await node_b.load("r1")).room == a_room()
            await refused_postgres_open(url, "database_in_use")  # no lone server beside them
            await node_a.delete_room("r1")
        async with PostgresStore(url) as lone:  # every node gone: the schema is free again
            assert await lone.load("r1") is None


async def test_nodes_opening_one_new_schema_together_create_it_once():
    async with fresh_schema() as url:
        stores = [PostgresStore(url, shared=True, pool_size=2) for _ in range(3)]
        await asyncio.gather(*(store.open() for store in stores))
        try:
            await stores[0].create_room(a_room())
            assert (await stores[2].load("r1")).room == a_room()  # one database, shared
        finally:
            for store in stores:
                await store.close()
        tables = await schema_snapshot(url)
        assert tables["schema_version"] == [("castell", LATEST)]


async def _sequences(url: str) -> list[tuple[str, int | None]]:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES_URL)
    try:
        return sorted(map(tuple, await conn.fetch(
            "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = $1",
            PostgresStore(url).schema)))
    finally:
        await conn.close()


async def _used(store: PostgresStore) -> None:
    """Rows in many tables, and the sequences moved on."""
    await fill(store)
    await store.append_chat(ChatRecord("r1", 4, None, "Eve", "bon dia", 1.0))
    await store.sign_in(AccountRecord("a1", "Eve", "eve", b"k" * 32, 1.0))
    await store.add_note("a1", "challenge", "Anna et repta", {}, 2.0, keep=10)


async def test_a_schema_kept_for_the_next_test_is_as_new_once_emptied():
    """tests/support/services.py's :func:`store_schema`: a schema a test used goes to the
    next one with its rows deleted and its sequences back at their start, nothing else."""
    async with fresh_schema() as url:
        async with PostgresStore(url) as store:
            pass
        new, new_sequences = await schema_snapshot(url), await _sequences(url)
    async with store_schema() as url:
        async with PostgresStore(url) as store:
            await _used(store)
        assert any(rows for table, rows in (await schema_snapshot(url)).items()
                   if table not in ("schema_version", "name_keys"))
        used = url
    async with store_schema() as url:
        assert url == used
        assert await schema_snapshot(url) == new
        assert await _sequences(url) == new_sequences
        async with PostgresStore(url) as store:  # and a store opens on it, as on a new one
            await _used(store)


@pytest.mark.parametrize("change", ["version", "table", "held"])
async def test_a_schema_changed_beyond_its_rows_or_still_held_is_not_kept(change):
    async with store_schema() as url:
        async with PostgresStore(url) as store:
            await _used(store)
        if change == "version":
            await run_sql(url, f"UPDATE schema_version SET version = {LATEST + 1}")
        elif change == "table":
            await run_sql(url, "CREATE TABLE ledger (id integer)")
        else:
            held = PostgresStore(url)
            await held.open()
        used = url
    try:
        async with store_schema() as url:
            assert url != used
    finally:
        if change == "held":
            await held.close()
    assert await schema_snapshot(used) == {}  # dropped


def test_a_server_on_sqlite_never_loads_the_scale_out_libraries(tmp_path: Path):
    code = (
        "import asyncio, sys\n"
        "import server.app, server.cli\n"
        "from server.store import open_store\n"
        "async def main():\n"
        "    async with open_store(sys.argv[1]) as store:\n"
        "        await store.unfinished_rooms()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in ('asyncpg', 'redis') if m in sys.modules))\n"
    )
    loader = run_python(code, str(tmp_path / "castell.sqlite3"), stdout=subprocess.PIPE)
    out, _ = loader.communicate(timeout=30)
    assert loader.returncode == 0 and out == "[]\n"


async def test_chat_lines_keep_their_order_and_only_the_last_ones_are_kept(store: Store):
    from server.store.base import CHAT_KEPT, ChatRecord

    await fill(store)  # at version 14
    await store.create_room(a_room("r2"))
    lines = [ChatRecord("r1", 14 + n // 100, n % 3 or None, f"P{n % 3}", f"línia {n}",
                        1_700_000_200.0 + n) for n in range(CHAT_KEPT + 3)]
    await store.append_chat(ChatRecord("r2", 4, None, "Eve", "altra sala", 1.0))
    for line in lines:
        await store.append_chat(line, expect_version=14)
    assert await store.load_chat("r1") == lines[3:]  # the oldest three forgotten
    assert await store.load_chat("r2") == [ChatRecord("r2", 4, None, "Eve", "altra sala", 1.0)]
    assert (await store.load("r1")).room.version == 14  # a line changes no version
    for refused_line, expect, code in (
            (lines[0], 13, "version_conflict"),
            (attrs.evolve(lines[0], room="nowhere"), None, "unknown_room")):
        with pytest.raises(StoreError) as refused:
            await store.append_chat(refused_line, expect_version=expect)
        assert refused.value.code == code
    assert await store.load_chat("nowhere") == []
    await store.delete_room("r1")
    assert await store.load_chat("r1") == []


async def test_a_game_started_stores_the_version_it_started_at(store: Store):
    await store.create_room(a_room(status="waiting", started_at=None, version=3))
    await store.update_room("r1", version=4, expect_version=3)
    assert (await store.load("r1")).room.started_version is None
    await store.update_room("r1", status="playing", version=5, started_at=2.0)
    assert (await store.load("r1")).room.started_version == 5


async def test_mutes_and_kicks_are_stored_replaced_and_lifted(store: Store):
    await store.create_room(a_room("r1"))
    await store.put_mute(MuteRecord("anna", None, "spam", 1.0))
    await store.put_mute(MuteRecord("anna", 99.5, "spam again", 2.0))  # replaces it
    await store.put_mute(MuteRecord("biel", None, "rude", 3.0))
    assert await store.list_mutes() == [MuteRecord("anna", 99.5, "spam again", 2.0),
                                        MuteRecord("biel", None, "rude", 3.0)]
    assert await store.delete_mute("anna") and not await store.delete_mute("anna")
    assert await store.list_mutes() == [MuteRecord("biel", None, "rude", 3.0)]

    kick = KickRecord("r1", "carme", "acct-1", 1, None, "cheating", 4.0)
    await store.put_kick(kick)
    await store.put_kick(KickRecord("r1", "dolors", None, 0, 50.0, "rude", 5.0))
    assert await store.list_kicks() == [kick, KickRecord("r1", "dolors", None, 0, 50.0,
                                                         "rude", 5.0)]
    assert await store.delete_kick("r1", "dolors") and not await store.delete_kick("r1", "x")
    assert await store.list_kicks() == [kick]
    await store.delete_room("r1")  # a room's kicks go with it
    assert await store.list_kicks() == []


async def test_a_game_keeps_one_review_the_first_stored_and_it_goes_with_the_room(
        store: Store):
    await store.create_room(a_room("r1"))
    assert await store.review("r1") is None
    assert await store.put_review("r1", b"\x81\xa1a\x01", 5.0)
    # a second review of the same game (another node computed it too) is not kept
    assert not await store.put_review("r1", b"\x81\xa1a\x02", 6.0)
    assert await store.review("r1") == b"\x81\xa1a\x01"
    assert await store.review("r2") is None
    await store.delete_room("r1")
    assert await store.review("r1") is None


async def test_tournaments_are_stored_and_each_write_expects_the_last(store) -> None:
    from server.store.records import TournamentRow

    row = TournamentRow("t1", "Spring cup", "open", 10.0, 1, '{"rounds": 3}')
    assert await store.put_tournament(row, expect_version=None)
    assert not await store.put_tournament(row, expect_version=None)  # the id is taken
    assert await store.load_tournament("t1") == row
    later = attrs.evolve(row, status="running", version=2, doc='{"rounds": 3, "round": 1}')
    assert not await store.put_tournament(later, expect_version=5)  # a stale writer
    assert await store.load_tournament("t1") == row
    assert await store.put_tournament(later, expect_version=1)
    assert await store.load_tournament("t1") == later
    other = TournamentRow("t0", "Old cup", "finished", 5.0, 1, "{}")
    assert await store.put_tournament(other, expect_version=None)
    assert await store.list_tournaments(("open", "running")) == [later]
    assert [r.tournament for r in await store.list_tournaments(
        ("running", "finished"))] == ["t0", "t1"]
    assert await store.load_tournament("nope") is None


async def test_tournaments_list_newest_first_and_all_of_them_when_asked(store) -> None:
    from server.store.records import TournamentRow

    for i in range(60):
        assert await store.put_tournament(
            TournamentRow(f"t{i:02}", f"Cup {i}", "open", 100.0 + i, 1, "{}"),
            expect_version=None)
    oldest = await store.list_tournaments(("open",))
    assert [r.tournament for r in oldest] == [f"t{i:02}" for i in range(50)]
    newest = await store.list_tournaments(("open",), 5, newest_first=True)
    assert [r.tournament for r in newest] == ["t59", "t58", "t57", "t56", "t55"]
    every = await store.list_tournaments(("open",), None)
    assert [r.tournament for r in every] == [f"t{i:02}" for i in range(60)]
