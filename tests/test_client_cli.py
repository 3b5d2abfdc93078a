"""The real ``castell`` end to end: in a pseudo-terminal against a real server, ``castell play``
with its embedded server, ``--plain`` through pipes, replays of records, coming back after
the server restarts, and a game left with quit or Ctrl-C taken back with ``--resume``.

A pty runs where the terminal or the process is the subject: a key (Tab, Esc, Ctrl-D, Ctrl-Z,
Ctrl-C), a push redrawn around a line being typed, what is said on the shell once the screen
closes, a client process outliving its server. What the command line does with addresses,
seats and records, and what the controller says, run in this process: ``castell`` itself
(:func:`tests.support.terminal.castell_here`), or the plain and the full-screen client
(:mod:`tests.support.screens`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import socket
import stat
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pexpect
import pytest
from websockets.sync.client import connect as ws_connect
from websockets.typing import Subprotocol

from client.modes.play import PLAY_HOME
from client.screens.app import TerminalScreen
from server.store import open_store
from shared import messages as m
from shared.codec import decode, encode
from shared.engine import new_game
from shared.record import GameRecordFile, RecordedAction
from tests.support.games import play_out, sometimes_tallest
from tests.support.screens import (
    board,
    full_screen,
    my_turn,
    plain,
    prompt,
    status_line,
    until,
)
from tests.support.servers import serving, serving_in_thread
from tests.support.terminal import ROOT, Terminal, castell_here, client_env

pytestmark = pytest.mark.timeout(60)


def _castell(*args: str, state, stdin: str, timeout: float = 20) -> str:
    done = subprocess.run([sys.executable, "-m", "client", *args], cwd=ROOT, input=stdin,
                          env=client_env(state), capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _castellers(term: Terminal) -> dict[str, list[int]]:
    """The castellers of each region, as the Regions panel shows them."""
    out = {}
    for line in term.lines():
        row = re.match(r"│ ([a-z]{3}) ((?:\d+ )*)", line)
        if row and row.group(1) != "reg" and row.group(1) not in out:  # not the tiles' rows
            out[row.group(1)] = [int(s) for s in row.group(2).split()]
    return out


def test_a_game_in_the_terminal_against_a_server(tmp_path):
    with serving_in_thread() as url:
        term = Terminal([url, "--name", "Anna"], tmp_path)
        try:
            term.wait_for(r"Open rooms on ws://")
            term.type("create Friday night seats=2\r")
            term.wait_for(r"Friday night · waiting for players 1/2")
            room = term.wait_for(r"join (r[0-9a-f]+)").group(1)
            term.type("bot\r")
            term.wait_for(r"Every seat is taken")
            term.type("start\r")
            term.wait_for(r"round 1/10 · your turn: move ·")

            # a push arrives while Anna types: the board changes, her line does not
            term.type("chat hel")
            term.wait_for(r"> chat hel")
            with ws_connect(url, subprotocols=[Subprotocol(m.SUBPROTOCOL)]) as rail:
                rail.send(encode(m.Hello(id=1, name="Rail")))
                rail.recv(5)
                rail.send(encode(m.JoinRoom(id=2, room=room, as_="spectator")))
                assert isinstance(decode(rail.recv(5)), m.Joined)
                rail.send(encode(m.Chat(id=3, text="hello from the rail")))
                term.wait_for(r"Rail \(watching\): hello from the rail")
            assert term.input_line() == "> chat hel"
            term.type("lo\r")
            term.wait_for(r"Anna: hello")

            # Tab completes only what is legal; a refusal shows in words above the prompt
            term.type("move nowhere\r")
            term.wait_for(r"✗ no region called `nowhere`")
            where, there = next((r, c) for r, c in _castellers(term).items() if c)
            term.type(f"move {where[:2]}\t")  # the first move goes anywhere
            term.wait_for(rf"> move {where}")
            term.type("\r")
            term.wait_for(r"your turn: move ✓")
            term.wait_for(rf"│ {where} [\d ]+ +Anna")  # her pawn in the region
            term.type(f"recruit {there[0]}\r")
            term.wait_for(r"recruit ✓")
            term.type("hint\r")
            term.wait_for(r"you can:")
            term.type("end\r")  # she could still train: asked once
            term.wait_for(r"you have not trained: end anyway\? \[y/N\]")
            term.type("y\r")
            term.wait_for(r"round 2/10 · your turn")

            # quitting a game under way asks once, and says the seat is kept and how to return
            term.type("quit\r")
            term.wait_for(r"quit now\? \[y/N\]")
            assert f"Your seat in 'Friday night' (seat 0) is kept: `castell {url} --resume` " \
                "takes it back." in term.text()
            term.type("y\r")
            term.child.expect(pexpect.EOF, timeout=5)
            assert f"`castell {url} --resume` takes it back." in term.child.before
        finally:
            status = term.close()
        assert status == 0


def test_castell_play_reaches_a_game_with_bots_and_answers_its_keys(tmp_path):
    """``castell play`` in a 100x40 terminal: the whole board, a panel for each bot; Esc
    closes the help, Ctrl-Z takes back the last action of the turn, Ctrl-D quits."""
    term = Terminal(["play", "--seats", "3", "--bot-delay", "0", "--name", "Anna"], tmp_path)
    try:
        term.wait_for(r"Anna's game · round 1/10 · your turn: move ·")
        text = term.text()
        assert "Regions" in text and "Festivals" in text and "Local performances" in text
        assert len(re.findall(r"╭─ (?:▶ )?[^╮]*\(bot\) ─", text)) == 2  # two bot panels
        term.type("help\r")
        term.wait_for(r"move REGION")
        term.type("\x1b")  # Esc closes the help
        term.wait_for(r"^(?![\s\S]*move REGION)")
        term.type("move alt\r")  # (the first move goes anywhere)
        term.wait_for(r"your turn: move ✓")
        term.type("\x1a")  # Ctrl-Z
        term.wait_for(r"took back: move to alt")
        term.wait_for(r"your turn: move ·")  # the move is hers again
        term.type("end!\r")  # ends without asking
        term.wait_for(r"round 2/10")
        term.type("\x04")  # Ctrl-D quits
        term.child.expect(pexpect.EOF, timeout=5)
    finally:
        status = term.close()
    assert status == 0


def test_castell_play_plain_through_pipes(tmp_path):
    out = _castell("play", "--plain", "--seats", "2", "--bot-delay", "0", "--name", "Anna",
                   state=tmp_path, stdin="wait\nhint\nmove alt\nend!\nwait\nlook\nquit\n")
    assert "\x1b" not in out and "╭" not in out  # no escape sequences, no boxes
    assert "the game starts" in out
    assert "`start`" not in out and "Friends join" not in out  # bots only: it just starts
    assert "you can:\n  move alt | gir | cen | lle | bcn | tar | ebr" in out
    assert "Anna moved to alt" in out
    assert re.search(r"Castell · Anna's game · round 2/10 · your turn", out)
    assert "region alt (Alt Pirineu): castellers" in out


async def test_end_asks_once_a_turn_while_actions_are_left_and_not_once_turned_off(
        server, url, tmp_path):
    script = ("create Friday night seats=2\nbot\nstart\n"
              "wait\nend\nn\nend\n"  # asked, kept playing; the second `end` does not ask
              "wait\nend!\n"  # `end!` never asks
              "wait\nwarn off\nend\n"  # nor `end` once the warning is off
              "wait\nlook\nquit\n")
    out = await plain(url, "Anna", tmp_path, script)
    assert out.count("end anyway?") == 1, out
    assert re.search(r"you have not [a-z, ]+: end anyway\? \[y/N\]", out)
    assert "the turn goes on (`end` again ends it)" in out
    assert re.search(r"Castell · Friday night · round 4/10 · your turn", out)
    # the setting is kept: back in the game, `end` does not ask
    out = await plain(url, "Anna", tmp_path, "y\nend\nwait\nlook\nquit\n")
    assert "back in 'Friday night'" in out and "end anyway?" not in out
    assert re.search(r"Castell · Friday night · round 5/10 · your turn", out)


def _recorded_game(seed: int) -> GameRecordFile:
    """A seeded 2-seat game of random moves (and now and then the tallest tower), recorded."""
    start = new_game(["Anna", "Bru"], seed=seed)
    steps = list(play_out(start, random.Random(seed), sometimes_tallest(0.2)))
    result = {"winners": list(steps[-1].state.winners or ())}
    return GameRecordFile(room="r1", name="Friday night", variant="normal",
                          seats=("Anna", "Bru"), bots=(False, True), seed=seed,
                          actions=tuple(RecordedAction(s.seat, s.action) for s in steps),
                          result=result)


def test_replay_plain_steps_through_a_record(tmp_path, monkeypatch, capsys):
    record = _recorded_game(5)
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    assert castell_here(monkeypatch, tmp_path, "replay", str(path), "--plain") == 0
    out = capsys.readouterr().out
    total = len(record.actions)
    steps = re.findall(r"^-- step (\d+)/(\d+)$", out, re.M)
    assert [int(i) for i, _ in steps] == list(range(1, total + 1))
    assert {int(n) for _, n in steps} == {total}
    assert "Castell · Friday night · round 1/10 · Anna's turn" in out.split("-- step 1/")[0] \
        or "Castell · Friday night · round 1/10 · Bru's turn" in out.split("-- step 1/")[0]
    final = out.split("-- the final board")[1]
    assert "game over" in final
    assert len(re.findall(r"^score (Anna|Bru): tower", final, re.M)) == 2
    assert "Game over:" in out
    # a damaged record is refused in words
    path.write_text(json.dumps({"format": "something else"}))
    assert castell_here(monkeypatch, tmp_path, "replay", str(path), "--plain") == 1
    assert "not a Castell game record" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_client_comes_back_after_the_server_restarts_and_after_its_own_restart(tmp_path):
    port = _free_port()
    db = str(tmp_path / "castell.sqlite3")
    state = tmp_path / "state"
    client = None
    try:
        with serving_in_thread(db, port=port) as url:
            client = subprocess.Popen(
                [sys.executable, "-m", "client", url, "--name", "Anna", "--plain"], cwd=ROOT,
                env=client_env(state), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True)
            assert client.stdin is not None and client.stdout is not None
            client.stdin.write("create Friday night seats=2\nbot\nstart\nwait\n")
            client.stdin.flush()
            _read_until(client, "Your turn.")
            seats = state / "castell" / "seats.json"
            assert stat.S_IMODE(os.stat(seats).st_mode) == 0o600
            held = json.loads(seats.read_text())[url]
            assert [(v["name"], v["seat"]) for v in held.values()] == [("Friday night", 0)]
        # the server is gone: the client says so and keeps trying
        _read_until(client, "connection: ")
        with serving_in_thread(db, port=port):
            _read_until(client, "connection: back")
            client.stdin.write("move alt\n")
            client.stdin.flush()
            _read_until(client, "Anna moved to alt")
            client.stdin.write("quit\n")
            client.stdin.flush()
            assert client.wait(10) == 0

            # a new castell offers the held seat, and takes it back
            out = _castell(url, "--name", "Anna", "--plain", state=state,
                           stdin="y\nlook\nquit\n")
            assert "resume your game in 'Friday night' (seat 0)? [Y/n]" in out
            assert "back in 'Friday night', seat 0" in out
            assert re.search(r"^region alt \(Alt Pirineu\): castellers [^·]*· [^·]*\bAnna\b", out,
                             re.M)  # her pawn still where she moved it
    finally:
        if client is not None and client.poll() is None:
            client.kill()
            client.wait()


def _read_until(proc: subprocess.Popen[str], text: str, timeout: float = 15.0) -> str:
    """Lines of ``proc``'s output up to the first holding ``text``."""
    assert proc.stdout is not None
    seen: list[str] = []
    end = time.monotonic() + timeout
    os.set_blocking(proc.stdout.fileno(), True)
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"{text!r} never came; the client said:\n{''.join(seen)}")


