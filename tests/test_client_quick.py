"""The client's side of ratings and quick match, against a real server on a SQLite file
(ratings need a store): ``castell quick URL`` through the real ``castell`` in a pty with its
live waiting line, two players matched into one game, ``top`` and ``whois`` in the lobby; and
``create … rated`` by the real client in this process
(:func:`tests.support.screens.full_screen`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.store import open_store
from tests.support.screens import full_screen, status_line
from tests.support.servers import serving
from tests.support.terminal import Terminal, castell_server

pytestmark = pytest.mark.timeout(120)


def test_two_players_quick_match_from_the_shell_and_look_each_other_up(tmp_path: Path):
    with castell_server(db=str(tmp_path / "castell.sqlite3")) as (url, _):
        anna = Terminal(["quick", url, "--name", "Anna", "--seats", "2"], tmp_path / "anna")
        biel = None
        try:
            anna.wait_for(r"waiting: 1 of 2 found, \d+ s")
            anna.wait_for(r"waiting: 1 of 2 found, [1-9]\d* s")  # the line is live
            biel = Terminal([url, "--name", "Biel"], tmp_path / "biel")
            biel.wait_for(r"you are Biel")
            biel.type("whois Anna\r")
            biel.wait_for(r"Anna: rating 1500\? · not ranked yet · 0 rated games")
            biel.type("top\r")
            biel.wait_for(r"nobody is ranked yet")
            biel.type("quick 2,3\r")
            for player in (anna, biel):
                player.wait_for(r"matched! you sit in seat [01]")
                player.wait_for(r"round 1/10")
            anna.quit()
            biel.quit()
        finally:
            anna.close()
            if biel is not None:
                biel.close()


async def test_a_rated_room_from_the_lobby_shows_its_ratings(tmp_path: Path):
    async with open_store(tmp_path / "castell.sqlite3") as store, \
            serving(store) as (_, url), full_screen(url, "Anna", tmp_path / "anna") as anna:
        await anna.controller.start()
        assert anna.controller.session.account
        await anna.controller.handle("create Lliga seats=2 rated")
        assert any(line.startswith("Rated game (accounts only, no bots): Anna 1500")
                   for line in anna.controller.room_lines())
        await anna.controller.handle("bot")
        assert "no bot may sit in it" in status_line(anna)
