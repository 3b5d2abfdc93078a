"""The client's tournament commands: parsed by value, and played through the real
full-screen client in this process against a real in-process server
(:mod:`tests.support.capture_tournament`, which also makes docs/screens/tournament-80x24.txt):
created, joined and started from the lobby, each round's ``tournament_table`` push ringing
the bell and seating the player as a quick match's ``matched`` does, ``tournament N`` showing
the standings and the round's tables, and ``tournament_ended`` said."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.control.commands import CommandError, Lookup, parse
from client.control.lobby import (
    TournamentAct,
    TournamentList,
    TournamentNew,
    TournamentShow,
    TournamentTable,
    parse_lobby,
)
from tests.support.capture_tournament import scenario

pytestmark = pytest.mark.timeout(120)


def test_tournament_lines_parse() -> None:
    assert parse_lobby("tournaments") == TournamentList()
    assert parse_lobby("tournament") == TournamentList()
    assert parse_lobby("tournament 2") == TournamentShow("2")
    assert parse_lobby("tournament t3f9a01c2") == TournamentShow("t3f9a01c2")
    assert parse_lobby("tournament create Spring cup rounds=4 seats=3 timer=2m rated "
                       "starts=10m") == TournamentNew("Spring cup", 4, 3, 120, True, 600)
    assert parse_lobby("tournament create Cup") == TournamentNew("Cup", 3, 2, 300)
    assert parse_lobby("tournament join 1") == TournamentAct("join", "1")
    assert parse_lobby("tournament start t1") == TournamentAct("start", "t1")
    assert parse_lobby("tournament table") == TournamentTable()
    for bad, said in [("tournament create Cup timer=none", "need a turn timer"),
                      ("tournament create rounds=3", "a name first"),
                      ("tournament create Cup rounds=30", "1 to 20 rounds"),
                      ("tournament create Cup starts=9d", "7 days"),
                      ("tournament join", "one tournament"),
                      ("tournaments 3", "takes nothing")]:
        with pytest.raises(CommandError, match=said):
            parse_lobby(bad)
    # from a game, the lobby's parser reads them (as `top` and `whois`)
    assert parse("tournament 1") == Lookup("tournament 1")


async def test_a_tournament_played_through_the_full_screen_client(tmp_path: Path) -> None:
    got = await scenario(tmp_path / "anna", 80, 24)
    (listed, in_game, over) = (text for _, text in got.screens)
    assert f"1. Spring cup — open · 2 rounds · 2 seats · 4 players · id {got.tournament}" \
        in listed
    # round 2 under way: Anna sits at her table (taken from her finished round-1 game by
    # the push), the table beside hers is over; three pushes rang: two tables, the end
    assert "Spring cup r2 t1" in in_game and "Anna – Carme · playing" in in_game
    assert "Biel – Dani · Dani 1st, Biel 2nd" in in_game
    assert f"Spring cup (id {got.tournament}) · finished after 2 rounds" in over
    table = over.split("rank player", 1)[1].splitlines()[1:5]
    standings = [line.split()[:3] for line in table]
    assert standings == [["1", "Anna", "2"], ["2", "Carme", "1"], ["3", "Dani", "1"],
                         ["4", "Biel", "0"]]
    assert got.pushes == [("TournamentTablePush", 1), ("TournamentTablePush", 1),
                          ("TournamentEndedPush", 1)]
