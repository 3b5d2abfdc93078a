"""A flood of ``list_rooms`` never costs a node its leases (server/cluster/node.py).

Real node processes share the real PostgreSQL and Redis (fresh schema and prefix). The cluster
lists a thousand public rooms; many connections ask for the list at the rate a connection is
allowed for twice a lease (short leases), while players sit in rooms the nodes hold: no room
may be dropped (no 4002), every room's lease is renewed once the flood is over, and every room
stays served.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from client.net.net import GameClient
from server.cluster.node import Keys
from shared import messages as m
from tests.support.services import REDIS_URL
from tests.test_cluster import node_args, player, start_nodes

pytestmark = pytest.mark.timeout(90)

LEASE_MS = 1500
LISTED = 1000
ASKERS = 40
#: Each asker's pace: the server's default --rate (20 messages a second).
PER_SECOND = 20
#: Twice a lease: a renewal starved at any point of it would cost its room.
FLOOD_SECONDS = 2 * LEASE_MS / 1000


async def list_many_rooms(prefix: str, count: int) -> None:
    """``count`` public rooms in the cluster's list (summaries as nodes write them)."""
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        async with client.pipeline(transaction=False) as pipe:
            for n in range(count):
                room = f"rlisted{n:04d}"
                pipe.hset(f"{prefix}room:{room}:info", mapping={
                    "room": room, "name": f"Listed {n}", "seats": "4", "taken": "1",
                    "variant": "normal", "status": "waiting", "turn_seconds": "",
                    "private": "0", "created": repr(1_700_000_000.0 + n), "url": "ws://x:1",
                })
                pipe.sadd(f"{prefix}rooms", room)
            await pipe.execute()
    finally:
        await client.aclose()


async def renewed_after_now(prefix: str, rooms: list[str], timeout: float) -> None:
    """Wait until each of ``rooms`` has had its lease renewed since now (by Redis's clock:
    its entry in the cluster's ``leases`` then ends a whole lease after now)."""
    client = aioredis.Redis.from_url(REDIS_URL)
    leases = Keys(prefix).leases
    try:
        seconds, micros = await client.time()
        due = seconds * 1000 + micros // 1000 + LEASE_MS
        async with asyncio.timeout(timeout):
            for room in rooms:
                while (await client.zscore(leases, room) or 0) < due:
                    await asyncio.sleep(0.02)
    finally:
        await client.aclose()


async def ask_for_the_list(url: str, until: float) -> int:
    client = await GameClient.connect(url)
    asked = 0
    try:
        await client.hello("Lister")
        while (now := time.monotonic()) < until:
            await client.request(m.ListRooms)
            asked += 1
            await asyncio.sleep(max(0.0, now + 1 / PER_SECOND - time.monotonic()))
    finally:
        await client.close()
    return asked


async def test_a_list_rooms_flood_does_not_starve_the_leases(db, prefix):
    await list_many_rooms(prefix, LISTED)
    a, b = await start_nodes(2, *node_args(db, prefix, lease_ms=LEASE_MS))
    with a, b:
        seated: list[GameClient] = []
        held: list[str] = []
        for url in (a.url, b.url):
            for n in range(2):
                host = await player(url, f"Host{n}")
                held.append((await host.request(m.CreateRoom, name=f"Held {n}", seats=2)).room)
                seated.append(host)
        until = time.monotonic() + FLOOD_SECONDS
        asked = await asyncio.gather(*(ask_for_the_list(url, until)
                                       for url in (a.url, b.url)
                                       for _ in range(ASKERS // 2)))
        assert sum(asked) > ASKERS  # the flood was answered, not refused
        # Every room's node renews its lease after the flood (a room it dropped, it would
        # not), and has dropped none.
        await renewed_after_now(prefix, held, timeout=2 * LEASE_MS / 1000)
        for host in seated:
            assert not host.closed.is_set(), f"a room was dropped ({host.ws.close_code})"
            await host.request(m.Chat, text="still served")
        listing = await seated[0].request(m.ListRooms)
        assert sum(r.name.startswith("Held") for r in listing.rooms) == 4
        for host in seated:
            await host.close()
