"""The game's log in the real ``castell``, in a pseudo-terminal: a pane that always exists
(``log``), scrolls back to the start of the game and follows it, a festival's result put up
when it is held, the log filled from the room's history after ``resume`` and ``watch``, a turn
the timer ended said as such (in a replay of the exported game too), every refusal kept, and
the region named in each action line."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time

import pytest

from client.net.net import GameClient
from server.store import open_store
from shared import messages as m
from shared.board import ADJACENT
from tests.support.proxy import cutting_proxy
from tests.support.servers import run_server_cli, serving
from tests.support.terminal import ROOT, Terminal, castell_server, client_env

pytestmark = pytest.mark.timeout(120)

PAGE_UP = "\x1b[5~"
PAGE_DOWN = "\x1b[6~"
CTRL_HOME = "\x1b[1;5H"
ESC = "\x1b"


def _castellers(term: Terminal) -> dict[str, list[int]]:
    """The castellers of each region, as the Regions panel shows them."""
    out = {}
    for line in term.lines():
        row = re.match(r"│ ([a-z]{3}) ((?:\d+ )*)", line)
        if row and row.group(1) != "reg" and row.group(1) not in out:
            out[row.group(1)] = [int(s) for s in row.group(2).split()]
    return out


def _log_pane(term: Terminal) -> list[str]:
    """The lines of the open log pane (from its title down to the status line)."""
    lines = term.lines()
    top = next(i for i, line in enumerate(lines) if line.startswith("──── Game log"))
    return lines[top + 1:-2]


def _read_whole_log(term: Terminal) -> list[str]:
    """Open the log, go to its start, and page down to its end: every line it holds."""
    term.type("log\r")
    term.wait_for(r"──── Game log")
    term.type(CTRL_HOME)
    term.wait_for(r"Game log · .*from the start")
    seen: list[str] = []
    for _ in range(60):
        for line in _log_pane(term):
            if not seen or line not in seen[-40:]:
                seen.append(line)
        if "more line" not in term.text():
            break
        term.type(PAGE_DOWN)
        term.settle()
    return seen


def _wait_gone(term: Terminal, text: str, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while text in term.text():
        assert time.monotonic() < end, f"{text!r} stayed; the screen:\n{term.text()}"
        term.pump(0.1)


def _quit(term: Terminal) -> None:
    term.type(ESC)
    term.quit()


@pytest.mark.parametrize("size", [(80, 24), (100, 40)])
def test_the_log_is_always_there_scrolls_to_the_start_and_holds_every_festival(tmp_path, size):
    columns, rows = size
    term = Terminal(["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"], tmp_path,
                    columns=columns, rows=rows)
    try:
        festival = None
        for round_ in range(1, 11):
            term.wait_for(rf"round {round_}/10 · your turn", timeout=20)
            if "──── Festival" in term.text():  # a festival was held: its result is up
                festival = term.text()
                break
            term.type("end!\r")  # (no question: the turns go by)
        assert festival is not None, "no festival was held in ten rounds"
        # the result: where, what size, and each participant's score and prize (or nobody)
        pane = festival[festival.index("──── Festival"):]
        assert re.search(r"Festival at .+ \([a-z]{3}\), size \d+", pane)
        assert re.search(r"(?m)^  \S.* \d+( (trophy|medal|ribbon))?( \+ size token)?$", pane) \
            or "nobody took part" in pane
        term.type(ESC)
        _wait_gone(term, "──── Festival")
        assert "`log`" in term.lines()[-2]  # the status line offers the log

        log = _read_whole_log(term)
        assert "the game starts" in log[:3]  # after the seats taken in the waiting room
        assert any(re.match(r"Festival at .+, size \d+", line) for line in log)
        assert any(line.startswith("— round 1,") for line in log)
        assert any(line.startswith(f"— round {round_},") for line in log)
        term.type(ESC)
        _wait_gone(term, "──── Game log")
        # F2 opens it too, at its latest lines, and closes it
        term.type("\x1bOQ")
        term.wait_for(r"──── Game log")
        assert "from the start" not in term.text() or len(log) < rows // 2
        term.type("\x1bOQ")
        _wait_gone(term, "──── Game log")
        _quit(term)
    finally:
        term.close()


def test_resume_and_watch_fill_the_log_from_the_history(tmp_path):
    state = tmp_path / "anna"
    with castell_server() as (url, _):
        first = Terminal([url, "--name", "Anna"], state)
        try:
            first.wait_for(r"Open rooms on")
            first.type("create Friday night seats=2\r")
            first.wait_for(r"Every seat|free")
            first.type("bot\r")
            first.wait_for(r"Every seat is taken")
            first.type("start\r")
            first.wait_for(r"round 1/10 · your turn")
            where = next(r for r, c in _castellers(first).items() if c)
            first.type(f"move {where}\r")
            first.wait_for(rf"Anna moved to {where}")
            first.type("chat bona sort\r")
            first.wait_for(r"Anna: bona sort")
            _quit(first)
        finally:
            first.close()

        again = Terminal([url, "--name", "Anna", "--resume"], state)
        try:
            again.wait_for(r"back in 'Friday night'")
            # the board's recent lines come from the history, before any `log`
            again.wait_for(rf"Anna moved to {where}")
            log = _read_whole_log(again)
            assert log[0] == "the game starts"
            assert f"Anna moved to {where}" in log and "Anna: bona sort" in log
            _quit(again)
        finally:
            again.close()

        watcher = Terminal([url, "--name", "Carme"], tmp_path / "carme")
        try:
            watcher.wait_for(r"Friday night")
            watcher.type("watch 1\r")
            watcher.wait_for(r"you are watching")
            watcher.wait_for(rf"Anna moved to {where}")
            log = _read_whole_log(watcher)
            assert log[0] == "the game starts"
            assert f"Anna moved to {where}" in log and "Anna: bona sort" in log
            _quit(watcher)
        finally:
            watcher.close()


async def test_a_turn_the_timer_ended_says_that_time_ran_out_live_and_in_the_replay(tmp_path):
    db = str(tmp_path / "games.sqlite3")
    # The server in this process, its timers sped up (10 s turns last 3 s): the client sees
    # the room's own ten seconds, and the turn ends by the timer as it would at full length.
    async with open_store(db) as store, serving(store, turn_time_scale=0.3) as (_, url):
        term = Terminal([url, "--name", "Anna"], tmp_path / "state")
        try:
            await asyncio.to_thread(term.wait_for, r"Open rooms on")
            term.type("create Slow seats=2 timer=10\r")
            await asyncio.to_thread(term.wait_for, r"10 s per turn")
            room = (await asyncio.to_thread(term.wait_for, r"join (r[0-9a-f]+)")).group(1)
            term.type("bot\r")
            await asyncio.to_thread(term.wait_for, r"Every seat is taken")
            term.type("start\r")
            await asyncio.to_thread(term.wait_for, r"round 1/10 · your turn")
            await asyncio.to_thread(term.wait_for, r"Anna ran out of time: the turn ended", 25)
            assert "Anna ended the turn" not in term.text()
            log = await asyncio.to_thread(_read_whole_log, term)
            assert "Anna ran out of time: the turn ended" in log
            assert "Anna ended the turn" not in log
            await asyncio.to_thread(_quit, term)
        finally:
            term.close()
    record = tmp_path / "slow.json"
    done = await asyncio.to_thread(run_server_cli, "export", room, "--db", db, "-o",
                                   str(record), "--unfinished")
    assert done.returncode == 0, done.stderr
    replayed = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "client", "replay", str(record), "--plain"],
        cwd=ROOT, env=client_env(tmp_path / "state"), capture_output=True, text=True,
        timeout=30)
    assert replayed.returncode == 0, replayed.stderr
    assert "Anna ran out of time: the turn ended" in replayed.stdout
    assert "Anna ended the turn" not in replayed.stdout


def test_refusals_typed_quickly_all_stay_in_the_log(tmp_path):
    term = Terminal(["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"], tmp_path,
                    columns=80, rows=24)
    try:
        term.wait_for(r"your turn")
        term.type("mvoe\rmove nowhere\rrecruit 99\r")
        term.wait_for(r"✗ .*casteller size")
        log = _read_whole_log(term)
        refusals = [line for line in log if line.startswith("✗ ")]
        assert len(refusals) == 3, log
        assert "mvoe" in refusals[0] and "nowhere" in refusals[1] and "99" in refusals[2]
        _quit(term)
    finally:
        term.close()


def test_an_action_line_names_its_region_after_its_move_scrolled_away(tmp_path):
    term = Terminal(["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"], tmp_path)
    try:
        term.wait_for(r"round \d+/10 · your turn")
        where, there = next((r, c) for r, c in _castellers(term).items() if c)
        term.type(f"move {where}\r")
        term.wait_for(r"your turn: move ✓")
        # enough chat that the move is no longer among the latest lines the client keeps
        # (typed at once: 18 lines is within the room's chat burst)
        term.type("".join(f"chat line {i}\r" for i in range(18)))
        term.wait_for(r"Anna: line 17$|Anna: line 17\n")
        term.type(f"recruit {there[0]}\r")
        term.wait_for(r"recruit ✓")
        elsewhere = sorted(ADJACENT[where])[0]
        term.type(f"special move {elsewhere}\r")
        term.wait_for(rf"spent a token to move to {elsewhere}")
        assert f"Anna recruited {there[0]} in {where}" in term.text()
        _quit(term)
    finally:
        term.close()


def test_plain_log_prints_the_game_so_far_with_its_refusals(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "client", "play", "--plain", "--seats", "2", "--bot-delay", "0",
         "--name", "Anna"], cwd=ROOT, env=client_env(tmp_path), capture_output=True, text=True,
        input="wait\nmvoe\nlog\nquit\n", timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    printed = done.stdout.split("> log", 1)[1].split("> quit", 1)[0].splitlines()
    assert "the game starts" in printed
    first_round = next(i for i, line in enumerate(printed) if line.startswith("— round 1,"))
    assert printed.index("the game starts") < first_round
    assert any(line.startswith("✗ unknown command `mvoe`") for line in printed)


async def test_a_reconnect_fills_the_log_with_what_was_said_and_done_meanwhile(tmp_path):
    with castell_server() as (url, _):
        port = int(url.rsplit(":", 1)[1])
        async with cutting_proxy("127.0.0.1", port) as proxy:
            bru = await GameClient.connect(url)
            term = Terminal([f"ws://127.0.0.1:{proxy.port}", "--name", "Anna"], tmp_path)
            try:
                await bru.hello("Bru")
                room = (await bru.request(m.CreateRoom, name="Two", seats=2)).room
                await asyncio.to_thread(term.wait_for, r"Open rooms on")
                term.type(f"join {room}\r")
                await asyncio.to_thread(term.wait_for, r"you sit in seat 1")
                await bru.request(m.StartGame)
                await asyncio.to_thread(term.wait_for, r"round 1/10")
                proxy.blackout()  # Anna's connection drops, and stays down a while
                await asyncio.to_thread(term.wait_for, r"connection lost|trying again")
                await bru.request(m.Chat, text="while you were away")
                proxy.end_blackout()
                await asyncio.to_thread(term.wait_for, r"Bru: while you were away", 30)
                log = await asyncio.to_thread(_read_whole_log, term)
                assert log.count("Bru: while you were away") == 1
                assert "the game starts" in log
            finally:
                term.close()
                await bru.close()
