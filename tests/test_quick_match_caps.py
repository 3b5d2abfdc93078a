"""Quick match under abuse, over real sockets (server/features/matchmaking.py,
server/features/reservations.py,
docs/security.md "Rooms and seats"): connections from several loopback addresses that match
each other and queue again at once, never taking their seats, hold no more rooms than their
addresses' caps allow, each such room is called off once its seats' reservation runs out, and
an honest player from another address still gets a room meanwhile.

The clients bind their end of each connection to an address of their own in 127.0.0.0/8
(every one of them is this machine's); the server listens on 127.0.0.1 only, as always.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.core import limits
from server.features.matchmaking import Windows, Wish, find_matches
from server.runtime.runner import RoomRunner
from server.store import open_store
from shared import messages as m
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(90)

ABUSERS = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
PER_ADDRESS = 6
CAP = 5  # --rooms-per-address
#: --match-reserve, seconds, while the abusers never take their seats: how long each of
#: their rooms is held (short, so that several reservations run out within a second)
RESERVE = 0.1
MATCHES = 80  # matched pushes the abuse runs for: several reservations over


async def from_address(url: str, address: str, name: str) -> GameClient:
    client = await GameClient.connect(url, local_addr=(address, 0))
    await client.hello(name)
    return client


class Watch:
    """The server's rooms as the lobby reports them: the most held at once, and when each
    one went (a listener of the lobby: no polling)."""

    def __init__(self, server: CastellServer) -> None:
        self.server = server
        self.most = 0
        self.gone: dict[str, float] = {}
        self.changed = asyncio.Event()
        server.lobby.subscribe(on_change=self._seen, on_remove=self._removed)

    def _seen(self, runner: RoomRunner) -> None:
        self.most = max(self.most, len(self.server.lobby.rooms))

    def _removed(self, runner: RoomRunner) -> None:
        self.gone[runner.id] = time.monotonic()
        self.changed.set()

    async def until(self, condition, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
async def abused(tmp_path: Path) -> AsyncIterator[tuple[CastellServer, str]]:
    async with serving(open_store(tmp_path / "castell.sqlite3"), match_interval=0.05,
                       match_reserve=RESERVE, rooms_per_address=CAP,
                       rooms_per_connection=10_000, max_rooms=40) as made:
        yield made


async def test_matched_players_who_never_come_hold_no_more_rooms_than_their_caps(abused):
    server, url = abused
    watch = Watch(server)
    matched: dict[str, float] = {}  # room → when its first player heard of it
    done = asyncio.Event()

    async def abuser(client: GameClient) -> None:
        while not done.is_set():
            try:
                await client.request(m.QuickMatch, seats=[2])
            except ServerError as refused:  # at its address's cap: wait for a room to go
                assert refused.code == "rate_limited"
                gone = len(watch.gone)
                await watch.until(lambda gone=gone: len(watch.gone) > gone or done.is_set(), 30)
                continue
            push = await client_push(client, m.MatchedPush)
            if push is None:
                return
            matched.setdefault(push.room, time.monotonic())
            if len(matched) >= MATCHES:
                done.set()

    async def client_push(client: GameClient, cls: type) -> m.MatchedPush | None:
        while True:
            get = asyncio.ensure_future(client.pushes.get())
            stop = asyncio.ensure_future(done.wait())
            finished, _ = await asyncio.wait({get, stop}, timeout=30,
                                             return_when=asyncio.FIRST_COMPLETED)
            for task in (get, stop):
                if task not in finished:
                    task.cancel()
            assert finished, "no quick match in 30 s"
            if get not in finished:
                return None
            if isinstance(get.result(), cls):
                return get.result()

    clients = [await from_address(url, address, f"Bot{i}{j}")
               for i, address in enumerate(ABUSERS) for j in range(PER_ADDRESS)]
    honest = await from_address(url, "127.0.0.9", "Anna")
    started = time.monotonic()
    tasks = [asyncio.create_task(abuser(c)) for c in clients]
    # Halfway through the abuse an honest player from another address creates a room.
    await watch.until(lambda: len(matched) >= MATCHES // 2, 30)
    made = await honest.request(m.CreateRoom, name="Honest", seats=2)
    assert made.room in server.lobby.rooms
    async with asyncio.timeout(60):
        await asyncio.gather(*tasks)
    took = time.monotonic() - started
    # The rooms held stayed within the caps: at most CAP for each abusing address at once
    # (and the honest one). Without the caps they filled the server (--max-rooms 40).
    assert watch.most <= CAP * len(ABUSERS) + 1, watch.most
    assert len(matched) >= MATCHES
    # The abuse went on only because rooms were let go once their reservation ran out...
    assert took >= (MATCHES / (CAP * len(ABUSERS)) - 1) * RESERVE
    for client in clients:
        await client.close()
    # ...and every matched room goes within the reservation (a second or so late at most).
    await watch.until(lambda: all(room in watch.gone for room in matched), RESERVE + 10)
    late = [watch.gone[room] - when for room, when in matched.items()]
    assert max(late) <= RESERVE + 2.0, max(late)
    # (Rooms matched after the last push was read go the same way: none is left.)
    await watch.until(lambda: set(server.lobby.rooms) == {made.room}, RESERVE + 10)
    assert server.requests.matchmaker.reservations.called_off >= MATCHES
    await honest.close()


async def test_a_matched_seat_taken_in_time_keeps_its_game_and_one_not_taken_calls_it_off(
        tmp_path: Path):
    async with serving(open_store(tmp_path / "castell.sqlite3"), match_interval=0.05,
                       match_reserve=60.0) as (server, url):
        # The reservations run out when the test says (their timer's input, given now):
        # the players have all the time they need to come, the test waits for nothing.
        reservations = server.requests.matchmaker.reservations
        watch = Watch(server)
        anna = await from_address(url, "127.0.1.2", "Anna")
        biel = await from_address(url, "127.0.2.2", "Biel")
        # Both come: the game goes on past the reservation.
        for client in (anna, biel):
            await client.request(m.QuickMatch, seats=[2])
        pushes = [await pushed(c, m.MatchedPush) for c in (anna, biel)]
        for client, push in zip((anna, biel), pushes, strict=True):
            await client.request(m.JoinRoom, room=push.room, token=push.token)
        assert pushes[0].room not in reservations.held
        # Then Anna queues again from the lobby; Carla is matched with her but never comes.
        for client in (anna, biel):
            await client.request(m.LeaveRoom)
        carla = await from_address(url, "127.0.3.2", "Carla")
        for client in (anna, carla):
            await client.request(m.QuickMatch, seats=[2])
        again = await pushed(anna, m.MatchedPush)
        await pushed(carla, m.MatchedPush)
        await anna.request(m.JoinRoom, room=again.room, token=again.token)
        for push in (pushes[0], again):  # both reservations run out
            reservations.expire(server.lobby.rooms[push.room])
        notice = await pushed(anna, m.NoticePush)
        assert "did not take their seat in time" in notice.text
        await asyncio.wait_for(anna.closed.wait(), 10)
        await watch.until(lambda: again.room in watch.gone, 10)
        assert pushes[0].room in server.lobby.rooms  # the game both came to goes on
        # The called-off game is stored as abandoned, never to be played on.
        store = server.store
        assert store is not None
        record = await store.load(again.room)
        assert record is not None and record.result is not None
        assert "abandoned" in record.result
        for client in (biel, carla):
            await client.close()


async def test_quick_match_rooms_count_against_a_connections_cap(tmp_path: Path):
    async with serving(open_store(tmp_path / "castell.sqlite3"), match_interval=0.05,
                       rooms_per_connection=2) as (_, url):
        anna = await from_address(url, "127.0.1.3", "Anna")
        biel = await from_address(url, "127.0.2.3", "Biel")
        for _ in range(2):
            for client in (anna, biel):
                await client.request(m.QuickMatch, seats=[2])
            for client in (anna, biel):
                await pushed(client, m.MatchedPush)
        with pytest.raises(ServerError) as refused:
            await anna.request(m.QuickMatch, seats=[2])
        assert refused.value.code == "rate_limited"
        with pytest.raises(ServerError) as no_room:
            await anna.request(m.CreateRoom, name="Més", seats=2)
        assert no_room.value.code == "rate_limited"
        for client in (anna, biel):
            await client.close()


async def pushed(client: GameClient, cls: type, timeout: float = 10.0):
    """The next push of type ``cls`` (others are let by)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, cls):
                return push


def test_the_matcher_makes_no_room_for_an_address_with_none_left():
    w = Windows(100, 10, 1000)

    def wish(t: str, address: str, since: float = 0.0) -> Wish:
        return Wish(t, "", t, t, None, 1500, (2,), False, since, address=address)

    queue = [wish("a", "10.0.0.1", 0), wish("b", "10.0.0.1", 1), wish("c", "10.0.0.2", 2),
             wish("d", "10.0.0.3", 3), wish("e", "10.0.0.4", 4)]
    def groups(left: dict[str, int]) -> list[list[str]]:
        return [[x.ticket for x in g.wishes] for g in find_matches(queue, 0.0, w, left)]

    # Two wishes of one address in one group take one room of it, not two.
    assert groups({"10.0.0.1": 1}) == [["a", "b"], ["c", "d"]]
    # With none left its wishes wait; the others are matched among themselves.
    assert groups({"10.0.0.1": 0}) == [["c", "d"]]
    assert groups({"10.0.0.1": 0, "10.0.0.3": 0}) == [["c", "e"]]
    assert limits.rooms_left({"x", "y"}, {"x": 7}, 5) == {"x": 0, "y": 5}
