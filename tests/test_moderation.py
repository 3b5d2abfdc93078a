"""What the host decides sticks (docs/operations.md, docs/security.md): a closed room, a
kick, a mute and a ban, set with ``castell-server admin`` against a running server, seen by
real clients (the real client's session among them) and kept across a restart; mutes and
closed rooms on every node of a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from client.control.controller import Controller
from client.local.keys import new_key
from client.local.seats import SeatStore
from client.net.net import GameClient, ServerError
from client.net.session import Session
from client.screens.plain import PlainScreen
from shared import messages as m
from tests.support.console import admin, console
from tests.support.proxy import cutting_proxy
from tests.support.servers import ServerProcess
from tests.support.services import REDIS_URL, fresh_prefix, store_schema

pytestmark = pytest.mark.timeout(120)


@contextlib.asynccontextmanager
async def player(url: str, folder: Path, name: str):
    """The real client (a session under a controller and its plain screen), pumping."""
    session = Session(url, name, seats=SeatStore(folder), first_retry=0.05, max_retry=0.2)
    ctrl = Controller(session)
    out = io.StringIO()
    PlainScreen(ctrl, stdin=io.StringIO(), stdout=out, echo=False)
    await session.open()
    pump = asyncio.create_task(session.run())
    try:
        yield ctrl, out
    finally:
        await session.stop()
        pump.cancel()


async def until(predicate, timeout: float = 10.0) -> None:
    """Wait for a state of the client nothing announces (bounded)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def push_of(client: GameClient, kind: type) -> Any:
    """The next push of ``kind`` (others skipped)."""
    async with asyncio.timeout(10):
        while True:
            push = await client.next_push()
            if isinstance(push, kind):
                return push


async def refused(request: Any) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await request
    return caught.value


async def in_a_room(url: str, name: str) -> tuple[GameClient, str]:
    """A client that made a waiting room, and the room's id."""
    client = await GameClient.connect(url)
    await client.hello(name)
    made = await client.request(m.CreateRoom, name=f"{name}'s", seats=2)
    return client, made.room


def test_a_closed_room_stays_closed_across_a_restart(short_dir):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"
    args = ("--db", db, "--bot-delay", "0")
    key = new_key()

    async def close(url: str) -> tuple[str, str]:
        async with player(url, short_dir / "anna", "Anna") as (ctrl, out):
            session = ctrl.session
            await ctrl.handle("create Friday seats=2")
            room = session.room
            biel = await GameClient.connect(url)
            await biel.hello("Biel", key)
            joined = await biel.request(m.JoinRoom, room=room)
            await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
            await ctrl.handle("start")
            await until(lambda: ctrl.mode == "game")
            await biel.request(m.Chat, text="hola")
            connection = session.client
            await admin(sock, "close", room, "--reason", "spam")
            # Biel is told why, and is in the lobby: the connection stays open.
            push = await push_of(biel, m.RemovedPush)
            assert (push.room, push.why, push.text, push.until) == (room, "closed", "spam",
                                                                    None)
            listed = await biel.request(m.ListRooms)
            assert room not in {r.room for r in listed.rooms}
            gone = await refused(biel.request(m.JoinRoom, room=room, token=joined.token))
            assert gone.code == "room_closed" and "spam" in gone.message
            gone = await refused(biel.request(m.JoinRoom, room=room))  # by the account
            assert gone.code == "room_closed"
            games = (await biel.request(m.MyGames)).entries
            assert [(g.room, g.status, g.winners) for g in games] == [(room, "closed", None)]
            # Anna's client lands in the lobby with the host's reason, not back in the room,
            # and forgets the seat: it is never offered again.
            await until(lambda: ctrl.mode == "lobby")
            assert "the host closed 'Friday': spam; back in the lobby" in out.getvalue()
            assert session.client is connection and not connection.closed.is_set()
            assert ctrl.connection is None and session.held_seats() == []
            assert room not in {r.room for r in await session.list_rooms()}
            await biel.close()
            return room, joined.token

    with ServerProcess(*args) as server:
        room, token = asyncio.run(close(server.url))
        assert server.terminate() == 0
        log = server.stderr()
    assert "loaded back" not in log and "could not be saved" not in log

    async def after_restart(url: str) -> None:
        biel = await GameClient.connect(url)
        await biel.hello("Biel", key)
        gone = await refused(biel.request(m.JoinRoom, room=room, token=token))
        assert gone.code == "room_closed" and "spam" in gone.message
        assert [g.status for g in (await biel.request(m.MyGames)).entries] == ["closed"]
        assert room not in {r.room for r in (await biel.request(m.ListRooms)).rooms}
        assert room not in {r["room"] for r in await console(sock, "rooms")}
        await biel.close()

    with ServerProcess(*args) as server:
        asyncio.run(after_restart(server.url))
        assert server.terminate() == 0
        log = server.stderr()
    assert "loaded back" not in log and f"room {room} restored" not in log


