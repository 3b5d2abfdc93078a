"""Rated rooms, ratings, the leaderboard and profiles, over real sockets
(server/features/ratings.py,
docs/protocol.md "Ratings"): real servers on 127.0.0.1 on real SQLite files, the ratings
checked against openskill called directly."""

from __future__ import annotations

import random
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.core.names import name_key
from server.features.ratings import rate
from server.store import open_store
from server.store.base import AccountRecord, Placing, RoomRecord, hash_token
from shared import messages as m
from tests.support.accounts import Connect, clients
from tests.support.servers import run_out, serving, virtual_time
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(120)



def shown(mu: float, sigma: float) -> int:
    """The display formula of docs/protocol.md, written out again."""
    return round(1500 + 20 * (mu - 3 * sigma))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "castell.sqlite3"


@pytest.fixture
async def url(db: Path) -> AsyncIterator[str]:
    async with serving(open_store(db)) as (_, made):
        yield made


@pytest.fixture
async def connect(url: str) -> AsyncIterator[Connect]:
    async with clients(url) as make:
        yield make


async def rated_game(clients: list[GameClient], rng: random.Random, end_bias: float) -> dict:
    """A rated room of ``clients`` (creator first), played to its end; its last view."""
    made = await clients[0].request(m.CreateRoom, name="Lliga", seats=len(clients), rated=True)
    for client in clients[1:]:
        await client.request(m.JoinRoom, room=made.room)
    await clients[0].request(m.StartGame)
    for client in clients:
        await client.wait_state(lambda p: p.view["status"] == "playing")
    await play_legal(clients, rng, end_bias=end_bias, timeout=20)
    return (await rated_end(clients[0])).view


def _rated(push: m.StatePush) -> bool:
    return push.view["status"] == "finished" and "rating_before" in push.view["players"][0]


async def rated_end(client: GameClient, timeout: float = 30.0) -> m.StatePush:
    """The push of the game's rated end: the one ``client`` holds already (play_legal may
    have read it while waiting), or the next one."""
    if client.state is not None and _rated(client.state):
        return client.state
    return await client.wait_state(_rated, timeout=timeout)


def expected(view: dict, before: dict[int, tuple[float, float]] | None = None,
             ) -> dict[int, tuple[float, float]]:
    """What openskill itself makes of the game's final order: the winners first, then by
    total, equal totals tied."""
    model = PlackettLuce()
    winners = set(view["winners"])
    totals = {s["seat"]: s["total"] for s in view["scores"]}
    key = {seat: (seat in winners, total) for seat, total in totals.items()}
    seats = sorted(totals)
    ranks = [1 + sum(key[o] > key[s] for o in seats) for s in seats]
    start = before or {}
    teams = [[model.rating(*start.get(s, (model.mu, model.sigma)))] for s in seats]
    rated = model.rate(teams, ranks=ranks)
    return {s: (team[0].mu, team[0].sigma) for s, team in zip(seats, rated, strict=True)}


async def test_a_rated_three_player_game_changes_ratings_as_openskill_computes(connect):
    names = ["Anna", "Biel", "Carla"]
    clients = [await connect(n, new_key()) for n in names]
    view = await rated_game(clients, random.Random(11), end_bias=0.3)
    after = expected(view)
    for player in view["players"]:
        mu, sigma = after[player["seat"]]
        assert player["rating_before"] == 1500
        assert player["rating"] == shown(mu, sigma)
    # The profile and the leaderboard say the same (three games needed to be listed).
    for player in view["players"]:
        profile = await clients[0].request(m.ProfileRequest, name=player["name"])
        assert (profile.rating, profile.games) == (player["rating"], 1)
        assert [(g.before, g.after, g.seats) for g in profile.last] == \
            [(1500, player["rating"], 3)]
        assert profile.wins == (player["seat"] in view["winners"])
    assert (await clients[0].request(m.Leaderboard)).entries == ()


