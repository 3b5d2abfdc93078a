"""Accounts on a cluster: a player signed in on node B is told about their games on node A,
takes their seat back through B (following ``moved``), and hears ``your_turn`` there.

Two real nodes in this process, on the real PostgreSQL, in a fresh schema, and the real Redis,
under a fresh key prefix (tests/support/services.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import pytest

from client.net.net import GameClient, ServerError, join_anywhere
from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.store.postgres import PostgresStore
from shared import messages as m
from shared.actions import EndTurn
from tests.support.servers import serving
from tests.support.services import REDIS_URL
from tests.support.wire import caught_up

pytestmark = pytest.mark.timeout(60)


async def signed_in(url: str, name: str, key: str) -> GameClient:
    client = await GameClient.connect(url)
    welcome = await client.hello(name, key)
    assert welcome.account
    return client


def node(db: str, prefix: str) -> contextlib.AbstractAsyncContextManager[
        tuple[CastellServer, str]]:
    return serving(PostgresStore(db, shared=True, pool_size=2),
                   cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=1500))


async def test_games_on_node_a_are_listed_resumed_and_announced_through_node_b(db, prefix):
    async with node(db, prefix) as (_, a_url), node(db, prefix) as (_, b_url):
        anna_key, biel_key = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
        anna = await signed_in(a_url, "Anna", anna_key)
        biel = await signed_in(a_url, "Biel", biel_key)
        made = await anna.request(m.CreateRoom, name="Llarga", seats=2,
                                  turn_seconds=2 * 24 * 3600)
        await biel.request(m.JoinRoom, room=made.room)
        await anna.request(m.StartGame)
        push = await anna.wait_state(lambda p: p.view["status"] == "playing")
        first = push.view["turn"]
        # The name is the account's on every node: a guest on B cannot take it.
        guest = await GameClient.connect(b_url)
        with pytest.raises(ServerError) as taken:
            await guest.hello("anna")
        assert taken.value.code == "name_taken"
        await guest.close()

        # Biel, on node B, in its lobby: his games are A's.
        away = await signed_in(b_url, "Biel", biel_key)
        games = (await away.request(m.MyGames)).entries
        assert [(g.room, g.seat, g.status, g.turn, g.your_turn) for g in games] == \
            [(made.room, 1, "playing", first, first == 1)]

        # When a turn of his comes on A, B tells him.
        if first == 1:
            await biel.act(EndTurn())
            await anna.wait_state(lambda p: p.view["turn"] == 0)
        await biel.close()
        while anna.state.view["turn"] == 0:
            await caught_up(anna, await anna.act(EndTurn()))
        async with asyncio.timeout(10):
            while True:
                heard = await away.pushes.get()
                if isinstance(heard, m.YourTurnPush):
                    break
        assert (heard.room, heard.name) == (made.room, "Llarga")
        games = (await away.request(m.MyGames, status="playing")).entries
        assert [(g.turn, g.your_turn) for g in games] == [(1, True)]

        # He takes his seat back through B, with no token: B says A serves it.
        with pytest.raises(ServerError) as moved:
            await away.request(m.JoinRoom, room=made.room)
        assert (moved.value.code, moved.value.url) == ("moved", a_url)
        back = await join_anywhere([b_url], "Biel", made.room, key=biel_key)
        assert (back.url, back.joined.seat, back.joined.token) == (a_url, 1, None)
        await back.client.act(EndTurn())
        for client in (anna, away, back.client):
            await client.close()
