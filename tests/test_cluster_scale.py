"""What a cluster node's periodic work costs grows with what changed or with a page, not
with every game held (server/cluster/node.py, "Taking over" and "The room list").

In one process, against the real PostgreSQL (a fresh schema) and Redis (a fresh prefix):
thousands of games are made in bulk (one SQL statement, one Redis pipeline), as if other
nodes held them; the node's own counters say what a scan read and what a page touched.
"""

from __future__ import annotations

import asyncpg
import pytest

from server.cluster.node import ClusterConfig, ClusterNode, list_score
from server.runtime.lobby import Lobby, list_key
from server.store.postgres import PostgresStore
from tests.support.services import POSTGRES_URL, REDIS_URL
from tests.test_cluster import stored_playing_room

pytestmark = pytest.mark.timeout(120)

HELD = 10_000


async def a_node(db: str, prefix: str) -> ClusterNode:
    store = PostgresStore(db, shared=True, pool_size=2)
    await store.open()
    lobby = Lobby(store=store, max_rooms=100, bot_delay=0.0, room_linger=600.0)
    node = ClusterNode(ClusterConfig(REDIS_URL, advertise="ws://127.0.0.1:9", prefix=prefix,
                                     lease_ms=60_000), lobby, store)
    await node.start("ws://127.0.0.1:9")
    return node


async def stop_node(node: ClusterNode) -> None:
    for runner in list(node.lobby.rooms.values()):
        runner.close()
    await node.close()
    await node.store.close()


async def redis_now_ms(redis) -> int:
    seconds, micros = await redis.time()
    return seconds * 1000 + micros // 1000


async def test_a_scan_reads_the_leases_that_ran_out_not_every_stored_game(db, prefix):
    import redis.asyncio as aioredis

    store = PostgresStore(db, shared=True, pool_size=2)
    await store.open()
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        # 10,000 unfinished games, held by a node that renews their leases...
        conn = await asyncpg.connect(POSTGRES_URL, timeout=10)
        try:
            await conn.execute(
                f'INSERT INTO "{store.schema}".rooms (room, name, seats, variant, private, '
                "seed, status, version, created_at) SELECT 'held' || g, 'Held', 2, 'normal', "
                "false, g, 'waiting', 0, 0 FROM generate_series(1, $1::int) g", HELD)
        finally:
            await conn.close()
        held = [f"held{n}" for n in range(1, HELD + 1)]
        ends = await redis_now_ms(redis) + 600_000
        async with redis.pipeline(transaction=False) as pipe:
            for room_id in held:
                pipe.set(f"{prefix}room:{room_id}:owner", "elsewhere", px=600_000)
            pipe.zadd(f"{prefix}leases", dict.fromkeys(held, ends))
            pipe.set(f"{prefix}leases:seeded", "1")
            await pipe.execute()
        # ... and five whose node died: their leases ran out.
        lost = [f"lost{n}" for n in range(5)]
        for room_id in lost:
            await stored_playing_room(store, room_id)
        await redis.zadd(f"{prefix}leases", dict.fromkeys(lost, 1))

        node = await a_node(db, prefix)  # its first scan runs as it starts
        try:
            assert sorted(node.lobby.rooms) == lost
            assert node.scan_read == len(lost)  # not 10,005
            await node._scan()
            assert node.scan_read == len(lost)  # nothing changed: nothing read
            # An entry saying a lease ran out that still holds is read once, and set right.
            await redis.zadd(f"{prefix}leases", {"held7": 1})
            await node._scan()
            assert node.scan_read == len(lost) + 1 and "held7" not in node.lobby.rooms
            assert await redis.zscore(f"{prefix}leases", "held7") > ends - 600_000
            await node._scan()
            assert node.scan_read == len(lost) + 1
            # A Redis that lost the leases (no mark) makes one scan read the database once.
            await redis.delete(f"{prefix}leases:seeded")
            await node._scan()
            assert node.scan_read == len(lost) + 1 + HELD + len(lost)
            assert await redis.exists(f"{prefix}leases:seeded")
            assert await redis.zscore(f"{prefix}leases", "held1") == ends  # left as it was
            before = node.scan_read
            await node._scan()
            assert node.scan_read == before
        finally:
            await stop_node(node)
    finally:
        await redis.aclose()
        await store.close()


def fields(n: int) -> dict[str, str]:
    status = ("waiting", "playing")[n % 2]
    return {"room": f"r{n:06d}", "name": f"Room {n}", "seats": "4", "taken": str(n % 4),
            "variant": "normal", "status": status, "turn_seconds": "", "private": "0",
            "rated": "0", "created": repr(1_700_000_000.0 + n % 997), "url": "ws://x"}


async def test_a_page_of_the_room_list_touches_a_page_of_entries_at_many_rooms(db, prefix):
    import redis.asyncio as aioredis

    count, limit = 3000, 25
    rooms = [fields(n) for n in range(count)]
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    node = await a_node(db, prefix)
    try:
        async with redis.pipeline(transaction=False) as pipe:
            for f in rooms:
                pipe.hset(f"{prefix}room:{f['room']}:info", mapping=f)
                pipe.pexpire(f"{prefix}room:{f['room']}:info", 600_000)
            pipe.zadd(f"{prefix}list", {f["room"]: list_score(f["status"], float(f["created"]))
                                        for f in rooms})
            await pipe.execute()
        order = [f["room"] for f in sorted(
            rooms, key=lambda f: list_key(f["status"], float(f["created"]), f["room"]))]

        page, _, more = await node.list_page(None, limit)
        assert [r.room for r in page] == order[:limit] and more
        assert node.listing.touched == limit + 1  # the page, and one to know more follow
        page, _, more = await node.list_page(order[1500], limit)
        assert [r.room for r in page] == order[1501:1501 + limit] and more
        assert node.listing.touched == 2 * (limit + 1)
        # Rooms whose node died (their summaries ran out) are passed over, and forgotten.
        for room_id in order[1501:1511]:
            await redis.delete(f"{prefix}room:{room_id}:info")
        node.listing._pages.clear()
        page, _, more = await node.list_page(order[1500], limit)
        assert [r.room for r in page] == order[1511:1511 + limit] and more
        assert node.listing.touched == 3 * (limit + 1) + 10
        assert await redis.zscore(f"{prefix}list", order[1501]) is None
        # The last page says no more follow.
        page, _, more = await node.list_page(order[-3], limit)
        assert [r.room for r in page] == order[-2:] and not more
    finally:
        await stop_node(node)
        await redis.aclose()
