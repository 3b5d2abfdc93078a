"""A room whose store fails, over the wire: the error boundary and the room's recovery.

The fault is real: another program holds the SQLite file's write lock (``BEGIN EXCLUSIVE`` in
a second connection), so the server's writes fail with "database is locked" after its busy
timeout, exactly as they would when an administrator's tool or a backup holds the file. Only
codes of the wire's list may reach a client, never the database's path; nothing is faked:
the action that was not stored was not applied; once the lock is released the room goes on
by itself (a bot retries) and the player's retry is accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.core.room import NOTICE_DOWN
from server.store.sqlite import SQLiteStore
from shared import messages as m
from shared.actions import EndTurn
from shared.errors import ERROR_CODES
from tests.support.servers import server_url, serving


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Another program holds the database's write lock meanwhile."""
    other = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        other.execute("BEGIN EXCLUSIVE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


async def refused_at_least(caplog: pytest.LogCaptureFixture, count: int) -> None:
    """Wait until the server has logged ``count`` writes the store refused."""
    async with asyncio.timeout(20):
        while len([r for r in caplog.records if "store refused" in r.getMessage()]) < count:
            await asyncio.sleep(0.05)


def set_bot_delay(server: CastellServer, seconds: float, room: str | None = None) -> None:
    """The pause before each bot action in the server's one room (or in ``room``), from
    now on."""
    if room is None:
        (room,) = server.lobby.rooms
    server.lobby.rooms[room].room.bot_delay = seconds


@contextlib.asynccontextmanager
async def game_against_a_bot(tmp_path: Path, turn_seconds: int | None = None, *,
                             probe_every: float = 0.05,
                             ) -> AsyncIterator[tuple[GameClient, int, Path, CastellServer]]:
    """Anna against a bot on a server whose games are in an SQLite file; it is Anna's turn,
    and from now on the bot waits 0.5 s before each of its actions (so that a lock taken at
    Anna's turn comes before the bot's next move). A turn lasts ``turn_seconds`` / 20 (the
    server's time scale); a write waits 0.1 s for the file's lock before it is refused; while
    a room waits to try a refused write again, the store is probed every ``probe_every``
    seconds."""
    path = tmp_path / "games.sqlite3"
    store = SQLiteStore(str(path), busy_timeout=0.1)
    async with serving(store, bot_delay=0.0, turn_time_scale=0.05,
                       store_probe_every=probe_every) as (server, url):
        anna = await GameClient.connect(url)
        try:
            await anna.hello("Anna")
            joined = await anna.request(m.CreateRoom, name="Fault", seats=2,
                                        turn_seconds=turn_seconds)
            await anna.request(m.AddBot, level="random")
            await anna.request(m.StartGame)
            await anna.wait_state(lambda p: p.view["turn"] == joined.seat, timeout=30)
            set_bot_delay(server, 0.5)
            yield anna, joined.seat, path, server
        finally:
            await anna.close()


async def test_a_players_action_the_store_refuses_is_internal_error_and_not_applied(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with game_against_a_bot(tmp_path) as (anna, seat, path, _):
        version = anna.state.version
        with locked(path):
            with pytest.raises(ServerError) as refused:
                await anna.act(EndTurn())
            # only a code of the wire's list, and not a word of the database's whereabouts
            assert refused.value.code == "internal_error" and refused.value.code in ERROR_CODES
            assert str(path) not in refused.value.message
            assert "games.sqlite3" not in refused.value.message
            assert "locked" not in refused.value.message
            assert "try again" in refused.value.message
            await asyncio.sleep(0.2)
            # nothing was applied: no push, the same version, still Anna's turn
            assert not [p for p in anna.drain() if isinstance(p, m.StatePush)]
            assert anna.state.version == version and anna.state.view["turn"] == seat
        # the operator learns the cause
        refusals = [r for r in caplog.records if "store refused" in r.getMessage()]
        assert refusals and str(path) in refusals[0].getMessage()
        assert refusals[0].exc_info is not None
        # the store is back: the same action now goes through
        assert await anna.act(EndTurn()) == version + 1


async def test_a_bots_move_the_store_refuses_is_retried_until_the_store_is_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with game_against_a_bot(tmp_path) as (anna, seat, path, server):
        while True:  # end Anna's turns until the bot's comes (a new round may be hers first)
            version = await anna.act(EndTurn())
            push = await anna.wait_state(lambda p, v=version: p.version >= v)
            if push.view["turn"] != seat:
                break
        with locked(path):  # the bot waits 0.5 s before it plays: the lock comes first
            await refused_at_least(caplog, 2)  # the bot tries again while the store is down
            assert anna.state.version == version  # the bot could not move: nothing faked
            # Only its first move had to wait for the lock: the rest of its turn needs no
            # half-second pauses.
            set_bot_delay(server, 0.0)
        assert not [r for r in caplog.records if "illegal" in r.getMessage()]
        # Anna was told, once, that the game cannot be saved just now
        notices = [p.text for p in anna.drain() if isinstance(p, m.NoticePush)]
        assert notices == [NOTICE_DOWN]
        # once the lock is gone the bot plays its turn by itself and it is Anna's again
        back = await anna.wait_state(lambda p: p.view["turn"] == seat, timeout=40)
        assert back.version > version
        assert any(r.getMessage().endswith("the store works again") for r in caplog.records)


async def test_a_turn_timer_the_store_refused_fires_again_once_the_store_is_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with game_against_a_bot(tmp_path, turn_seconds=20) as (anna, seat, path, _):
        version = anna.state.version
        with locked(path):  # Anna's turn runs out (1 s) while the database is held
            await refused_at_least(caplog, 2)  # the timer tries again while the store is down
            assert anna.state.version == version  # not ended: it could not be stored
        # the store is back: the timeout goes through by itself, and the game goes on
        ended = await anna.wait_state(
            lambda p: any(e["kind"] == "timeout" and e["seat"] == seat for e in p.events),
            timeout=40)
        assert ended.version == version + 1



def refusals(caplog: pytest.LogCaptureFixture, room: str) -> int:
    """How many of ``room``'s writes the store has refused so far."""
    return len([r for r in caplog.records
                if "store refused" in r.getMessage() and room in r.getMessage()])


async def test_a_lone_room_s_bot_plays_at_once_when_the_store_is_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Another program holds the file while Anna's bot is to move, and nobody else writes:
    the bot's move is refused again and again (its wait between tries grows to seconds).
    The lock let go, the server's probe of the store (every 0.05 s here) finds it back and
    the bot moves at once, not once its backoff is over: a room goes on by itself when its
    store is back."""
    caplog.set_level(logging.INFO)
    async with game_against_a_bot(tmp_path) as (anna, seat, path, server):
        (room,) = server.lobby.rooms
        while True:  # end Anna's turns until her bot's comes
            version = await anna.act(EndTurn())
            push = await anna.wait_state(lambda p, v=version: p.version >= v)
            if push.view["turn"] != seat:
                break
        with locked(path):  # the bot waits 0.5 s before it plays: the lock comes first
            # three refusals of the bot's move: it now waits 2 s before its next try
            async with asyncio.timeout(20):
                while refusals(caplog, room) < 3:
                    await asyncio.sleep(0.02)
            set_bot_delay(server, 0.0, room)
            assert anna.state.version == version
        # the store is back, and nobody writes: the bot moves within 1 s all the same
        moved = await anna.wait_state(lambda p: p.version > version, timeout=1.0)
        assert any(e.get("seat") == 1 - seat for e in moved.events)


async def test_a_bot_backing_off_plays_at_once_when_a_players_action_is_stored(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Another program holds the file while a bot is to move in Anna's room and while Bob
    acts in his: the bot's move is refused again and again (its wait between tries grows to
    seconds) and so is Bob's action. The lock let go, Bob acts again and is stored: that is
    the store back, and Anna's bot moves at once, not once its backoff is over. (The store
    is probed only once a minute here: Bob's write alone can wake the bot in time.)"""
    caplog.set_level(logging.INFO)
    async with game_against_a_bot(tmp_path, probe_every=60.0) as (anna, seat, path, server):
        (room,) = server.lobby.rooms
        bob = await GameClient.connect(server_url(server))
        try:
            await bob.hello("Bob")
            joined = await bob.request(m.CreateRoom, name="Other", seats=2)
            await bob.request(m.AddBot, level="random")
            await bob.request(m.StartGame)
            await bob.wait_state(lambda p: p.view["turn"] == joined.seat, timeout=30)
            while True:  # end Anna's turns until her bot's comes
                version = await anna.act(EndTurn())
                push = await anna.wait_state(lambda p, v=version: p.version >= v)
                if push.view["turn"] != seat:
                    break
            with locked(path):  # the bot waits 0.5 s before it plays: the lock comes first
                with pytest.raises(ServerError):
                    await bob.act(EndTurn())
                # three refusals of the bot's move: it now waits 2 s before its next try
                async with asyncio.timeout(20):
                    while refusals(caplog, room) < 3:
                        await asyncio.sleep(0.02)
                set_bot_delay(server, 0.0, room)
                assert anna.state.version == version
            # the store is back: Bob's action is stored, and Anna's bot moves within 1 s
            await bob.act(EndTurn())
            moved = await anna.wait_state(lambda p: p.version > version, timeout=1.0)
            assert any(e.get("seat") == 1 - seat for e in moved.events)
        finally:
            await bob.close()

