"""Several server nodes serve one lobby, and a node's death loses no game (server/cluster/node.py).

Real nodes (``python -m server`` processes on 127.0.0.1) share the real PostgreSQL, in a fresh
schema, and the real Redis, under a fresh key prefix (tests/support/services.py). Leases last 1.5 s
here, so that a killed node's rooms are taken over within a couple of seconds.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import socket
import time

import attrs
import pytest

from client.net.net import GameClient, ServerError, join_anywhere
from server.cluster.node import ClusterConfig, ClusterNode
from server.runtime.lobby import Lobby
from server.runtime.runner import perform
from server.store import RoomRecord, SeatRecord, hash_token
from server.store.errors import StoreError
from server.store.postgres import PostgresStore
from shared import messages as m
from shared.actions import EndTurn
from tests.support.servers import ServerProcess, run_server_cli, serving
from tests.support.services import REDIS_URL
from tests.support.wire import play_legal

LEASE_MS = 1500

pytestmark = pytest.mark.timeout(60)


def node_args(db: str, prefix: str, lease_ms: int = LEASE_MS) -> tuple[str, ...]:
    return ("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix,
            "--lease-ms", str(lease_ms), "--bot-delay", "0", "--log-level", "warning")


async def start_nodes(count: int, *args: str) -> list[ServerProcess]:
    """``count`` cluster nodes, started side by side."""
    return list(await asyncio.gather(
        *(asyncio.to_thread(ServerProcess, *args) for _ in range(count))))


async def player(url: str, name: str) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name)
    return client


def the_game(view: dict) -> dict:
    """A view without what a reconnection changes: who is connected, the turn's deadline."""
    players = [{k: v for k, v in p.items() if k != "connected"} for p in view["players"]]
    return {**view, "players": players, "deadline": None}


async def test_a_room_made_on_one_node_is_listed_joined_and_played_through_another(db, prefix):
    a, b = await start_nodes(2, *node_args(db, prefix))
    with a, b:
        anna = await player(a.url, "Anna")
        made = await anna.request(m.CreateRoom, name="Across", seats=2)
        dolors = await player(a.url, "Dolors")
        hidden = await dolors.request(m.CreateRoom, name="Hidden", seats=2, private=True)
        other = await player(b.url, "Biel")
        listing = await other.request(m.ListRooms)
        assert [(r.room, r.name, r.taken, r.status) for r in listing.rooms] == \
            [(made.room, "Across", 1, "waiting")]  # the private room is not listed
        assert sorted(listing.nodes) == sorted([a.url, b.url])
        # Node B does not serve the room: it says which node does.
        with pytest.raises(ServerError) as moved:
            await other.request(m.JoinRoom, room=made.room)
        assert (moved.value.code, moved.value.url) == ("moved", a.url)
        # A private room is found by its code, never by its id alone.
        with pytest.raises(ServerError) as moved:
            await other.request(m.JoinRoom, room=hidden.code.lower())
        assert (moved.value.code, moved.value.url) == ("moved", a.url)
        with pytest.raises(ServerError) as missing:
            await other.request(m.JoinRoom, room=hidden.room)
        assert missing.value.code == "room_not_found"
        await other.close()
        guest = await join_anywhere([b.url], "Guest", hidden.code)
        assert (guest.url, guest.joined.room, guest.joined.seat) == (a.url, hidden.room, 1)
        await guest.client.close()
        await dolors.close()

        biel = await join_anywhere([b.url], "Biel", made.room)
        assert biel.url == a.url and biel.joined.seat == 1
        await anna.request(m.StartGame)
        clients = [anna, biel.client]
        for client in clients:
            await client.wait_state(lambda p: p.view["status"] == "playing")
        await play_legal(clients, random.Random(1), turns=2, timeout=20)

        # The list on node B follows the room's changes on node A.
        watcher = await player(b.url, "Carme")
        async with asyncio.timeout(5):
            while True:
                rooms = (await watcher.request(m.ListRooms)).rooms
                if rooms and (rooms[0].taken, rooms[0].status) == (2, "playing"):
                    break
                await asyncio.sleep(0.05)
        for client in (*clients, watcher):
            await client.close()


