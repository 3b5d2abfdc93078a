"""A finished game's record over the wire (``record``): a long game's comes in pages that
each fit in a frame and the array limit, and the real client joins them; seeds stay within
53 bits, and an old game's larger seed is still read (as a string on the wire). A real server
on a real SQLite file, seeded with games played by the real rules."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import msgpack
import pytest

from client.local.seats import SeatStore
from client.net.net import GameClient, fetch_record
from client.net.session import Session
from server.core.record_pages import record_page
from server.store import SQLiteStore
from server.store.base import ActionRecord, RoomRecord, SeatRecord, Store
from shared import codec, engine
from shared import messages as m
from shared.actions import Build, EndTurn, Undo
from shared.codec import pack_action
from shared.record import GameRecordFile, RecordedAction, replay
from shared.state import GameState
from tests.support.hostile import frame, raw
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)

#: A seed drawn before seeds were kept within 53 bits (63 bits then): beyond what a JSON
#: reader holds exactly.
OLD_SEED = 1034331951469059000


def long_game(seed: int, pairs: int) -> tuple[list[tuple[int, object]], GameState]:
    """A whole 2-seat game by the rules: at each turn, up to ``pairs`` actions each undone
    (so the game is long without being any longer in rounds), then ``end_turn``; its
    actions by seat, and its last state."""
    rng = random.Random(seed)
    state = engine.new_game(["Anna", "Biel"], "normal", seed)
    actions: list[tuple[int, object]] = []
    while not state.over:
        seat = state.turn
        for _ in range(pairs):
            tries = [a for a in engine.legal_actions(state, seat)
                     if not isinstance(a, EndTurn | Undo)]
            if not tries:
                break
            action = rng.choice(tries)
            tried, _ = engine.apply(state, seat, action)
            state, _ = engine.apply(tried, seat, Undo())
            actions += [(seat, action), (seat, Undo())]
        state, _ = engine.apply(state, seat, EndTurn())
        actions.append((seat, EndTurn()))
    return actions, state


async def store_finished(store: Store, room: str, seed: int,
                         actions: list[tuple[int, object]]) -> None:
    """``actions`` stored as a finished game of room ``room``, as a server stores one."""
    await store.create_room(RoomRecord(room, "Llarg", 2, "normal", None, False, None, seed,
                                       status="playing", version=2, created_at=1.7e9,
                                       started_at=1.7e9, started_version=2))
    await store.put_seat(SeatRecord(room, 0, "Anna"))
    await store.put_seat(SeatRecord(room, 1, "Biel"))
    for seq, (seat, action) in enumerate(actions):
        await store.append_action(ActionRecord(room, seq, seat, pack_action(action),  # type: ignore[arg-type]
                                               at=1.7e9 + seq, version=3 + seq))
    await store.finish(room, {"winners": [0]}, 1.7e9 + len(actions))


def the_end(record: GameRecordFile) -> GameState:
    return replay(record)[-1][0]


async def test_a_game_of_over_1024_actions_comes_whole_to_the_client_in_pages(tmp_path: Path):
    actions, last = long_game(5, pairs=40)
    assert len(actions) > 1024
    async with SQLiteStore(tmp_path / "g.sqlite3") as store:
        await store_finished(store, "rlong", 5, actions)
        async with serving(store) as (_, url):
            # each page, as the wire carries it: within a frame and the array limit
            ws = await raw(url)
            await ws.send(frame(m.Hello(id=1, name="Cesc")))
            await ws.recv()
            pages, start = 0, None
            while True:
                await ws.send(frame(m.RecordRequest(id=2, room="rlong", from_=start)))
                data = await ws.recv()
                assert isinstance(data, bytes) and len(data) <= codec.MAX_FRAME
                reply = codec.decode_server(data)  # the array limit checked here
                assert isinstance(reply, m.Record) and reply.game["actions"]
                pages += 1
                if reply.next is None:
                    break
                start = reply.next
            await ws.close()
            assert pages >= 2
            # the real client joins the pages into the whole record
            async with await GameClient.connect(url) as client:
                await client.hello("Dolors")
                record = await fetch_record(client.request, "rlong")
            # and so does the terminal client's session (its `replay N` of `games`)
            session = Session(url, "Eloi", seats=SeatStore(tmp_path / "state"))
            await session.open()
            pump = asyncio.create_task(session.run())
            try:
                from_session = await session.record("rlong")
            finally:
                await session.stop()
                pump.cancel()
    assert [(a.seat, a.action) for a in record.actions] == actions
    assert the_end(record) == last
    assert from_session == record


def test_a_page_never_holds_more_than_a_frame_or_the_array_limit():
    """By value: actions of many bytes (tall towers) fill a small frame before the array
    limit; the pages join to the whole record, in order."""
    build = Build(((1,), (2,), (3,), (4,), (5,), (6,), (7,)))
    game = GameRecordFile(room="r", name="n", variant="normal", seats=("A", "B"),
                          bots=(False, False), seed=1,
                          actions=tuple(RecordedAction(i % 2, build, 1.7e9 + i)
                                        for i in range(300)))
    joined, start = [], 0
    while True:
        page = record_page(7, game, start, frame=2000, array=50)
        assert len(codec.encode(page)) <= 2000 and len(page.game["actions"]) <= 50
        joined += page.game["actions"]
        if page.next is None:
            break
        assert page.next == start + len(page.game["actions"])
        start = page.next
    assert joined == game.to_data()["actions"]
    short = record_page(8, game, 0)  # the old form: a short game in one reply
    assert short.next is None and short.game == game.to_data()
    assert codec.decode_server(codec.encode(short)) == short


def _integers(value: object) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _integers(v)]
    if isinstance(value, list | tuple):
        return [i for v in value for i in _integers(v)]
    return []


async def test_an_old_game_s_64_bit_seed_is_sent_as_a_string_and_read_by_the_client(
        tmp_path: Path):
    actions, last = long_game(OLD_SEED, pairs=0)
    async with SQLiteStore(tmp_path / "g.sqlite3") as store:
        await store_finished(store, "rold", OLD_SEED, actions)
        async with serving(store) as (_, url):
            ws = await raw(url)
            await ws.send(frame(m.Hello(id=1, name="Cesc")))
            await ws.recv()
            await ws.send(frame(m.RecordRequest(id=2, room="rold")))
            wire = msgpack.unpackb(await ws.recv(), raw=False)
            await ws.close()
            # every integer on the wire within 2^53; the seed itself as its digits
            assert all(abs(i) < 2**53 for i in _integers(wire))
            assert wire["game"]["seed"] == str(OLD_SEED)
            async with await GameClient.connect(url) as client:
                await client.hello("Dolors")
                record = await fetch_record(client.request, "rold")
    assert record.seed == OLD_SEED
    assert the_end(record) == last
    # a record file of it, as `castell replay` reads one, holds and reads it so too
    assert GameRecordFile.from_json(record.to_json()) == record


async def test_new_rooms_draw_their_seeds_within_53_bits(tmp_path: Path):
    async with SQLiteStore(tmp_path / "g.sqlite3") as store, serving(store) as (_, url):
        rooms, hosts = [], []
        for i in range(20):  # each host stays in its room (an empty one is let go of)
            hosts.append(client := await GameClient.connect(url))
            await client.hello(f"Host {i}")
            rooms.append((await client.request(m.CreateRoom, name="Seeds", seats=2)).room)
        seeds = [(await store.load(room)).room.seed  # type: ignore[union-attr]
                 for room in rooms]
        for client in hosts:
            await client.close()
    # drawn from 63 bits, twenty seeds would all be below 2^53 once in 2^200
    assert all(0 <= seed < 2**53 for seed in seeds), seeds
