"""The flows of tests/test_client_flows.py where the terminal itself is the subject: the real
``castell play`` in a pseudo-terminal of 80x24 (the smallest the board is drawn on), its
screen kept by a terminal emulator. Esc at the question that offers a kept game starts
nothing and says what happened; `score` shows the score by category; `resign` asks, and the
final table ranks the resigner last."""

from __future__ import annotations

import re

import pexpect
import pytest

from tests.support.terminal import Terminal

pytestmark = pytest.mark.timeout(90)

ESC = "\x1b"
PLAY = ["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"]


def test_esc_at_the_resume_question_starts_nothing_and_says_so(tmp_path):
    term = Terminal(PLAY, tmp_path, columns=80, rows=24)
    try:
        term.wait_for(r"Anna's game · round 1/10 · your turn")
        term.type("\x04")  # Ctrl-D: closed without asking, the game kept
        term.child.expect(pexpect.EOF, timeout=10)
    finally:
        term.close()

    term = Terminal(PLAY, tmp_path, columns=80, rows=24)
    try:
        term.wait_for(r"resume your unfinished game \"Anna's game\" \(seat 0\)\?")
        asking = " ".join(term.text().split())
        # Which game: its round, its players (the bot's level in its name), its start.
        assert re.search(r"round 1/10 · Anna, \S+·normal · started \d{4}-\d\d-\d\d", asking), \
            term.text()
        assert "Esc goes to the lobby (nothing starts)" in asking
        term.type(ESC)
        term.wait_for(r"Nothing started: `games` lists the games kept here")
        text = term.text()
        lines = term.lines()
        assert lines[0].startswith("CASTELL · lobby"), text  # no game on the screen
        assert "Open rooms on this computer" in text
        # Nothing was made: one room, the game kept, the one offered.
        assert len(re.findall(r"\d\. Anna's game — \d/\d seats", text)) == 1, text
        assert len(re.findall(r"\d\. Anna's game — Anna, ", text)) == 1, text
        assert "invite your friends" not in text
        term.type("quit\r")
        term.child.expect(pexpect.EOF, timeout=10)
    finally:
        status = term.close()
    assert status == 0


def test_score_then_resign_in_an_80_by_24_terminal(tmp_path):
    term = Terminal(PLAY, tmp_path, columns=80, rows=24)
    try:
        term.wait_for(r"Anna's game · round 1/10 · your turn")
        term.type("score\r")
        term.wait_for(r"Score now, round 1/10")
        assert re.search(r"player +tower +diversity +prizes +sizes +performances +total",
                         term.text()), term.text()
        assert re.search(r"Anna \(you\) +0 +0 +0 +0 +0 +0", term.text())
        term.type(ESC)

        term.type("resign\r")
        term.wait_for(r"resign this game\? \[y/N\]")
        assert "wins at once" in term.text() and "you rank last" in term.text()
        term.type("y\r")
        term.wait_for(r"Final score")
        term.wait_for(r"you resigned: \S+ wins at once")
        rows = [line for line in term.lines()
                if re.search(r"(Anna|·normal)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+", line)]
        assert len(rows) == 2, term.text()
        # The winner first, the resigner last, marked.
        assert "★ winner" in rows[0] and "·normal" in rows[0]
        assert "Anna" in rows[1] and "resigned" in rows[1]
        assert "`rematch` plays it again" in term.text()
        term.type("quit\r")  # the game is over: nothing to keep, no question
        term.child.expect(pexpect.EOF, timeout=10)
    finally:
        status = term.close()
    assert status == 0
