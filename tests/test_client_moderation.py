"""The real client (session, controller, plain screen) against a real server, in this process on
a SQLite file with its host console, as the host moderates it through the console's socket
(server/ops/admin.py): a closed room is never offered to resume, a kick's and a
ban's reasons and end times reach the player, a ban stops the client, and a rematch invite
and a private rematch room read right for whoever sees them."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from client.control.controller import Controller
from client.local.keys import KeyStore
from client.local.seats import SeatStore
from client.net.session import Session
from client.screens.plain import PlainScreen
from server.store import open_store
from tests.support.console import console
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(120)


@contextlib.asynccontextmanager
async def player(url: str, folder: Path, name: str, *, account: bool = False,
                 answers: str = "") -> AsyncIterator[tuple[Controller, io.StringIO]]:
    """The real client (a session under a controller and its plain screen), pumping."""
    session = Session(url, name, seats=SeatStore(folder), first_retry=0.05, max_retry=0.2,
                      keys=KeyStore(folder) if account else None)
    ctrl = Controller(session)
    out = io.StringIO()
    PlainScreen(ctrl, stdin=io.StringIO(answers), stdout=out, echo=False)
    await session.open()
    pump = asyncio.create_task(session.run())
    try:
        yield ctrl, out
    finally:
        await session.stop()
        pump.cancel()


async def until(predicate: Any, timeout: float = 10.0) -> None:
    """Wait for a state of the client nothing announces (bounded)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("account", [False, True], ids=["guest", "account"])
async def test_a_room_closed_while_away_is_forgotten_not_offered(short_dir, account):
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"
    folder = short_dir / "anna"

    async def go(url: str) -> None:
        async with player(url, folder, "Anna", account=account) as (ctrl, _):
            await ctrl.handle("create Duel seats=2 private" if not account
                              else "create Duel seats=2")
            await ctrl.handle("bot")
            await ctrl.handle("start")
            await until(lambda: ctrl.mode == "game")
            room = ctrl.session.room
            assert ctrl.session.held_seats()
        # Anna is away; the host closes the room meanwhile.
        await console(sock, "close", room=room, reason="spam")
        async with player(url, folder, "Anna", account=account, answers="y\n") as (ctrl, out):
            await ctrl.start()
            said = out.getvalue()
            assert "resume your game" not in said, said
            assert "'Duel': the host closed this room: spam; its seat is forgotten" in said
            assert ctrl.session.room is None and ctrl.session.held_seats() == []

    async with serving(open_store(db), admin_socket=sock) as (_, url):
        await go(url)


async def test_a_kicked_player_resuming_in_the_full_screen_reads_the_kick_s_reason(short_dir):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from client.net.net import GameClient
    from client.screens.app import TerminalScreen
    from shared import messages as m

    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"
    folder = short_dir / "biel"

    async def go(url: str) -> None:
        anna = await GameClient.connect(url)
        await anna.hello("Anna")
        made = await anna.request(m.CreateRoom, name="Duel", seats=2)
        async with player(url, folder, "Biel", account=True) as (ctrl, _):
            await ctrl.handle(f"join {made.room}")
            await anna.request(m.StartGame)
            await until(lambda: ctrl.mode == "game")
            key = ctrl.session.key
        # Another game of his account waits on his turn (so arriving says so).
        other = await GameClient.connect(url)
        await other.hello("Biel", key)
        mine = await other.request(m.CreateRoom, name="Other", seats=2)
        await other.request(m.AddBot, level="easy")
        await other.request(m.StartGame)
        await other.wait_state(lambda p: p.view["status"] == "playing"
                               and p.view["turn"] == mine.seat)
        await other.close()
        await console(sock, "kick", room=made.room, seat=1, seconds=3600, reason="rude")
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            session = Session(url, "Biel", seats=SeatStore(folder), keys=KeyStore(folder))
            screen = TerminalScreen(Controller(session), color=False)
            await session.open()
            try:
                await screen.controller.start(resume=True)
                status = "".join(text for _, text in screen._status())
                assert "rude" in status and "until" in status, status
                assert session.room is None
            finally:
                await session.stop()
        await anna.close()

    async with serving(open_store(db), admin_socket=sock) as (_, url):
        await go(url)


