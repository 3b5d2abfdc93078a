"""The game's log: a pane that always exists (``log``), scrolls back to the start of the game
and follows it, a festival's result put up when it is held, the log filled from the room's
history after ``resume``, ``watch`` and a reconnect, a turn the timer ended said as such (in a
replay of the exported game too), every refusal kept, and the region named in each action
line.

The log is the controller's and the full-screen client's own logic: most tests drive the real
client (Controller, Session, TerminalScreen) against a real server over real websockets, in
this process, with nothing drawn (:func:`tests.support.screens.full_screen`), at both sizes;
``log`` in plain lines runs the plain client (:func:`tests.support.screens.plain`). The keys
that open, page and close the log, and lines typed faster than they are answered, are the
terminal's: the 80x24 pseudo-terminal test of ``castell play`` presses them
(tests/test_client_small_screens.py); they do the same at any size, and what the pane shows
at each is these tests'."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from client.modes.replay import load, print_plain
from client.net.net import GameClient
from server.ops.export import export_game
from server.store import open_store
from shared import messages as m
from shared.actions import Move
from shared.board import ADJACENT
from shared.view import RoomStatus
from tests.support.proxy import cutting_proxy
from tests.support.screens import (
    full_screen,
    my_turn,
    notes_pane,
    plain,
    read_whole_log,
    status_line,
    until,
)
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)


async def _a_game_with_a_bot(screen, name: str = "Friday night") -> None:
    """A room of two seats, a bot in the other, started: the player's first turn."""
    ctrl = screen.controller
    await ctrl.handle(f"create {name} seats=2")
    await ctrl.handle("bot")
    await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
    await ctrl.handle("start")
    await until(lambda: my_turn(screen))


def _region_with_castellers(screen) -> tuple[str, tuple[int, ...]]:
    """A region the player may move to that has castellers to recruit (largest first)."""
    ctrl = screen.controller
    moves = {a.region for a in ctrl.legal() if isinstance(a, Move)}
    return next((r, v.castellers) for r, v in ctrl.view.regions.items()
                if v.castellers and r in moves)


@pytest.mark.parametrize("size", [(80, 24), (100, 40)])
async def test_the_log_is_always_there_scrolls_to_the_start_and_holds_every_festival(
        server, url, tmp_path, size):
    columns, rows = size
    async with full_screen(url, "Anna", tmp_path, columns=columns, rows=rows) as screen:
        ctrl = screen.controller
        await _a_game_with_a_bot(screen)
        festival = None
        for round_ in range(1, 11):
            await until(lambda r=round_: my_turn(screen) and ctrl.view.round == r)
            if any(e.get("kind") == "festival" for _, e in ctrl.log):  # its result is up
                festival = screen.board_text(columns, rows - 2)  # on the event lines
                break
            await ctrl.handle("end!")  # (no question: the turns go by)
        assert festival is not None, "no festival was held in ten rounds"
        # the result: where, what size, and each participant's score and prize (or nobody)
        assert re.search(r"(?m)^Festival at .+ \([a-z]{3}\), size \d+: (\S+ \d+( (trophy|medal|"
                         r"ribbon))?( \+ size token)?|nobody took part)", festival)
        screen.notes, screen.log_open = [], False  # (Esc)
        assert "`log`" in status_line(screen)  # the status line offers the log

        log = read_whole_log(screen)
        assert "the game starts" in log[:3]  # after the seats taken in the waiting room
        assert any(re.match(r"Festival at .+, size \d+", line) for line in log)
        assert any(line.startswith("— round 1,") for line in log)
        assert any(line.startswith(f"— round {round_},") for line in log)
        # opened again, it shows its latest lines, and follows the game
        screen.show_log()
        assert "from the start" not in notes_pane(screen) or len(log) < rows // 2
        await ctrl.handle("end!")
        await until(lambda: my_turn(screen))
        assert screen.log_open and screen.notes == ctrl.log_lines()
        assert "more line" not in notes_pane(screen).split("\n", 1)[0]


async def test_resume_and_watch_fill_the_log_from_the_history(server, url, tmp_path):
    state = tmp_path / "anna"
    async with full_screen(url, "Anna", state) as first:
        ctrl = first.controller
        await _a_game_with_a_bot(first)
        where, _ = _region_with_castellers(first)
        await ctrl.handle(f"move {where}")
        await ctrl.handle("chat bona sort")
        await until(lambda: "Anna: bona sort" in ctrl.log_lines())
        assert f"Anna moved to {where}" in ctrl.log_lines()
        room = ctrl.session.room

    async with full_screen(url, "Anna", state) as again:
        ctrl = again.controller
        await ctrl.start(resume=True)
        assert ctrl.session.room == room and ctrl.mode == "game"
        # the board's recent lines come from the history, before any `log`
        await until(lambda: ctrl.log_from_start)
        assert f"You: moved to {where}" in again.board_text(100, 38)
        log = read_whole_log(again)
        assert log[0] == "the game starts"
        assert f"Anna moved to {where}" in log and "Anna: bona sort" in log

    async with full_screen(url, "Carme", tmp_path / "carme") as watcher:
        ctrl = watcher.controller
        await ctrl.start()
        assert any("Friday night" in line for line in ctrl.lobby_lines())
        await ctrl.handle("watch 1")
        assert ctrl.session.room == room and ctrl.me is None
        await until(lambda: ctrl.log_from_start)
        assert f"Anna: moved to {where}" in watcher.board_text(100, 38)
        log = read_whole_log(watcher)
        assert log[0] == "the game starts"
        assert f"Anna moved to {where}" in log and "Anna: bona sort" in log


