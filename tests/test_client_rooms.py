"""Rooms as the real client shows them against a real server: who is watching, a spectator's
chat told apart from a player's, one name per person in a room, and a full room pointing at
`watch`. The client's logic is the subject: the real Controller, Session and TerminalScreen
in this process over real websockets (:func:`tests.support.screens.full_screen`); the pty
tests of tests/test_client_cli.py cover the terminal itself."""

from __future__ import annotations

import asyncio

import pytest

from shared.view import RoomStatus
from tests.support.screens import full_screen, status_line, until

pytestmark = pytest.mark.timeout(60)


def board(screen) -> str:
    """The board as drawn (drawn again only when something changed)."""
    return "".join(text for _, text in screen._board())


def every_seat_taken(screen) -> bool:
    return any("Every seat is taken" in line for line in screen.controller.room_lines())


async def test_players_see_who_watches_and_a_spectator_s_chat_is_marked(server, url, tmp_path):
    # Guests: an account's name would be its own on the whole server (tests/test_accounts.py)
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna, \
            full_screen(url, "Carme", tmp_path / "carme") as carme, \
            full_screen(url, "anna", tmp_path / "again", guest=True) as again:
        await anna.controller.handle("create Friday night seats=2")
        assert "Friday night · waiting for players 1/2" in board(anna)
        await anna.controller.handle("bot")
        await until(lambda: every_seat_taken(anna))
        await anna.controller.handle("start")
        await until(lambda: "round 1/10 · your turn" in board(anna))

        await carme.controller.handle("list")
        assert any("1. Friday night" in line for line in carme.controller.lobby_lines())
        # every seat is taken: a player is pointed at `watch`
        await carme.controller.handle("watch 1")
        assert "spectating" in board(carme)
        await until(lambda: "watching: Carme" in board(anna))
        await carme.controller.handle("chat bona sort!")
        await until(lambda: "Carme (watching): bona sort!" in board(anna))
        await anna.controller.handle("chat gràcies")
        await until(lambda: "Anna: gràcies" in board(carme))
        assert "Anna (watching)" not in board(carme)

        # a second Anna, in another case, is not let in under that name
        await again.controller.handle("list")
        await again.controller.handle("watch 1")
        assert "already called 'anna': come back under another name" in status_line(again)
        assert again.controller.session.room is None
        watching = board(anna).split("watching: ")[1].splitlines()[0]
        assert "Carme" in watching and "anna" not in watching

        await carme.controller.handle("leave")
        assert carme.controller.mode == "lobby"
        await until(lambda: "watching: Carme" not in board(anna))
        assert anna.controller.view.status == RoomStatus.PLAYING


async def test_join_on_a_full_waiting_room_suggests_watch(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna") as anna, \
            full_screen(url, "Biel", tmp_path / "biel") as biel:
        await anna.controller.handle("create Friday night seats=2")
        await anna.controller.handle("bot")
        await until(lambda: every_seat_taken(anna))
        await biel.controller.handle("list")
        assert any("1. Friday night" in line for line in biel.controller.lobby_lines())
        await biel.controller.handle("join 1")
        assert "every seat of that room is taken: `watch 1` follows its game" \
            in status_line(biel)
        await biel.controller.handle("watch 1")
        await until(lambda: "watching: Biel" in board(anna))


async def test_a_question_about_a_turn_is_not_answered_into_a_room_the_host_closed(
        server, url, tmp_path):
    """Anna types `end` with actions left and is asked whether to end anyway; while the
    question stands the host closes the room. Her `y` then sends nothing (she is in the
    lobby), and she reads why, not a refusal that she is watching."""
    from server.ops.admin import AdminConsole

    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna:
        await anna.controller.handle("create Friday night seats=2")
        await anna.controller.handle("bot")
        await until(lambda: every_seat_taken(anna))
        await anna.controller.handle("start")
        await until(lambda: "your turn" in board(anna))
        room = anna.controller.session.room
        asking = asyncio.get_running_loop().create_task(anna.controller.handle("end"))
        await until(lambda: anna._asking is not None)
        await AdminConsole(server, "unused").cmd_close(room, "bye")
        await until(lambda: anna.controller.session.room is None)
        question = anna._asking
        assert question is not None
        question[1].set_result("y")
        await asking
        assert "no longer yours to end" in status_line(anna)
        assert "watching" not in status_line(anna)