async def test_a_killed_node_s_game_goes_on_at_another_node_at_the_same_version(db, prefix):
    a, b = await start_nodes(2, *node_args(db, prefix))
    with a, b:
        anna = await player(a.url, "Anna")
        made = await anna.request(m.CreateRoom, name="Survivor", seats=2)
        biel = await join_anywhere([b.url], "Biel", made.room)
        await anna.request(m.StartGame)
        clients = [anna, biel.client]
        tokens = [made.token, biel.joined.token]
        for client in clients:
            await client.wait_state(lambda p: p.view["status"] == "playing")
        rng = random.Random(7)
        await play_legal(clients, rng, turns=3, timeout=20)
        before = anna.state

        a.kill()  # SIGKILL, mid-game: nothing is released, the leases must run out
        killed = time.monotonic()
        for client in clients:
            await asyncio.wait_for(client.closed.wait(), 5)
        back = await asyncio.gather(*(
            join_anywhere([a.url, b.url], name, made.room, token=token, timeout=20)
            for name, token in (("Anna", tokens[0]), ("Biel", tokens[1]))))
        took = time.monotonic() - killed
        assert [r.url for r in back] == [b.url, b.url]
        assert [r.joined.seat for r in back] == [0, 1]
        # Within the lease, plus a scan or a join to notice it ran out.
        assert took < 3 * LEASE_MS / 1000, took

        clients = [r.client for r in back]
        for client in clients:
            await client.wait_state(lambda p: all(q["connected"] for q in p.view["players"]))
        for client in clients:
            assert client.state.version > before.version
            assert the_game(client.state.view) == the_game(before.view)
        await play_legal(clients, rng, end_bias=0.5, timeout=20)
        final = clients[0].state
        assert final.view["status"] == "finished" and final.view["winners"]

        async with PostgresStore(db, shared=True, pool_size=1) as store:
            stored = await store.load(made.room)
        assert stored.room.status == "finished" and stored.result is not None
        assert stored.room.version == final.version
        for client in clients:
            await client.close()


async def test_a_node_that_stops_gives_its_rooms_up_at_once(db, prefix):
    # Leases of 20 s: another node serves the room long before the lease could run out.
    a, b = await start_nodes(2, *node_args(db, prefix, lease_ms=20_000))
    with a, b:
        anna = await player(a.url, "Anna")
        made = await anna.request(m.CreateRoom, name="Handover", seats=2)
        await anna.request(m.AddBot, level="random")
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        stopped = time.monotonic()
        # (In a thread: this loop must answer the node's closing handshake meanwhile.)
        assert await asyncio.to_thread(a.terminate) == 0
        assert anna.ws.close_code == 1001
        back = await join_anywhere([a.url, b.url], "Anna", made.room, token=made.token,
                                   timeout=10)
        assert back.url == b.url
        assert time.monotonic() - stopped < 5
        await back.client.close()


# -- leases, in one process, against the real Redis and PostgreSQL -------------------------


async def stored_playing_room(store: PostgresStore, room_id: str) -> str:
    """A two-seat game just started, as a node would have stored it; returns seat 0's token."""
    token = secrets.token_urlsafe(24)
    await store.create_room(RoomRecord(room_id, "Race", 2, "normal", None, False, None,
                                       seed=11, status="playing", version=4))
    await store.put_seat(SeatRecord(room_id, 0, "Anna", token_hash=hash_token(token)))
    await store.put_seat(SeatRecord(room_id, 1, "Biel", token_hash=hash_token(token + "b")))
    return token


