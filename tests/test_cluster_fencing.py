"""A node that lost a room never writes about it again (server/cluster.py, server/room.py).

Real node processes share the real PostgreSQL (a fresh schema) and the real Redis (a fresh
prefix). One node is frozen (SIGSTOP) past its lease while requests queue up for it; the other
takes the room over; when the frozen node wakes up, its queued join and leave must not touch
the seats the room has now, and every player gets their seat back.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import pytest
from websockets.exceptions import ConnectionClosed

from client.net import ServerError, join_anywhere
from server.store.base import token_matches
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.services import fresh_prefix, fresh_schema
from tests.test_cluster import LEASE_MS, node_args, player, start_nodes

pytestmark = pytest.mark.timeout(90)

#: How a request to a node that no longer serves the room fails.
REFUSED = (ServerError, ConnectionError, ConnectionClosed)


@pytest.fixture
async def db() -> AsyncIterator[str]:
    async with fresh_schema() as url:
        yield url


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    async with fresh_prefix() as made:
        yield made


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
            await asyncio.sleep(LEASE_MS / 1000 + 0.5)
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
        await asyncio.sleep(0.5)  # whatever node A might still write, it has written now

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
            assert again.client.state is not None
            await again.client.close()
        for result in (anna_back, eve_again):
            await result.client.close()
