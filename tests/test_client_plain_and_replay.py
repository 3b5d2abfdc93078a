"""The real ``castell`` as a newcomer first meets it: ``--help``, ``castell play --plain``
through pipes, and the replay viewer in a pseudo-terminal at 80x24."""

from __future__ import annotations

import re
import subprocess
import sys

import pexpect
import pytest

from client.render import event_lines
from client.replay import steps_of
from tests.support.terminal import ROOT, Terminal, client_env
from tests.test_client_cli import _recorded_game

pytestmark = pytest.mark.timeout(60)


def _castell(*args: str, state, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-m", "client", *args], cwd=ROOT, input=stdin,
                          env=client_env(state), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_usage_names_every_way_in(tmp_path):
    out = _castell("--help", state=tmp_path)
    usage = out.split("\n\n")[0]
    assert usage.startswith("usage: castell [URL]")
    assert re.search(r"^ +castell play\b", usage, re.M)
    assert re.search(r"^ +castell replay FILE\b", usage, re.M)
    # and what it names works: each has its own help
    assert "--seats" in _castell("play", "--help", state=tmp_path)
    assert "FILE" in _castell("replay", "--help", state=tmp_path)


def test_castell_play_plain_starts_at_the_game_and_reads_as_typed(tmp_path):
    out = _castell("play", "--plain", "--seats", "2", "--bot-delay", "0", "--name", "Anna",
                   state=tmp_path, stdin="help build\nwait\nend turn\ny\nhelp\nquit\n")
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


def test_the_replay_keeps_a_log_scrolls_and_reads_cleanly_at_80x24(tmp_path):
    record = _recorded_game(5)
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    total = len(record.actions)
    term = Terminal(["replay", str(path)], tmp_path, columns=80, rows=24)
    try:
        term.wait_for(rf"step 0/{total} ")
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

