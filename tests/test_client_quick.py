"""The client's side of ratings and quick match, against a real server on a SQLite file
(ratings need a store): ``castell quick URL`` from the shell through the real ``castell`` in a
pty with its live waiting line, matched with a player who looked it up with ``whois`` and
``top`` in the lobby; and ``create … rated``: those players are the real client in this
process (:func:`tests.support.screens.full_screen`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from server.store import open_store
from tests.support.screens import board, enter, full_screen, shown, status_line, until
from tests.support.servers import serving
from tests.support.terminal import Terminal

pytestmark = pytest.mark.timeout(120)


async def test_two_players_quick_match_from_the_shell_and_look_each_other_up(tmp_path: Path):
    async with open_store(tmp_path / "castell.sqlite3") as store, serving(store) as (_, url):
        anna = Terminal(["quick", url, "--name", "Anna", "--seats", "2"], tmp_path / "anna")
        try:
            await asyncio.to_thread(anna.wait_for, r"waiting: 1 of 2 found, \d+ s")
            async with full_screen(url, "Biel", tmp_path / "biel") as biel:
                await biel.controller.start()
                assert "you are Biel" in shown(biel)
                await enter(biel, "whois Anna")
                assert "Anna: rating 1500? · not ranked yet · 0 rated games" in shown(biel)
                await enter(biel, "top")
                assert "nobody is ranked yet" in shown(biel)
                # the line is live (while Biel looked Anna up, its seconds went on)
                await asyncio.to_thread(anna.wait_for, r"waiting: 1 of 2 found, [1-9]\d* s")
                await enter(biel, "quick 2,3")
                await asyncio.to_thread(anna.wait_for, r"matched! you sit in seat [01]")
                await asyncio.to_thread(anna.wait_for, r"round 1/10")
                await until(lambda: re.search(r"matched! you sit in seat [01]",
                                              status_line(biel)))
                await until(lambda: "round 1/10" in board(biel))
            await asyncio.to_thread(anna.quit)
        finally:
            anna.close()


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
