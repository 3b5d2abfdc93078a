"""No game is lost when the server stops: a real server process, killed and restarted."""

from __future__ import annotations

import asyncio
import random
import sqlite3

import attrs
import pytest

from client.net.net import GameClient, ServerError
from server.store import open_store
from shared import messages as m
from shared.record import GameRecordFile, replay
from shared.view import state_from_view
from tests.support.servers import ServerProcess, run_server_cli, server_cli_here, serving
from tests.support.wire import play_legal


async def _two_players(url: str):
    a = await GameClient.connect(url)
    await a.hello("Anna")
    joined_a = await a.request(m.CreateRoom, name="Durable", seats=2)
    b = await GameClient.connect(url)
    await b.hello("Bru")
    joined_b = await b.request(m.JoinRoom, room=joined_a.room)
    await a.request(m.StartGame)
    for c in (a, b):
        await c.wait_state(lambda p: p.view["status"] == "playing")
    return joined_a.room, [a, b], [joined_a.token, joined_b.token]


async def test_kill_9_and_restart_loses_nothing(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    rng = random.Random(5)
    with ServerProcess("--db", db, "--bot-delay", "0", "--rate", "1000") as first:
        room, clients, tokens = await _two_players(first.url)
        await play_legal(clients, rng, turns=6)
        before = clients[0].state
        assert before.view == clients[1].state.view
        first.kill()
        for c in clients:
            await asyncio.wait_for(c.closed.wait(), 10)

    with ServerProcess("--db", db, "--bot-delay", "0", "--rate", "1000") as second:
        back = []
        for name, token in zip(("Anna", "Bru"), tokens, strict=True):
            c = await GameClient.connect(second.url)
            await c.hello(name)
            joined = await c.request(m.JoinRoom, room=room, token=token)
            assert joined.room == room
            back.append(c)
        # the first to come back sees the restored room at the version it had, plus one
        # for its own return; once both are back the view is exactly what it was
        first_push = await back[0].wait_state()
        assert first_push.version == before.version + 1
        await back[0].wait_state(lambda p: all(pl["connected"] for pl in p.view["players"]))
        now = back[0].state
        assert now.view == before.view
        assert now.version == before.version + 2
        # and the game goes on
        await back[1].wait_state(lambda p: p.version >= now.version)
        await play_legal(back, rng, turns=2)
        assert back[0].state.version > now.version
        for c in back:
            await c.close()


async def test_finished_game_listed_after_restart_and_export_replays_it(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    # The client plays as fast as replies come: a faster server must not make it rate-limited.
    with ServerProcess("--db", db, "--bot-delay", "0", "--rate", "1000") as srv:
        me = await GameClient.connect(srv.url)
        await me.hello("Solo")
        joined = await me.request(m.CreateRoom, name="Finished one", seats=2)
        await me.request(m.AddBot, level="random")
        await me.request(m.StartGame)
        rng = random.Random(2)
        async with asyncio.timeout(60):
            await me.wait_state(lambda p: p.view["status"] == "playing")
            await play_legal([me, None], rng, end_bias=0.4)
        final = me.state.view
        await me.close()
        assert srv.terminate() == 0

    with ServerProcess("--db", db) as srv:
        c = await GameClient.connect(srv.url)
        await c.hello("Later")
        listing = await c.request(m.ListRooms)
        rooms = {r.room: r for r in listing.rooms}
        assert rooms[joined.room].status == "finished"
        await c.request(m.JoinRoom, room=joined.room, **{"as_": "spectator"})
        watched = await c.wait_state()
        assert watched.view["scores"] == final["scores"]
        await c.close()
        assert srv.terminate() == 0

    out = tmp_path / "record.json"
    done = run_server_cli("export", joined.room, "--db", db, "-o", str(out))
    assert done.returncode == 0, done.stderr
    record = GameRecordFile.from_json(out.read_text())
    last, _ = replay(record)[-1]
    assert last.over
    assert [s.total for s in last.scores] == [s["total"] for s in final["scores"]]
    assert list(last.winners) == final["winners"]
    assert [list(p.team) for p in last.players] == [p["team"] for p in final["players"]]
    # exporting again refuses to overwrite the file (the command's main, in this process)
    again = await asyncio.to_thread(server_cli_here, "export", joined.room, "--db", db, "-o",
                                    str(out))
    assert again.returncode != 0 and "exists" in again.stderr


async def test_sigterm_closes_connections_with_1001(tmp_path):
    with ServerProcess("--db", str(tmp_path / "g.sqlite3")) as srv:
        c = await GameClient.connect(srv.url)
        await c.hello("Anna")
        # wait for the process in a thread: the client must keep answering meanwhile
        assert await asyncio.to_thread(srv.terminate) == 0
        await asyncio.wait_for(c.closed.wait(), 10)
        assert c.ws.close_code == 1001


def test_a_database_that_cannot_be_opened_is_refused_clearly(tmp_path):
    done = run_server_cli("--db", str(tmp_path))  # a directory
    assert done.returncode == 1
    assert str(tmp_path) in done.stderr and "Traceback" not in done.stderr


def test_a_database_from_a_newer_castell_is_left_alone(tmp_path):
    db = tmp_path / "games.sqlite3"

    async def make() -> None:  # a database as this castell makes it
        async with open_store(str(db)):
            pass

    asyncio.run(make())
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE schema_version SET version = version + 7")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = db.read_bytes()
    done = run_server_cli("--db", str(db))
    assert done.returncode == 1 and "newer" in done.stderr
    assert db.read_bytes() == before


async def test_a_database_in_use_by_another_server_is_refused(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    async with serving(open_store(db)):  # a server (in this process) holds the file
        done = await asyncio.to_thread(run_server_cli, "--db", db, "--port", "0")
        assert done.returncode == 1 and "using" in done.stderr


async def test_a_wrong_token_after_restart_is_refused(tmp_path):
    # (servers in this process, one after the other on the file: the token is checked
    # against what the first stored, whatever stopped it; the kill is the first test's)
    db = str(tmp_path / "games.sqlite3")
    async with serving(open_store(db)) as (_, url):
        room, clients, tokens = await _two_players(url)
        for c in clients:
            await c.close()
    async with serving(open_store(db)) as (_, url):
        c = await GameClient.connect(url)
        await c.hello("Mallory")
        with pytest.raises(ServerError) as err:
            await c.request(m.JoinRoom, room=room, token=tokens[0][::-1])
        assert err.value.code == "bad_token"
        await c.close()


async def test_an_abandoned_game_leaves_memory_and_comes_back_with_its_player(tmp_path):
    async with serving(open_store(str(tmp_path / "g.sqlite3")),
                       room_unload_after=0.5) as (server, url):
        room, clients, tokens = await _two_players(url)
        await play_legal(clients, random.Random(1), turns=2)
        before = clients[0].state
        for c in clients:
            await c.close()
        async with asyncio.timeout(10):
            while room in server.lobby.rooms:
                await asyncio.sleep(0.1)
        back = await GameClient.connect(url)
        await back.hello("Anna")
        joined = await back.request(m.JoinRoom, room=room, token=tokens[0])
        assert joined.seat == 0 and room in server.lobby.rooms
        state = await back.wait_state()
        # the same game, at a later version (the leaving and coming back were changes too)
        assert state.version > before.version
        assert state.view["players"][0]["team"] == before.view["players"][0]["team"]
        assert state.view["round"] == before.view["round"]
        assert state.view["turn"] == before.view["turn"]
        assert state_from_view(state.view) == state_from_view(before.view)
        await back.close()


async def test_export_reads_a_running_server_s_file(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    with ServerProcess("--db", db) as srv:
        room, clients, _ = await _two_players(srv.url)
        await play_legal(clients, random.Random(4), turns=3)
        out = tmp_path / "live.json"
        # a game still being played is exported only on purpose: its seed gives the bag away
        # (the export runs the command's main in this process, not the server's)
        refused = await asyncio.to_thread(server_cli_here, "export", room, "--db", db,
                                          "-o", str(out))
        assert refused.returncode == 1 and "--unfinished" in refused.stderr
        assert not out.exists()
        done = await asyncio.to_thread(server_cli_here, "export", room, "--db", db,
                                       "-o", str(out), "--unfinished")
        assert done.returncode == 0, done.stderr
        last, _ = replay(GameRecordFile.from_json(out.read_text()))[-1]
        seen = state_from_view(clients[0].state.view)
        assert seen == attrs.evolve(last, bag=seen.bag)  # a view shows the bag as a count
        assert len(seen.bag) == len(last.bag)
        # the server goes on writing as before
        await play_legal(clients, random.Random(5), turns=1)
        for c in clients:
            await c.close()


async def test_a_read_only_store_refuses_writes(tmp_path):
    from server.store import SQLiteStore, StoreError

    path = tmp_path / "g.sqlite3"
    async with SQLiteStore(path) as writer, SQLiteStore(path, read_only=True) as reader:
        assert await reader.load_unfinished() == []
        with pytest.raises(StoreError) as refused:
            await reader.delete_room("r1")
        assert refused.value.code == "read_only"
        assert await writer.load_unfinished() == []