async def a_node(db: str, prefix: str, lease_ms: int = 60_000) -> ClusterNode:
    """A cluster node without a socket (its lobby and leases only); started."""
    store = PostgresStore(db, shared=True, pool_size=2)
    await store.open()
    lobby = Lobby(store=store, max_rooms=100, bot_delay=0.0, room_linger=600.0)
    node = ClusterNode(ClusterConfig(REDIS_URL, advertise="ws://127.0.0.1:9", prefix=prefix,
                                     lease_ms=lease_ms), lobby, store)
    await node.start("ws://127.0.0.1:9")
    return node


async def stop_node(node: ClusterNode) -> None:
    for runner in list(node.lobby.rooms.values()):
        runner.close()
    await node.close()
    await node.store.close()


async def test_two_nodes_racing_for_the_same_rooms_take_each_exactly_once(db, prefix):
    nodes = [await a_node(db, prefix), await a_node(db, prefix)]
    try:
        rooms = [f"race{n}" for n in range(12)]
        for room_id in rooms:
            await stored_playing_room(nodes[0].store, room_id)
        results = await asyncio.gather(*(node.adopt(room_id)
                                         for room_id in rooms for node in nodes))
        redis = nodes[0].redis
        for n, room_id in enumerate(rooms):
            won = [node for node, got in zip(nodes, results[2 * n: 2 * n + 2], strict=True)
                   if got is not None]
            assert len(won) == 1, room_id
            assert await redis.get(nodes[0].keys.owner(room_id)) == won[0].node_id
            assert [room_id in node.lobby.rooms for node in nodes].count(True) == 1
            assert won[0].lobby.rooms[room_id].room.version == 5  # moved one past the stored 4
    finally:
        for node in nodes:
            await stop_node(node)


async def test_a_node_that_lost_its_lease_can_no_longer_write(db, prefix):
    stale, fresh = await a_node(db, prefix), await a_node(db, prefix)
    try:
        await stored_playing_room(stale.store, "r-fenced")
        runner = await stale.adopt("r-fenced")
        assert runner is not None and runner.room.version == 5
        # The stale node freezes past its lease; the other node takes the room over.
        await stale.redis.delete(stale.keys.owner("r-fenced"))
        taken = await fresh.adopt("r-fenced")
        assert taken is not None and taken.room.version == 6
        # Waking up, the stale node's write is refused by the database itself...
        room = runner.room
        seat = room.state.turn
        room.seats[seat].member = "the player"  # as if the player still played there
        change = room.act("the player", EndTurn(), 1, now=0.0)
        with pytest.raises(StoreError) as refused:
            for write in change.writes:
                await perform(stale.store, write)
        room.abort(change)
        room.seats[seat].member = None
        assert refused.value.code == "version_conflict"
        assert (await fresh.store.load("r-fenced")).room.version == 6
        # ... and its next renewal finds the lease gone: it stops serving the room.
        await stale.renew()
        await asyncio.sleep(0.05)
        assert "r-fenced" not in stale.lobby.rooms
        assert "r-fenced" in fresh.lobby.rooms
    finally:
        await stop_node(stale)
        await stop_node(fresh)


async def test_players_of_a_room_whose_lease_is_lost_are_told_to_reconnect(db, prefix):
    store = PostgresStore(db, shared=True, pool_size=2)
    cluster = ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=LEASE_MS)
    async with serving(store, cluster=cluster) as (server, url):
        assert server.cluster.url == url
        anna = await player(url, "Anna")
        made = await anna.request(m.CreateRoom, name="Lost", seats=2)
        # Another node took the lease (as after this node froze past it).
        await server.cluster.redis.set(server.cluster.keys.owner(made.room), "elsewhere")
        await asyncio.wait_for(anna.closed.wait(), 3 * LEASE_MS / 1000)
        assert anna.ws.close_code == 4002
        assert "room moved" in anna.ws.close_reason
        assert made.room not in server.lobby.rooms


# -- refusals at the command line ------------------------------------------------------------


def test_a_cluster_node_needs_a_shared_database(tmp_path):
    done = run_server_cli("--redis", REDIS_URL, "--db", str(tmp_path / "games.sqlite3"))
    assert done.returncode == 1
    assert "every node must use the same database: give --db postgresql://" in done.stderr