def test_a_tie_is_rated_as_a_tie():
    # (A game that ends in a tie because nobody played is not rated at all: see
    # tests/test_rating_floor.py.) Two tied below a winner move alike, as openskill says.
    placings = (Placing(0, "a", 1), Placing(1, "b", 2), Placing(2, "c", 2))
    after = rate({}, placings)
    model = PlackettLuce()
    rated = model.rate([[model.rating()] for _ in range(3)], ranks=[1.0, 2.0, 2.0])
    assert after == {p.account: (t[0].mu, t[0].sigma)
                     for p, t in zip(placings, rated, strict=True)}
    assert after["b"] == after["c"] and after["a"][0] > after["b"][0]


async def test_ratings_survive_a_restart(db: Path):
    keys = {"Anna": new_key(), "Biel": new_key()}
    async with serving(open_store(db)) as (_, url):
        clients = [await GameClient.connect(url) for _ in keys]
        for client, (name, key) in zip(clients, keys.items(), strict=True):
            await client.hello(name, key)
        view = await rated_game(clients, random.Random(8), end_bias=0.5)
        before = {p["name"]: (await clients[0].request(m.ProfileRequest, name=p["name"]))
                  for p in view["players"]}
        for client in clients:
            await client.close()
    async with serving(open_store(db)) as (_, url):
        client = await GameClient.connect(url)
        await client.hello("Anna", keys["Anna"])
        for name, profile in before.items():
            again = await client.request(m.ProfileRequest, name=name)
            assert profile.games == 1 and profile.rating != 1500
            assert (again.rating, again.games, again.wins, again.by_seats, again.last) == \
                (profile.rating, profile.games, profile.wins, profile.by_seats, profile.last)
        await client.close()


async def seeded(db: Path, games: dict[str, list[int]]) -> dict[str, str]:
    """Accounts (name → key) whose rated games are stored through the store's own
    ``finish``: ``games[name]`` the places of each of its games, against a fixed rival."""
    rivals = ["Rival1", "Rival2", "Rival3"]  # distinct opponents: ratings get established
    keys = {name: new_key() for name in [*games, *rivals]}
    async with open_store(db) as store:
        ids = {}
        for name, key in keys.items():
            account = await store.sign_in(AccountRecord("a" + secrets.token_hex(8), name,
                                                        name_key(name), hash_token(key)))
            assert account is not None
            ids[name] = account.account
        n = 0
        for name, places in games.items():
            for place in places:
                n += 1
                room = f"seed{n}"
                await store.create_room(RoomRecord(room, "x", 2, "normal", None, False, None,
                                                   n, rated=True))
                rival = 2 if place == 1 else 1
                await store.finish(room, {"winners": []}, float(n), placings=(
                    Placing(0, ids[name], place), Placing(1, ids[rivals[n % 3]], rival)))
    return keys


async def test_the_leaderboard_ranks_by_rating_and_around_me_centres_on_the_player(db: Path):
    games = {"Anna": [1] * 6, "Biel": [1, 1, 2, 1, 2], "Carla": [2] * 5,
             "Dani": [1, 2, 1, 2, 1], "Elna": [2] * 6,
             "Ferran": [1, 1]}  # Ferran: too few games to be listed
    keys = await seeded(db, games)
    async with serving(open_store(db), leaderboard_min_games=3) as (_, url):
        client = await GameClient.connect(url)
        await client.hello("Dani", keys["Dani"])
        board = (await client.request(m.Leaderboard, limit=10)).entries
        assert [e.rank for e in board] == list(range(1, len(board) + 1))
        assert "Ferran" not in [e.name for e in board]
        ratings = [e.rating for e in board]
        assert ratings == sorted(ratings, reverse=True)
        assert board[0].name == "Anna" and (board[0].games, board[0].wins) == (6, 6)
        mine = next(e for e in board if e.name == "Dani")
        assert 1 < mine.rank < len(board)
        around = (await client.request(m.Leaderboard, limit=3, around_me=True)).entries
        assert [e.rank for e in around] == [mine.rank - 1, mine.rank, mine.rank + 1]
        assert around[1] == mine
        assert around == tuple(board[mine.rank - 2:mine.rank + 1])
        # A guest cannot ask around itself.
        guest = await GameClient.connect(url)
        await guest.hello("Convidat")
        with pytest.raises(ServerError) as refused:
            await guest.request(m.Leaderboard, around_me=True)
        assert refused.value.code == "not_signed_in"
        with pytest.raises(ServerError) as unknown:
            await guest.request(m.ProfileRequest, name="Ningú")
        assert unknown.value.code == "not_found"
        await guest.close()
        await client.close()


