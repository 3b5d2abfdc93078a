"""The flows a player meets around a game, through the real client in this process (its
Controller, Session and TerminalScreen over real websockets to a real server:
:func:`tests.support.screens.full_screen`): the question that offers a kept game says which
one, and Esc starts nothing; seats of games over, closed or gone are not offered; a kept
game can be abandoned; resigning, `score` and the final table in rank order; rematch, `top`
and `whois` from a finished game; and the lobby of ``castell play``'s own games. The
terminal itself (Esc, and resigning and `score` at 80x24) is the subject of
tests/test_client_flows_terminal.py."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from typing import Any

import pytest

from client.local.seats import HeldSeat, SeatStore
from client.net.net import GameClient
from server.ops.admin import AdminConsole
from shared import messages as m
from shared.actions import EndTurn
from shared.view import RoomStatus
from tests.support.screens import full_screen, notes_pane, status_line, until

pytestmark = pytest.mark.timeout(60)


def board(screen: Any) -> str:
    """The board as drawn."""
    return "".join(text for _, text in screen._board())


async def asked(screen: Any, work: Awaitable[Any], question: str,
                answer: str | None) -> tuple[str, str]:
    """Run ``work`` until the screen asks ``question`` (a part of it); answer ``answer``
    (None: Esc) and let it finish. The question, and what the notes said while it stood
    (their lines joined)."""
    task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
    await until(lambda: screen._asking is not None or task.done())
    assert screen._asking is not None, f"nothing was asked ({status_line(screen)})"
    said, shown = screen._asking[0], " ".join(" ".join(screen.notes).split())
    assert question in said, said
    screen._asking[1].set_result(answer)
    await task
    return said, shown


async def a_game_against_bots(screen: Any, seats: int, level: str = "random") -> str:
    """``castell play``'s new game (no question), then back to the lobby; its room id."""
    ctrl = screen.controller
    await ctrl.start_play(seats, "normal", level, "new")
    await until(lambda: ctrl.view is not None and ctrl.view.status == RoomStatus.PLAYING)
    room = ctrl.session.room
    await ctrl.handle("leave")
    assert ctrl.mode == "lobby"
    return room


# -- the kept game's question, and Esc -----------------------------------------------------------


async def test_the_play_question_says_which_game_and_esc_starts_nothing(server, url, tmp_path):
    home = tmp_path / "anna"
    async with full_screen(url, "Anna", home) as first:
        older = await a_game_against_bots(first, 3, "easy")
        latest = await a_game_against_bots(first, 2, "random")
    async with full_screen(url, "Anna", home) as again:
        ctrl = again.controller
        question, shown = await asked(again, ctrl.start_play(4, "normal", "normal"),
                                      "resume your unfinished game", None)
        # The question says which game: its round, its players (the bots' levels in their
        # names), when it started, and that another is kept.
        assert "\"Anna's game #2\" (seat 0)? [Y/n]" in question
        assert re.search(r"round 1/10 · Anna, \w+·random · started \d{4}-\d\d-\d\d \d\d:\d\d",
                         shown), shown
        assert "(1 more kept: Esc, then `games`.)" in shown
        assert "Esc goes to the lobby (nothing starts)" in shown
        # Esc: nothing started, the lobby of this computer's games says what to do.
        assert ctrl.mode == "lobby" and ctrl.session.room is None
        assert "Nothing started: `games` lists the games kept here" in notes_pane(again)
        await ctrl.handle("games")
        listed = notes_pane(again)
        assert listed.count("Anna's game") == 2, listed  # no third game was made
        assert latest in listed and older in listed
        # `n` is still a new game, as the question says.
        await asked(again, ctrl.start_play(2, "normal", "random"), "resume", "n")
        assert ctrl.session.room not in (older, latest) and ctrl.mode == "game"


async def test_seats_of_games_over_closed_or_gone_are_not_offered(server, url, tmp_path):
    made = []
    async with await GameClient.connect(url) as bea:
        await bea.hello("Bea")
        for _ in range(2):
            reply = await bea.request(m.CreateRoom, name="Over", seats=2)
            await bea.request(m.AddBot, level="random")
            await bea.request(m.StartGame)
            made.append(reply.room)
            if len(made) == 1:
                await bea.request(m.ResignRequest)  # over: Bea resigned, the bot won
            await bea.request(m.LeaveRoom)
    over, closed = made
    await AdminConsole(server, "unused").cmd_close(closed, "tidying up")
    home = tmp_path / "anna"
    seats = SeatStore(home)
    for room, private in ((over, False), (closed, False), ("r0000gone", False),
                          ("r0000old", None)):  # (None: a seat kept before privacy was)
        seats.remember(HeldSeat(url, room, "token-" + room, f"Game {room}", 1, "Anna",
                                private))
    async with full_screen(url, "Anna", home, guest=True) as anna:
        ctrl = anna.controller
        # Only the room the server cannot say anything of is offered; the others are
        # forgotten, each said in a line.
        question, _ = await asked(anna, ctrl.start(), "resume your game", None)
        assert "'Game r0000old' (seat 1)? [Y/n]" in question
        assert "not resumed" in status_line(anna)
        assert ctrl.session.room is None
    assert [h.room for h in seats.held(url)] == ["r0000old"]