async def test_a_cluster_node_says_when_redis_does_not_answer(db):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = await asyncio.to_thread(
        run_server_cli, "--port", "0", "--db", db, "--redis", f"redis://127.0.0.1:{port}/0")
    assert done.returncode == 1
    assert f"Redis is not answering at redis://127.0.0.1:{port}/0" in done.stderr


def test_cluster_settings_are_checked():
    with pytest.raises(ValueError):
        ClusterConfig(REDIS_URL, lease_ms=100)
    config = ClusterConfig(REDIS_URL, lease_ms=2000)
    # Two renewals may fail in a row and the lease still has time to run.
    assert config.renew_every * 2 < config.lease_ms / 1000
    assert attrs.evolve(config, lease_ms=8000).scan_every == 4.0


def test_the_deploy_page_lists_every_cluster_flag_with_its_default():
    from pathlib import Path

    from server.cli import build_parser

    page = (Path(__file__).resolve().parent.parent / "docs" / "deploy.md").read_text("utf-8")
    rows = {}
    for line in page[page.index("## The flags"):].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `--"):
            rows[cells[0].strip("`")] = cells[1].strip("`")
    actions = {a.option_strings[-1]: a for a in build_parser()._actions if a.option_strings}
    group = next(g for g in build_parser()._action_groups if g.title.startswith("cluster"))
    cluster_flags = {a.option_strings[-1] for a in group._group_actions}
    assert cluster_flags <= set(rows) and set(rows) <= set(actions)
    for flag in ("--redis-prefix", "--lease-ms", "--port"):
        assert rows[flag] == str(actions[flag].default), flag


# -- the client's way in ---------------------------------------------------------------------


async def test_join_anywhere_skips_nodes_that_do_not_answer_and_raises_real_refusals(url):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"ws://127.0.0.1:{sock.getsockname()[1]}"
    anna = await player(url, "Anna")
    made = await anna.request(m.CreateRoom, name="Lone", seats=2)
    biel = await join_anywhere([dead, url], "Biel", made.room, pause=0.01)
    assert (biel.url, biel.joined.seat) == (url, 1)
    await biel.client.close()
    with pytest.raises(ServerError) as refused:  # not a node's trouble: raised at once
        await join_anywhere([url], "Carme", made.room, token="not-a-token")
    assert refused.value.code == "bad_token"
    with pytest.raises(OSError):  # nobody answers anywhere: the last failure, in time
        await join_anywhere([dead], "Dani", made.room, timeout=0.3, pause=0.05)
    await anna.close()


async def test_the_client_session_follows_moved_and_survives_its_node_dying(db, prefix, tmp_path):
    """The terminal client's session, as a player uses it: it joins through the wrong node
    (``moved`` followed), then keeps its seat when that room's node is killed."""
    from client.local.seats import SeatStore
    from client.net.session import Session

    a, b = await start_nodes(2, *node_args(db, prefix))
    with a, b:
        anna = await player(a.url, "Anna")
        made = await anna.request(m.CreateRoom, name="Roaming", seats=2)
        session = Session(b.url, "Biel", seats=SeatStore(tmp_path / "seats.json"),
                          first_retry=0.1, max_retry=0.5)
        await session.open()
        runner = asyncio.create_task(session.run())
        try:
            await session.list_rooms()  # learns the cluster's nodes
            assert a.url in session.nodes
            joined = await session.join(made.room)
            assert joined.seat == 1 and session.url == a.url
            await anna.request(m.StartGame)
            await session._state_where(lambda s: s.view.status == "playing")
            assert session.state.view.status == "playing"
            version = session.state.version

            a.kill()
            await anna.close()
            async with asyncio.timeout(20):
                while session.url != b.url or session.client is None or \
                        session.state.version <= version:
                    await asyncio.sleep(0.05)
            assert session.seat == 1 and session.room == made.room
            assert session.held_seats()[0].url == b.url  # remembered under the home address
        finally:
            await session.stop()
            runner.cancel()