async def test_a_rated_room_refuses_a_bot_and_a_guest(connect):
    anna = await connect("Anna", new_key())
    guest = await connect("Biel")
    with pytest.raises(ServerError) as no_guest_room:
        await guest.request(m.CreateRoom, name="Lliga", seats=2, rated=True)
    assert no_guest_room.value.code == "not_signed_in"
    made = await anna.request(m.CreateRoom, name="Lliga", seats=3, rated=True)
    with pytest.raises(ServerError) as no_bot:
        await anna.request(m.AddBot)
    assert no_bot.value.code == "rated_room"
    with pytest.raises(ServerError) as no_guest:
        await guest.request(m.JoinRoom, room=made.room)
    assert no_guest.value.code == "not_signed_in"
    # Nothing was lost: the room still waits with its one player, rated and timed.
    listed = (await guest.request(m.ListRooms)).rooms
    assert [(r.room, r.taken, r.rated, r.turn_seconds) for r in listed] == \
        [(made.room, 1, True, 300)]
    push = await anna.wait_state(lambda p: p.room == made.room)
    assert push.view["players"][0]["rating"] == 1500


async def test_a_server_given_no_store_keeps_ratings_in_memory():
    """Every server has a store (SQLite in memory when it is given none): rated play, the
    leaderboard and the quick match are served, never refused ``not_rated``."""
    async with serving() as (_, url):
        client = await GameClient.connect(url)
        await client.hello("Anna", new_key())
        made = await client.request(m.CreateRoom, name="x", seats=2, rated=True)
        assert made.room
        await client.request(m.LeaveRoom)
        assert (await client.request(m.Leaderboard)).entries == ()
        await client.request(m.QuickMatch, rated=True)
        await client.close()


async def test_an_abandoned_rated_game_ends_by_the_timer_and_is_rated_in_its_order(db: Path):
    async with serving(open_store(db)) as (server, url):
        clock = virtual_time(server)  # a turn's 10 s pass when the test says
        anna, biel = await GameClient.connect(url), await GameClient.connect(url)
        await anna.hello("Anna", new_key())
        await biel.hello("Biel", new_key())
        made = await anna.request(m.CreateRoom, name="Lliga", seats=2, rated=True,
                                  turn_seconds=10)
        await biel.request(m.JoinRoom, room=made.room)
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        await biel.close()  # Biel walks away and never comes back
        # Anna plays on (one action, so that the game is played: server.features.ratings, then
        # every turn ended at once); the timer ends each of Biel's.
        rng, played = random.Random(2), 0
        while (now := anna.state).view["status"] == "playing":
            if now.view["turn"] == made.seat:
                played += await play_legal([anna, None], rng, actions=1,
                                           end_bias=1.0 if played else 0.0)
            else:
                await run_out(clock)
                await anna.wait_state(lambda p, v=now.version: p.version > v)
        push = await rated_end(anna)
        after = expected(push.view)
        assert {p["seat"]: p["rating"] for p in push.view["players"]} == \
            {s: shown(*after[s]) for s in after}
        profile = await anna.request(m.ProfileRequest, name="Biel")
        assert profile.games == 1 and profile.last[0].room == made.room
        await anna.close()