async def test_a_turn_the_timer_ended_says_that_time_ran_out_live_and_in_the_replay(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    # The room's own turn is 10 s, its timer sped up to a hundredth of that: the turn ends by
    # the timer as it would at full length, and nobody waits for it.
    async with open_store(db) as store, serving(store, turn_time_scale=0.01) as (_, url), \
                full_screen(url, "Anna", tmp_path / "state") as screen:
        ctrl = screen.controller
        await ctrl.handle("create Slow seats=2 timer=10")
        assert ctrl.view.turn_seconds == 10
        room = ctrl.session.room
        await ctrl.handle("bot")
        await until(lambda: len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        await until(lambda: "Anna ran out of time: the turn ended" in ctrl.log_lines())
        assert "You: ran out of time" in screen.board_text(100, 38)
        log = read_whole_log(screen)
        assert "Anna ran out of time: the turn ended" in log
        assert "Anna ended the turn" not in log
    async with open_store(db) as store:  # (the server closed it)
        record = await store.load(room)
    assert record is not None
    exported = tmp_path / "slow.json"
    export_game(record, exported)
    replayed = io.StringIO()
    print_plain(load(str(exported)), replayed)
    assert "Anna ran out of time: the turn ended" in replayed.getvalue()
    assert "Anna ended the turn" not in replayed.getvalue()


async def test_an_action_line_names_its_region_after_its_move_scrolled_away(
        server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path) as screen:
        ctrl = screen.controller
        await _a_game_with_a_bot(screen)
        where, there = _region_with_castellers(screen)
        await ctrl.handle(f"move {where}")
        # enough chat that the move is no longer among the latest lines the client keeps
        for i in range(18):
            await ctrl.handle(f"chat line {i}")
        await until(lambda: "Anna: line 17" in ctrl.log_lines())
        assert not any(e.get("kind") == "move" for e in ctrl.events)
        await ctrl.handle(f"recruit {there[0]}")
        elsewhere = sorted(ADJACENT[where])[0]
        await ctrl.handle(f"special move {elsewhere}")
        await until(lambda: any(f"spent a token to move to {elsewhere}" in line
                                for line in ctrl.log_lines()))
        assert f"You: moved to {where}, recruited {there[0]}, special: move to {elsewhere}" \
            in screen.board_text(100, 40)


async def test_plain_log_prints_the_game_so_far_with_its_refusals(server, url, tmp_path):
    out = await plain(url, "Anna", tmp_path, "wait\nmvoe\nlog\nquit\n", guest=True,
                      startup=lambda ctrl: ctrl.start_play(2, "normal", "normal"))
    printed = out.split("> log", 1)[1].split("> quit", 1)[0].splitlines()
    assert "the game starts" in printed
    first_round = next(i for i, line in enumerate(printed) if line.startswith("— round 1,"))
    assert printed.index("the game starts") < first_round
    assert any(line.startswith("✗ unknown command `mvoe`") for line in printed)


async def test_a_reconnect_fills_the_log_with_what_was_said_and_done_meanwhile(
        server, url, tmp_path: Path):
    port = int(url.rsplit(":", 1)[1])
    async with cutting_proxy("127.0.0.1", port) as proxy:
        bru = await GameClient.connect(url)
        try:
            await bru.hello("Bru")
            room = (await bru.request(m.CreateRoom, name="Two", seats=2)).room
            async with full_screen(f"ws://127.0.0.1:{proxy.port}", "Anna", tmp_path) as screen:
                ctrl = screen.controller
                await ctrl.handle(f"join {room}")
                assert ctrl.me == 1
                await bru.request(m.StartGame)
                await until(lambda: ctrl.view.status == RoomStatus.PLAYING)
                proxy.blackout()  # Anna's connection drops, and stays down a while
                await until(lambda: "connection lost" in status_line(screen)
                            or "trying again" in status_line(screen))
                await bru.request(m.Chat, text="while you were away")
                proxy.end_blackout()
                await until(lambda: "Bru: while you were away" in ctrl.log_lines(), 30)
                log = read_whole_log(screen)
                assert log.count("Bru: while you were away") == 1
                assert "the game starts" in log
        finally:
            await bru.close()