def test_an_address_where_nobody_answers_is_said_in_words(tmp_path, monkeypatch, capsys):
    port = _free_port()
    assert castell_here(monkeypatch, tmp_path, f"127.0.0.1:{port}", "--plain") == 1
    assert f"nothing answers at ws://127.0.0.1:{port}: is castell-server running there?" \
        in capsys.readouterr().err


def _region_of(lines: list[str], name: str) -> str | None:
    """The region whose pawns column shows ``name`` on the Regions panel of ``lines``."""
    for line in lines:
        row = re.match(r"│ ([a-z]{3}) .*?\b" + re.escape(name) + r"\b", line)
        if row and row.group(1) != "reg":
            return row.group(1)
    return None


def test_a_castell_play_game_left_with_quit_or_ctrl_c_comes_back_with_resume(tmp_path):
    args = ["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"]
    term = Terminal(args, tmp_path)
    try:
        term.wait_for(r"round 1/10 · your turn")
        where = next(r for r, c in _castellers(term).items() if c)
        term.type(f"move {where}\r")
        term.wait_for(r"your turn: move ✓")
        assert _region_of(term.lines(), "Anna") == where

        # `quit` asks first; no keeps the game going
        term.type("quit\r")
        term.wait_for(r"quit now\? \[y/N\]")
        assert "Your seat in \"Anna's game\" (seat 0) is kept: `castell play --resume` takes " \
            "it back." in term.text()
        term.type("n\r")
        term.wait_for(r"not quitting: the game goes on")
        assert term.child.isalive()

        # so does Ctrl-C, and a second Ctrl-C confirms
        term.type("\x03")
        term.wait_for(r"quit now\? \[y/N\]")
        assert term.child.isalive()
        term.type("\x03")
        term.child.expect(pexpect.EOF, timeout=10)
        assert "`castell play --resume` takes it back." in term.child.before
    finally:
        assert term.close() == 0

    # the game comes back where it was left: her pawn where she moved it, her turn on
    term = Terminal([*args, "--resume"], tmp_path)
    try:
        term.wait_for(r"Anna's game · round 1/10 · your turn: move ✓")
        assert _region_of(term.lines(), "Anna") == where
        term.type("\x04")  # Ctrl-D closes without asking, and still says how to come back
        term.child.expect(pexpect.EOF, timeout=10)
        assert "`castell play --resume` takes it back." in term.child.before
    finally:
        term.close()

    # without a flag it offers the unfinished game; `--new` starts another: what
    # `castell play` does on starting, by the client as it runs it (signed in, its seats kept
    # under its own name) in this process, against a server on the same games
    async def again() -> None:
        async with open_store(tmp_path / "data" / "castell" / "play.sqlite3") as store, \
                serving(store) as (_, url):
            async with _play_screen(url, tmp_path) as screen:
                starting = asyncio.create_task(screen.controller.start_play(2, "normal",
                                                                            "normal"))
                await until(lambda: screen._asking is not None)
                assert prompt(screen).startswith(
                    "resume your unfinished game \"Anna's game\" (seat 0)?")
                starting.cancel()  # (as Ctrl-D would: the question is not answered)
                with contextlib.suppress(asyncio.CancelledError):
                    await starting
            async with _play_screen(url, tmp_path) as screen:
                await screen.controller.start_play(2, "normal", "normal", "new")
                await until(lambda: my_turn(screen))
                lines = board(screen).split("\n")
                assert "Anna's game #2 · round 1/10 · your turn: move ·" in lines[0]
                assert _region_of(lines, "Anna") is None  # a new game: no pawn yet
                assert "resume" not in board(screen) + status_line(screen)

    assert (tmp_path / "data" / "castell" / "play.sqlite3").exists()
    asyncio.run(again())


