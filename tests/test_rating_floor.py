"""The floor of rated play (server/features/ratings.py, docs/protocol.md "Ratings and quick match"),
over real sockets against a real server on a real SQLite file: a rated game where nobody
played is not rated, two accounts from one network never meet in rated play, and a new
account's rating is provisional (and off the leaderboard) until it is established.

Clients bind their end of a connection to an address of their own in 127.0.0.0/8 (all of
them this machine's): 127.0.0.x share a /24, 127.0.N.2 for different N do not.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.control.lobby import profile_lines, rating_text
from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.features.accounts import name_key
from server.features.ratings import ESTABLISHED, NOBODY_PLAYED, may_meet, played, provisional
from server.store import open_store
from server.store.base import AccountRecord, Placing, RoomRecord, hash_token
from shared import messages as m
from shared.actions import EndTurn
from tests.support.servers import serving
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[CastellServer, str]]:
    # The server as deployed: accounts of one network do not meet in rated play.
    async with serving(open_store(tmp_path / "castell.sqlite3"), rated_one_network=False,
                       match_interval=86_400.0) as made:
        yield made


async def player(url: str, name: str, address: str, key: str | None = None) -> GameClient:
    client = await GameClient.connect(url, local_addr=(address, 0))
    await client.hello(name, key or new_key())
    return client


async def test_a_rated_game_where_nobody_played_is_not_rated(server):
    _, url = server
    # One person, two keys, on two networks: every turn of the game only ended.
    anna = await player(url, "Anna", "127.0.1.2")
    biel = await player(url, "Biel", "127.0.2.2")
    made = await anna.request(m.CreateRoom, name="Lliga", seats=2, rated=True)
    await biel.request(m.JoinRoom, room=made.room)
    await anna.request(m.StartGame)
    await play_legal([anna, biel], random.Random(3), end_bias=1.0, timeout=20)
    end = await anna.wait_state(lambda p: p.view["status"] == "finished") \
        if anna.state is None or anna.state.view["status"] != "finished" else anna.state
    assert end.view["unrated"] == NOBODY_PLAYED
    assert all("rating_before" not in p for p in end.view["players"])
    assert [p["rating"] for p in end.view["players"]] == [1500, 1500]
    for name in ("Anna", "Biel"):
        profile = await anna.request(m.ProfileRequest, name=name)
        assert (profile.rating, profile.games, profile.last) == (1500, 0, ())
    assert (await anna.request(m.Leaderboard)).entries == ()
    for client in (anna, biel):
        await client.close()


async def test_two_accounts_of_one_network_never_meet_in_rated_play(server):
    srv, url = server
    anna = await player(url, "Anna", "127.0.0.2")
    biel = await player(url, "Biel", "127.0.0.3")  # another address, the same /24
    carla = await player(url, "Carla", "127.0.3.2")
    matcher = srv.requests.matchmaker
    for client in (anna, biel):
        await client.request(m.QuickMatch, seats=[2], rated=True)
    assert await matcher.round() == 0  # not matched with each other
    await carla.request(m.QuickMatch, seats=[2], rated=True)
    assert await matcher.round() == 1
    matched = [await pushed(c, m.MatchedPush) for c in (anna, carla)]
    assert matched[0].room == matched[1].room
    assert not any(isinstance(p, m.MatchedPush) for p in biel.drain())
    assert [w.name for w in await matcher.queue.wishes()] == ["Biel"]
    await biel.request(m.CancelMatch)
    # A rated room refuses a seat to a second account of the network...
    made = await biel.request(m.CreateRoom, name="Lliga", seats=3, rated=True)
    dani = await player(url, "Dani", "127.0.0.2")
    with pytest.raises(ServerError) as refused:
        await dani.request(m.JoinRoom, room=made.room)
    assert refused.value.code == "rated_room"
    assert "different networks" in refused.value.message
    # ...and nothing was lost: the room waits with its one player; another network sits,
    # and an unrated room seats anyone.
    elna = await player(url, "Elna", "127.0.4.2")
    await elna.request(m.JoinRoom, room=made.room)
    listed = {r.room: r.taken for r in (await dani.request(m.ListRooms)).rooms}
    assert listed[made.room] == 2
    await elna.request(m.LeaveRoom)
    await biel.request(m.LeaveRoom)
    friendly = await biel.request(m.CreateRoom, name="Amics", seats=2)
    await dani.request(m.JoinRoom, room=friendly.room)
    for client in (anna, biel, carla, dani, elna):
        await client.close()


async def seed(db: Path, games: dict[str, list[str]]) -> dict[str, str]:
    """Accounts (name → key) with rated games stored through the store's own ``finish``:
    ``games[name]`` the rivals it beat, one game each."""
    names = sorted({*games, *(r for rivals in games.values() for r in rivals)})
    keys = {name: new_key() for name in names}
    async with open_store(db) as store:
        ids = {}
        for name in names:
            account = await store.sign_in(AccountRecord("a" + secrets.token_hex(8), name,
                                                        name_key(name), hash_token(keys[name])))
            assert account is not None
            ids[name] = account.account
        n = 0
        for name, rivals in games.items():
            for rival in rivals:
                n += 1
                await store.create_room(RoomRecord(f"seed{n}", "x", 2, "normal", None, False,
                                                   None, n, rated=True))
                await store.finish(f"seed{n}", {"winners": [0]}, float(n), placings=(
                    Placing(0, ids[name], 1), Placing(1, ids[rival], 2)))
    return keys


async def test_a_rating_is_provisional_until_established(tmp_path: Path):
    db = tmp_path / "castell.sqlite3"
    # Anna beat three rivals over five games: established. Farm beat its twin five times:
    # five games, one opponent — provisional, however high, and off the leaderboard.
    keys = await seed(db, {"Anna": ["R1", "R2", "R3", "R1", "R2"],
                           "Farm": ["Twin"] * 5})
    async with serving(open_store(db), rated_one_network=False) as (_, url):
        client = await player(url, "Anna", "127.0.1.5", keys["Anna"])
        anna = await client.request(m.ProfileRequest, name="Anna")
        farm = await client.request(m.ProfileRequest, name="Farm")
        assert (anna.games, anna.provisional) == (5, False)
        assert (farm.games, farm.provisional) == (5, True)
        assert farm.rating > 1600  # five wins against one: high, but unproven
        board = (await client.request(m.Leaderboard)).entries
        assert [e.name for e in board] == ["Anna"]
        assert farm.rank is None and anna.rank == 1
        # The client marks a provisional rating.
        assert f"rating {farm.rating}?" in profile_lines(farm)[0]
        assert f"rating {anna.rating} " in profile_lines(anna)[0]
        # A new account's rating is provisional in a rated room's view too.
        made = await client.request(m.CreateRoom, name="Lliga", seats=2, rated=True)
        newbie = await player(url, "Nou", "127.0.2.5")
        await newbie.request(m.JoinRoom, room=made.room)
        push = await newbie.wait_state(lambda p: p.room == made.room
                                       and len(p.view["players"]) == 2)
        flags = {p["name"]: p["provisional"] for p in push.view["players"]}
        assert flags == {"Anna": False, "Nou": True}
        for c in (client, newbie):
            await c.close()


async def pushed(client: GameClient, cls: type, timeout: float = 10.0):
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, cls):
                return push


def test_the_floor_by_value():
    assert not played([EndTurn(), EndTurn()])
    assert played([EndTurn(), object(), EndTurn()])
    assert not may_meet("10.1.2.3", "10.1.2.200") and may_meet("10.1.2.3", "10.1.3.3")
    assert not may_meet("2001:db8::1", "2001:db8::2") and may_meet("2001:db8::1", "2001:db9::1")
    assert may_meet(None, "10.1.2.3")
    assert (ESTABLISHED.games, ESTABLISHED.opponents) == (5, 3)
    assert provisional(4, 3) and provisional(9, 2) and not provisional(5, 3)
    assert rating_text(1516, True) == "1516?" and rating_text(1516, False) == "1516"