async def test_a_ban_closes_the_full_screen_and_says_why_on_the_shell(short_dir, monkeypatch,
                                                                capsys):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from client.cli import run_screen

    monkeypatch.setenv("XDG_STATE_HOME", str(short_dir / "state"))
    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"

    async def go(url: str) -> int:
        session = Session(url, "Dolors", seats=SeatStore(short_dir / "dolors"),
                          first_retry=0.05, max_retry=0.2)
        await session.open()
        seated = asyncio.Event()

        async def startup(ctrl: Controller) -> None:
            await ctrl.handle("create Torre seats=2")
            seated.set()

        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            running = asyncio.create_task(run_screen(session, startup, plain=False,
                                                     color=False))
            await asyncio.wait_for(seated.wait(), 10)
            await console(sock, "ban", target="Dolors", seconds=3600, reason="spam bot")
            # The screen closes by itself (no prompt left up, no claim of reconnecting).
            return await asyncio.wait_for(running, 10)

    async with serving(open_store(db), admin_socket=sock) as (_, url):
        code = await go(url)
    shell = capsys.readouterr().out
    assert code == 1
    assert "The host barred you from this server until " in shell and "spam bot" in shell


async def test_a_kick_s_end_reaches_the_kicked_player(short_dir):
    from client.net.net import GameClient
    from shared import messages as m

    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"

    async def go(url: str) -> None:
        anna = await GameClient.connect(url)
        await anna.hello("Anna")
        made = await anna.request(m.CreateRoom, name="Torre", seats=3)
        async with player(url, short_dir / "biel", "Biel") as (ctrl, out):
            await ctrl.handle(f"join {made.room}")
            await console(sock, "kick", room=made.room, seat=1, seconds=3600,
                          reason="spamming the table")
            await until(lambda: ctrl.mode == "lobby")
            assert "the host removed you from 'Torre' until " in out.getvalue()
            assert ": spamming the table; back in the lobby" in out.getvalue()
        async with player(url, short_dir / "carme", "Carme") as (ctrl, out):
            await ctrl.handle(f"join {made.room}")
            await console(sock, "kick", room=made.room, seat=1, reason="rude")
            await until(lambda: ctrl.mode == "lobby")
            assert "the host removed you from 'Torre' for good: rude" in out.getvalue()
        await anna.close()

    async with serving(open_store(db), admin_socket=sock) as (_, url):
        await go(url)


async def test_a_private_rematch_reads_right_for_the_invitee_sitting_elsewhere(short_dir):
    from client.net.net import GameClient
    from shared import messages as m
    from tests.test_rematch import finished

    db = str(short_dir / "c.sqlite3")
    sock = db + ".admin"

    async def go(url: str) -> None:
        async with player(url, short_dir / "biel", "Biel", account=True) as (ctrl, out):
            anna = await GameClient.connect(url)
            await anna.hello("Anna")
            biel = await GameClient.connect(url)  # his account, on another terminal
            await biel.hello("Biel", ctrl.session.key)
            await finished([anna, biel], private=True, name="Revenja")
            # Biel's client waits in a room of its own when the invite comes.
            await ctrl.handle("create Altra seats=3")
            await until(lambda: ctrl.mode == "room")
            made = await anna.request(m.Rematch)
            await until(lambda: ctrl.invite is not None)
            said = out.getvalue()
            assert f"`leave`, then `join {made.room}`, takes your seat" in said, said
            await ctrl.handle("leave")
            await ctrl.handle(f"join {made.room}")
            await until(lambda: ctrl.mode == "room" and ctrl.session.room == made.room)
            lines = ctrl.room_lines()
            assert lines[0].endswith(" · private"), lines
            assert not any("join" in line for line in lines), lines
            assert not any("`start`" in line for line in lines), lines
            assert lines[-1] == "Every seat is taken: waiting for Anna to start", lines
            await anna.close()
            await biel.close()

    async with serving(open_store(db), admin_socket=sock) as (_, url):
        await go(url)