# -- abandon, and the lobby of castell play ------------------------------------------------------


async def test_castell_play_s_lobby_lists_replays_abandons_and_watches_its_own_games(
        server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna") as anna:
        ctrl = anna.controller
        room = await a_game_against_bots(anna, 3)
        lobby = "\n".join(ctrl.lobby_lines())
        assert "invite your friends" not in lobby
        assert "`new` game against bots" in lobby and "on this computer" in lobby
        if anna.message is not None and "your turn in" in anna.message[1]:
            # The bots reached Anna's turn again after she left, and the status line says
            # so (a word that stays until the next one): the lobby's hint is under it.
            anna.message = None
        assert "`new`" in status_line(anna)

        # `abandon 1` asks, then resigns the game: only bots were left, so it is over.
        _, shown = await asked(anna, ctrl.handle("abandon 1"), "abandon \"Anna's game\"?",
                               "y")
        assert "resigns it: you rank last" in shown
        assert "you resigned \"Anna's game\"" in status_line(anna)
        assert ctrl.mode == "lobby"
        await ctrl.handle("games")
        assert re.search(r"1\. Anna's game — .* finished · you resigned", notes_pane(anna))
        assert ctrl.session.held_seats() == []  # never offered again
        # `replay 1` steps through it, the resignation where it happened (its last step).
        await ctrl.handle("replay 1")
        assert anna.replay is not None
        anna.replay_go(to=anna.replay.total)
        assert "Anna resigned" in anna.replay.step_line(200)
        anna.close_replay()

        # `watch N` of one's own finished game takes one's seat: the final table.
        await ctrl.handle("list")
        number = next(i for i, r in enumerate(ctrl.rooms, 1) if r.room == room)
        await ctrl.handle(f"watch {number}")
        assert "it is your game" in status_line(anna), status_line(anna)
        assert ctrl.me == 0 and ctrl.view is not None
        assert ctrl.view.status == RoomStatus.FINISHED
        assert "Final score" in board(anna)

        # `new` starts a game against bots, as castell play set it up.
        await ctrl.handle("leave")
        await ctrl.handle("new")
        assert ctrl.mode == "game" and ctrl.session.room != room
        assert len(ctrl.view.players) == 3


# -- resigning, the score, the final table --------------------------------------------------------


async def test_resigning_a_two_player_game_ends_it_and_the_table_ranks_the_resigner_last(
        server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna:
        ctrl = anna.controller
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot random")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        await until(lambda: ctrl.view.status == RoomStatus.PLAYING)

        await ctrl.handle("score")
        scored = notes_pane(anna)
        assert "Score now, round 1/10" in scored
        assert re.search(r"player +tower +diversity +prizes +sizes +performances +total",
                         scored)
        assert "Anna (you)" in scored

        # Asked first; no keeps the game going.
        _, shown = await asked(anna, ctrl.handle("resign"), "resign this game? [y/N]", "n")
        assert "wins at once" in shown and "you rank last" in shown
        assert "not resigned" in status_line(anna)
        assert ctrl.view.status == RoomStatus.PLAYING

        await asked(anna, ctrl.handle("resign"), "resign this game?", "y")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)
        bot = ctrl.view.players[1].name
        shown_board = board(anna)
        table = shown_board[shown_board.index("Final score"):]
        # The winner first, the resigner last, whatever the seats' order.
        assert table.index(bot) < table.index("Anna"), table
        assert re.search(r"Anna .*resigned", table)
        assert f"{bot} wins" in shown_board or "Game over" in shown_board
        assert ctrl.session.held_seats() == []
        assert "`rematch` plays it again" in status_line(anna)


async def test_a_resigned_seat_is_played_by_a_bot_and_its_player_acts_no_more(
        server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna, \
            full_screen(url, "Biel", tmp_path / "biel", guest=True) as biel:
        await anna.controller.handle("create Friday night seats=3")
        await biel.controller.handle("list")
        await biel.controller.handle("join 1")
        await anna.controller.handle("bot random")
        await until(lambda: anna.controller.view is not None
                    and len(anna.controller.view.players) == 3)
        await anna.controller.handle("start")
        ctrl = biel.controller
        await until(lambda: ctrl.view is not None and ctrl.view.status == RoomStatus.PLAYING)
        assert ctrl.me == 1 and len(ctrl.session.held_seats()) == 1

        _, shown = await asked(biel, ctrl.handle("resign"), "resign this game?", "y")
        assert "a bot playing your seat to the end" in shown
        await until(lambda: 1 in (ctrl.view.resigned or ()))
        assert "you resigned: the game goes on" in status_line(biel)
        biel.message = None  # (the news read, the status line says where the player stands)
        assert "You resigned: your seat is played to the end" in status_line(biel)
        assert ctrl.session.held_seats() == []  # nothing to resume
        assert ctrl.kept_seat() is None  # quitting asks nothing
        await ctrl.handle("end")
        assert "you resigned this game" in status_line(biel)
        await until(lambda: "Biel resigned" in board(anna))
        assert "Biel (resigned)" in board(anna)

        # The game goes on: when seat 1's turn comes, it is played without Biel.
        alice = anna.controller
        rounds = alice.view.round
        while alice.view.round < rounds + 2:
            await until(lambda: alice.view.turn == 0, timeout=15)
            await alice.act(EndTurn())
        assert alice.view.status == RoomStatus.PLAYING and 1 not in (alice.view.winners or ())


# -- a finished game: rematch, top, whois ---------------------------------------------------------


async def test_a_finished_game_says_rematch_and_takes_top_and_whois(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna") as anna:
        ctrl = anna.controller
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot random")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        for _ in range(12):  # one `end!` a round: the bot (no delay) plays the rest
            await until(lambda: ctrl.view.status == RoomStatus.FINISHED or ctrl.view.turn == 0)
            if ctrl.view.status == RoomStatus.FINISHED:
                break
            await ctrl.handle("end!")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)

        # The game-over screen says what comes next, rematch first.
        assert "The game is over. `rematch` plays it again with the same players" \
            in status_line(anna)
        await ctrl.handle("help")
        helped = notes_pane(anna)
        assert "The game is over. `rematch` plays it again" in helped
        assert re.search(r"^rematch +after the game: play again", helped, re.M)
        await ctrl.handle("help rematch")
        assert "A new room with the same settings" in notes_pane(anna)
        await ctrl.handle("top")
        assert "Leaderboard" in notes_pane(anna)
        await ctrl.handle("whois Anna")
        assert "Anna: rating" in notes_pane(anna)

        await ctrl.handle("rematch")
        assert ctrl.mode == "room" and "rematch" in status_line(anna)


async def test_a_guest_abandons_a_held_seat_from_the_lobby(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "anna", guest=True) as anna:
        ctrl = anna.controller
        await ctrl.handle("create Friday night seats=2")
        await ctrl.handle("bot random")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        await ctrl.handle("start")
        await until(lambda: ctrl.view.status == RoomStatus.PLAYING)
        await ctrl.handle("leave")
        assert "Your seats (`resume N`, `abandon N`):" in ctrl.lobby_lines()
        await asked(anna, ctrl.handle("abandon 1"), "abandon 'Friday night'?", "n")
        assert "not abandoned" in status_line(anna) and len(ctrl.session.held_seats()) == 1
        await asked(anna, ctrl.handle("abandon 1"), "abandon 'Friday night'?", "y")
        assert "you resigned 'Friday night'" in status_line(anna)
        assert "it is over" in status_line(anna)  # two players: the other won at once
        assert ctrl.mode == "lobby" and ctrl.session.held_seats() == []


def test_castell_play_s_list_of_kept_games_marks_who_resigned():
    from client.modes.play import game_line
    from server.store.base import GameRecord, RoomRecord, SeatRecord

    room = RoomRecord("r1", "Anna's game", 2, "normal", None, False, None, seed=1,
                      status="finished", version=9, created_at=1.0, finished_at=2.0)
    record = GameRecord(room, (SeatRecord("r1", 0, "Anna"),
                               SeatRecord("r1", 1, "Pau·normal", bot=True)),
                        result={"scores": [{"seat": 0, "total": 9}, {"seat": 1, "total": 3}],
                                "winners": [1], "resigned": [0]})
    assert game_line(record).endswith("over: Anna 9 (resigned) · Pau·normal 3 (won)")
