"""Quick match over real sockets (server/features/matchmaking.py, docs/protocol.md "Quick match"):
groups of 2 and of 3, a cancel and a dropped connection in the queue, the rating window
widening as players wait (on a test clock), bots filling an unrated wait, and two cluster
nodes matching players who queued on different nodes.

The lone-server tests drive the matcher's rounds themselves, on a clock of their own (the
server's own rounds are a day apart); the cluster tests run two nodes in this process, on
the real PostgreSQL and Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.features.matchmaking import Matchmaker, Windows, Wish, find_matches, unique_names
from server.store import open_store
from shared import messages as m
from tests.support.servers import serving
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.timeout(90)


class Clock:
    """The matcher's time, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def lone(tmp_path: Path) -> AsyncIterator[tuple[CastellServer, str, Clock]]:
    clock = Clock()
    async with serving(open_store(tmp_path / "castell.sqlite3"),
                       match_interval=86_400.0) as (server, url):
        server.requests.matchmaker.clock = clock
        yield server, url, clock


async def player(url: str, name: str, *, account: bool = True) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name, secrets.token_urlsafe(48) if account else None)
    return client


async def pushed(client: GameClient, cls: type, timeout: float = 10.0):
    """The next push of type ``cls`` (others, such as ``state``, are let by)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, cls):
                return push


async def take_seat(client: GameClient, matched: m.MatchedPush) -> dict:
    joined = await client.request(m.JoinRoom, room=matched.room, token=matched.token)
    assert joined.seat == matched.seat
    push = await client.wait_state(lambda p: p.room == matched.room)
    return push.view


def mm(server: CastellServer) -> Matchmaker:
    return server.requests.matchmaker


async def test_two_players_are_matched_into_a_started_room(lone):
    server, url, _ = lone
    anna, biel = await player(url, "Anna"), await player(url, "Biel", account=False)
    await anna.request(m.QuickMatch, seats=[2])
    await biel.request(m.QuickMatch, seats=[2, 3])
    assert await mm(server).round() == 1
    a, b = await pushed(anna, m.MatchedPush), await pushed(biel, m.MatchedPush)
    assert a.room == b.room and {a.seat, b.seat} == {0, 1} and a.url is None
    view = await take_seat(anna, a)
    await take_seat(biel, b)
    assert view["status"] == "playing" and view["seats"] == 2
    assert sorted(p["name"] for p in view["players"]) == ["Anna", "Biel"]
    assert await mm(server).round() == 0  # the queue is empty now
    # The seat belongs to Anna's account: her games list it.
    assert [g.room for g in (await anna.request(m.MyGames)).entries] == [a.room]


async def test_three_players_with_a_cancel_and_a_dropped_connection_in_the_queue(lone):
    server, url, _ = lone
    anna, biel, carla, dani, elna = [await player(url, n) for n in
                                     ("Anna", "Biel", "Carla", "Dani", "Elna")]
    await anna.request(m.QuickMatch, seats=[3])
    await mm(server).round()
    assert await pushed(anna, m.MatchWaitingPush) == m.MatchWaitingPush(found=1, of=3)
    await biel.request(m.QuickMatch, seats=[3])
    await carla.request(m.QuickMatch, seats=[3])
    await carla.request(m.CancelMatch)  # Carla changed her mind
    await dani.request(m.QuickMatch, seats=[3])
    await dani.close()  # and Dani's connection dropped
    async with asyncio.timeout(10):
        while len(await mm(server).queue.wishes()) != 2:
            await asyncio.sleep(0.02)
    assert await mm(server).round() == 0
    assert await pushed(anna, m.MatchWaitingPush) == m.MatchWaitingPush(found=2, of=3)
    await elna.request(m.QuickMatch, seats=[3, 4])
    assert await mm(server).round() == 1
    matched = [await pushed(c, m.MatchedPush) for c in (anna, biel, elna)]
    assert len({p.room for p in matched}) == 1
    assert sorted(p.seat for p in matched) == [0, 1, 2]
    views = [await take_seat(c, p) for c, p in zip((anna, biel, elna), matched, strict=True)]
    assert sorted(p["name"] for p in views[-1]["players"]) == ["Anna", "Biel", "Elna"]
    assert not any(isinstance(p, m.MatchedPush) for p in carla.drain())
    # A cancel when not queued is fine; asking from a room is refused.
    await carla.request(m.CancelMatch)
    with pytest.raises(ServerError) as seated:
        await anna.request(m.QuickMatch)
    assert seated.value.code == "already_in_room"


async def test_the_rating_window_widens_as_players_wait(lone, tmp_path):
    server, url, clock = lone
    anna, biel = await player(url, "Anna"), await player(url, "Biel")
    # Anna is rated higher: she won a rated game against a third account.
    carla = await player(url, "Carla")
    store = server.store
    assert store is not None
    from server.store.base import Placing, RoomRecord

    accounts = {n: (await store.account_named(n.lower())).account for n in ("Anna", "Carla")}
    await store.create_room(RoomRecord("seed1", "x", 2, "normal", None, False, None, 1,
                                       rated=True))
    await store.finish("seed1", {"winners": [0]}, 1.0, placings=(
        Placing(0, accounts["Anna"], 1), Placing(1, accounts["Carla"], 2)))
    gap = (await server.requests.ratings.of((accounts["Anna"],)))[accounts["Anna"]] - 1500
    windows = mm(server).windows = Windows(start=30, widen=10, most=1000,
                                           one_network=True)  # all from 127.0.0.1
    assert gap > windows.start
    await anna.request(m.QuickMatch, seats=[2], rated=True)
    await biel.request(m.QuickMatch, seats=[2], rated=True)
    assert await mm(server).round() == 0
    assert await pushed(biel, m.MatchWaitingPush) == m.MatchWaitingPush(found=1, of=2)
    # Not yet: the window has widened, but not enough.
    clock.now += (gap - windows.start) / windows.widen - 1
    assert await mm(server).round() == 0
    clock.now += 2  # now both windows hold the gap
    assert await mm(server).round() == 1
    a, b = await pushed(anna, m.MatchedPush), await pushed(biel, m.MatchedPush)
    view = await take_seat(anna, a)
    assert view["status"] == "playing"
    ratings = {p["name"]: p["rating"] for p in view["players"]}
    assert ratings == {"Anna": 1500 + gap, "Biel": 1500}
    # A guest may not ask for a rated game; a rated one never takes bots.
    guest = await player(url, "Convidat", account=False)
    for fields, code in (({"rated": True}, "not_signed_in"),
                         ({"rated": True, "bots_after": 5}, "not_signed_in")):
        with pytest.raises(ServerError) as refused:
            await guest.request(m.QuickMatch, **fields)
        assert refused.value.code == code
    with pytest.raises(ServerError) as no_bots:
        await carla.request(m.QuickMatch, rated=True, bots_after=5)
    assert no_bots.value.code == "rated_room"
    assert b.room == a.room


async def test_bots_fill_an_unrated_wait(lone):
    server, url, clock = lone
    anna = await player(url, "Anna", account=False)
    await anna.request(m.QuickMatch, seats=[3], bots_after=30)
    clock.now += 29
    assert await mm(server).round() == 0
    clock.now += 1
    assert await mm(server).round() == 1
    matched = await pushed(anna, m.MatchedPush)
    view = await take_seat(anna, matched)
    assert view["status"] == "playing"
    assert [p["bot"] for p in view["players"]] == [False, True, True]


def test_matched_players_get_one_name_each():
    assert unique_names(["Anna", "anna", "Server", "Biel"]) == ["Anna", "anna 2", "Server 2",
                                                                 "Biel"]


def test_the_matcher_prefers_close_ratings_and_keeps_rated_and_unrated_apart():
    w = Windows(100, 10, 1000)

    def wish(t: str, rating: int, since: float = 0.0, rated: bool = True,
             seats: tuple[int, ...] = (2,)) -> Wish:
        return Wish(t, "", t, t, t, rating, seats, rated, since)

    queue = [wish("a", 1500), wish("b", 1900), wish("c", 1560), wish("d", 1500, rated=False)]
    found = find_matches(queue, 0.0, w)
    assert [[x.ticket for x in g.wishes] for g in found] == [["a", "c"]]
    # 40 s later b's window (500) reaches d? No: d is unrated. It stays alone.
    assert find_matches([wish("b", 1900), wish("d", 1500, rated=False)], 40.0, w) == []


# -- a cluster --------------------------------------------------------------------------------


async def test_two_cluster_nodes_match_players_who_queued_on_different_nodes(db, prefix):
    from server.cluster.node import ClusterConfig
    from server.store.postgres import PostgresStore

    def node() -> contextlib.AbstractAsyncContextManager[tuple[CastellServer, str]]:
        # (the matcher's rounds come ten times a second: nobody waits for the next one long)
        return serving(PostgresStore(db, shared=True, pool_size=2),
                       cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=1500),
                       match_interval=0.1)

    async with node() as (_, a_url), node() as (_, b_url):
        anna, biel = await player(a_url, "Anna"), await player(b_url, "Biel")
        await anna.request(m.QuickMatch, seats=[2], rated=True)
        await biel.request(m.QuickMatch, seats=[2], rated=True)
        got = [await pushed(c, m.MatchedPush, timeout=30) for c in (anna, biel)]
        assert got[0].room == got[1].room
        # Exactly one of them is on the node that serves the room; the other is sent there.
        assert sorted(p.url is None for p in got) == [False, True]
        views = []
        for client, push, home in ((anna, got[0], a_url), (biel, got[1], b_url)):
            if push.url is not None:
                assert push.url != home
                await client.close()
                client = await player(push.url, "x", account=False)  # the token is enough
            views.append(await take_seat(client, push))
        assert all(v["status"] == "playing" for v in views)
        assert sorted(p["name"] for p in views[0]["players"]) == ["Anna", "Biel"]

        # A wish left in the queue by a node that is gone (killed with its players) is
        # dropped rather than matched with a player who would then wait for nobody.
        import json

        import redis.asyncio as aioredis

        queue = f"{prefix}match:queue"
        client = aioredis.Redis.from_url(REDIS_URL)
        try:
            ghost = Wish("qghost", "gone-node", "c1", "Ghost", None, 1500, (2,), False, 0.0)
            await client.hset(queue, "qghost", json.dumps(attrs.asdict(ghost)))
            async with asyncio.timeout(20):
                while await client.hexists(queue, "qghost"):
                    await asyncio.sleep(0.1)
        finally:
            await client.aclose()


async def test_a_match_published_while_a_node_is_cut_from_redis_still_reaches_its_player(
        db, prefix):
    """Biel's node is cut from Redis (a proxy between them refuses every connection) while
    the other node matches him: the ``matched`` push published meanwhile is not lost with
    the channel's message; Biel hears it once his node is back."""
    from server.cluster.node import ClusterConfig
    from server.store.postgres import PostgresStore
    from tests.support.proxy import cutting_proxy

    parts = REDIS_URL.removeprefix("redis://").split("/")[0].split(":")
    async with cutting_proxy(parts[0], int(parts[1]) if len(parts) > 1 else 6379) as proxy:
        def node(url: str) -> ClusterConfig:
            return ClusterConfig(url, prefix=prefix, lease_ms=6000)

        async with serving(PostgresStore(db, shared=True, pool_size=2),
                           cluster=node(REDIS_URL), match_interval=86_400.0) as (a, a_url), \
                serving(PostgresStore(db, shared=True, pool_size=2),
                        cluster=node(f"redis://127.0.0.1:{proxy.port}/0"),
                        match_interval=86_400.0) as (_, b_url):
            biel, anna = await player(b_url, "Biel"), await player(a_url, "Anna")
            await biel.request(m.QuickMatch, seats=[2])
            await anna.request(m.QuickMatch, seats=[2])
            proxy.blackout()  # Biel's node hears nothing from Redis now
            assert await mm(a).round() == 1  # Biel's push is published first, then Anna's
            anna_got = await pushed(anna, m.MatchedPush)
            proxy.end_blackout()
            biel_got = await pushed(biel, m.MatchedPush, timeout=20)
            assert biel_got.room == anna_got.room and biel_got.url == a_url
            assert {biel_got.seat, anna_got.seat} == {0, 1}


