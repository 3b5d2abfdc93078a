"""``castell learn`` walked to its end in a pseudo-terminal of 80x24, as a newcomer would: in
each lesson the try the rules refuse (the engine's words on the screen), then what the lesson
asks, then ``next``; at the end, the game over on the board, every lesson kept as done, and
the shell told so. (The lessons one by one,
leaving and coming back, and the first-run question: tests/test_learn.py, in process.)"""

from __future__ import annotations

import re

import pexpect
import pytest

from client.control.commands import action_to_command
from client.learn.lessons import LEARNER, LESSONS
from client.local.learning import LearnProgress
from shared.engine import apply
from shared.errors import RuleError
from tests.support.terminal import Terminal

pytestmark = pytest.mark.timeout(90)


def _refusal(index: int) -> str:
    """The first words of the engine's refusal of lesson ``index``'s mistake (what fits the
    first row of the status line)."""
    lesson = LESSONS[index]
    with pytest.raises(RuleError) as refused:
        apply(lesson.position("Anna"), LEARNER, lesson.mistake)
    return refused.value.message[:40]


def test_castell_learn_walked_to_its_end_at_80x24(tmp_path):
    term = Terminal(["learn", "--name", "Anna"], tmp_path, columns=80, rows=24)
    try:
        term.wait_for(rf"▶ {re.escape(LESSONS[0].ask[:30])}")  # what the lesson asks
        for index, lesson in enumerate(LESSONS):
            # (the lines typed are handled in order: this one, in the lesson `next` laid)
            term.type(action_to_command(lesson.mistake) + "\r")
            term.wait_for("✗ " + re.escape(_refusal(index)))
            for action in lesson.answer:
                term.type(action_to_command(action) + "\r")
            if index < len(LESSONS) - 1:
                term.type("next\r")  # (each lesson done: the progress file says so, below)
        term.wait_for(r"✓ Lesson 8 of 8 · Final scoring: done\.")
        assert "game over: Anna wins" in term.text()  # the game's end, on the board
        term.type("next\r")
        term.wait_for(r"That was the last lesson: you know the game now")
        assert " ✓ 8. Final scoring (§9)" in term.text()
        term.type("quit\r")
        term.child.expect(pexpect.EOF, timeout=10)
        assert "You did every lesson: `castell play` starts a game against bots." \
            in term.child.before
    finally:
        status = term.close()
    assert status == 0
    progress = LearnProgress(tmp_path / "castell")
    assert progress.done == [lesson.key for lesson in LESSONS]
