"""A node that lost a room never writes about it again (server/cluster/node.py,
server/core/room.py).

Real node processes share the real PostgreSQL (a fresh schema) and the real Redis (a fresh
prefix). One node is frozen (SIGSTOP) past its lease while requests queue up for it; the other
takes the room over; when the frozen node wakes up, its queued join and leave must not touch
the seats the room has now, and every player gets their seat back. A private redis-server is
restarted empty under two nodes, the room's node stalled meanwhile: the room must not be taken
over before its old node stopped serving it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis.asyncio as aioredis
from websockets.exceptions import ConnectionClosed

from client.net.net import ServerError, join_anywhere
from server.cluster.node import Keys
from server.store.base import token_matches
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.services import REDIS_URL
from tests.test_cluster import LEASE_MS, node_args, player, start_nodes

pytestmark = pytest.mark.timeout(90)

#: How a request to a node that no longer serves the room fails.
REFUSED = (ServerError, ConnectionError, ConnectionClosed)


async def lease_ran_out(redis_url: str, prefix: str, room: str, timeout: float) -> None:
    """Wait until Redis no longer holds ``room``'s lease (its node stopped renewing it)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        async with asyncio.timeout(timeout):
            while await client.exists(Keys(prefix).owner(room)):
                await asyncio.sleep(0.02)
    finally:
        await client.aclose()


