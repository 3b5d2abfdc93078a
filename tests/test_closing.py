"""A cluster node closes, whatever its background tasks do (server/cluster/node.py ``close``,
server/features/matchmaking.py ``Matchmaker.close``): a task whose cancellation was lost on its
way (the Redis client swallows one that comes while a command waits for its reply) is
cancelled again, and the node's close returns instead of waiting for it for ever.

A real node in this process, on the real PostgreSQL and Redis."""

from __future__ import annotations

import asyncio

import pytest

from server.cluster.node import ClusterConfig
from server.store.postgres import PostgresStore
from tests.support.servers import serving
from tests.support.services import REDIS_URL
from tests.test_loop import deaf

pytestmark = pytest.mark.timeout(60)


async def test_a_cluster_node_closes_although_its_tasks_lost_their_cancellation(db, prefix):
    deaf_tasks: list[asyncio.Task[None]] = []
    try:
        async with asyncio.timeout(10):
            async with serving(PostgresStore(db, shared=True, pool_size=2),
                               cluster=ClusterConfig(REDIS_URL, prefix=prefix,
                                                     lease_ms=1500)) as (server, _):
                assert server.cluster is not None
                # one of the node's loops, and one of its matcher's tasks, will not hear it
                deaf_tasks += [asyncio.create_task(deaf()), asyncio.create_task(deaf())]
                server.cluster._loops.append(deaf_tasks[0])
                server.matchmaker._tasks.append(deaf_tasks[1])
                await asyncio.sleep(0)  # both wait
        assert server.cluster.redis is None  # it left its cluster
        assert all(task.cancelled() for task in deaf_tasks)
    finally:  # (a close that waits for them for ever is cut short above: they end here)
        for task in deaf_tasks:
            for _ in range(10):
                if task.done():
                    break
                task.cancel()
                await asyncio.sleep(0)
