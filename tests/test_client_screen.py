"""The full-screen terminal's own logic, without a terminal: what its status line says, how
tall its parts are, and how it cuts long notes — on a real Controller and Session, fed state
pushes as the session would receive them, drawn to prompt_toolkit's dummy output."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from client.control.controller import Controller
from client.local.seats import SeatStore
from client.net.session import RoomState, Session
from client.screens import app
from client.screens.app import STATUS_LINES, TerminalScreen
from shared import messages as m
from tests.support import sample_views as sv
from tests.support.screens import Sized, full_screen


@pytest.fixture
def screen() -> Iterator[TerminalScreen]:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(100, 40)):
        session = Session("ws://127.0.0.1:1", "Anna")
        yield TerminalScreen(Controller(session), color=False)


def push(screen: TerminalScreen, view: dict, version: int, seat: int | None = 0) -> None:
    """Hand ``view`` to the screen as the session does with a state push."""
    session = screen.controller.session
    session.room, session.seat = view["room"], seat
    state = RoomState.of(m.StatePush(room=view["room"], version=version, view=view, events=()))
    session.state = state
    screen.controller.on_state(state)


def status(screen: TerminalScreen) -> str:
    return "".join(text for _, text in screen._status())


def test_a_refusal_from_the_last_turn_goes_when_the_players_turn_begins(screen):
    view = sv.two_seat()  # Anna's turn
    push(screen, {**view, "turn": 1}, 1)
    assert "your turn" not in status(screen).lower()
    screen.error("it is Bru's turn, not yours")
    push(screen, {**view, "turn": 1, "done": ["move"]}, 2)  # Bru plays on: the refusal stays
    assert "it is Bru's turn, not yours" in status(screen)
    push(screen, {**view, "turn": 1, "round": 5}, 3)  # Bru again: still there to be read
    assert "it is Bru's turn, not yours" in status(screen)
    push(screen, view, 4)  # now it is Anna's turn: the stale refusal goes
    assert "not yours" not in status(screen)
    assert status(screen).startswith("Your turn")
    push(screen, {**view, "turn": 1, "round": 6}, 5)  # and "your turn" goes with her turn
    assert "your turn" not in status(screen).lower()


def test_a_spectator_is_told_so_on_the_status_line(screen):
    push(screen, sv.two_seat(), 1, seat=None)
    assert "watching" in status(screen)


def test_a_long_refusal_wraps_instead_of_being_cut(screen):
    assert screen._status_height() == 1
    long = ("levels 2, 3 and 4 have as many castellers as the level below them: that needs "
            "Balance rank 3 (each rank lets one level do it; you have rank 1)")
    screen.error(long)
    assert screen._status_height() == 2  # 100 columns
    rows = status(screen).split("\n")
    assert " ".join(rows) == f"✗ {long}"  # every word whole, on one row or the next
    assert all(len(row) <= 100 for row in rows)
    screen.error(long * 5)
    assert screen._status_height() == STATUS_LINES


def test_long_notes_are_cut_into_rows_and_every_row_is_counted(screen):
    screen.show(["you can:", "  train " + " | ".join(f"region move r{i}" for i in range(12)),
                 "performances in tar:", "  lp17 2 levels: mix (2 pts): last line"])
    rows = screen._note_lines()
    assert len(rows) > 4 and all(len(row) <= 100 for row in rows)
    assert rows[2].startswith("    ")  # a cut line goes on indented under its start
    assert screen._notes_rows() == len(rows)  # the pane is as tall as the rows it shows
    shown = "".join(text for _, text in screen._notes_text())
    assert "last line" in shown


def test_a_help_row_too_long_goes_on_under_its_description(screen):
    screen.show(["join ROOM   take a seat: ROOM is a number from the list, a room id or a "
                 "private code, which a friend gives you when their room is private"])
    first, second = screen._note_lines()
    assert first.startswith("join ROOM   take a seat")
    assert second.startswith(" " * 12) and second[12] != " "


async def test_an_answer_to_a_question_clears_its_last_complaint(screen):
    asked = asyncio.get_running_loop().create_future()
    screen._asking = ("seats, 2 to 4 [4]: ", asked)
    screen.error("`5`: a room has 2, 3 or 4 seats")
    screen.input.text = "3"
    screen._accept(screen.input)
    assert asked.result() == "3"
    assert "a room has" not in status(screen)


async def test_the_lobby_shows_a_new_room_without_typing_list(server, url, tmp_path):
    """The lobby's clock asks for the room list every ``lobby_refresh`` seconds; its seconds
    are driven here (:meth:`TerminalScreen.tick`), not waited for."""
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as screen, \
            full_screen(url, "Bru", tmp_path / "bru", guest=True) as other:
        bru = other.controller.session

        def listed() -> bool:
            return any("Friday night" in line for line in screen.controller.lobby_lines())

        await bru.create_room("Friday night", 3)
        assert not listed()
        assert screen.tick(screen.lobby_refresh - 1) is None  # not yet time to ask
        asked = screen.tick(screen.lobby_refresh)
        assert asked is not None
        await asked
        assert listed()
        screen.input.text = "join "  # a line being typed holds the list still
        await bru.leave()
        assert not any(r.name == "Friday night" for r in await bru.list_rooms())  # gone
        assert screen.tick(2 * screen.lobby_refresh) is None
        assert listed()
        screen.input.text = ""  # then the empty room goes from the list
        asked = screen.tick(3 * screen.lobby_refresh)
        assert asked is not None
        await asked
        assert not listed()


def test_a_lost_connection_counts_its_seconds_and_says_when_it_is_back(screen):
    screen.controller.on_connection("connection lost (1006) — reconnecting…")
    assert status(screen).strip() == "connection lost (1006) — reconnecting…"
    screen._conn_since -= 7  # as if it had been down for 7 seconds
    assert status(screen).strip() == "connection lost (1006) — reconnecting… (7 s)"
    screen.controller.on_connection(None)
    assert status(screen) == "connected again"


def test_the_room_line_offers_start_only_to_the_rooms_creator(screen):
    view = sv.waiting()
    push(screen, view, 1)
    assert "`bot`" in status(screen) and "`start`" not in status(screen)
    screen.controller.session.created = True
    assert "`start`" in status(screen)


def test_resume_completes_the_seats_held_on_this_server(tmp_path):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from client.local.seats import HeldSeat, SeatStore
    from client.screens.app import WordsCompleter

    seats = SeatStore(tmp_path)
    session = Session("ws://127.0.0.1:1", "Anna", seats=seats)
    seats.remember(HeldSeat("ws://127.0.0.1:1", "r1", "t" * 32, "Friday night", 2))
    completer = WordsCompleter(Controller(session))
    (only,) = completer.get_completions(Document("resume "), CompleteEvent())
    assert only.text == "1" and only.display_meta_text == "Friday night (seat 2)"


def test_the_log_pane_follows_the_game_and_goes_when_the_room_is_left(screen):
    view = sv.two_seat()
    push(screen, view, 1)
    screen.controller.refused("no region called `nowhere`")
    screen.show_log()
    assert screen.log_open and any("nowhere" in line for line in screen.notes)
    screen.controller.refused("`99` is not a casteller size")
    assert any("99" in line for line in screen.notes)  # a new line shows in the open pane
    screen.controller.session.room = None  # back in the lobby
    screen.controller.clear_log()
    screen.refresh()
    assert not screen.log_open and not screen.notes


async def test_a_client_whose_seat_another_took_back_says_so_and_closes(
        server, url, tmp_path, monkeypatch):
    """The whole screen runs (prompt_toolkit's application on a pipe): when another client of
    the same player takes the seat back, it says why and closes by itself — after a pause for
    reading, set to nothing here, so that the test waits for the closing and no timer."""
    monkeypatch.setattr(app, "SEAT_LOST_PAUSE", 0.0)
    state = tmp_path / "state"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(100, 40)):
        first = TerminalScreen(Controller(Session(url, "Anna", seats=SeatStore(state))),
                               color=False)
        await first.controller.session.open()

        async def startup() -> None:
            for line in ("create Friday night seats=2", "bot", "start"):
                await first.controller.handle(line)

        running = asyncio.create_task(first.run(startup))
        async with asyncio.timeout(10):
            while first.controller.mode != "game":
                await asyncio.sleep(0.01)
        # the same player starts another castell: it takes the seat back
        async with full_screen(url, "Anna", state) as second:
            await second.controller.start(resume=True)
            assert second.controller.mode == "game"
            async with asyncio.timeout(10):
                await running  # and the first closes by itself
        assert "seat was taken back" in status(first)
        assert first.controller.session.seat_lost