async def redis_up_for(redis_url: str, seconds: float, timeout: float = 30.0) -> None:
    """Wait until the Redis at ``redis_url`` says it has been up for ``seconds``."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        async with asyncio.timeout(timeout):
            while (await client.info("server"))["uptime_in_seconds"] < seconds:
                await asyncio.sleep(0.05)
    finally:
        await client.aclose()


async def stored_seats(db: str, room: str) -> dict[int, tuple[str, bytes | None]]:
    store = PostgresStore(db, shared=True, pool_size=1)
    async with store:
        record = await store.load(room)
    assert record is not None
    return {s.seat: (s.name, s.token_hash) for s in record.seats}


async def test_a_node_frozen_past_its_lease_writes_no_seat_once_it_wakes(db, prefix):
    a, b = await start_nodes(2, *node_args(db, prefix))
    with a, b:
        anna = await player(a.url, "Anna")
        made = await anna.request(m.CreateRoom, name="Frozen", seats=4)
        biel = await player(a.url, "Biel")
        biel_seat = await biel.request(m.JoinRoom, room=made.room)
        eve = await player(a.url, "Eve")

        os.kill(a.proc.pid, signal.SIGSTOP)
        try:
            # Requests reach the frozen node and wait in its socket buffers.
            eve_join = asyncio.create_task(eve.request(m.JoinRoom, room=made.room))
            biel_leave = asyncio.create_task(biel.request(m.LeaveRoom))
            await lease_ran_out(REDIS_URL, prefix, made.room, timeout=3 * LEASE_MS / 1000)
            # The lease ran out: node B takes the room over for the next player.
            dani = await join_anywhere([b.url], "Dani", made.room, timeout=20)
            assert dani.url == b.url and dani.joined.seat == 2
            back = await join_anywhere([b.url], "Biel", made.room, token=biel_seat.token,
                                       timeout=20)
            assert back.url == b.url and back.joined.seat == 1
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)

        # Node A wakes up with the join and the leave queued: the join is refused, the
        # leaver has left (a leave is never refused) but their seat stays as node B has it,
        # and node A's members are sent to find the room again.
        with pytest.raises(REFUSED):
            await asyncio.wait_for(eve_join, 10)
        with pytest.raises(REFUSED):  # the room is gone from node A
            await asyncio.wait_for(biel_leave, 10)
            await biel.request(m.Chat, text="still here?")
        await asyncio.wait_for(anna.closed.wait(), 10)
        assert anna.ws.close_code == 4002

        seats = await stored_seats(db, made.room)
        assert sorted((seat, name) for seat, (name, _) in seats.items()) == \
            [(0, "Anna"), (1, "Biel"), (2, "Dani")]
        assert token_matches(dani.joined.token, seats[2][1])
        assert token_matches(biel_seat.token, seats[1][1])

        # Everyone gets their seat: Anna back with her token, Eve the free one; the game
        # starts, and players who drop take their seats back with their tokens.
        anna_back = await join_anywhere([a.url, b.url], "Anna", made.room,
                                        token=made.token, timeout=20)
        assert anna_back.joined.seat == 0
        eve_again = await join_anywhere([a.url, b.url], "Eve", made.room, timeout=20)
        assert eve_again.joined.seat == 3
        await anna_back.client.request(m.StartGame)
        for dropped, token, seat in ((back, biel_seat.token, 1), (dani, dani.joined.token, 2)):
            await dropped.client.close()
            again = await join_anywhere([a.url, b.url], "?", made.room, token=token,
                                        timeout=20)
            assert again.joined.seat == seat
            if again.client.state is None:  # the view follows the `joined` reply
                await again.client.wait_state(timeout=10)
            assert again.client.state is not None
            await again.client.close()
        for result in (anna_back, eve_again):
            await result.client.close()
        # Whatever node A might still have written since it woke (all of the above took far
        # longer than its queued requests), the seats are the ones node B gave.
        seats = await stored_seats(db, made.room)
        assert sorted((seat, name) for seat, (name, _) in seats.items()) == \
            [(0, "Anna"), (1, "Biel"), (2, "Dani"), (3, "Eve")]
        for seat, token in ((0, made.token), (1, biel_seat.token), (2, dani.joined.token),
                            (3, eve_again.joined.token)):
            assert token_matches(token, seats[seat][1]), seat


def a_free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrivateRedis:
    """A redis-server of this test alone, without persistence: restarted, it is empty."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed: the Redis restart test needs one")
        self.binary = binary
        self.port = a_free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=0.2):
                return
            time.sleep(0.05)
        raise RuntimeError("the private redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


async def test_after_redis_restarts_empty_no_room_is_served_by_two_nodes(db):
    redis = PrivateRedis()
    redis.start()
    # A room is taken over only from a Redis up for a lease and a second: 2 s here.
    lease_ms = 1000
    args = ("--db", db, "--redis", redis.url, "--lease-ms", str(lease_ms),
            "--bot-delay", "0", "--log-level", "warning")
    try:
        a, b = await start_nodes(2, *args)
        with a, b:
            # a Redis up for longer than a lease and a second (the nodes started meanwhile)
            await redis_up_for(redis.url, lease_ms / 1000 + 1)
            anna = await player(a.url, "Anna")
            made = await anna.request(m.CreateRoom, name="Amnesia", seats=3)
            # Node A stalls while Redis restarts, so that it surely has not heard of the
            # restart when node B is first asked for the room.
            os.kill(a.proc.pid, signal.SIGSTOP)
            try:
                redis.stop()
                redis.start()  # empty: every lease is gone, node A does not know it yet
                early = await player(b.url, "Dani")
                with pytest.raises(ServerError) as held_off:
                    await early.request(m.JoinRoom, room=made.room)
                # not served here, nor sent to a node: asked to ask again in a moment
                assert (held_off.value.code, held_off.value.url) == ("moved", None)
                await early.close()
            finally:
                os.kill(a.proc.pid, signal.SIGCONT)
            dani = await join_anywhere([b.url], "Dani", made.room, timeout=30)
            # Node B serves the room only once node A has stopped serving it.
            assert anna.closed.is_set() and anna.ws.close_code == 4002
            assert dani.joined.seat == 1
            anna_back = await join_anywhere([a.url, b.url], "Anna", made.room,
                                            token=made.token, timeout=20)
            assert (anna_back.url, anna_back.joined.seat) == (dani.url, 0)
            seats = await stored_seats(db, made.room)
            assert sorted((seat, name) for seat, (name, _) in seats.items()) == \
                [(0, "Anna"), (1, "Dani")]
            for client in (anna_back.client, dani.client):
                await client.close()
    finally:
        redis.stop()
