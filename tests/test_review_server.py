"""The ``review`` request over a real server and real websockets (server.features.reviews,
docs/protocol.md "review"): progress pushes then the reply, in order, with the review the
shared code gives for the game; the second ask read from the store (no computation: the
store holds it, the metrics count it); two askers sharing one computation; the refusals (a
game in play, a private game of others, the address's pace); in both stores. The review's
budget is the server's setting, small here."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import msgpack
import pytest

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.store import open_store
from shared import messages as m
from shared.record import GameRecordFile
from shared.review import Budget, Review, review_game
from tests.support.accounts import Connect, clients
from tests.support.servers import serving
from tests.support.services import store_schema
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(60)

#: The tests' review budget (the server's --review-samples and --review-candidates).
SMALL = Budget(samples=1, candidates=2)


async def refused(client: GameClient, code: str, cls: type, **fields: object) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await client.request(cls, **fields)
    assert caught.value.code == code, caught.value
    return caught.value


async def play_to_the_end(anna: GameClient, *, private: bool = False, seed: int = 3) -> str:
    """A 2-seat game of ``anna`` against an easy bot, played to its end; its room id (Anna
    is left in its finished room)."""
    anna.state = None
    made = await anna.request(m.CreateRoom, name="Dissabte", seats=2, private=private)
    await anna.request(m.AddBot, level="easy")
    await anna.request(m.StartGame)
    await anna.wait_state(lambda p: p.view["status"] == "playing")
    await play_legal([anna, None], random.Random(seed), end_bias=0.4, timeout=20)
    assert anna.state is not None and anna.state.view["status"] == "finished"
    anna.drain()
    return made.room


async def asked(client: GameClient, room: str) -> tuple[dict, list[tuple[int, int]]]:
    """A ``review`` of ``room``: the review's data, and the progress pushes that came before
    the reply, in order (a push is read before the reply that follows it)."""
    reply = await client.request(m.ReviewRequest, room=room)
    assert reply.next is None  # a 2-seat game's review is one frame
    # (a signed-in asker may hear of its other games meanwhile: `your_turn`)
    pushes = [p for p in client.drain() if isinstance(p, m.ReviewProgressPush)]
    assert all(p.room == room for p in pushes)
    return reply.review, [(p.done, p.total) for p in pushes]


def reviews(server: CastellServer, source: str) -> float:
    assert server.metrics is not None
    return server.metrics.registry.get_sample_value("castell_reviews_total",
                                                   {"source": source}) or 0.0


@pytest.fixture(params=["sqlite", "postgresql"])
async def where(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Where the server keeps its games: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "castell.sqlite3")
    else:
        async with store_schema() as url:  # (the `db` fixture's own)
            yield url


@pytest.fixture
async def served(where: str) -> AsyncIterator[tuple[CastellServer, Connect]]:
    async with serving(open_store(where), review_samples=SMALL.samples,
                       review_candidates=SMALL.candidates) as (server, url), \
            clients(url) as connect:
        yield server, connect


async def test_a_review_is_computed_with_its_progress_then_served_from_the_store(served):
    server, connect = served
    anna = await connect("Anna", new_key())
    room = await play_to_the_end(anna)
    data, progress = await asked(anna, room)

    # the progress: 0 once the turns are counted, then each turn, all before the reply
    total = progress[0][1]
    assert total >= 20  # ten rounds of two seats
    assert progress == [(done, total) for done in range(total + 1)]
    # the review is the shared code's, at the server's budget and seed 0, of the game's record
    record = GameRecordFile.from_data((await anna.request(m.RecordRequest, room=room)).game)
    assert Review.from_data(data) == review_game(record, seed=0, budget=SMALL)
    assert data["budget"] == {"samples": 1, "candidates": 2}
    # kept in the store, once
    stored = await server.store.review(room)
    assert stored is not None and msgpack.unpackb(stored) == data
    assert (reviews(server, "computed"), reviews(server, "stored")) == (1, 0)

    # asked again, from the lobby by a guest: read from the store, no progress, no computation
    await anna.request(m.LeaveRoom)
    guest = await connect("Biel")
    again, progress = await asked(guest, room)
    assert again == data and progress == []
    assert (reviews(server, "computed"), reviews(server, "stored")) == (1, 1)


@pytest.mark.parametrize("where", ["sqlite"], indirect=True)  # (the store: above)
async def test_two_askers_share_one_computation(served):
    server, connect = served
    anna = await connect("Anna", new_key())
    room = await play_to_the_end(anna)
    biel = await connect("Biel")
    first = asyncio.create_task(anna.request(m.ReviewRequest, room=room))
    seen = await anna.next_push()  # the computation is under way
    assert isinstance(seen, m.ReviewProgressPush)
    second = await biel.request(m.ReviewRequest, room=room)
    assert (await first).review == second.review
    # Biel was told where it stood when he asked, then every step to the end
    told = [(p.done, p.total) for p in biel.drain()]
    assert told and told[-1][0] == told[-1][1]
    assert [d for d, _ in told] == list(range(told[0][0], told[-1][1] + 1))
    assert (reviews(server, "computed"), reviews(server, "joined")) == (1, 1)


@pytest.mark.parametrize("where", ["sqlite"], indirect=True)  # (the store: above)
async def test_no_review_during_a_game_nor_of_another_s_private_game(served):
    server, connect = served
    anna = await connect("Anna", new_key())
    biel = await connect("Biel", new_key())
    private = await play_to_the_end(anna, private=True)
    # Biel did not play Anna's private game: it is none he may see
    await refused(biel, "room_not_found", m.ReviewRequest, room=private)
    await refused(biel, "room_not_found", m.ReviewRequest, room="rnothing")

    # a game in play: no help during a game, asked from inside it or from the lobby
    await anna.request(m.LeaveRoom)
    anna.state = None
    made = await anna.request(m.CreateRoom, name="Diumenge", seats=2)
    await anna.request(m.AddBot, level="easy")
    await anna.request(m.StartGame)
    await anna.wait_state(lambda p: p.view["status"] == "playing")
    await refused(biel, "not_finished", m.ReviewRequest, room=made.room)
    await refused(anna, "not_finished", m.ReviewRequest, room=made.room)
    # ...nor of a finished game, from the seat of a game in play
    error = await refused(anna, "not_finished", m.ReviewRequest, room=private)
    assert "during a game" in error.message
    assert await server.store.review(private) is None  # nothing was computed
    # once out of the game, Anna reviews her private game
    await anna.request(m.LeaveRoom)
    anna.drain()
    data, _ = await asked(anna, private)
    assert data["room"] == private


async def test_reviews_are_costly_requests_and_few_are_computed_at_once_per_address(
        tmp_path: Path):
    path = tmp_path / "castell.sqlite3"
    async with serving(open_store(path), review_samples=SMALL.samples,
                       review_candidates=SMALL.candidates) as (_, url), \
            clients(url) as connect:
        anna = await connect("Anna", new_key())
        games = []
        for seed in (3, 4):
            games.append(await play_to_the_end(anna, seed=seed))
            await anna.request(m.LeaveRoom)
    # the same games, on a server that computes one review at a time per address and takes
    # three costly requests of an address, and hardly any more
    async with serving(open_store(path), review_samples=SMALL.samples,
                       review_candidates=SMALL.candidates, reviews_per_address=1,
                       address_rate=0.001, address_burst=3) as (server, url), \
            clients(url) as connect:
        carme, dani = await connect("Carme"), await connect("Dani")
        first = asyncio.create_task(carme.request(m.ReviewRequest, room=games[0]))
        assert isinstance(await carme.next_push(), m.ReviewProgressPush)  # under way
        error = await refused(dani, "rate_limited", m.ReviewRequest, room=games[1])
        assert "being computed for your address" in error.message
        # the same game is no new computation: Dani joins it
        assert (await dani.request(m.ReviewRequest, room=games[0])).review == \
            (await first).review
        assert await server.store.review(games[1]) is None
        # the address's bucket: three costly requests were taken, the fourth is refused
        error = await refused(carme, "rate_limited", m.ReviewRequest, room=games[1])
        assert "too many requests from your address" in error.message


async def test_a_review_larger_than_a_frame_would_come_in_pages_the_client_joins():
    # A review fits in one frame (a 4-seat game's is about 35 KB); one that did not would be
    # paged by its turns, as a record by its actions: here pages of 6 KB are asked for, and
    # the client's fetch_review joins them into the whole review.
    from bench.review import bot_game
    from client.net.net import fetch_review
    from server.core.review_pages import review_page
    from shared import codec

    review = review_game(bot_game(("easy", "normal"), 5, SMALL), budget=SMALL)
    data = review.to_data()
    assert len(codec.encode(review_page(1, data))) < codec.MAX_FRAME
    assert review_page(1, data).next is None
    asked: list[int] = []

    async def request(cls: type, /, room: str, from_: int | None = None) -> m.Review:
        assert cls is m.ReviewRequest and room == review.room
        asked.append(from_ or 0)
        reply = review_page(7, data, from_ or 0, frame=6_000)
        assert len(codec.encode(reply)) <= 6_000
        return codec.decode(codec.encode(reply))  # type: ignore[return-value]

    assert await fetch_review(request, review.room) == review
    assert len(asked) > 2 and asked == sorted(set(asked))
