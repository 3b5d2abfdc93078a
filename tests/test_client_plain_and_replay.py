"""The real ``castell`` as a newcomer first meets it: ``--help``, ``castell play --plain``, the
games ``castell play`` keeps, listed and exported, and the replay viewer in a pseudo-terminal at
80x24. The games are played by ``castell play`` processes through pipes; the other commands run
in this process (:func:`tests.support.terminal.castell_here`), and what plain ``castell play``
reads and says on the plain client in this process (:func:`tests.support.screens.plain`)."""

from __future__ import annotations

import re
import subprocess
import sys

import pexpect
import pytest

from client.modes.replay import steps_of
from client.screens.render import event_lines
from tests.support.screens import plain
from tests.support.terminal import ROOT, Terminal, castell_here, client_env
from tests.test_client_cli import _recorded_game

pytestmark = pytest.mark.timeout(60)


def _castell(*args: str, state, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-m", "client", *args], cwd=ROOT, input=stdin,
                          env=client_env(state), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_usage_names_every_way_in(tmp_path, monkeypatch, capsys):
    def usage(*args: str) -> str:
        with pytest.raises(SystemExit) as done:
            castell_here(monkeypatch, tmp_path, *args, "--help")
        assert done.value.code == 0
        return capsys.readouterr().out

    usage_ = usage().split("\n\n")[0]
    assert usage_.startswith("usage: castell [URL]")
    assert re.search(r"^ +castell play\b", usage_, re.M)
    assert re.search(r"^ +castell replay FILE\b", usage_, re.M)
    # and what it names works: each has its own help
    assert "--seats" in usage("play")
    assert "FILE" in usage("replay")


async def test_castell_play_plain_starts_at_the_game_and_reads_as_typed(server, url, tmp_path):
    out = await plain(url, "Anna", tmp_path, "help build\nwait\nend turn\ny\nhelp\nquit\n",
                      guest=True, startup=lambda ctrl: ctrl.start_play(2, "normal", "normal"))
    # a game against bots: no room to fill, no friends to invite
    assert "Friends join" not in out and "join r" not in out and "waiting for" not in out
    first = out.splitlines()[0]
    assert re.match(r"Castell · Anna's game · round 1/10 · ", first), first
    assert "the game starts" in out
    # `help build` is about build, without the plain mode's own lines
    topic = out.split("> help build\n")[1].split("\n> ")[0]
    assert topic.startswith("build SIZES") and "look " not in topic and "wait " not in topic
    # `end turn` ends the turn like `end` (asking first, as `end` does, with moves left)
    after = out.split("> end turn\n")[1].split("> help\n")[0]
    assert "takes no arguments" not in after and "Anna ended the turn" in after
    # a bare `help` still lists them
    assert "look       print the whole board again" in out.split("> help\n")[1]


def test_the_replay_steps_with_keys_keeps_a_log_scrolls_and_reads_cleanly_at_80x24(tmp_path):
    record = _recorded_game(5)
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    total = len(record.actions)
    term = Terminal(["replay", str(path)], tmp_path, columns=80, rows=24)
    try:
        term.wait_for(rf"step 0/{total} ")
        term.type("nnn")  # n: the next step
        term.wait_for(rf"step 3/{total} ")
        term.type("p")  # p: the one before
        term.wait_for(rf"step 2/{total} ")
        term.type("\x1b[F")  # End: the final scores come first, the board below them
        term.wait_for(rf"step {total}/{total} · ↑/↓ scroll \(\d+ more\)")
        assert "Final score" in term.text() and "Local performances" not in term.text()
        assert "· ·" not in term.text()
        term.type("\x1b[B" * 60)  # ↓ down to the bottom: the board, then the log
        term.wait_for(rf"step {total}/{total} · ↑/↓ scroll ·")
        text = term.text()
        assert "Local performances" in text and "Game over:" in text
        # the log holds the steps before the last one too, not only its own events
        steps = steps_of(record)
        own = set(event_lines(steps[-1].view, steps[-1].events))
        earlier = [line for step in steps[-4:-1] for line in event_lines(step.view, step.events)
                   if line not in own]
        assert earlier and all(line in text for line in earlier), (earlier, text)
        assert "ended the turn" in text
        term.type("\x1b[A" * 60)  # ↑ back to the top
        term.wait_for(r"Final score")
        term.type("q")
        term.child.expect(pexpect.EOF, timeout=5)
    finally:
        status = term.close()
    assert status == 0



def test_castell_play_games_are_listed_and_exported_for_the_replay(tmp_path, monkeypatch,
                                                                  capsys):
    def castell(*args: str, code: int = 0) -> str:
        """``castell ARGS`` on this home, run in this process: what it said (its errors when
        it fails)."""
        assert castell_here(monkeypatch, tmp_path, *args) == code
        out, err = capsys.readouterr()
        return out if code == 0 else err

    assert "No game is kept yet" in castell("play", "--games")
    assert "no finished game is kept yet" in castell("play", "--export", code=1)
    # a whole game against a bot, the player ending each turn: castell play, as a process
    typed = "wait\nend!\n" * 12 + "quit\n"
    out = _castell("play", "--plain", "--seats", "2", "--bot-delay", "0", "--name", "Anna",
                   state=tmp_path, stdin=typed)
    assert "Game over: " in out
    said = re.search(r"this game is kept: `castell play --export (r[0-9a-f]+)` writes it to a "
                     r"file for `castell replay`", out)
    assert said, out[-2000:]
    room = said.group(1)
    # an unfinished one beside it: started, then left
    _castell("play", "--plain", "--new", "--seats", "3", "--bot-delay", "0", "--name", "Anna",
             state=tmp_path, stdin="quit\ny\n")

    listed = castell("play", "--games").splitlines()
    games = [line for line in listed if line.startswith("  r")]
    assert len(games) == 2, listed
    assert re.match(r"  r[0-9a-f]+  \d{4}-\d\d-\d\d \d\d:\d\d  unfinished, \d+ actions? in: "
                    r"Anna · \S+ · \S+$", games[0]), games[0]  # the newest first
    assert re.match(rf"  {room}  \d{{4}}-\d\d-\d\d \d\d:\d\d  over: Anna \d+( \(won\))? · "
                    r"\S+ \d+( \(won\))?$", games[1]), games[1]
    assert "(won)" in games[1]

    # --export with no room: the latest finished game, in the working folder
    exported = castell("play", "--export", "--output", str(tmp_path / "g.json"))
    assert exported.startswith(f"wrote {tmp_path / 'g.json'}: `castell replay ")
    replayed = castell("replay", "--plain", str(tmp_path / "g.json"))
    assert "Game over: " in replayed and "Anna ended the turn" in replayed
    # never over an existing file; an unknown room is said as such
    assert "exists already" in castell("play", "--export", room, "--output",
                                       str(tmp_path / "g.json"), code=1)
    assert "no kept game is called 'rnope'" in castell("play", "--export", "rnope", code=1)
    # the unfinished one exports when named, and says what its record gives away
    unfinished = games[0].split()[0]
    out = castell("play", "--export", unfinished, "--output", str(tmp_path / "u.json"))
    assert "not over yet" in out