def test_a_kick_keeps_the_player_out_until_unkick_across_a_restart(short_dir):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"
    args = ("--db", db, "--bot-delay", "0")

    async def kick(url: str) -> tuple[str, str]:
        # Before the start: the seat is freed, the player told why and kept out.
        anna, made = await in_a_room(url, "Anna")
        biel = await GameClient.connect(url)
        await biel.hello("Biel")
        await biel.request(m.JoinRoom, room=made)
        await admin(sock, "kick", made, "1", "--reason", "rude")
        push = await push_of(biel, m.RemovedPush)
        assert (push.room, push.why, push.text, push.until) == (made, "kicked", "rude", None)
        await anna.wait_state(lambda p: len(p.view["players"]) == 1)  # the seat is free
        out = await refused(biel.request(m.JoinRoom, room=made))
        assert out.code == "kicked" and "rude" in out.message
        out = await refused(biel.request(m.JoinRoom, room=made, as_="spectator"))
        assert out.code == "kicked"
        # Mid-game: a player whose connection is down when kicked is not taken back into
        # the room by the client's reconnect; it lands in the lobby, told why.
        host, port = url.removeprefix("ws://").rsplit(":", 1)
        async with cutting_proxy(host, int(port)) as proxy:
            via = f"ws://127.0.0.1:{proxy.port}"
            async with player(via, short_dir / "carme", "Carme") as (ctrl, screen):
                session = ctrl.session
                await ctrl.handle("create Game seats=2")
                await ctrl.handle("bot")
                await ctrl.handle("start")
                await until(lambda: ctrl.mode == "game")
                room, token = session.room, session.token
                assert room is not None and token is not None
                proxy.blackout()
                await until(lambda: ctrl.connection is not None)
                told = await admin(sock, "kick", room, "0", "--for", "1h", "--reason",
                                   "cheating")
                assert "kept out of room" in told and "until" in told
                proxy.end_blackout()
                await until(lambda: ctrl.mode == "lobby" and ctrl.connection is None)
                assert "cheating" in screen.getvalue()
                assert "back in the lobby" in screen.getvalue()
        out = await refused(biel.request(m.JoinRoom, room=room, token=token))
        assert out.code == "kicked" and "cheating" in out.message and "until" in out.message
        assert {k["room"] for k in await console(sock, "kicks")} == {made, room}
        # A mute is stored too.
        await admin(sock, "mute", "Anna", "--reason", "shouting")
        muted = await refused(anna.request(m.Chat, text="hello"))
        assert muted.code == "muted" and "shouting" in muted.message
        await anna.close()
        await biel.close()
        return room, token

    with ServerProcess(*args) as server:
        room, token = asyncio.run(kick(server.url))
        assert server.terminate() == 0

    async def after_restart(url: str) -> None:
        carme = await GameClient.connect(url)
        await carme.hello("Carme")
        out = await refused(carme.request(m.JoinRoom, room=room, token=token))
        assert out.code == "kicked" and "cheating" in out.message
        anna, _ = await in_a_room(url, "Anna")
        assert (await refused(anna.request(m.Chat, text="hi"))).code == "muted"
        # unkick and unmute lift them.
        assert "may come back" in await admin(sock, "unkick", room, "carme")
        joined = await carme.request(m.JoinRoom, room=room, token=token)
        assert joined.seat == 0
        await admin(sock, "unmute", "Anna")
        await anna.request(m.Chat, text="hi")
        await anna.close()
        await carme.close()

    with ServerProcess(*args) as server:
        asyncio.run(after_restart(server.url))
        assert server.terminate() == 0


