"""The room list comes in pages (docs/protocol.md, `list_rooms` ``after``, `rooms` ``more``):
on one server and across two cluster nodes, paging with ``after`` walks every public room
once, in list order, a bounded page at a time; the client pages with `list more`."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from client.control.lobby import ListRooms, parse_lobby
from client.net.net import GameClient
from client.net.session import Session
from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.config import ServerConfig
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.servers import serving, with_config
from tests.support.services import REDIS_URL
from tests.test_cluster import player

PAGE = 5


@pytest.fixture
def server_config(server_config: ServerConfig) -> ServerConfig:
    return with_config(max_listed=PAGE)(server_config)


async def _pages(client: GameClient) -> list[m.Rooms]:
    """Every page of the list, following ``after`` until no more follow."""
    pages = [await client.request(m.ListRooms)]
    while pages[-1].more:
        assert len(pages) < 20, "the pages never end"
        pages.append(await client.request(m.ListRooms, after=pages[-1].rooms[-1].room))
    return pages


async def test_paging_on_one_server_walks_every_public_room_once_in_list_order(connect):
    made = []
    for i in range(12):
        creator = await connect(f"P{i}")
        made.append((await creator.request(m.CreateRoom, name=f"room {i}", seats=2)).room)
    hidden = await connect("Hidden")
    secret = (await hidden.request(m.CreateRoom, name="secret", seats=2, private=True)).room
    # one room plays: it comes after every waiting room
    host = await connect("Host")
    reader = await connect("Reader")
    playing = (await host.request(m.CreateRoom, name="playing", seats=2)).room
    first = (await reader.request(m.ListRooms)).rooms[0]
    assert (first.room, first.taken, first.status) == (playing, 1, "waiting")
    await host.request(m.AddBot, level="random")
    await host.request(m.StartGame)
    pages = await _pages(reader)
    listed = [r.room for page in pages for r in page.rooms]
    assert listed == [*reversed(made), playing]  # waiting newest first, then playing
    last = pages[-1].rooms[-1]  # as it is now, not as it was listed before
    assert (last.taken, last.status) == (2, "playing")
    assert [len(p.rooms) for p in pages] == [5, 5, 3]
    assert [p.more for p in pages] == [True, True, False]
    # a room never listed (private, unknown) gives the first page again
    for after in (secret, "r-nowhere"):
        again = await reader.request(m.ListRooms, after=after)
        assert [r.room for r in again.rooms] == listed[:PAGE] and again.more
    # past the last room: an empty page, and nothing more
    last = await reader.request(m.ListRooms, after=playing)
    assert last.rooms == () and not last.more


async def test_the_client_pages_with_list_more(url, connect):
    for i in range(7):
        creator = await connect(f"P{i}")
        await creator.request(m.CreateRoom, name=f"room {i}", seats=2)
    assert parse_lobby("list more") == ListRooms(more=True)
    assert parse_lobby("list") == ListRooms()
    session = Session(url, "Reader")
    await session.open()
    try:
        first = await session.list_rooms()
        assert len(first) == PAGE and session.more_rooms
        rest = await session.list_rooms(after=first[-1].room)
        assert len(rest) == 2 and not session.more_rooms
        assert [r.name for r in (*first, *rest)] == [f"room {i}" for i in reversed(range(7))]
    finally:
        await session.stop()


@pytest.mark.timeout(60)
async def test_paging_across_two_cluster_nodes_walks_every_room_of_both(db, prefix):
    def node() -> contextlib.AbstractAsyncContextManager[tuple[CastellServer, str]]:
        return serving(PostgresStore(db, shared=True, pool_size=2),
                       cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=1500),
                       max_listed=3)

    async with node() as (_, a_url), node() as (_, b_url):
        clients, made = [], set()
        for i in range(8):  # rooms on both nodes
            client = await player((a_url, b_url)[i % 2], f"P{i}")
            made.add((await client.request(m.CreateRoom, name=f"room {i}", seats=2)).room)
            clients.append(client)
        reader = await player(b_url, "Reader")
        async with asyncio.timeout(10):
            while True:  # the summaries reach the list within moments
                pages = await _pages(reader)
                listed = [r.room for page in pages for r in page.rooms]
                if set(listed) == made:
                    break
                await asyncio.sleep(0.1)
        assert len(listed) == len(made)  # each room once
        assert [len(p.rooms) for p in pages] == [3, 3, 2]
        assert [p.more for p in pages] == [True, True, False]
        assert all(sorted(p.nodes) == sorted([a_url, b_url]) for p in pages)
        # newest first, whichever node serves it
        names = [r.name for page in pages for r in page.rooms]
        assert names == [f"room {i}" for i in reversed(range(8))]
        for client in (*clients, reader):
            await client.close()