async def test_a_closer_cancelled_while_awaiting_close_is_cancelled_and_the_tasks_stop(lone):
    # close cancels the matcher's tasks and waits for them; when whoever awaits close is
    # cancelled meanwhile (a shutdown with a deadline), that cancellation is not swallowed
    server, _url, _ = lone
    matcher = mm(server)
    running = matcher._loop
    assert running is not None and not running.done()
    closer = asyncio.get_running_loop().create_task(matcher.close())
    await asyncio.sleep(0)  # the closer is inside close, waiting for the loop to stop
    assert not closer.done()
    closer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closer
    assert closer.cancelled()
    assert running.done() and running.cancelled()


async def test_the_reservations_closer_cancelled_while_closing_is_cancelled_too(lone):
    # the matched seats' reservations stop their tasks on close, and a closer cancelled while
    # waiting for them is cancelled itself (not swallowed, as the matcher's close once did)
    server, _url, _ = lone
    reservations = mm(server).reservations
    stop = asyncio.Event()

    async def calling_off() -> None:  # a call-off under way: it ends only when cancelled
        try:
            await stop.wait()
        finally:
            await asyncio.sleep(0)  # its cleanup takes a step of the loop

    task = asyncio.get_running_loop().create_task(calling_off())
    reservations._tasks.add(task)
    task.add_done_callback(reservations._tasks.discard)
    closer = asyncio.get_running_loop().create_task(reservations.close())
    await asyncio.sleep(0)  # the closer is inside close, waiting for the task to end
    assert not closer.done()
    closer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closer
    assert task.cancelled() or task.done()
