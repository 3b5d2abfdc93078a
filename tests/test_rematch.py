"""Rematches (server/features/rematch.py, docs/protocol.md ``rematch`` and ``invite``), over real
sockets with the real client: the invitee of a private rematch takes the offered seat with
``rematch`` or ``join_room``, on SQLite and on PostgreSQL, as a guest and signed in; two
players asking at once get one room; an offer outlives a killed ``castell-server``; in a
cluster of two nodes the invite reaches the other node and the offer is taken there; and a
rematch is a room made within the server's limits."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.cluster.node import ClusterConfig
from server.store import open_store
from shared import messages as m
from tests.support.accounts import clients
from tests.support.servers import ServerProcess, serving
from tests.support.services import REDIS_URL, fresh_prefix, store_schema
from tests.support.wire import play_legal

pytestmark = pytest.mark.timeout(120)


@contextlib.asynccontextmanager
async def store_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    if backend == "sqlite":
        yield str(tmp_path / "castell.sqlite3")
    else:
        async with store_schema() as url:
            yield url


async def finished(players: list[GameClient], *, private: bool = True, name: str = "Revenja",
                   seed: int = 3) -> tuple[str, list[str]]:
    """A game of ``players`` (seat by seat, the first creating it), played to its end; the
    finished room's id, and each player's seat token."""
    for client in players:
        client.state = None
    made = await players[0].request(m.CreateRoom, name=name, seats=len(players),
                                    private=private)
    tokens = [made.token]
    for client in players[1:]:
        tokens.append((await client.request(m.JoinRoom, room=made.code or made.room)).token)
    await players[0].request(m.StartGame)
    for client in players:
        await reached(client, made.room, "playing")
    await play_legal(players, random.Random(seed), end_bias=1.0, timeout=30)
    for client in players:
        await reached(client, made.room, "finished")
    return made.room, tokens


async def reached(client: GameClient, room: str, status: str) -> None:
    """Wait until ``client`` has seen ``room`` at ``status`` (maybe seen already: a wait for
    a version reads the pushes too)."""
    state = client.state
    if state is None or state.room != room or state.view["status"] != status:
        await client.wait_state(lambda p: p.room == room and p.view["status"] == status)


async def refused(client: GameClient, code: str, cls: type, **fields: object) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await client.request(cls, **fields)
    assert caught.value.code == code, caught.value
    return caught.value


async def next_of(client: GameClient, kind: type, timeout: float = 10.0) -> object:
    """The next push of ``kind`` (others are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push


def seated(view: dict) -> list[tuple[int, str]]:
    return [(p["seat"], p["name"]) for p in view["players"]]


# -- the invitee of a private rematch ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("signed_in", [False, True], ids=["guests", "accounts"])
async def test_the_invitees_of_a_private_rematch_take_their_offered_seats(backend, signed_in,
                                                                          tmp_path):
    async with store_url(backend, tmp_path) as url, \
            serving(open_store(url)) as (_, address), clients(address) as connect:
        names = ["Anna", "Biel", "Carme", "Dolors"]
        players = [await connect(n, new_key() if signed_in else None) for n in names]
        anna, biel, carme, dolors = players
        old, _ = await finished(players)

        again = await anna.request(m.Rematch)
        assert (again.seat, again.room != old) == (0, True)
        assert again.code is not None  # the creator of a private room hears its code
        for client in (biel, carme, dolors):
            invite = await next_of(client, m.InvitePush)
            assert (invite.room, invite.from_, invite.name) == (again.room, "Anna", "Revenja")
        # Biel with `rematch`, as the client's invite says; Carme with `join_room` and the
        # invite's room, from the finished room; Dolors the same from the lobby.
        assert (await biel.request(m.Rematch)).seat == 1
        assert (await carme.request(m.JoinRoom, room=again.room)).seat == 2
        await dolors.request(m.LeaveRoom)
        assert (await dolors.request(m.JoinRoom, room=again.room)).seat == 3

        view = (await anna.wait_state(lambda p: p.room == again.room
                                      and len(p.view["players"]) == 4)).view
        assert seated(view) == list(enumerate(names))
        assert view["status"] == "waiting"
        # The id alone finds the private room for nobody else.
        stranger = await connect("Eulàlia")
        await refused(stranger, "room_not_found", m.JoinRoom, room=again.room)
        await anna.request(m.StartGame)
        await dolors.wait_state(lambda p: p.room == again.room
                                and p.view["status"] == "playing")


async def test_join_room_from_a_finished_room_names_only_its_rematch(tmp_path):
    async with serving(open_store(tmp_path / "c.sqlite3")) as (_, address), \
            clients(address) as connect:
        anna, biel = await connect("Anna"), await connect("Biel")
        await finished([anna, biel])
        other = await (await connect("Carme")).request(m.CreateRoom, name="Altra", seats=2)
        await refused(biel, "already_in_room", m.JoinRoom, room=other.room)
        again = await anna.request(m.Rematch)
        await refused(biel, "already_in_room", m.JoinRoom, room=other.room)
        assert biel.state.view["status"] == "finished"  # still there: nothing lost
        assert (await biel.request(m.JoinRoom, room=again.code)).seat == 1


# -- two players asking at once ---------------------------------------------------------------


@pytest.mark.parametrize("signed_in", [False, True], ids=["guests", "accounts"])
async def test_two_players_asking_for_a_rematch_at_once_get_one_room(signed_in, tmp_path):
    async with serving(open_store(tmp_path / "c.sqlite3")) as (_, address), \
            clients(address) as connect:
        anna = await connect("Anna", new_key() if signed_in else None)
        biel = await connect("Biel", new_key() if signed_in else None)
        for attempt in range(5):
            await finished([anna, biel], seed=attempt)
            anna.drain()
            biel.drain()
            # Both requests are on the wire before either reply is read.
            first, second = await asyncio.gather(anna.request(m.Rematch),
                                                 biel.request(m.Rematch))
            assert first.room == second.room, attempt
            assert {first.seat, second.seat} == {0, 1}
            room = first.room
            view = (await anna.wait_state(lambda p, room=room: p.room == room
                                          and len(p.view["players"]) == 2)).view
            assert seated(view) == [(0, "Anna"), (1, "Biel")]
            invites = [p for c in (anna, biel) for p in c.drain()
                       if isinstance(p, m.InvitePush)]
            assert len(invites) == 1 and invites[0].room == first.room, (attempt, invites)
            # Out of the waiting room for the next round (it is forgotten once empty).
            await anna.request(m.LeaveRoom)
            await biel.request(m.LeaveRoom)


# -- the limits of making a room --------------------------------------------------------------


async def test_a_rematch_is_refused_while_the_server_drains(tmp_path):
    async with serving(open_store(tmp_path / "c.sqlite3")) as (server, address), \
            clients(address) as connect:
        anna, biel = await connect("Anna"), await connect("Biel")
        await finished([anna, biel])
        server.drain()
        await refused(anna, "draining", m.Rematch)
        assert anna.state.view["status"] == "finished"  # still in the finished room


async def test_a_rematch_counts_against_the_rooms_a_connection_may_create(tmp_path):
    async with serving(open_store(tmp_path / "c.sqlite3"), rooms_per_connection=1) \
            as (_, address), clients(address) as connect:
        anna, biel = await connect("Anna"), await connect("Biel")
        await finished([anna, biel])  # Anna created her one room
        await refused(anna, "rate_limited", m.Rematch)
        assert anna.state.view["status"] == "finished"  # still in the finished room
        again = await biel.request(m.Rematch)  # Biel created none
        joined = await anna.request(m.Rematch)  # joining the rematch creates nothing
        assert (joined.room, joined.seat) == (again.room, 0)


async def test_a_rematch_counts_against_the_rooms_an_address_may_have(tmp_path):
    async with serving(open_store(tmp_path / "c.sqlite3"), rooms_per_address=2) \
            as (_, address), clients(address) as connect:
        anna, biel = await connect("Anna"), await connect("Biel")
        await finished([anna, biel])
        carme = await connect("Carme")
        await carme.request(m.CreateRoom, name="Altra", seats=2)  # the address's second
        await refused(anna, "rate_limited", m.Rematch)
        await refused(biel, "rate_limited", m.Rematch)
        await carme.request(m.LeaveRoom)  # her waiting room goes: one room again
        assert (await anna.request(m.Rematch)).seat == 0


# -- a restart ---------------------------------------------------------------------------------


async def test_a_rematch_offer_outlives_a_killed_server_and_is_taken_after_it(tmp_path):
    db = str(tmp_path / "castell.sqlite3")
    with ServerProcess("--db", db, "--bot-delay", "0") as first:
        anna, biel, carme = [await GameClient.connect(first.url) for _ in range(3)]
        for client, name in zip((anna, biel, carme), ("Anna", "Biel", "Carme"), strict=True):
            await client.hello(name)
        old, tokens = await finished([anna, biel, carme])
        again = await anna.request(m.Rematch)
        invite = await next_of(biel, m.InvitePush)
        assert invite.room == again.room
        first.kill()  # kill -9: nothing more is written
        for client in (anna, biel, carme):
            await client.close()
    with ServerProcess("--db", db, "--bot-delay", "0") as second:
        async with clients(second.url) as connect:
            # Biel from the lobby, with the invite's room.
            biel = await connect("Biel")
            assert (await biel.request(m.JoinRoom, room=invite.room)).seat == 1
            # Carme takes her seat of the finished room back with its token: `rematch`
            # finds the same rematch (its link is stored), and the seat offered to her.
            carme = await connect("Carme")
            await carme.request(m.JoinRoom, room=old, token=tokens[2])
            joined = await carme.request(m.Rematch)
            assert (joined.room, joined.seat) == (again.room, 2)
            # Anna's seat is still hers: a stranger cannot have it.
            await refused(await connect("Dolors"), "room_not_found", m.JoinRoom,
                          room=invite.room)
            view = (await biel.wait_state(lambda p: p.room == invite.room
                                          and len(p.view["players"]) == 3)).view
            assert seated(view) == [(0, "Anna"), (1, "Biel"), (2, "Carme")]


# -- a cluster ---------------------------------------------------------------------------------


async def test_in_a_cluster_the_invite_reaches_the_other_node_and_the_offer_moves_with_the_room(
        tmp_path):
    async with store_schema() as url, fresh_prefix() as prefix:
        cluster = ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=2000)
        async with serving(open_store(url, shared=True), cluster=cluster) as (a, a_url), \
                serving(open_store(url, shared=True), cluster=cluster) as (_, b_url), \
                clients(a_url) as connect:
            anna_key, biel_key = new_key(), new_key()
            anna = await connect("Anna", anna_key)
            biel = await connect("Biel", biel_key)
            await finished([anna, biel])
            # Biel is signed in on node B too, in its lobby.
            elsewhere = await connect("Biel", biel_key, b_url)

            again = await anna.request(m.Rematch)
            for client in (biel, elsewhere):
                invite = await next_of(client, m.InvitePush)
                assert (invite.room, invite.from_) == (again.room, "Anna")
            # Node A serves the room: node B says where.
            moved = await refused(elsewhere, "moved", m.JoinRoom, room=again.room)
            assert moved.url == a_url
            # Node A stops; node B takes the room over, with its offers.
            await a.close()
            joined = await elsewhere.request(m.JoinRoom, room=again.room)
            assert (joined.room, joined.seat) == (again.room, 1)
            view = (await elsewhere.wait_state(lambda p: p.room == again.room)).view
            assert seated(view) == [(0, "Anna"), (1, "Biel")]
            # Nobody else takes Anna's seat there; she takes it back by her account.
            await refused(await connect("Carme", None, b_url), "room_not_found",
                          m.JoinRoom, room=again.room)
            anna_back = await connect("Anna", anna_key, b_url)
            assert (await anna_back.request(m.JoinRoom, room=again.room)).seat == 0
