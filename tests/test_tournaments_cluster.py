"""A tournament's director in a cluster: two in-process nodes on the real PostgreSQL and
Redis. The node that directs a tournament is closed mid-round, after its round's games have
ended and before it read their results; the other node takes the director's lease once it
has run out (the closed node never gives it up, as a dead one cannot) and finishes the
tournament, its players now on the other node."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import attrs
import pytest

from client.local.keys import new_key
from client.net.net import GameClient
from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.servers import TEST_CONFIG, serving
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
