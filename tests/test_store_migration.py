"""A database written by schema 1 (each action stored as the request frame that carried it) is
upgraded in place when a server opens it: every action rewritten as its fields alone, the games
replaying to the states they had, new actions appended after (server/store/migrations.py).

Each backend gets a schema-1 database built the way the Castell of schema 1 built it: the
statements of migration 1, then rows whose actions are ``encode(ActionRequest(0, action))``,
the bytes that Castell stored. A schema-2 database is the same tables at version 2 with the
actions as their fields; migration 3 adds chat, timed-out turns and the start's version
without rewriting anything. A schema-3 database (built by migrations 1 to 3) gains accounts
with migration 4, its games untouched.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import random
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import msgpack
import pytest

from server.core.room import Room, game_result
from server.ops.export import record_file
from server.runtime.runner import perform
from server.store import (
    ActionRecord,
    GameRecord,
    RoomRecord,
    SeatRecord,
    SQLiteStore,
    Store,
    StoreError,
    hash_token,
)
from server.store.base import KickRecord, pack_result
from server.store.migrations import (
    LATEST,
    MIGRATIONS,
    POSTGRES_MIGRATIONS,
    action_fields_from_frame,
)
from server.store.postgres import PostgresStore
from shared import bots, engine
from shared.actions import Action
from shared.codec import encode, pack_action, unpack_action
from shared.errors import ProtocolError
from shared.messages import ActionRequest
from shared.state import GameState
from tests.support.games import play_out
from tests.support.services import POSTGRES_URL, fresh_schema

NAMES = ("Anna", "Biel", "Carme")


def frame_v1(action: Action) -> bytes:
    """An action as schema 1 stored it: the bytes of its ``action`` request, id 0."""
    return encode(ActionRequest(id=0, action=action))


@attrs.frozen
class Game:
    """A game as a schema-1 database holds it, and the state its actions lead to."""

    record: GameRecord
    actions: tuple[Action, ...]
    state: GameState


def a_game(room: str, seed: int, *, moves: int | None = None) -> Game:
    """A game of random bots in ``room``: played to the end, or for ``moves`` actions."""
    start = engine.new_game(list(NAMES), "normal", seed)
    steps = list(itertools.islice(play_out(start, random.Random(seed), bots.random_action),
                                  moves))
    state = steps[-1].state if steps else start
    played = [(step.seat, step.action) for step in steps]
    first = 5  # the versions the seats and the start took
    record = GameRecord(
        RoomRecord(room, f"Festa {room}", len(NAMES), "normal", None, False, None, seed=seed,
                   status="finished" if state.over else "playing",
                   version=first + len(played), created_at=1_700_000_000.0 + seed,
                   started_at=1_700_000_010.0,
                   finished_at=1_700_009_000.0 if state.over else None),
        tuple(SeatRecord(room, seat, name, token_hash=hash_token(f"t-{room}-{seat}"))
              for seat, name in enumerate(NAMES)),
        tuple(ActionRecord(room, seq, seat, frame_v1(action), 1_700_000_020.0 + seq,
                           first + seq + 1)
              for seq, (seat, action) in enumerate(played)),
        game_result(state) if state.over else None,
    )
    return Game(record, tuple(action for _, action in played), state)


#: Columns added after schema 1 (by migrations 3, 5, 8 and 11): a schema-1 table has none.
LATER_COLUMNS = {"started_version", "timed_out", "rated", "offers", "round", "turn"}


def columns(cls: type) -> list[str]:
    return [f.name for f in attrs.fields(cls) if f.name not in LATER_COLUMNS]


def values(record: object) -> tuple:
    return tuple(getattr(record, name) for name in columns(type(record)))


def rows(record: GameRecord) -> list[tuple[str, list[str], list[tuple]]]:
    """The rows of one game, by table, in the order they are inserted."""
    out = [("rooms", columns(RoomRecord), [values(record.room)]),
           ("seats", columns(SeatRecord), [values(s) for s in record.seats]),
           ("actions", columns(ActionRecord), [values(a) for a in record.actions])]
    if record.result is not None:
        out.append(("results", ["room", "result"],
                    [(record.room.room, pack_result(record.result, record.room.room))]))
    return out


# Schema-1 databases, one way per backend -------------------------------------------------


@attrs.frozen
class Schema1:
    """How a test builds, opens and peeks at one backend's schema-1 database."""

    write: Callable[[list[GameRecord]], Awaitable[None]]
    open: Callable[[], Store]
    raw_actions: Callable[[], Awaitable[dict[tuple[str, int], bytes]]]
    version: Callable[[], Awaitable[int]]


