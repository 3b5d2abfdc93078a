"""The client's challenges (client/control: ``challenge``, ``accept``, ``decline``), two real
clients in this process at 80x24 (:func:`tests.support.screens.full_screen`) against a real
server: the challenge rings the challenged player's bell and says how to answer it; an
accepted one seats both players, and a bot, in the started game; a declined one is said to
the challenger."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from client.control import lobby as lb
from client.control.commands import CommandError
from tests.support.screens import board, enter, full_screen, status_line, until
from tests.support.servers import serving

pytestmark = pytest.mark.timeout(60)


def test_the_challenge_commands_parse():
    assert lb.parse_lobby("challenge Anna Biel seats=4 timer=90 advanced") == \
        lb.Challenge(("Anna", "Biel"), 4, "advanced", 90)
    assert lb.parse_lobby("challenge cancel") == lb.AnswerChallenge("cancel")
    assert lb.parse_lobby("accept c12") == lb.AnswerChallenge("accept", "c12")
    assert lb.parse_lobby("decline") == lb.AnswerChallenge("decline")
    for bad in ("challenge", "challenge A B C D", "challenge Anna foo=1", "accept a b"):
        with pytest.raises(CommandError):
            lb.parse_lobby(bad)


async def test_a_challenge_accepted_and_one_declined_through_the_full_screen(tmp_path: Path):
    async with serving() as (_, url), \
            full_screen(url, "Anna", tmp_path / "anna", columns=80, rows=24) as anna, \
            full_screen(url, "Biel", tmp_path / "biel", columns=80, rows=24) as biel:
        await anna.controller.start()
        await biel.controller.start()
        bells = biel.app.output.bells  # type: ignore[attr-defined]
        await enter(anna, "challenge Biel")
        assert "challenge sent to Biel" in status_line(anna)
        await until(lambda: "Anna challenges you to a 2-seat game" in status_line(biel))
        assert biel.app.output.bells == bells + 1  # type: ignore[attr-defined]
        await enter(biel, "decline")
        await until(lambda: "your challenge to Biel was declined by Biel" in status_line(anna))

        await enter(anna, "challenge Biel seats=3 timer=120")
        await until(lambda: "a 3-seat game (120 s a turn)" in status_line(biel))
        await enter(biel, "accept")
        for screen in (anna, biel):
            await until(lambda s=screen: re.search(r"matched! you sit in seat [01]",
                                                   status_line(s)))
            await until(lambda s=screen: "R1/10" in board(s))
        view = anna.controller.view
        assert view is not None and [p.name for p in view.players[:2]] == ["Anna", "Biel"]
        assert view.players[2].bot is not None
