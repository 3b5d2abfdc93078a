"""Rooms as the real ``castell`` shows them, in pseudo-terminals against a real
``castell-server``: who is watching, a spectator's chat told apart from a player's, one name
per person in a room, and a full room pointing at `watch`."""

from __future__ import annotations

import pexpect
import pytest

from tests.support.terminal import Terminal, castell_server

pytestmark = pytest.mark.timeout(60)


def test_players_see_who_watches_and_a_spectator_s_chat_is_marked(tmp_path):
    with castell_server() as (url, _):
        # Guests: an account's name would be its own on the whole server (tests/test_accounts.py)
        anna = Terminal([url, "--name", "Anna", "--guest"], tmp_path / "anna")
        carme = Terminal([url, "--name", "Carme"], tmp_path / "carme")
        again = Terminal([url, "--name", "anna", "--guest"], tmp_path / "again")
        terms = [anna, carme, again]
        try:
            anna.wait_for(r"Open rooms on ws://")
            anna.type("create Friday night seats=2\r")
            anna.wait_for(r"Friday night · waiting for players 1/2")
            anna.type("bot\r")
            anna.wait_for(r"Every seat is taken")
            anna.type("start\r")
            anna.wait_for(r"round 1/10 · your turn")

            carme.wait_for(r"Open rooms on ws://")
            carme.type("list\r")
            carme.wait_for(r"1\. Friday night")
            # every seat is taken: a player is pointed at `watch`
            carme.type("watch 1\r")
            carme.wait_for(r"spectating|watching")
            anna.wait_for(r"watching: Carme")
            carme.type("chat bona sort!\r")
            anna.wait_for(r"Carme \(watching\): bona sort!")
            anna.type("chat gràcies\r")
            carme.wait_for(r"Anna: gràcies")
            assert "Anna (watching)" not in carme.text()

            # a second Anna, in another case, is not let in under that name
            again.wait_for(r"Open rooms on ws://")
            again.type("list\r")
            again.wait_for(r"1\. Friday night")
            again.type("watch 1\r")
            again.wait_for(r"already called 'anna': come back under another name")
            assert "watching: Carme" in anna.text() and "anna" not in anna.text().split(
                "watching: ")[1].splitlines()[0]

            carme.type("leave\r")
            carme.wait_for(r"Open rooms on ws://")
            for _ in range(50):
                anna.pump(0.1)
                if "watching: Carme" not in anna.text():
                    break
            assert "watching: Carme" not in anna.text()
            anna.type("quit\r")
            anna.wait_for(r"quit now\?")  # a game under way: asked once
            anna.type("y\r")
            anna.child.expect(pexpect.EOF, timeout=5)
        finally:
            for term in terms:
                term.close()


def test_join_on_a_full_waiting_room_suggests_watch(tmp_path):
    with castell_server() as (url, _):
        anna = Terminal([url, "--name", "Anna"], tmp_path / "anna")
        biel = Terminal([url, "--name", "Biel"], tmp_path / "biel")
        try:
            anna.wait_for(r"Open rooms on ws://")
            anna.type("create Friday night seats=2\r")
            anna.wait_for(r"Friday night · waiting for players 1/2")
            anna.type("bot\r")
            anna.wait_for(r"Every seat is taken")
            biel.wait_for(r"Open rooms on ws://")
            biel.type("list\r")
            biel.wait_for(r"1\. Friday night")
            biel.type("join 1\r")
            biel.wait_for(r"every seat of that room is taken: `watch 1` follows its game")
            biel.type("watch 1\r")
            anna.wait_for(r"watching: Biel")
        finally:
            anna.close()
            biel.close()
