"""A tournament's director in a cluster, on the real PostgreSQL and Redis. Two in-process
nodes: the node that directs a tournament is closed mid-round, after its round's games have
ended and before it read their results; the other node takes the director's lease once it
has run out (the closed node never gives it up, as a dead one cannot) and finishes the
tournament, its players now on the other node. Two node processes: the director's is killed
(SIGKILL) while its round's games are being played in its rooms; the games end on the other
node once their rooms moved there, and that node takes the lease and finishes the
tournament, its own director ticking."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import attrs
import pytest

from client.local.keys import new_key
from client.net.net import GameClient, join_anywhere
from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.servers import TEST_CONFIG, ServerProcess, serving
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.timeout(120)

NAMES = ("Anna", "Biel", "Carme", "Dani")
LEASE_MS = 1500


async def push_of(client: GameClient, kind: type) -> Any:
    async with asyncio.timeout(15):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push


async def sign_in(url: str, name: str, key: str) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name, key)
    return client


async def play_round(players: dict[str, GameClient]) -> None:
    """Every table of the round: both sit, the one of the lower name resigns."""
    pushes = {n: await push_of(c, m.TournamentTablePush) for n, c in players.items()}
    tables: dict[str, list[str]] = {}
    for n, p in pushes.items():
        tables.setdefault(p.room, []).append(n)
    for room, seated in tables.items():
        for n in seated:
            await players[n].request(m.JoinRoom, room=room, token=pushes[n].token)
        await players[min(seated)].request(m.ResignRequest)
        for n in seated:
            await players[n].request(m.LeaveRoom)


async def test_the_director_dies_mid_round_and_another_node_finishes_it(db, prefix) -> None:
    config = attrs.evolve(TEST_CONFIG, tournament_interval=3600.0)  # ticked by the test

    def node() -> contextlib.AbstractAsyncContextManager[tuple[CastellServer, str]]:
        return serving(PostgresStore(db, shared=True, pool_size=2), config=config,
                       cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=LEASE_MS))

    keys = {n: new_key() for n in NAMES}
    async with node() as (b, b_url):
        a_stack = contextlib.AsyncExitStack()
        a, a_url = await a_stack.enter_async_context(node())
        try:
            on_a = {n: await sign_in(a_url, n, keys[n]) for n in NAMES}
            made = await on_a["Anna"].request(m.TournamentCreate, name="Cluster cup",
                                              rounds=2, seats=2, turn_seconds=60)
            tid = made.tournament
            for c in on_a.values():
                await c.request(m.TournamentJoin, tournament=tid)
            await on_a["Anna"].request(m.TournamentStart, tournament=tid)
            assert await a.tournaments.tick() == 0  # A directs now (nothing over yet)
            assert not await b.tournaments.directs()  # and B does not
            await play_round(on_a)  # round 1 ends; A dies before it reads the results
            for c in on_a.values():
                await c.close()
        finally:
            await a_stack.aclose()
        closed = time.monotonic()
        assert (await b.tournaments.get(tid)).played[0]["tables"][0]["places"] is None
        on_b = {n: await sign_in(b_url, n, keys[n]) for n in NAMES}
        moved = 0
        async with asyncio.timeout(LEASE_MS / 1000 * 4):
            while not moved:
                moved = await b.tournaments.tick()
                if not moved:
                    await asyncio.sleep(0.05)
        took = time.monotonic() - closed
        assert took <= LEASE_MS / 1000 + 1.0, took  # within a lease (and a tick)
        t = await b.tournaments.get(tid)
        assert t.status == "running" and len(t.played) == 2
        assert all(table["places"] is not None for table in t.played[0]["tables"])
        await play_round(on_b)  # round 2, its rooms on B
        for _ in range(200):
            await b.tournaments.tick()
            if (await b.tournaments.get(tid)).status == "finished":
                break
            await asyncio.sleep(0.02)
        ended = {n: await push_of(c, m.TournamentEndedPush) for n, c in on_b.items()}
        final = await on_b["Biel"].request(m.TournamentRequest, tournament=tid)
        assert final.status == "finished" and final.round == 2
        # the higher name won each game: Dani won both
        assert final.standings[0].name == "Dani" and final.standings[0].points == 2
        assert sum(s.points for s in final.standings) == 4
        assert all(p.status == "finished" for p in ended.values())
        for c in on_b.values():
            await c.close()


async def lease_holder(redis: Any, prefix: str, nodes: list[ServerProcess],
                       but: ServerProcess | None = None) -> ServerProcess:
    """The node process whose id holds the director's lease (other than ``but``), once one
    does: the lease names a node id, the node's key in Redis its address."""
    async with asyncio.timeout(LEASE_MS / 1000 * 4):
        while True:
            holder = await redis.get(f"{prefix}tournaments:director")
            url = holder and await redis.get(f"{prefix}node:{holder}")
            found = [n for n in nodes if n.url == url and n is not but]
            if found:
                return found[0]
            await asyncio.sleep(0.05)


