"""``my_games`` from the store alone (server/features/accounts.py, schema 11): where each game
stands
is stored with its room by the write that moves it, so a page of an account's games costs a
query and no game is replayed — over real sockets, on a real SQLite file and the real
PostgreSQL, the server restarted in between so that nothing is in memory."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from client.local.keys import new_key
from client.net.net import GameClient
from server.store.base import GameRecord, Store
from server.store.postgres import PostgresStore
from server.store.sqlite import SQLiteStore
from shared import messages as m
from shared.actions import EndTurn
from tests.support.servers import serving
from tests.support.services import store_schema
from tests.support.wire import caught_up

pytestmark = pytest.mark.timeout(120)

#: Games of the account listed, one page of ``my_games``: enough that reading them back one
#: by one would show (none may be), standing at different rounds and turns. The count is
#: not the point: a full page (a hundred) took three times as long to make.
GAMES = 30

#: Room limits out of the way: one pair of connections makes every game.
ROOMY = {"rooms_per_connection": 1000, "rooms_per_address": 1000}


class CountingSQLite(SQLiteStore):
    """A real SQLite store that counts the games read back whole (each one then replayed)."""

    loads = 0

    async def load(self, room: str) -> GameRecord | None:
        self.loads += 1
        return await super().load(room)


class CountingPostgres(PostgresStore):
    """The same on PostgreSQL."""

    loads = 0

    async def load(self, room: str) -> GameRecord | None:
        self.loads += 1
        return await super().load(room)


@pytest.fixture(params=["sqlite", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path
                 ) -> AsyncIterator[Callable[[], CountingSQLite | CountingPostgres]]:
    """Makes a fresh (unopened) counting store on the same database each time it is called."""
    if request.param == "sqlite":
        path = tmp_path / "castell.sqlite3"
        yield lambda: CountingSQLite(path)
        return
    async with store_schema() as url:
        yield lambda: CountingPostgres(url)


async def end_turns(anna: GameClient, biel: GameClient, count: int) -> None:
    """The seat to act ends its turn, ``count`` times."""
    clients = [anna, biel]
    for _ in range(count):
        assert anna.state is not None
        seen = anna.state.version
        await clients[anna.state.view["turn"]].act(EndTurn())
        push = await anna.wait_state(lambda p, v=seen: p.version > v)
        for client in clients:
            await caught_up(client, push.version)


async def make_games(store: Store, anna_key: str, biel_key: str) -> tuple[m.GameEntry, ...]:
    """:data:`GAMES` games of Anna (seat 0) and Biel, started and played a few turns each
    (none over); Anna's ``my_games`` page of them as the server that plays them lists it."""
    async with serving(store, **ROOMY) as (_, url):
        anna, biel = await GameClient.connect(url), await GameClient.connect(url)
        await anna.hello("Anna", anna_key)
        await biel.hello("Biel", biel_key)
        for i in range(GAMES):
            anna.state = biel.state = None  # a room left before: its versions are another count
            made = await anna.request(m.CreateRoom, name=f"Joc {i}", seats=2)
            await biel.request(m.JoinRoom, room=made.room)
            await anna.request(m.StartGame)
            for client in (anna, biel):
                await client.wait_state(lambda p: p.view["status"] == "playing")
            await end_turns(anna, biel, i % 7)
            await anna.request(m.LeaveRoom)
            await biel.request(m.LeaveRoom)
        before = (await anna.request(m.MyGames, limit=GAMES)).entries
        await anna.close()
        await biel.close()
    return before


async def listed(store: Store, key: str) -> tuple[tuple[m.GameEntry, ...], int]:
    """Anna's ``my_games`` page from a server just started on ``store`` (nothing of hers in
    memory), and how many games the store read back whole for it."""
    assert isinstance(store, CountingSQLite | CountingPostgres)
    async with serving(store, **ROOMY) as (server, url):
        assert not server.lobby.rooms  # no timer, no bots: every game stays in the store
        loads = store.loads
        anna = await GameClient.connect(url)
        await anna.hello("whoever", key)
        entries = (await anna.request(m.MyGames, limit=GAMES)).entries
        await anna.close()
        return entries, store.loads - loads


async def test_a_page_of_unfinished_games_is_listed_without_replaying_any(stores):
    anna_key = new_key()
    before = await make_games(stores(), anna_key, new_key())
    assert len(before) == GAMES
    assert {e.round for e in before} >= {1, 2}  # the games stand at different rounds
    assert {e.turn for e in before} == {0, 1}

    entries, loads = await listed(stores(), anna_key)

    assert entries == before
    assert [e.name for e in entries] == [f"Joc {i}" for i in reversed(range(GAMES))]
    for entry in entries:
        assert (entry.status, entry.seat, entry.players) == ("playing", 0, ("Anna", "Biel"))
        assert entry.your_turn == (entry.turn == 0)
    assert loads == 0, f"{loads} games were read back and replayed to list them"


async def test_a_game_stored_before_schema_11_is_replayed_once_then_never(tmp_path):
    path = tmp_path / "castell.sqlite3"
    anna_key = new_key()
    before = await make_games(CountingSQLite(path), anna_key, new_key())
    # What a file written before schema 11 holds: nothing about where its games stand.
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rooms SET round = NULL, turn = NULL")
    conn.close()

    first, loads = await listed(CountingSQLite(path), anna_key)
    assert first == before
    assert loads == GAMES  # each replayed once, and where it stands written back

    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM rooms WHERE round IS NULL").fetchone() == (0,)
    conn.close()
    again, loads = await listed(CountingSQLite(path), anna_key)
    assert again == before
    assert loads == 0