def _play_screen(url: str, home: Path) -> AbstractAsyncContextManager[TerminalScreen]:
    """The full-screen client as ``castell play`` runs it for a home folder ``home`` (signed
    in with the key it keeps there)."""
    return full_screen(url, "Anna", home / "castell", keys=home / "castell", home=PLAY_HOME)


def test_a_seat_taken_under_localhost_is_offered_under_127_0_0_1(tmp_path, monkeypatch,
                                                                 capsys):
    with serving_in_thread() as url:
        port = int(url.rsplit(":", 1)[1])
        assert castell_here(monkeypatch, tmp_path, f"ws://localhost:{port}", "--name", "Anna",
                            stdin="create Friday night seats=2\nbot\nstart\nwait\nquit\n") == 0
        out = capsys.readouterr().out
        assert "Open rooms on ws://localhost" in out
        assert "Castell · Friday night · round 1/10" in out
        assert f"`castell ws://localhost:{port} --resume` takes it back." in out

        assert castell_here(monkeypatch, tmp_path, f"127.0.0.1:{port}/", "--name", "Anna",
                            stdin="\nlook\nquit\n") == 0
        out = capsys.readouterr().out
        assert "resume your game in 'Friday night' (seat 0)? [Y/n]" in out
        assert "back in 'Friday night', seat 0" in out
        assert "Castell · Friday night · round 1/10" in out.split("back in 'Friday night'")[1]
    # one entry for the seat, under one spelling of the address, in its normal form
    held = json.loads((tmp_path / "castell" / "seats.json").read_text())
    assert len(held) == 1 and set(held) <= {f"ws://localhost:{port}", f"ws://127.0.0.1:{port}"}
    assert len(next(iter(held.values()))) == 1


def test_ctrl_c_in_a_plain_game_on_a_terminal_asks_before_quitting(tmp_path):
    child = pexpect.spawn(sys.executable, ["-m", "client", "play", "--plain", "--seats", "2",
                                           "--bot-delay", "0", "--name", "Anna"],
                          cwd=str(ROOT), env=client_env(tmp_path), encoding="utf-8",
                          timeout=15)
    try:
        child.expect("Your turn")
        child.sendintr()
        child.expect(r"is kept: `castell play --resume` takes it back\.\s+quit now\? \[y/N\]")
        child.sendline("n")
        child.expect("not quitting: the game goes on")
        child.sendline("look")
        child.expect(r"round 1/10 · your turn")  # still playing
        child.sendintr()
        child.expect(r"quit now\? \[y/N\]")
        child.sendintr()  # a second Ctrl-C confirms
        child.expect(pexpect.EOF)
        assert "`castell play --resume` takes it back." in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
