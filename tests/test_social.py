"""Friends, presence, blocks and the inbox over real sockets (server.features.social,
server.features.presence, server.features.inbox): a lone server on SQLite (a file, for the
restart), and two cluster nodes in this process on the real PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from client.local.keys import new_key
from client.net.net import GameClient, ServerError
from server.app import CastellServer
from server.cluster.node import ClusterConfig
from server.features.matchmaking import Windows, Wish, compatible
from server.store import open_store
from server.store.postgres import PostgresStore
from shared import messages as m
from tests.support.accounts import clients
from tests.support.console import console
from tests.support.servers import serving
from tests.support.services import REDIS_URL

pytestmark = pytest.mark.timeout(60)


async def push_of(client: GameClient, kind: type, timeout: float = 10.0) -> Any:
    """The next push of type ``kind`` (others before it are passed over)."""
    async with asyncio.timeout(timeout):
        while True:
            push = await client.pushes.get()
            if isinstance(push, kind):
                return push


async def friends_until(client: GameClient, ok: Callable[[m.FriendsReply], bool],
                        timeout: float = 10.0) -> m.FriendsReply:
    """Ask ``friends`` until the reply is as ``ok`` wants (presence crosses nodes within
    seconds): bounded, asking every 0.1 s."""
    async with asyncio.timeout(timeout):
        while True:
            reply: m.FriendsReply = await client.request(m.FriendsRequest)
            if ok(reply):
                return reply
            await asyncio.sleep(0.1)


def seen(reply: m.FriendsReply) -> dict[str, tuple[str, str | None, bool]]:
    return {f.name: (f.presence, f.room, f.mutual) for f in reply.friends}


async def test_follow_shows_presence_mutual_friends_and_hidden(tmp_path):
    async with serving(open_store(str(tmp_path / "castell.sqlite3"))) as (_, url), \
            clients(url) as connect:
        anna = await connect("Anna", new_key())
        biel = await connect("Biel", new_key())
        guest = await connect("Guest")
        for request, fields in ((m.Follow, {"name": "Biel"}), (m.FriendsRequest, {}),
                                (m.InboxRequest, {}), (m.Block, {"name": "Biel"})):
            with pytest.raises(ServerError) as refused:
                await guest.request(request, **fields)
            assert refused.value.code == "not_signed_in"
        for name in ("Nobody", "anna"):
            with pytest.raises(ServerError) as refused:
                await anna.request(m.Follow, name=name)
            assert refused.value.code == "not_found"

        await anna.request(m.Follow, name="biel")  # names compare as names do
        told = await push_of(biel, m.NotePush)
        assert (told.note.kind, told.note.from_, told.note.new) == ("follow", "Anna", True)
        assert seen(await anna.request(m.FriendsRequest)) == {"Biel": ("lobby", None, False)}

        made = await biel.request(m.CreateRoom, name="Dissabte", seats=2)
        reply = await anna.request(m.FriendsRequest)
        assert seen(reply) == {"Biel": ("playing", made.room, False)}
        assert reply.friends[0].room_name == "Dissabte"
        await biel.request(m.Follow, name="Anna")
        assert seen(await anna.request(m.FriendsRequest))["Biel"][2] is True

        await biel.request(m.PresenceRequest, visible=False)
        hidden = await anna.request(m.FriendsRequest)
        assert seen(hidden) == {"Biel": ("hidden", None, True)}
        assert hidden.friends[0].last_seen is None
        assert (await biel.request(m.FriendsRequest)).visible is False
        await biel.request(m.PresenceRequest, visible=True)
        await biel.close()
        gone = await friends_until(anna, lambda r: r.friends[0].presence == "offline")
        assert gone.friends[0].last_seen is not None
        await anna.request(m.Unfollow, name="Biel")
        assert (await anna.request(m.FriendsRequest)).friends == ()


async def test_a_blocked_player_is_not_heard_nor_matched():
    async with serving(match_interval=0.05) as (server, url), clients(url) as connect:
        anna = await connect("Anna", new_key())
        biel = await connect("Biel", new_key())
        cai = await connect("Cai", new_key())
        await anna.request(m.Block, name="Biel")
        assert (await anna.request(m.FriendsRequest)).blocked == ("Biel",)
        made = await anna.request(m.CreateRoom, name="Taula", seats=3)
        for client in (biel, cai):
            await client.request(m.JoinRoom, room=made.room)
        await biel.request(m.Chat, text="hola")
        await cai.request(m.Chat, text="bon dia")
        # Cai hears both; Anna hears Cai only (Biel's line came first: it would be first).
        heard = [(await push_of(cai, m.ChatPush)).text for _ in range(2)]
        assert heard == ["hola", "bon dia"]
        assert (await push_of(anna, m.ChatPush)).text == "bon dia"
        for client in (anna, biel, cai):
            await client.request(m.LeaveRoom)

        # Quick match: Anna and Biel wait together, never matched; Cai comes, and is.
        await anna.request(m.QuickMatch, seats=[2])
        await biel.request(m.QuickMatch, seats=[2])
        async with asyncio.timeout(5):  # both in the queue, and no match made of them
            rounds = server.matchmaker.matched
            while len(await server.matchmaker.queue.wishes()) < 2:
                await asyncio.sleep(0.05)
        assert server.matchmaker.matched == rounds
        await cai.request(m.QuickMatch, seats=[2])
        matched = await push_of(anna, m.MatchedPush)
        assert (await push_of(cai, m.MatchedPush)).room == matched.room
        assert [w.name for w in await server.matchmaker.queue.wishes()] == ["Biel"]

        await anna.request(m.Unblock, name="Biel")
        assert (await anna.request(m.FriendsRequest)).blocked == ()
        assert not await server.social.blocks(anna_account(server, "Anna"),
                                              anna_account(server, "Biel"))


def anna_account(server: CastellServer, name: str) -> str:
    """The account id of the connection signed in as ``name``."""
    return next(c.account for c in server.connections if c.name == name and c.account)


def test_quick_match_keeps_blocked_accounts_apart_either_way():
    w = Windows()
    anna = Wish("t1", "n", "c1", "Anna", "a1", 1500, (2,), False, 0.0, shuns=("a2",))
    biel = Wish("t2", "n", "c2", "Biel", "a2", 1500, (2,), False, 0.0)
    cai = Wish("t3", "n", "c3", "Cai", "a3", 1500, (2,), False, 0.0)
    assert not compatible(anna, biel, 0.0, w) and not compatible(biel, anna, 0.0, w)
    assert compatible(anna, cai, 0.0, w) and compatible(biel, cai, 0.0, w)


async def test_the_inbox_is_kept_across_a_restart_with_the_host_s_announcements(
        tmp_path, short_dir):
    path = str(tmp_path / "castell.sqlite3")
    sock = str(short_dir / "a.sock")
    anna_key, biel_key = new_key(), new_key()
    async with serving(open_store(path), admin_socket=sock) as (_, url), \
            clients(url) as connect:
        biel = await connect("Biel", biel_key)
        await biel.close()  # away: what comes now waits in his inbox
        anna = await connect("Anna", anna_key)
        await anna.request(m.Follow, name="Biel")
        told = await console(sock, "announce", text="the server restarts at noon")
        assert told.endswith("kept in 2 inbox(es)")
        assert await push_of(anna, m.NoticePush)
    async with serving(open_store(path)) as (_, url), clients(url) as connect:
        biel = await GameClient.connect(url)
        await biel.hello("Biel", biel_key)
        new = await push_of(biel, m.InboxNewPush)
        assert new.count == 2
        assert [(n.kind, n.text) for n in new.notes] == [
            ("announcement", "the server restarts at noon"), ("follow", "Anna follows you")]
        listed = (await biel.request(m.InboxRequest)).notes
        assert [(n.kind, n.new) for n in listed] == [("announcement", True), ("follow", True)]
        again = (await biel.request(m.InboxRequest)).notes
        assert [n.new for n in again] == [False, False]
        assert (await biel.request(m.InboxRequest, clear=True)).cleared == 2
        assert (await biel.request(m.InboxRequest)).notes == ()
        await biel.close()
        # Signing in with nothing new: no inbox_new.
        biel = await connect("Biel", biel_key)
        await biel.request(m.ListRooms)
        assert not any(isinstance(p, m.InboxNewPush) for p in biel.drain())


@contextlib.asynccontextmanager
async def two_nodes(db: str, prefix: str) -> Any:
    def node() -> contextlib.AbstractAsyncContextManager[tuple[CastellServer, str]]:
        return serving(PostgresStore(db, shared=True, pool_size=2),
                       cluster=ClusterConfig(REDIS_URL, prefix=prefix, lease_ms=1500))

    async with node() as (_, a_url), node() as (_, b_url):
        yield a_url, b_url


async def test_presence_and_notes_cross_the_nodes_of_a_cluster(db, prefix):
    async with two_nodes(db, prefix) as (a_url, b_url), clients(a_url) as connect:
        anna = await connect("Anna", new_key())
        biel_key = new_key()
        biel = await connect("Biel", biel_key, b_url)
        await anna.request(m.Follow, name="Biel")
        told = await push_of(biel, m.NotePush)  # stored on the shared database, pushed on B
        assert told.note.text == "Anna follows you"
        await friends_until(anna, lambda r: seen(r) == {"Biel": ("lobby", None, False)})
        made = await biel.request(m.CreateRoom, name="Nit", seats=2)
        await friends_until(anna, lambda r: seen(r) == {"Biel": ("playing", made.room, False)})
        await biel.request(m.PresenceRequest, visible=False)
        await friends_until(anna, lambda r: seen(r) == {"Biel": ("hidden", None, False)})
        await biel.request(m.PresenceRequest, visible=True)
        await friends_until(anna, lambda r: seen(r)["Biel"][0] == "playing")
        await biel.close()
        await friends_until(anna, lambda r: seen(r) == {"Biel": ("offline", None, False)})
        biel = await connect("Biel", biel_key, b_url)
        listed = (await biel.request(m.InboxRequest)).notes
        assert [(n.kind, n.from_) for n in listed] == [("follow", "Anna")]
        await biel.request(m.Block, name="Anna")
        assert (await biel.request(m.FriendsRequest)).blocked == ("Anna",)
        await biel.request(m.Unblock, name="Anna")
        assert (await biel.request(m.FriendsRequest)).blocked == ()


async def test_a_correspondence_game_s_turn_lands_in_the_inbox_a_live_game_s_does_not():
    async with serving() as (_, url), clients(url) as connect:
        anna = await connect("Anna", new_key())
        biel = await connect("Biel", new_key())
        for name, seconds in (("Quick", 60), ("Slow", 2 * 3600)):
            made = await anna.request(m.CreateRoom, name=name, seats=2, turn_seconds=seconds)
            await biel.request(m.JoinRoom, room=made.room)
            await anna.request(m.StartGame)
            await anna.request(m.LeaveRoom)
            await biel.request(m.LeaveRoom)
        # Each game's first turn is someone's: the slow game's is kept for them.
        async with asyncio.timeout(10):
            while True:
                kept = [n for c in (anna, biel)
                        for n in (await c.request(m.InboxRequest)).notes]
                if kept:
                    break
                await asyncio.sleep(0.05)
        assert [(n.kind, n.text) for n in kept] == [("your_turn", "your turn in Slow")]


async def test_a_rematch_invites_those_who_do_not_block_the_asker_and_keeps_the_invite():
    from tests.test_rematch import finished, next_of

    async with serving() as (_, url), clients(url) as connect:
        players = [await connect(n, new_key()) for n in ("Anna", "Biel", "Carme")]
        anna, biel, carme = players
        await biel.request(m.Block, name="Anna")
        await finished(players, private=False)
        again = await anna.request(m.Rematch)
        assert (await next_of(carme, m.InvitePush)).room == again.room
        kept = (await carme.request(m.InboxRequest)).notes
        assert [(n.kind, n.room, n.from_) for n in kept] == [("invite", again.room, "Anna")]
        # Biel blocks Anna: no invite, nothing kept (his inbox is asked after Carme's).
        assert (await biel.request(m.InboxRequest)).notes == ()
        assert not any(isinstance(p, m.InvitePush) for p in biel.drain())