def test_a_ban_s_reason_reaches_the_banned_player(short_dir):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"

    async def ban(url: str) -> None:
        watcher = await GameClient.connect(url)
        await watcher.hello("Dolors")
        async with player(url, short_dir / "dolors", "Dolors") as (ctrl, screen):
            await admin(sock, "ban", "dolors", "--for", "1h", "--reason", "spam bot")
            push = await push_of(watcher, m.RemovedPush)
            assert (push.room, push.why, push.text) == (None, "banned", "spam bot")
            assert push.until is not None
            await asyncio.wait_for(watcher.closed.wait(), 10)
            assert watcher.ws.close_code == 1008 and "spam bot" in watcher.ws.close_reason
            # The real client stops (no retrying against a ban) and says why.
            await until(lambda: ctrl.session.stopped)
            assert "spam bot" in screen.getvalue()
        again = await GameClient.connect(url)
        out = await refused(again.hello("Dolors"))
        assert out.code == "banned" and "spam bot" in out.message
        await again.close()

    with ServerProcess("--db", db) as server:
        asyncio.run(ban(server.url))


async def test_a_mute_holds_on_every_node_and_a_closed_room_on_none(short_dir):
    async with store_schema() as db, fresh_prefix() as prefix:
        def node(name: str) -> ServerProcess:
            return ServerProcess("--db", db, "--redis", REDIS_URL, "--redis-prefix", prefix,
                                 "--lease-ms", "1500", "--bot-delay", "0",
                                 "--moderation-refresh", "0.1",  # other nodes' bans at once
                                 "--admin-socket", str(short_dir / name))
        a, b = await asyncio.gather(asyncio.to_thread(node, "a"), asyncio.to_thread(node, "b"))
        with a:
            with b:
                pere, _ = await in_a_room(b.url, "Pere")
                await admin(str(short_dir / "a"), "mute", "pere", "--reason", "spam")
                async with asyncio.timeout(10):  # node B reads it from the database
                    while True:
                        try:
                            await pere.request(m.Chat, text="still here")
                        except ServerError as exc:
                            assert exc.code == "muted" and "spam" in exc.message
                            break
                        await asyncio.sleep(0.05)
                await pere.close()
                # A room closed on node A is served by no node: not B either.
                anna, room = await in_a_room(a.url, "Anna")
                biel = await GameClient.connect(a.url)
                await biel.hello("Biel")
                joined = await biel.request(m.JoinRoom, room=room)
                await admin(str(short_dir / "a"), "close", room, "--reason", "done")
                await push_of(biel, m.RemovedPush)
                other = await GameClient.connect(b.url)
                await other.hello("Biel")
                gone = await refused(other.request(m.JoinRoom, room=room, token=joined.token))
                assert gone.code == "room_closed" and "done" in gone.message
                for client in (anna, biel, other):
                    await client.close()
            # Node B again, restarted: the mute is read at its start.
            with await asyncio.to_thread(node, "b") as b2:
                pere, _ = await in_a_room(b2.url, "Pere")
                assert (await refused(pere.request(m.Chat, text="again"))).code == "muted"
                assert [u["name"] for u in await console(str(short_dir / "b"), "mutes")] \
                    == ["pere"]
                await admin(str(short_dir / "b"), "unmute", "Pere")
                await pere.request(m.Chat, text="thanks")
                await pere.close()