async def test_a_tournament_finishes_after_its_directors_node_is_killed(db, prefix) -> None:
    import redis.asyncio as aioredis

    args = ("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix,
            "--lease-ms", str(LEASE_MS), "--tournament-interval", "0.1",
            "--bot-delay", "0", "--log-level", "warning")
    nodes = list(await asyncio.gather(*(asyncio.to_thread(ServerProcess, *args) for _ in "ab")))
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    keys = {n: new_key() for n in NAMES}
    with nodes[0], nodes[1]:
        try:
            director = await lease_holder(redis, prefix, nodes)
            survivor = next(n for n in nodes if n is not director)
            # everyone on the director's node, which pairs round 1 and makes its rooms there
            on_d = {n: await sign_in(director.url, n, keys[n]) for n in NAMES}
            made = await on_d["Anna"].request(m.TournamentCreate, name="Killed cup",
                                              rounds=2, seats=2, turn_seconds=60)
            tid = made.tournament
            for c in on_d.values():
                await c.request(m.TournamentJoin, tournament=tid)
            await on_d["Anna"].request(m.TournamentStart, tournament=tid)
            tables = {n: await push_of(c, m.TournamentTablePush) for n, c in on_d.items()}
            assert {p.round for p in tables.values()} == {1}
            assert await lease_holder(redis, prefix, nodes) is director
            await asyncio.to_thread(director.kill)  # mid-round: nobody has played a move
            killed = time.monotonic()

            # each player takes their seat back on the survivor once their room moved there
            joined = await asyncio.gather(*(
                join_anywhere([survivor.url], n, p.room, token=p.token, key=keys[n],
                              timeout=LEASE_MS / 1000 * 4, pause=0.05, max_pause=0.2)
                for n, p in tables.items()))
            assert {r.url for r in joined} == {survivor.url}
            on_s = {n: r.client for n, r in zip(tables, joined, strict=True)}
            seated: dict[str, list[str]] = {}
            for n, p in tables.items():
                seated.setdefault(p.room, []).append(n)
            mid = await on_s["Anna"].request(m.TournamentRequest, tournament=tid)
            assert (mid.status, mid.round) == ("running", 1)
            assert [t.places for t in mid.tables] == [None, None]  # the games go on
            for names in seated.values():
                await on_s[min(names)].request(m.ResignRequest)
            for c in on_s.values():
                await c.request(m.LeaveRoom)

            # the survivor directs now: it read round 1's results and paired round 2
            assert await lease_holder(redis, prefix, nodes, but=director) is survivor
            await play_round(on_s)
            took = time.monotonic() - killed
            ended = {n: await push_of(c, m.TournamentEndedPush) for n, c in on_s.items()}
            assert {p.status for p in ended.values()} == {"finished"}
            final = await on_s["Biel"].request(m.TournamentRequest, tournament=tid)
            assert (final.status, final.round) == ("finished", 2)
            assert len(final.standings) == 4
            assert sum(s.points for s in final.standings) == 4
            # the higher name won each game: Dani won both
            assert (final.standings[0].name, final.standings[0].points) == ("Dani", 2)
            assert took < LEASE_MS / 1000 * 3, took  # a lease, a tick and the games
            for c in (*on_s.values(), *on_d.values()):
                await c.close()
        finally:
            await redis.aclose()