@contextlib.asynccontextmanager
async def sqlite_schema1(tmp_path: Path) -> AsyncIterator[Schema1]:
    path = tmp_path / "castell.sqlite3"

    async def write(games: list[GameRecord]) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            for statement in MIGRATIONS[0]:
                conn.execute(statement)
            conn.execute("UPDATE schema_version SET version = 1")
            for game in games:
                for table, names, values in rows(game):
                    conn.executemany(
                        f"INSERT INTO {table} ({', '.join(names)}) "
                        f"VALUES ({', '.join('?' * len(names))})", values)
            conn.execute("COMMIT")
        finally:
            conn.close()

    def read(query: str) -> list[tuple]:
        conn = sqlite3.connect(path)
        try:
            return conn.execute(query).fetchall()
        finally:
            conn.close()

    async def raw_actions() -> dict[tuple[str, int], bytes]:
        return {(room, seq): data
                for room, seq, data in read("SELECT room, seq, action FROM actions")}

    async def version() -> int:
        return read("SELECT version FROM schema_version")[0][0]

    yield Schema1(write, lambda: SQLiteStore(path), raw_actions, version)


@contextlib.asynccontextmanager
async def postgres_schema1(tmp_path: Path) -> AsyncIterator[Schema1]:
    import asyncpg

    async with fresh_schema() as url:
        schema = PostgresStore(url).schema

        @contextlib.asynccontextmanager
        async def connection() -> AsyncIterator[asyncpg.Connection]:
            conn = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
            try:
                yield conn
            finally:
                await conn.close()

        async def write(games: list[GameRecord]) -> None:
            async with connection() as conn, conn.transaction():
                await conn.execute(f'CREATE SCHEMA "{schema}"')
                for statement in POSTGRES_MIGRATIONS[0]:
                    await conn.execute(statement)
                await conn.execute("UPDATE schema_version SET version = 1")
                for game in games:
                    for table, names, values in rows(game):
                        marks = ", ".join(f"${n}" for n in range(1, len(names) + 1))
                        await conn.executemany(
                            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", values)

        async def raw_actions() -> dict[tuple[str, int], bytes]:
            async with connection() as conn:
                found = await conn.fetch("SELECT room, seq, action FROM actions")
            return {(room, seq): data for room, seq, data in found}

        async def version() -> int:
            async with connection() as conn:
                return await conn.fetchval("SELECT version FROM schema_version")

        yield Schema1(write, lambda: PostgresStore(url, pool_size=2), raw_actions, version)


@pytest.fixture(params=[pytest.param(sqlite_schema1, id="sqlite"),
                        pytest.param(postgres_schema1, id="postgresql")])
async def schema1(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Schema1]:
    async with request.param(tmp_path) as made:
        yield made


# The upgrade -------------------------------------------------------------------------------


def test_the_migration_moves_a_request_frames_fields_as_pack_action_would_store_them():
    game = a_game("g", 11)
    for stored, action in zip(game.record.actions, game.actions, strict=True):
        assert action_fields_from_frame(stored.action) == pack_action(action)
    for unreadable in (b"", b"\xc1", frame_v1(game.actions[0])[:-1],
                       pack_action(game.actions[0]), encode(ActionRequest(0, game.actions[0]))
                       + b"\x00", msgpack.packb({"type": "hello", "id": 0, "name": "Anna"})):
        assert action_fields_from_frame(unreadable) is None


async def test_a_schema_1_database_is_upgraded_and_its_games_replay(schema1: Schema1):
    # Three finished games and one under way: more actions than one batch of the rewrite.
    games = [a_game("done-a", 3), a_game("done-b", 4), a_game("done-c", 5),
             a_game("playing", 6, moves=120)]
    assert sum(len(g.actions) for g in games) > 500
    await schema1.write([g.record for g in games])
    assert await schema1.version() == 1

    async with schema1.open() as store:
        assert await schema1.version() == LATEST
        stored = await schema1.raw_actions()
        for game in games:
            loaded = await store.load(game.record.room.room)
            assert loaded is not None
            assert attrs.evolve(loaded, actions=()) == attrs.evolve(game.record, actions=())
            assert [a.action for a in loaded.actions] == [pack_action(a) for a in game.actions]
            assert [attrs.evolve(a, action=b"") for a in loaded.actions] == \
                [attrs.evolve(a, action=b"") for a in game.record.actions]
            assert stored == stored | {(a.room, a.seq): a.action for a in loaded.actions}
            room = Room.from_record(loaded, now=0.0)
            assert room.state == game.state
            assert room.log == [(a.seat, action)
                                for a, action in zip(game.record.actions, game.actions,
                                                     strict=True)]
            assert record_file(loaded).actions[-1].action == game.actions[-1]

        # The game under way goes on: its next actions are stored after the old ones.
        playing = games[-1]
        room: Room[str] = Room.from_record(await store.load("playing"), now=0.0)
        for taken in room.seats:
            taken.member = f"player {taken.index}"
        rng = random.Random(1)
        added = []
        for _ in range(3):
            seat = room.state.turn
            action = bots.choose(room.state, seat, "random", rng)
            change = room.act(f"player {seat}", action, None, now=0.0)
            for write in change.writes:
                await perform(store, write)
            room.commit(change, now=0.0)
            added.append(action)
        reloaded = await store.load("playing")
        assert [a.seq for a in reloaded.actions] == list(range(len(playing.actions) + 3))
        assert [unpack_action(a.action) for a in reloaded.actions] == \
            [*playing.actions, *added]
        assert reloaded.room.version == room.version == playing.record.room.version + 3
        assert Room.from_record(reloaded, now=0.0).state == room.state

    # Opened again, the upgraded database is left as it is.
    before = await schema1.raw_actions()
    async with schema1.open() as store:
        assert await schema1.version() == LATEST
        assert (await store.load("done-a")).actions == \
            tuple(attrs.evolve(a, action=pack_action(action))
                  for a, action in zip(games[0].record.actions, games[0].actions, strict=True))
    assert await schema1.raw_actions() == before


async def test_an_unreadable_stored_action_is_kept_and_reported_not_a_crash(
        schema1: Schema1, caplog: pytest.LogCaptureFixture):
    good, bad = a_game("good", 8, moves=40), a_game("bad", 9, moves=40)
    damaged = list(bad.record.actions)
    damaged[7] = attrs.evolve(damaged[7], action=b"\xc1 not msgpack")
    await schema1.write([good.record, attrs.evolve(bad.record, actions=tuple(damaged))])

    with caplog.at_level(logging.WARNING, logger="castell.store"):
        async with schema1.open() as store:
            assert await schema1.version() == LATEST
            assert Room.from_record(await store.load("good"), now=0.0).state == \
                good.state
            loaded = await store.load("bad")
            # Left byte for byte as it was; every other action of the room is rewritten.
            assert loaded.actions[7].action == b"\xc1 not msgpack"
            assert loaded.actions[8].action == pack_action(bad.actions[8])
            with pytest.raises(ProtocolError):  # the lobby logs it and leaves the room stored
                Room.from_record(loaded, now=0.0)
            with pytest.raises(StoreError) as refused:
                record_file(loaded)
    assert refused.value.code == "corrupt_database"
    assert str(refused.value).startswith("room bad: stored action 7 cannot be read")
    warned = [r.getMessage() for r in caplog.records if r.name == "castell.store"]
    assert len(warned) == 1 and "('bad', 7)" in warned[0] and "cannot be read" in warned[0]


async def test_a_read_only_open_refuses_a_schema_1_file_untouched(tmp_path: Path):
    async with sqlite_schema1(tmp_path) as schema1:
        await schema1.write([a_game("g", 2, moves=30).record])
        path = tmp_path / "castell.sqlite3"
        before = path.read_bytes()
        reader = SQLiteStore(path, read_only=True)
        with pytest.raises(StoreError) as refused:
            await reader.open()
        await reader.close()
        assert refused.value.code == "schema_too_old"
        assert "has an older schema (1)" in str(refused.value)
        assert path.read_bytes() == before and await schema1.version() == 1


# Schema 2 to 3 ----------------------------------------------------------------------------


def schema2_game(room: str, seed: int, moves: int) -> Game:
    """A game as a schema-2 database holds it: actions stored as their fields."""
    game = a_game(room, seed, moves=moves)
    actions = tuple(attrs.evolve(a, action=pack_action(action))
                    for a, action in zip(game.record.actions, game.actions, strict=True))
    return attrs.evolve(game, record=attrs.evolve(game.record, actions=actions))


@contextlib.asynccontextmanager
async def schema2(schema1_made: Callable[[Path], Any], tmp_path: Path
                  ) -> AsyncIterator[Schema1]:
    """A schema-2 database: schema 1's tables (migration 2 changed rows, not tables) with
    rows of schema 2, at version 2."""
    async with schema1_made(tmp_path) as made:
        async def write(games: list[GameRecord]) -> None:
            await made.write(games)
            if isinstance(made.open(), SQLiteStore):
                conn = sqlite3.connect(tmp_path / "castell.sqlite3", isolation_level=None)
                try:
                    conn.execute("UPDATE schema_version SET version = 2")
                finally:
                    conn.close()
            else:
                import asyncpg

                store = made.open()
                assert isinstance(store, PostgresStore)
                conn = await asyncpg.connect(POSTGRES_URL,
                                             server_settings={"search_path": store.schema})
                try:
                    await conn.execute("UPDATE schema_version SET version = 2")
                finally:
                    await conn.close()

        yield attrs.evolve(made, write=write)


@pytest.fixture(params=[pytest.param(sqlite_schema1, id="sqlite"),
                        pytest.param(postgres_schema1, id="postgresql")])
async def old2(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Schema1]:
    async with schema2(request.param, tmp_path) as made:
        yield made


async def test_a_schema_2_database_is_upgraded_keeping_its_games_and_gains_history(old2):
    from server.core.history import derive

    games = [schema2_game("done", 3, 10_000), schema2_game("playing", 6, 90)]
    await old2.write([g.record for g in games])
    assert await old2.version() == 2
    raw = await old2.raw_actions()

    async with old2.open() as store:
        assert await old2.version() == LATEST
        assert await old2.raw_actions() == raw  # no stored action was rewritten
        for game in games:
            loaded = await store.load(game.record.room.room)
            assert loaded == game.record  # started_version None, timed_out False: defaults
            assert Room.from_record(loaded, now=0.0).state == game.state
            # The history of a game started before schema 3 begins just before its first
            # action, and each action's events come back at its version.
            entries = derive(loaded, []).entries
            assert entries[0].version == loaded.actions[0].version - 1
            assert entries[0].events[0] == {"kind": "started"}
            assert [e.version for e in entries[1:]] == [a.version for a in loaded.actions]
            assert await store.load_chat(game.record.room.room) == []

        # The game under way goes on, its timer's turn and its chat stored the new way.
        room: Room[str] = Room.from_record(await store.load("playing"), now=0.0)
        for taken in room.seats:
            taken.member = f"player {taken.index}"
        say = room.chat_line("player 0", "?", "seguim", now=1.0)
        await perform(store, say)
        assert room.state.turn is not None
        change = room.timer_fired((room.state.round, room.state.turn), now=2.0)
        for write in change.writes:
            await perform(store, write)
        room.commit(change, now=2.0)
        loaded = await store.load("playing")
        assert [a.timed_out for a in loaded.actions] == [False] * 90 + [True]
        assert loaded.actions[-1].version == room.version
        chat = await store.load_chat("playing")
        assert [(c.version, c.seat, c.name, c.text) for c in chat] == \
            [(room.version - 1, 0, "Anna", "seguim")]
        last = derive(loaded, chat).entries[-2:]
        assert last[0].events[-1] == {"kind": "chat", "seat": 0, "name": "Anna",
                                      "text": "seguim"}
        assert last[1].version == room.version
        assert last[1].events[:2] == [{"kind": "timeout", "seat": loaded.actions[-1].seat},
                                      {"kind": "action", "seat": loaded.actions[-1].seat,
                                       "action": {"kind": "end_turn"}}]

    async with old2.open() as store:  # opened again: left as it is
        assert await old2.version() == LATEST
        assert len(await store.load_chat("playing")) == 1


# Schema 3 to 4 ----------------------------------------------------------------------------


def schema3_rows(record: GameRecord) -> list[tuple[str, list[str], list[tuple]]]:
    """The rows of one game as schema 3 holds them: every column of today's records but
    those of later schemas (``rooms.rated``: 5; ``rooms.offers``: 8; ``rooms.round`` and
    ``rooms.turn``: 11)."""
    def every(cls: type) -> list[str]:
        return [f.name for f in attrs.fields(cls)
                if f.name not in ("rated", "offers", "round", "turn")]

    def of(rec: object) -> tuple:
        return tuple(getattr(rec, name) for name in every(type(rec)))

    out = [("rooms", every(RoomRecord), [of(record.room)]),
           ("seats", every(SeatRecord), [of(s) for s in record.seats]),
           ("actions", every(ActionRecord), [of(a) for a in record.actions])]
    if record.result is not None:
        out.append(("results", ["room", "result"],
                    [(record.room.room, pack_result(record.result, record.room.room))]))
    return out


async def make_schema3(backend: str, tmp_path: Path, url: str, games: list[GameRecord],
                       upto: int = 3,
                       ) -> tuple[Callable[[], Store], Callable[[], Awaitable[int]]]:
    """A database at schema 3 (the statements of migrations 1 to 3; migration 2 rewrote rows
    only) holding ``games``: how to open it, and how to read its schema version. ``upto``
    builds a later schema the same way (4: accounts, which hold no rows here)."""
    steps = [step for migration in (MIGRATIONS if backend == "sqlite"
                                    else POSTGRES_MIGRATIONS)[:upto]
             for step in migration if isinstance(step, str)]
    if backend == "sqlite":
        path = tmp_path / "castell.sqlite3"
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN")
            for statement in steps:
                conn.execute(statement)
            conn.execute(f"UPDATE schema_version SET version = {upto}")
            for game in games:
                for table, names, values in schema3_rows(game):
                    conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) "
                                     f"VALUES ({', '.join('?' * len(names))})", values)
            conn.execute("COMMIT")
        finally:
            conn.close()

        async def version() -> int:
            conn = sqlite3.connect(path)
            try:
                return conn.execute("SELECT version FROM schema_version").fetchone()[0]
            finally:
                conn.close()

        return (lambda: SQLiteStore(path)), version
    import asyncpg

    schema = PostgresStore(url).schema
    conn = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
    try:
        async with conn.transaction():
            await conn.execute(f'CREATE SCHEMA "{schema}"')
            for statement in steps:
                await conn.execute(statement)
            await conn.execute(f"UPDATE schema_version SET version = {upto}")
            for game in games:
                for table, names, values in schema3_rows(game):
                    marks = ", ".join(f"${n}" for n in range(1, len(names) + 1))
                    await conn.executemany(
                        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", values)
    finally:
        await conn.close()

    async def pg_version() -> int:
        conn = await asyncpg.connect(POSTGRES_URL, server_settings={"search_path": schema})
        try:
            return await conn.fetchval("SELECT version FROM schema_version")
        finally:
            await conn.close()

    return (lambda: PostgresStore(url, pool_size=2)), pg_version


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_schema_3_database_gains_accounts_keeping_its_games(backend, tmp_path):
    from server.store.base import AccountRecord

    games = [schema2_game("done", 3, 10_000), schema2_game("playing", 6, 40)]
    async with fresh_schema() as url:
        opened, version = await make_schema3(backend, tmp_path, url,
                                             [g.record for g in games])
        assert await version() == 3
        async with opened() as store:
            assert await version() == LATEST
            # Schema 10's mutes and kicks are there, empty, and take what the host sets.
            assert await store.list_mutes() == [] and await store.list_kicks() == []
            await store.put_kick(KickRecord("playing", "anna", None, 0, None, "rude", 1.0))
            assert [k.value for k in await store.list_kicks()] == ["anna"]
            for game in games:  # the games are as they were, and replay as they did
                loaded = await store.load(game.record.room.room)
                assert loaded == game.record
                assert Room.from_record(loaded, now=0.0).state == game.state
            # An account now, and a seat of each game that belongs to it.
            anna = AccountRecord("a1", "Anna", "anna", hash_token("k" * 40), 1.0)
            assert await store.sign_in(anna) == anna
            assert await store.sign_in(AccountRecord("a2", "ANNA", "anna",
                                                     hash_token("x" * 40), 2.0)) is None
            assert await store.sign_in(attrs.evolve(anna, account="a3", name="other",
                                                    name_key="other")) == anna
            for room in ("done", "playing"):
                await store.claim_seat(room, 0, "a1")
            mine = await store.account_games("a1")
            assert [(g.room.room, g.seat, g.names) for g in mine] == \
                [("playing", 0, NAMES), ("done", 0, NAMES)]  # newest first
            assert mine[1].result == games[0].record.result and mine[0].result is None
            assert [g.room.room for g in await store.account_games("a1", finished=False)] \
                == ["playing"]
            await store.claim_seat("playing", 0, None)
            assert await store.seat_accounts("playing") == {}
            assert await store.seat_accounts("done") == {0: "a1"}
        async with opened() as store:  # opened again: left as it is
            assert await version() == LATEST
            assert await store.account_named("anna") == anna


# Schema 4 to 5 ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_schema_4_database_gains_ratings_keeping_its_games(backend, tmp_path):
    from openskill.models import PlackettLuce

    from server.store.base import AccountRecord, Placing

    games = [schema2_game("done", 3, 10_000), schema2_game("playing", 6, 40)]
    async with fresh_schema() as url:
        opened, version = await make_schema3(backend, tmp_path, url,
                                             [g.record for g in games], upto=4)
        assert await version() == 4
        async with opened() as store:
            assert await version() == LATEST  # 5, and what came after it
            for game in games:  # as they were (unrated), and replay as they did
                loaded = await store.load(game.record.room.room)
                assert loaded == game.record and loaded.room.rated is False
                assert Room.from_record(loaded, now=0.0).state == game.state
            # The unfinished game ends now, rated: both accounts' ratings in its transaction.
            ids = []
            for n, name in enumerate(("Anna", "Biel")):
                account = await store.sign_in(AccountRecord(f"a{n}", name, name.lower(),
                                                            hash_token(name * 20), 1.0))
                assert account is not None
                await store.claim_seat("playing", n, account.account)
                ids.append(account.account)
            rated = await store.finish("playing", {"winners": [1]}, 50.0, placings=(
                Placing(0, "a0", 2), Placing(1, "a1", 1)))
            model = PlackettLuce()
            loser, winner = model.rate([[model.rating()], [model.rating()]], ranks=[2, 1])
            assert [(g.seat, g.place, g.mu_after, g.sigma_after) for g in rated] == [
                (0, 2, loser[0].mu, loser[0].sigma), (1, 1, winner[0].mu, winner[0].sigma)]
            known = await store.ratings(("a0", "a1"))
            assert (known["a1"].games, known["a1"].wins, known["a0"].wins) == (1, 1, 0)
            assert [r.account for r in await store.leaderboard(1, 10)] == ["a1", "a0"]
            assert await store.rank_of("a0", 1) == 1 and await store.rank_of("a0", 2) is None
            assert await store.wins_by_seats("a1") == {2: (1, 1)}
        async with opened() as store:  # opened again: left as it is, ratings kept
            assert await version() == LATEST
            assert [g.room for g in await store.rated_games("a0", 5)] == ["playing"]


# Schema 6 to 7 ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_schema_6_database_makes_its_name_keys_anew(backend, tmp_path):
    """Keys made the old way (NFKC and case folding) are made again as names compare now:
    Anna's stays hers, a Cyrillic look-alike registered later no longer holds the name, and a
    ban by name bars the look-alikes too."""
    from server.core.names import name_key
    from server.store.base import AccountRecord

    rows = [("a1", "Anna", "anna", hash_token("k" * 40), 1.0),
            ("a2", "\u0410nna", "\u0430nna", hash_token("x" * 40), 2.0),  # Cyrillic А
            ("a3", "Emma", "emma", hash_token("e" * 40), 3.0)]
    ban = ("name", "\u0430nna", None, "banned by the host", 4.0)
    async with fresh_schema() as url:
        opened, version = await make_schema3(backend, tmp_path, url, [], upto=6)
        if backend == "sqlite":
            conn = sqlite3.connect(tmp_path / "castell.sqlite3")
            with conn:
                conn.executemany("INSERT INTO accounts VALUES (?, ?, ?, ?, ?)", rows)
                conn.execute("INSERT INTO bans VALUES (?, ?, ?, ?, ?)", ban)
            conn.close()
        else:
            import asyncpg

            schema = PostgresStore(url).schema
            conn = await asyncpg.connect(POSTGRES_URL,
                                         server_settings={"search_path": schema})
            try:
                await conn.executemany("INSERT INTO accounts VALUES ($1, $2, $3, $4, $5)",
                                       rows)
                await conn.execute("INSERT INTO bans VALUES ($1, $2, $3, $4, $5)", *ban)
            finally:
                await conn.close()
        async with opened() as store:
            assert await version() == LATEST
            anna = AccountRecord(*rows[0][:3], rows[0][3], 1.0)
            assert anna.name_key == name_key("Anna") == "anna"
            assert await store.account_named(name_key("\u0410nna")) == anna
            assert await store.account_named(name_key("Emma")) == \
                AccountRecord("a3", "Emma", name_key("Emma"), rows[2][3], 3.0)
            # The look-alike still signs in with its key, but its name is Anna's.
            kept = await store.sign_in(AccountRecord("new", "?", "?", rows[1][3], 9.0))
            assert kept is not None and kept.account == "a2" and kept.name_key != "anna"
            assert [(b.kind, b.value) for b in await store.list_bans()] == \
                [("name", name_key("Anna"))]
        async with opened() as store:  # opened again: left as it is
            assert await store.account_named("anna") == anna
