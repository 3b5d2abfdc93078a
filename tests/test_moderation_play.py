"""What the host's moderation does to a game in play and to what the host reads back
(server/features/moderation.py, server/ops/admin.py), over real sockets and the console's
real socket: a kicked player's turns end at once and the others are told, no ``your_turn``
reaches a kicked player (against a ``castell-server`` process, which then stops cleanly), the
console's lists show names as typed and a closed private room is told closed by its code
(against a server in this process, started again on the same store)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from client.local.keys import new_key
from client.net.net import GameClient
from server.store import open_store
from shared import messages as m
from shared.actions import EndTurn
from tests.support.console import console
from tests.support.servers import ServerProcess, serving
from tests.support.services import store_schema

pytestmark = pytest.mark.timeout(120)


async def signed_in(url: str, name: str, key: str) -> GameClient:
    client = await GameClient.connect(url)
    await client.hello(name, key)
    return client


async def pushes_until(client: GameClient, predicate: Any) -> list[Any]:
    """Every push up to the first ``state`` push that satisfies ``predicate`` (included)."""
    seen: list[Any] = []
    async with asyncio.timeout(10):
        while True:
            push = await client.pushes.get()
            seen.append(push)
            if isinstance(push, m.StatePush) and predicate(push):
                return seen


def kinds(pushes: list[Any]) -> list[dict[str, Any]]:
    return [e for p in pushes if isinstance(p, m.StatePush) for e in p.events]


def test_a_kicked_player_s_turns_end_at_once_and_the_others_are_told(short_dir):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"

    async def play(url: str) -> None:
        anna_key, biel_key = new_key(), new_key()
        anna = await signed_in(url, "Anna", anna_key)
        made = await anna.request(m.CreateRoom, name="Duel", seats=2)
        biel = await signed_in(url, "Biel", biel_key)
        joined = await biel.request(m.JoinRoom, room=made.room)
        me, him = made.seat, joined.seat
        await anna.request(m.StartGame)
        await anna.wait_state(lambda p: p.view["status"] == "playing")
        # Biel's client goes down; his account is still signed in elsewhere (the lobby).
        await biel.close()
        away = await signed_in(url, "Biel", biel_key)
        told = await console(sock, "kick", room=made.room, seat=him, reason="rude")
        assert "kept out" in told
        # Anna's turn comes (at once if it was his), she ends it, and his ends by itself.
        seen = await pushes_until(anna, lambda p: p.view["turn"] == me)
        for _ in range(3):  # (a round's first seat moves on: his turn comes within three)
            if {"kind": "timeout", "seat": him, "reason": "removed"} in kinds(seen):
                break
            await anna.request(m.ActionRequest, action=EndTurn())
            seen += await pushes_until(anna, lambda p: p.view["turn"] == me)
        # the event says why the turn ended: not a timer (the room has none)
        assert {"kind": "timeout", "seat": him, "reason": "removed"} in kinds(seen)
        notices = [p.text for p in seen if isinstance(p, m.NoticePush)]
        assert any("the host removed Biel" in t and "their turns end at once" in t
                   for t in notices), notices
        # He is let back: told, and his turns are his again (his account hears of it).
        await console(sock, "unkick", room=made.room, name="Biel")
        told_back = await anna.next_push()
        while not isinstance(told_back, m.NoticePush):
            told_back = await anna.next_push()
        assert "let Biel back" in told_back.text
        last = seen[-1]
        while last.view["turn"] != him:  # Anna's turns, until one ends into his
            await anna.request(m.ActionRequest, action=EndTurn())
            last = await anna.wait_state()
        heard: list[Any] = []
        async with asyncio.timeout(10):
            while not any(isinstance(p, m.YourTurnPush) for p in heard):
                heard.append(await away.next_push())
        entries = (await away.request(m.MyGames)).entries
        assert entries[0].your_turn and entries[0].room == made.room
        # One your_turn: none reached him while he was kicked (those turns were not his).
        heard += away.drain()
        assert [p.room for p in heard if isinstance(p, m.YourTurnPush)] == [made.room]
        await anna.close()
        await away.close()

    with ServerProcess("--db", db) as server:
        asyncio.run(play(server.url))
        assert server.terminate() == 0


async def on_each_backend(short_dir: Path, backend: str,
                          run: Callable[[str], Awaitable[None]]) -> None:
    """``run`` on a SQLite file, or on a PostgreSQL schema of its own."""
    if backend == "sqlite":
        await run(str(short_dir / "c.sqlite3"))
    else:
        async with store_schema() as url:
            await run(url)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_closed_private_room_s_code_says_it_was_closed(short_dir, backend):
    sock = str(short_dir / "admin")

    async def close(url: str) -> str:
        anna = await GameClient.connect(url)
        await anna.hello("Anna")
        made = await anna.request(m.CreateRoom, name="Amagat", seats=2, private=True)
        assert made.code is not None
        await console(sock, "close", room=made.room, reason="done here")
        await refused_as(url, made.code.lower(), "room_closed", "done here")
        await refused_as(url, "ZZZZZZ" if made.code != "ZZZZZZ" else "YYYYYY",
                         "room_not_found", "")
        await anna.close()
        return made.code

    async def run(db: str) -> None:
        async with serving(open_store(db), admin_socket=sock) as (_, url):
            code = await close(url)
        # started again: the store finds it by its code
        async with serving(open_store(db), admin_socket=sock) as (_, url):
            await refused_as(url, code, "room_closed", "done here")

    await on_each_backend(short_dir, backend, run)


async def refused_as(url: str, key: str, code: str, said: str) -> None:
    """A stranger's ``join_room`` of ``key`` is refused ``code``, its message saying ``said``."""
    from client.net.net import ServerError

    stranger = await GameClient.connect(url)
    await stranger.hello("Pere")
    with pytest.raises(ServerError) as caught:
        await stranger.request(m.JoinRoom, room=key)
    assert caught.value.code == code and said in caught.value.message
    await stranger.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_the_host_s_lists_show_names_as_typed(short_dir, backend):
    sock = str(short_dir / "admin")

    async def run(db: str) -> None:
        async with serving(open_store(db), admin_socket=sock) as (_, url):
            anna = await GameClient.connect(url)
            await anna.hello("Anna")
            made = await anna.request(m.CreateRoom, name="Torre", seats=2)
            carme = await GameClient.connect(url)
            await carme.hello("Carme")
            await carme.request(m.JoinRoom, room=made.room)
            await console(sock, "kick", room=made.room, seat=1, reason="rude")
            await console(sock, "mute", name="Carme", reason="shouting")
            await console(sock, "ban", target="Carme", reason="spam")
            await anna.close()
            await carme.close()
        # started again: read back from the store
        async with serving(open_store(db), admin_socket=sock) as (_, url):
            assert [k["name"] for k in await console(sock, "kicks")] == ["Carme"]
            assert [u["name"] for u in await console(sock, "mutes")] == ["Carme"]
            assert [b["value"] for b in await console(sock, "bans")] == ["Carme"]
            # (the names still match as they compare: the ban holds for "CARME")
            again = await GameClient.connect(url)
            with pytest.raises(Exception, match="spam"):
                await again.hello("CARME")
            await again.close()

    await on_each_backend(short_dir, backend, run)
