"""The client's session against a real server: rooms from the lobby, a dropped connection
taken back with the seat token, refused tokens forgotten, the seat file kept private."""

from __future__ import annotations

import asyncio
import contextlib
import io
import stat

import pytest

from client.control.controller import Controller
from client.local.seats import SeatStore
from client.net.session import Session
from client.screens.plain import PlainScreen

pytestmark = pytest.mark.timeout(30)


def _controller(url: str, tmp_path, name: str = "Anna") -> tuple[Controller, io.StringIO]:
    session = Session(url, name, seats=SeatStore(tmp_path / "state"), first_retry=0.05,
                      max_retry=0.2)
    controller = Controller(session)
    out = io.StringIO()
    PlainScreen(controller, stdin=io.StringIO(), stdout=out, echo=False)
    return controller, out


@contextlib.asynccontextmanager
async def _running(url: str, tmp_path, name: str = "Anna"):
    """A controller whose session is open and pumping, stopped at the end."""
    ctrl, out = _controller(url, tmp_path, name)
    await ctrl.session.open()
    pump = asyncio.create_task(ctrl.session.run())
    try:
        yield ctrl, out
    finally:
        await ctrl.session.stop()
        pump.cancel()


async def _until(predicate, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_lobby_lines_create_fill_and_start_a_game(server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, out):
        await ctrl.handle("create Friday night seats=3 timer=90")
        assert ctrl.mode == "room"
        await ctrl.handle("start")  # refused: seats are free
        assert "error: every seat must be taken" in out.getvalue()
        await ctrl.handle("fill random")
        await _until(lambda: ctrl.view is not None and len(ctrl.view.players) == 3)
        await ctrl.handle("start")
        await _until(lambda: ctrl.mode == "game")
        assert ctrl.view.turn_seconds == 90 and ctrl.view.seats == 3
        await ctrl.handle("move nowhere")
        assert "error: no region called `nowhere`" in out.getvalue()


async def test_a_dropped_connection_comes_back_to_its_seat(server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, out):
        session = ctrl.session
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot")
        await ctrl.handle("start")
        await _until(lambda: ctrl.mode == "game" and ctrl.view.turn == 0)
        room, token = session.room, session.token
        assert token is not None
        store = session.seats
        assert store is not None
        assert [(h.room, h.token, h.name, h.seat) for h in store.held(url)] == [
            (room, token, "Friday night", 0)]
        assert stat.S_IMODE(store.path.stat().st_mode) == 0o600

        # the server drops us: the session dials again, says hello, takes the seat back
        first = session.client
        for conn in list(server.connections):
            conn.close(1011, "test: dropped")
        await _until(lambda: session.client is not None and session.client is not first
                     and ctrl.connection is None and session.state is not None
                     and session.state.view.players[0].connected)
        assert session.room == room and session.seat == 0 and session.token == token
        await ctrl.handle("move alt")
        assert session.state.view.players[0].region == "alt"
        assert "error" not in out.getvalue()


async def test_a_refused_token_is_forgotten_and_the_player_is_back_in_the_lobby(
        server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, out):
        session = ctrl.session
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot")
        await ctrl.handle("start")
        await _until(lambda: ctrl.mode == "game")
        session.token = "not-the-token"  # as if the server had been wiped meanwhile
        for conn in list(server.connections):
            conn.close(1011, "test: dropped")
        await _until(lambda: ctrl.mode == "lobby" and session.client is not None)
        assert "no longer has your place in 'Friday night'" in out.getvalue()
        assert session.seats is not None and session.seats.held(url) == []


async def test_a_restarted_client_resumes_its_held_seat(server, url, tmp_path):
    first, _ = _controller(url, tmp_path)
    await first.session.open()
    pump = asyncio.create_task(first.session.run())
    await first.handle("create Friday night seats=2")
    await first.handle("bot")
    await first.handle("start")
    await first.session.stop()
    pump.cancel()

    async with _running(url, tmp_path) as (again, out):
        await again.start(resume=True)
        assert again.mode == "game" and again.me == 0
        assert "back in 'Friday night', seat 0" in out.getvalue()


async def test_a_finished_game_shows_the_scores_and_forgets_its_token(server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, out):
        session = ctrl.session
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot random")
        await ctrl.handle("start")
        assert session.seats is not None and len(session.seats.held(url)) == 1
        for _ in range(12):  # one `end` per round: the bot (no delay) plays the rest
            await _until(lambda: ctrl.view.status == "finished" or ctrl.view.turn == 0)
            if ctrl.view.status == "finished":
                break
            await ctrl.handle("end!")  # no question: the bot plays on
        await _until(lambda: ctrl.view.status == "finished")
        text = out.getvalue()
        assert "The game is over." in text
        assert "Game over: " in text
        assert len([line for line in text.splitlines() if line.startswith("score ")]) == 2
        assert session.seats.held(url) == []  # nothing left to resume
        assert ctrl.mode == "game"  # the final board stays until the player leaves
        await ctrl.handle("end")
        assert out.getvalue().endswith("error: the game is over: `leave` for the lobby, "
                                       "`quit` to leave\n")


async def test_a_spectator_sees_the_game_and_cannot_act(server, url, tmp_path):
    host, _ = _controller(url, tmp_path / "host")
    watcher, out = _controller(url, tmp_path / "watcher", name="Rail")
    pumps = []
    try:
        for ctrl in (host, watcher):
            await ctrl.session.open()
            pumps.append(asyncio.create_task(ctrl.session.run()))
        await host.handle("create Friday night seats=2")
        await watcher.handle("list")
        assert "1. Friday night — 1/2 seats · normal · no timer · waiting" in out.getvalue()
        await watcher.handle("watch 1")
        assert watcher.mode == "room" and watcher.me is None
        await host.handle("bot")
        await host.handle("start")
        await _until(lambda: watcher.mode == "game")
        await watcher.handle("end")
        assert "error: you are watching: only players act" in out.getvalue()
        await watcher.handle("hint")
        assert "spectators get no hints" in out.getvalue()
        assert watcher.session.seats is not None and watcher.session.seats.held(url) == []
    finally:
        for ctrl in (host, watcher):
            await ctrl.session.stop()
        for pump in pumps:
            pump.cancel()


async def test_a_waiting_room_tells_each_player_its_settings_code_and_who_starts(
        server, url, tmp_path):
    host, _ = _controller(url, tmp_path / "host")
    friend, out = _controller(url, tmp_path / "friend", name="Bru")
    pumps = []
    try:
        for ctrl in (host, friend):
            await ctrl.session.open()
            pumps.append(asyncio.create_task(ctrl.session.run()))
        await host.handle("create Friday night seats=2 timer=90 private")
        code = host.session.code
        assert code is not None
        await friend.handle(f"join {code.lower()}")
        await _until(lambda: host.view is not None and len(host.view.players) == 2)
        for ctrl in (host, friend):
            lines = ctrl.room_lines()
            assert lines[0] == "2 seats · normal game · 90 s per turn · private"
            assert f"friends join with `join {code}`" in lines[1]  # never the room's id
        assert host.room_lines()[-1] == "Every seat is taken: `start` begins the game"
        assert friend.room_lines()[-1] == \
            "Every seat is taken: waiting for the room's creator to start"
        await friend.handle("start")
        assert "error: only the room's creator can start the game" in out.getvalue()
        await friend.handle("join 1")
        assert "`leave` it first" in out.getvalue()
        await host.handle("start")
        await friend.handle("leave")
        await friend.handle(f"join {code}")
        assert "error: that game has started: `watch " in out.getvalue()
    finally:
        for ctrl in (host, friend):
            await ctrl.session.stop()
        for pump in pumps:
            pump.cancel()


async def test_a_waiting_room_says_a_long_turn_timer_in_days(server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, _out):
        await ctrl.handle("create Letters seats=2 timer=2d")
        await _until(lambda: ctrl.view is not None)
        assert ctrl.room_lines()[0] == "2 seats · normal game · 2 d per turn"  # not 172800 s


async def test_a_typed_undo_takes_the_last_action_back_and_says_so(server, url, tmp_path):
    async with _running(url, tmp_path) as (ctrl, out):
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot")
        await _until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        await _until(lambda: ctrl.mode == "game" and ctrl.view.turn == ctrl.me, timeout=10)
        await ctrl.handle("undo")
        assert "error: you have nothing to take back this turn" in out.getvalue()
        await ctrl.handle("move gir")
        await _until(lambda: ctrl.view.players[ctrl.me].region == "gir")
        await ctrl.handle("undo")
        await _until(lambda: "Anna took back: move to gir" in out.getvalue())
        assert ctrl.view.players[ctrl.me].region is None and ctrl.view.turn == ctrl.me
