"""Which rooms a server holds in memory: not every stored game at start (they load when a
player comes back), not a game nobody attends for long, never more than ``--max-rooms``, and
never more rooms from one address than ``--rooms-per-address``, attended or not."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Callable

import attrs
import pytest

from client.net.net import GameClient, ServerError
from server.runtime.timers import VirtualClock
from server.store import ActionRecord, RoomRecord, SeatRecord, SQLiteStore, hash_token, open_store
from server.store.base import pack_offers
from shared import engine
from shared import messages as m
from shared.actions import EndTurn
from shared.codec import pack_action
from tests.support.servers import serving

SEED = 7
#: How many stored games a start-up must not replay one by one.
STORED = 3000


def _actions(count: int) -> list[tuple[int, bytes]]:
    """``count`` legal actions of a two-seat game of seed SEED, as stored."""
    rng = random.Random(1)
    state = engine.new_game(["Anna", "Bru"], "normal", SEED)
    out = []
    while len(out) < count and not state.over:
        seat = state.turn
        legal = engine.legal_actions(state, seat)
        ends = [a for a in legal if isinstance(a, EndTurn)]
        action = ends[0] if ends and rng.random() < 0.3 else rng.choice(legal)
        state, _ = engine.apply(state, seat, action)
        out.append((seat, pack_action(action)))
    return out


def _rows(record) -> tuple:
    """A record's column values as the store writes them (a room's offers packed)."""
    return tuple(pack_offers(value) if field.name == "offers" else value
                 for field, value in zip(attrs.fields(type(record)),
                                         attrs.astuple(record, recurse=False), strict=True))


def _insert(conn: sqlite3.Connection, table: str, records: list) -> None:
    if records:
        columns = ", ".join(f.name for f in attrs.fields(type(records[0])))
        marks = ", ".join("?" * len(attrs.fields(type(records[0]))))
        conn.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                         [_rows(r) for r in records])


async def _store_games(db, kinds: dict[str, int], *, actions: int = 20) -> dict[str, list[str]]:
    """Store games straight into a Castell file: per kind, that many rooms. ``idle`` games
    between two people (nothing moves them), ``bots`` games with a bot seat, ``timer`` games
    with a turn timer, ``waiting`` rooms with one person seated. Seat 0's token of room R is
    ``"token-" + R``. Returns the room ids by kind, oldest first."""
    async with SQLiteStore(db):
        pass  # the schema
    played = _actions(actions)
    rooms, seats, stored, ids = [], [], [], {}
    n = 0
    for kind, count in kinds.items():
        ids[kind] = []
        for _ in range(count):
            n += 1
            room_id = f"r{n:08x}"
            ids[kind].append(room_id)
            waiting = kind == "waiting"
            rooms.append(RoomRecord(
                room_id, f"game {n}", 2, "normal", 60 if kind == "timer" else None, False, None,
                SEED, status="waiting" if waiting else "playing",
                version=1 if waiting else 3 + len(played), created_at=1000.0 + n,
                started_at=None if waiting else 1000.0 + n))
            seats.append(SeatRecord(room_id, 0, "Anna", token_hash=hash_token("token-" + room_id)))
            if kind == "bots":
                seats.append(SeatRecord(room_id, 1, "Bot", bot=True, bot_level="random"))
            elif not waiting:
                seats.append(SeatRecord(room_id, 1, "Bru", token_hash=hash_token("b-" + room_id)))
            if not waiting:
                stored.extend(ActionRecord(room_id, seq, seat, action, 1000.0 + n, 4 + seq)
                              for seq, (seat, action) in enumerate(played))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    _insert(conn, "rooms", rooms)
    _insert(conn, "seats", seats)
    _insert(conn, "actions", stored)
    conn.execute("COMMIT")
    conn.close()
    return ids


async def _back(url: str, room: str) -> GameClient:
    c = await GameClient.connect(url)
    await c.hello("Anna")
    joined = await c.request(m.JoinRoom, room=room, token="token-" + room)
    assert joined.room == room and joined.seat == 0
    return c


async def test_start_up_loads_only_games_that_move_and_waiting_rooms(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    ids = await _store_games(db, {"idle": STORED, "bots": 5, "timer": 5, "waiting": 5})
    store = open_store(db)
    began = time.monotonic()
    async with serving(store, max_rooms=12, bot_delay=3600.0) as (server, url):
        took = time.monotonic() - began
        loaded = set(server.lobby.rooms)
        # --max-rooms holds at start: the games that move first, then the newest waiting
        assert loaded == {*ids["bots"], *ids["timer"], *ids["waiting"][-2:]}
        # a few thousand stored games do not make a slow start (replaying them all does)
        assert took < 4.0, f"start-up took {took:.1f} s"
        # a game left in the store comes back with its player, at its stored version; the
        # lobby is full, so a game nobody is in makes way for it (it stays stored)
        idle = ids["idle"][100]
        c = await _back(url, idle)
        state = await c.wait_state()
        assert state.version == 3 + 20 + 1 and state.view["status"] == "playing"
        assert idle in server.lobby.rooms and len(server.lobby.rooms) == 12
        # a waiting room left in the store comes back too
        c2 = await _back(url, ids["waiting"][0])
        assert (await c2.wait_state()).view["status"] == "waiting"
        for client in (c, c2):
            await client.close()


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until ``condition`` holds (what the server does as a client goes, say)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_game_nobody_attends_leaves_memory_and_comes_back(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    async with serving(open_store(db), room_unattended_after=60.0, bot_delay=0.2,
                       room_unload_after=None) as (server, url):
        # The sweep's time (and the room's) moves when the test says; its bots play in
        # real time. The test sweeps itself rather than wait for the server's sweeper.
        clock = server.lobby.clock = VirtualClock(time.time())
        me = await GameClient.connect(url)
        await me.hello("Anna")
        joined = await me.request(m.CreateRoom, name="Against bots", seats=3, turn_seconds=60)
        await me.request(m.AddBot, level="random")
        await me.request(m.AddBot, level="random")
        await me.request(m.StartGame)
        runner = server.lobby.rooms[joined.room]
        await me.close()
        await until(lambda: not runner.room.members())
        server.lobby.residency.sweep()  # nobody in it from now on
        clock.advance(59.0)
        server.lobby.residency.sweep()
        assert joined.room in server.lobby.rooms  # not yet
        # nobody is in it, though its bots and its timer keep it moving: it goes (once no
        # change of theirs is in flight)
        clock.advance(1.0)

        def swept() -> bool:
            server.lobby.residency.sweep()
            return joined.room not in server.lobby.rooms

        await until(swept)
        back = await GameClient.connect(url)
        await back.hello("Anna")
        again = await back.request(m.JoinRoom, room=joined.room, token=joined.token)
        assert again.seat == 0 and joined.room in server.lobby.rooms
        # attended, it stays, however long
        clock.advance(3600.0)
        server.lobby.residency.sweep()
        assert joined.room in server.lobby.rooms
        await back.close()


async def test_rooms_per_address_counts_unattended_games_and_concurrent_creations(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    async with serving(open_store(db), rooms_per_address=3,
                       room_unattended_after=None) as (server, url):
        # ten connections from one address create at once: three rooms at most
        clients = [await GameClient.connect(url) for _ in range(10)]
        for c in clients:
            await c.hello("Mallory")

        async def create(c: GameClient) -> str | None:
            try:
                joined = await c.request(m.CreateRoom, name="mine", seats=2)
            except ServerError as exc:
                assert exc.code == "rate_limited"
                return None
            await c.request(m.AddBot, level="random")
            await c.request(m.StartGame)
            return joined.room

        made = [r for r in await asyncio.gather(*(create(c) for c in clients)) if r]
        assert len(made) == 3
        # nobody attends them any more: they still count while in memory
        for c in clients:
            await c.close()
        await until(lambda: not server.connections)  # the server saw them go
        assert all(room in server.lobby.rooms for room in made)
        late = await GameClient.connect(url)
        await late.hello("Mallory")
        with pytest.raises(ServerError) as refused:
            await late.request(m.CreateRoom, name="one more", seats=2)
        assert refused.value.code == "rate_limited"
        await late.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_the_cheap_listing_says_what_loading_every_game_says(tmp_path, backend):
    from contextlib import AsyncExitStack

    from server.store import Store
    from tests.support.services import store_schema

    async with AsyncExitStack() as stack:
        where = (str(tmp_path / "g.sqlite3") if backend == "sqlite"
                 else await stack.enter_async_context(store_schema()))
        store = await stack.enter_async_context(open_store(where))
        for n, (status, bots) in enumerate([("waiting", 0), ("playing", 1), ("playing", 2),
                                            ("playing", 0), ("finished", 1)]):
            room = f"r{n}"
            await store.create_room(RoomRecord(room, "g", 3, "normal", None, False, None, n,
                                               created_at=float(10 - n)))
            await store.put_seat(SeatRecord(room, 0, "Anna", token_hash=hash_token("t")))
            for seat in range(1, bots + 1):
                await store.put_seat(SeatRecord(room, seat, f"Bot {seat}", bot=True,
                                                bot_level="random"))
            if status != "waiting":
                await store.update_room(room, status="playing", version=5, started_at=20.0)
            if status == "finished":
                await store.finish(room, {"winners": [0]}, 30.0)
        cheap = await store.unfinished_summaries()
        assert cheap == await Store.unfinished_summaries(store)
        assert [(s.room.room, s.bots) for s in cheap] == [("r3", 0), ("r2", 2), ("r1", 1),
                                                           ("r0", 0)]
