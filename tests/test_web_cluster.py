"""The web pages of a cluster's node (docs/operations.md, "Web pages"): its front page lists
the rooms every node serves (the directory the nodes share, in Redis), and a game another
node serves is shown as the shared database holds it, without this node taking it over or
loading it. Real PostgreSQL and Redis, two nodes in this process."""

from __future__ import annotations

import random

import pytest

from client.local.keys import new_key
from client.net.net import GameClient
from server.cluster.node import ClusterConfig
from server.store.postgres import PostgresStore
from tests.support.servers import serving
from tests.support.services import REDIS_URL
from tests.support.web import Parsed, bot_room, fetch, play_seat

pytestmark = pytest.mark.timeout(120)


async def test_a_node_shows_a_game_another_node_serves_from_the_shared_store(db, prefix):
    cluster = ClusterConfig(REDIS_URL, prefix=prefix)
    async with serving(PostgresStore(db, shared=True, pool_size=2), cluster=cluster) \
            as (a, a_url), \
            serving(PostgresStore(db, shared=True, pool_size=2), cluster=cluster) \
            as (b, b_url):
        anna = await GameClient.connect(a_url)
        await anna.hello("Anna", new_key())
        live = await bot_room(anna, "Al node A", ["random"])
        await play_seat(anna, live.seat, random.Random(11), until_round=2)
        assert live.room in a.lobby.rooms
        home = Parsed((await fetch(b_url, "/")).text)
        assert f"/rooms/{live.room}" in home.links and "Al node A" in home.text
        page = await fetch(b_url, f"/rooms/{live.room}")
        assert page.status == 200
        shown = Parsed(page.text)
        assert "round 2/10" in shown.text and "Anna" in shown.text and shown.scripts() == []
        assert live.room not in b.lobby.rooms  # read for the page, not taken over
        assert live.room in a.lobby.rooms
        await anna.close()
