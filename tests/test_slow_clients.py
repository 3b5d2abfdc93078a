"""A client that stops reading costs the server bounded memory, and nobody else anything.

The stalled client is real: a websocket whose socket has a small receive buffer and whose
transport stops reading, so the kernel's buffers fill first and then the server's own write
buffer. The server must close it, with a reason, once its unread bytes pass
``write_buffer_limit``, drop its socket even though it never answers the closing handshake,
and meanwhile serve everyone else as if nothing happened.
"""

from __future__ import annotations

import asyncio

import attrs
import pytest

from client.net.net import GameClient
from server.app import CastellServer
from server.runtime.connection import Connection
from shared import messages as m
from tests.support.hostile import Table, stalled
from tests.support.servers import run_out, serving, virtual_time

pytestmark = pytest.mark.timeout(60)

LIMIT = 64 * 1024
#: The most a websocket frame from the server adds to its payload: 2 bytes, and 8 more for a
#: payload length past 65535 (server frames are not masked).
FRAME_HEADER_MOST = 10


@attrs.frozen
class Sent:
    """One frame given to a connection's ``send_bytes``, with its transport's write buffer
    just before and just after (nothing runs in between: ``send_bytes`` never awaits)."""

    size: int
    before: int
    after: int
    closed: bool  # this frame made the server close the connection


def watch_sends(conn: Connection) -> list[Sent]:
    """Record every frame the server sends ``conn`` while it is open, whichever code path
    sends it: the buffer is measured around the very call that may cross the limit."""
    sent: list[Sent] = []
    send_bytes = conn.send_bytes

    def watched(data: bytes, *, lossy: bool = False) -> None:
        if conn.closing:
            return send_bytes(data, lossy=lossy)
        transport = conn.ws.transport
        before = transport.get_write_buffer_size()
        send_bytes(data, lossy=lossy)
        sent.append(Sent(len(data), before, transport.get_write_buffer_size(), conn.closing))
        return None

    conn.send_bytes = watched  # type: ignore[method-assign]
    return sent


def _server_side(srv: CastellServer, name: str):
    return next(c for c in srv.connections if c.name == name)


async def _gone(srv: CastellServer, conn) -> None:
    async with asyncio.timeout(5):
        while conn in srv.connections or conn.ws in srv.admission.admitted:
            await asyncio.sleep(0.05)


#: Seconds a closing handshake may take (``close_timeout``): the stalled client never
#: answers, so it is dropped after that long.
CLOSE_TIMEOUT = 0.1


async def test_a_spectator_that_stops_reading_is_closed_and_the_game_goes_on():
    async with serving(write_buffer_limit=LIMIT, close_timeout=CLOSE_TIMEOUT) as (srv, url):
        table = await Table.open(url)
        ws = await stalled(url, srv.port, "Sleepy", table.room)
        sleepy = _server_side(srv, "Sleepy")
        sent = watch_sends(sleepy)
        room = srv.lobby.rooms[table.room].room
        pushes = 0
        # The room pushes its state again and again (as a busy game does, only faster); the
        # players read theirs, the stalled spectator reads nothing.
        async with asyncio.timeout(30):
            while not sleepy.closing:
                data = room.current()
                for member in room.members():
                    member.send_bytes(data)
                pushes += 1
                if pushes % 25 == 0:
                    await table.play(1)  # the game goes on meanwhile
                await asyncio.sleep(0)
        assert sleepy.close_reason is not None and "too slow" in sleepy.close_reason
        # It took more than the limit to get there: the kernel's buffers filled first...
        assert sum(s.size for s in sent) > LIMIT
        # ...the server closed it on the very push that took its unread bytes past the
        # limit, not one push earlier or later...
        *earlier, crossing = sent
        assert crossing.closed and crossing.after > LIMIT
        assert all(s.after <= LIMIT and not s.closed for s in earlier)
        # ...so what waited in the server for it never went past the limit and one push.
        assert crossing.before <= LIMIT
        assert crossing.after - crossing.before <= crossing.size + FRAME_HEADER_MOST
        peak = max(s.after for s in sent)
        assert LIMIT < peak <= LIMIT + max(s.size for s in sent) + FRAME_HEADER_MOST
        # It is dropped although it never answers the closing handshake.
        await _gone(srv, sleepy)
        assert srv.admission.per_address["127.0.0.1"] == 2  # the two players only
        # The players were never held up: they saw every version, and play on.
        for c in table.clients:
            await c.wait_state(lambda p: p.version == room.version)
        before = table.played
        await table.play(5)
        assert table.played > before or table.view["status"] == "finished"
        ws.transport.abort()
        await table.close()


async def test_a_player_that_stops_reading_is_closed_its_seat_kept_and_turns_time_out():
    async with serving(write_buffer_limit=16 * 1024, socket_send_buffer=16 * 1024,
                       close_timeout=CLOSE_TIMEOUT, rate=1e6, burst=1e6) as (srv, url):
        clock = virtual_time(srv)  # the turns run out when the test says
        anna = await GameClient.connect(url)
        await anna.hello("Anna")
        joined = await anna.request(m.CreateRoom, name="flood", seats=2, turn_seconds=10)
        ws = await stalled(url, srv.port, "Sleepy", joined.room, as_="player")
        sleepy = _server_side(srv, "Sleepy")
        await anna.request(m.StartGame)
        # The room pushes its state again and again (as a busy game does, only faster):
        # Anna reads hers, the sleeper nothing. (Chat alone would never close it: chat is
        # left out for a slow reader, see test_floods.py.)
        room = srv.lobby.rooms[joined.room].room
        async with asyncio.timeout(30):
            while not sleepy.closing:
                data = room.current()
                for member in room.members():
                    member.send_bytes(data)
                await asyncio.sleep(0)
        assert "too slow" in (sleepy.close_reason or "")
        await _gone(srv, sleepy)
        gone = await anna.wait_state(lambda p: p.view["status"] == "playing"
                                     and not p.view["players"][1]["connected"])
        assert gone.view["status"] == "playing"
        # the game goes on: Sleepy's turns time out, Anna's come round (each turn runs
        # out, hers too, until one of Sleepy's has)
        latest = gone
        async with asyncio.timeout(10):
            while {"kind": "timeout", "seat": 1} not in latest.events:
                await run_out(clock)
                latest = await anna.wait_state(lambda p, v=latest.version: p.version > v)
        assert latest.view["players"][1]["name"] == "Sleepy"
        ws.transport.abort()
        await anna.close()
