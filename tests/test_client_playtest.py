"""What a new player's play-test of the terminal client found, each fixed and held here:
through the real client in this process (:func:`tests.support.screens.full_screen` over a
real server), the lessons' controller, or by value where the thing is a value (a rules page,
a lesson, a panel's line, the final table's note)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import attrs
import pytest
from rich.cells import cell_len

from client.control.commands import resolve_topic
from client.control.results import ResultsController, level_line, record_lines
from client.learn.lessons import LEARNER, LESSONS
from client.local.learning import LearnProgress
from client.local.results import BotResults, Result
from client.modes.learn import LearnController, LessonTable
from client.screens import rulebook
from shared import describe as d
from shared.actions import EndTurn
from shared.engine import apply
from shared.errors import RuleError
from shared.view import RoomInfo, RoomStatus, SeatInfo, make_view
from tests.support import sample_views as sv
from tests.support.games import game, with_player
from tests.support.screens import full_screen, screen, status_line, until

pytestmark = pytest.mark.timeout(60)


async def asked(scr: Any, work: Awaitable[Any], question: str, answer: str | None) -> str:
    """Run ``work`` until the screen asks ``question`` (a part of it), answer ``answer``
    (None: Esc) and let it finish; the question as asked."""
    task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
    await until(lambda: scr._asking is not None or task.done())
    assert scr._asking is not None, f"nothing was asked ({status_line(scr)})"
    said = scr._asking[0] + (scr._asked or "")
    assert question in said, said
    scr._asking[1].set_result(answer)
    await task
    return said


async def bot_game(scr: Any, seats: int = 2) -> str:
    """``castell play``'s new game against random bots, under way; its room id."""
    ctrl = scr.controller
    await ctrl.start_play(seats, "normal", "random", "new")
    await until(lambda: ctrl.view is not None and ctrl.view.status == RoomStatus.PLAYING)
    return ctrl.session.room


# -- 7: resigning, in the final table and in the record against the bots -------------------------


def _finished_tie(resigned: tuple[int, ...]) -> Any:
    """A two-seat game just over with both on the same points, ``resigned`` seats resigned."""
    state = game(2)
    for seat, name in enumerate(("Anna", "Pau·random")):
        state = with_player(state, seat, name=name)
    state = attrs.evolve(state, round=10, first=1, turn=0, turns_taken=1, resigned=resigned)
    state, _ = apply(state, 0, EndTurn())
    info = RoomInfo(room="rtie", name="Anna's game", variant="normal", seats=2,
                    status=RoomStatus.FINISHED.value,
                    players=(SeatInfo(0, "Anna"), SeatInfo(1, "Pau·random", bot=True)))
    return make_view(info, state)


def test_a_resigned_players_tie_is_said_as_the_resignation_not_the_best_tower():
    view = _finished_tie((0,))
    totals = {s.seat: s.total for s in view.scores}
    assert totals[0] == totals[1] and view.winners == (1,)
    note = d.tie_note(view)
    assert note is not None and "better best tower" not in note
    assert "Anna resigned and so ranks last (§10 Resigning)" in note
    assert "§10 Resigning" in screen(view, 0, width=100)
    # Without a resignation a tie on points is still the best tower's.
    assert d.tie_note(_finished_tie(())) is None  # (equal towers: a shared victory)


def test_a_resigned_game_is_a_loss_left_out_of_the_average(tmp_path):
    results = BotResults(tmp_path)
    results.add(Result("r1", "normal", 2, 60, True))
    results.add(Result("r2", "normal", 2, 0, False, resigned=True))
    [record] = BotResults(tmp_path).by_level(("normal",))
    assert (record.games, record.won, record.lost, record.resigned) == (2, 1, 1, 1)
    assert record.average == 60.0
    assert level_line(record) == ("  normal  2 games · 1 won · 1 lost (1 resigned) · "
                                  "60.0 points on average (of those played out)")
    BotResults(tmp_path / "only").add(Result("r3", "hard", 2, 0, False, resigned=True))
    assert record_lines(BotResults(tmp_path / "only"))[1] == (
        "  hard    1 game · 0 won · 1 lost (1 resigned) · no game played to its end")


async def test_resigning_against_bots_is_kept_as_a_resigned_loss(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path, make=ResultsController) as anna:
        ctrl = anna.controller
        assert isinstance(ctrl, ResultsController)
        room = await bot_game(anna)
        await asked(anna, ctrl.handle("resign"), "resign this game?", "y")
        await until(lambda: any(line.startswith("You resigned against") for line in
                                anna.notes))
        assert "You resigned against random bots: a loss, its points left out of your " \
               "average." in anna.notes
        assert "  random  1 game · 0 won · 1 lost (1 resigned) · no game played to its end" \
            in anna.notes
        [kept] = ctrl.results.results()
        assert kept.room == room and kept.resigned and not kept.won


# -- 9: castell learn's goodbye names the lesson it opens next -----------------------------------


async def test_the_goodbye_after_a_lesson_done_names_the_next_lesson(tmp_path):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input

    from client.screens.app import TerminalScreen
    from tests.support.screens import Sized

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        c = LearnController(LessonTable("Anna"), LearnProgress(tmp_path))
        TerminalScreen(c, color=False)
        await c.begin()
        await c.handle("lesson 3")
        for action in LESSONS[2].answer:
            await c.handle(d_command(action))
        assert c.complete and c.index == 2
        said = c.kept_seat()
        assert said == ("your place in the lessons is kept: `castell learn` takes you back to "
                        "lesson 4 of 8 (Building a tower)")
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        again = LearnController(LessonTable("Anna"), LearnProgress(tmp_path))
        TerminalScreen(again, color=False)
        await again.begin()
        assert again.index == 3  # what the goodbye said


def d_command(action: Any) -> str:
    from client.control.commands import action_to_command

    return action_to_command(action)


# -- 12: rules by a common word ------------------------------------------------------------------


@pytest.mark.parametrize(("word", "topic"), [
    ("base", "skills"), ("pinya", "towers"), ("tronc", "towers"), ("festival", "festivals"),
    ("festivals", "festivals"), ("trophy", "festivals"), ("medal", "festivals"),
    ("tokens", "turn"), ("wheel", "wheel"), ("map", "map"), ("skills", "skills"),
    ("score", "scoring"), ("Pinya", "towers")])
def test_rules_finds_a_page_by_a_common_word(word, topic):
    assert resolve_topic(word) == topic


def test_every_alias_names_a_page_and_no_topic_is_shadowed():
    assert set(rulebook.ALIASES.values()) <= set(rulebook.topics())
    assert not set(rulebook.ALIASES) & set(rulebook.topics())


# -- 13: lesson 3's refused try is a rule's refusal ----------------------------------------------

#: Refusals that say a word is missing or malformed, not that a rule forbids the try.
NOT_A_RULE = {"effect_missing", "bad_choice", "bad_recruit", "unknown_action", "bad_size",
              "unknown_region"}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_each_lessons_refused_try_is_refused_by_a_rule(lesson):
    assert lesson.mistake_rule not in NOT_A_RULE
    with pytest.raises(RuleError) as refused:
        apply(lesson.position("Anna"), LEARNER, lesson.mistake)
    assert refused.value.code == lesson.mistake_rule


def test_the_training_lessons_try_is_a_skill_tile_asked_for_an_effect():
    lesson = next(lesson for lesson in LESSONS if lesson.key == "training")
    with pytest.raises(RuleError) as refused:
        apply(lesson.position("Anna"), LEARNER, lesson.mistake)
    assert refused.value.message == "the wheel shows Balance for Lleida, not a special tile"


# -- 14: wording -----------------------------------------------------------------------------------


async def test_the_resume_question_says_its_choices_once(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path, columns=80, rows=24) as anna:
        await bot_game(anna)
        await anna.controller.handle("leave")
    async with full_screen(url, "Anna", tmp_path, columns=80, rows=24) as anna:
        ctrl = anna.controller
        task = asyncio.get_running_loop().create_task(
            ctrl.start_play(2, "normal", "random"))
        await until(lambda: anna._asking is not None)
        whole = " ".join([*anna.notes, status_line(anna), anna._asking[0]])
        assert whole.count("starts a new one") == 1, whole
        anna._asking[1].set_result(None)
        await task


async def test_castell_play_games_have_names_of_their_own(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path) as anna:
        ctrl = anna.controller
        names = []
        for _ in range(3):
            await bot_game(anna)
            names.append(ctrl.view.name)
            await ctrl.handle("leave")
        assert names == ["Anna's game", "Anna's game #2", "Anna's game #3"]


async def test_waiting_room_lines_for_a_guest_and_for_castell_play(server, url, tmp_path):
    async with full_screen(url, "Anna", tmp_path / "a") as anna, \
            full_screen(url, "Biel", tmp_path / "b") as biel:
        await anna.controller.handle("create Nit seats=3")
        room = anna.controller.session.room
        await biel.controller.handle(f"join {room}")
        await until(lambda: biel.controller.view is not None)
        said = biel.controller.room_lines()
        assert "1 seat free: waiting for more players, then for the room's creator to start" \
            in said, said
        assert not any("wait for friends, or waiting" in line for line in said)
    async with full_screen(url, "Carme", tmp_path / "c") as carme:
        ctrl = carme.controller
        ctrl.local = True  # castell play's lobby: its server is this computer's
        ctrl.play_options = (2, "normal", "random")
        await ctrl.handle("create Sola seats=2")
        lines = ctrl.room_lines()
        assert not any("Friends join" in line for line in lines), lines
        assert "1 seat free: `bot` / `fill` gives it to bots; then `start`" in lines


# -- 15: a bot's panel line stays whole at 80 columns ---------------------------------------------


def test_a_narrow_panels_summary_stays_on_one_line():
    view = sv.typed(sv.four_seat())
    view = attrs.evolve(view, players=tuple(attrs.evolve(p, region=None, best=0)
                                            for p in view.players))
    # as the full screen draws the board at 80x24: the other players' panels three in a row
    text = screen(view, 0, width=80, short=True, page=18)
    rows = [line for line in text.splitlines() if "no pawn" in line]
    assert len(rows) == 2, text  # the player's own, in its title; the bots' three in one row
    assert rows[1].count("no pawn · ") == 3 and rows[1].count(" pts ") == 3, text
    assert "score 0" not in rows[1] and not rows[1].rstrip(" │").endswith("·"), text
    p = view.players[1]
    assert d.player_summary(p, 0) == "no pawn yet · best 0 · score 0"
    assert d.player_summary(p, 0, 22) == "no pawn · 0 pts"
    placed = attrs.evolve(p, region="gir", best=8)
    assert d.player_summary(placed, 23, 22) == "gir · best 8 · 23 pts"
    assert cell_len(d.player_summary(placed, 23, 22)) <= 22


# -- 6: rematch from the lobby -------------------------------------------------------------------


async def test_rematch_from_the_lobby_plays_the_latest_finished_game_again(server, url,
                                                                           tmp_path):
    async with full_screen(url, "Anna", tmp_path) as anna:
        ctrl = anna.controller
        await ctrl.refresh_rooms()
        await ctrl.handle("rematch")
        assert "no finished game to play again" in status_line(anna)
        room = await bot_game(anna)
        await asked(anna, ctrl.handle("resign"), "resign this game?", "y")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)
        await ctrl.handle("leave")
        assert ctrl.mode == "lobby"
        # the lobby says so under the game just finished
        assert "`rematch` plays \"Anna's game\" again with its players (`rematch N`: " \
               "another finished game of `games`)" in ctrl.lobby_lines()
        await ctrl.handle("rematch")
        assert ctrl.mode == "room" and ctrl.session.room != room, status_line(anna)
        assert ctrl.session.created and status_line(anna).startswith("rematch r")
        await until(lambda: ctrl.view is not None and len(ctrl.view.players) == 2)
        assert ctrl.view.name == "Anna's game"  # the same game again, its bot seated
        await ctrl.handle("leave")
        await ctrl.handle("rematch 7")
        assert status_line(anna) == "✗ no game number 7: `games` lists your games"
        await ctrl.handle("games")
        number = next(i for i, g in enumerate(ctrl.games, 1) if g.room == room)
        await ctrl.handle(f"rematch {number}")
        assert ctrl.mode == "room", status_line(anna)


# -- 8: the lobby's games after the host closed the room -----------------------------------------


async def test_the_lobbys_games_are_fresh_after_the_host_closes_the_room(server, url,
                                                                         tmp_path):
    from server.ops.admin import AdminConsole

    async with full_screen(url, "Anna", tmp_path) as anna:
        ctrl = anna.controller
        room = await bot_game(anna)
        await until(lambda: ctrl.view.turn == ctrl.me)
        await ctrl.handle("leave")  # the games as they stand: our turn
        assert any("YOUR TURN" in line for line in ctrl.lobby_lines())
        await ctrl.handle("resume 1")
        assert ctrl.session.room == room
        await AdminConsole(server, "unused").cmd_close(room, "tidying up")
        await until(lambda: ctrl.mode == "lobby")
        await until(lambda: any("closed by the host" in line for line in ctrl.lobby_lines()))
        assert not any("YOUR TURN" in line for line in ctrl.lobby_lines())


# -- 10: Enter with the completion menu open takes the choice, and sends nothing ------------------


async def test_enter_in_the_completion_menu_takes_the_choice_and_sends_nothing(server, url,
                                                                               tmp_path):
    from prompt_toolkit.buffer import CompletionState
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    async with full_screen(url, "Anna", tmp_path) as anna:
        ctrl = anna.controller
        await bot_game(anna)
        await until(lambda: ctrl.view.turn == ctrl.me)
        version = ctrl.session.state.version
        # `build ` Tab Tab: the menu open, its first choice highlighted (and in the line)
        typed = Document("build ", len("build "))
        choices = list(anna._completer().get_completions(
            typed, CompleteEvent(completion_requested=True)))
        assert len(choices) > 1
        anna.input.text = "build "
        anna.input.complete_state = CompletionState(typed, choices)
        anna.input.go_to_completion(0)
        line = anna.input.text
        assert line.startswith("build ") and line != "build "
        anna.accept_completion()  # Enter
        assert anna.input.complete_state is None
        assert anna.input.text == line  # the choice, kept to go on typing
        assert not anna._tasks and ctrl.session.state.version == version  # nothing sent
        # Enter with the menu closed sends the line, as ever.
        anna.input.validate_and_handle()
        await asyncio.gather(*anna._tasks)
        assert ctrl.session.state.version > version


def test_tab_tab_enter_in_a_terminal_keeps_the_choice_in_the_line(tmp_path):
    """(the terminal is the subject: Enter's binding while the menu is open)"""
    import re

    from tests.support.terminal import Terminal

    term = Terminal(["play", "--seats", "2", "--bot-delay", "0", "--name", "Anna"], tmp_path,
                    columns=80, rows=24)
    try:
        term.wait_for(r"Anna's game · round 1/10 · your turn")
        term.type_drawn("build ")
        term.type("\t")
        term.type_drawn("\t")
        term.settle()
        chosen = term.input_line()
        assert re.match(r"> build \d", chosen), term.text()
        term.type_drawn("\r")
        term.settle()
        assert term.input_line().rstrip() == chosen.rstrip(), term.text()
        lines = term.lines()
        mine = next(i for i, line in enumerate(lines) if "Anna (you)" in line)
        assert "no tower" in lines[mine + 1], term.text()  # nothing was built
        term.type("\x03")  # Ctrl-C clears the line
        term.quit("\x04")
    finally:
        term.close()


# -- 11: hint before recruiting -------------------------------------------------------------------


async def test_hint_at_the_start_uses_the_players_own_team_and_says_where_to_look(server, url,
                                                                                tmp_path):
    from client.control.hints import _build
    from shared.solver import TallestGoal, best_tower
    from shared.view import state_from_view

    async with full_screen(url, "Anna", tmp_path) as anna:
        ctrl = anna.controller
        await bot_game(anna)
        await until(lambda: ctrl.view.turn == ctrl.me)
        await ctrl.handle("hint")
        said = anna.notes
        me = state_from_view(ctrl.view).players[ctrl.me]
        tallest = best_tower(me.team, me.skills, TallestGoal())
        assert tallest is not None
        example = ("  build LEVELS  (any legal tower from your team, e.g. "
                   f"`{_build(tallest.levels)}`)")
        assert example in said, said
        assert not any("7 7 7 / 5 5 / 2" in line for line in said)
        at = next(i for i, line in enumerate(said) if "no tower of your team can enter" in line)
        assert said[at + 1] == ("  (`hint deep` looks further ahead: where to go and whom to "
                                "recruit)"), said


def test_when_no_tower_can_enter_the_recruit_that_would_is_named():
    from client.control.hints import _best_for
    from shared.actions import Recruit
    from shared.state import Skills

    state = with_player(game(2), 0, team=(9, 9, 9, 7, 7, 5), skills=Skills(balance=1))
    player = state.players[0]
    said = _best_for(player, 5, recruits=[Recruit((8,)), Recruit((3,))]).split("\n")
    assert said[0] == "  no tower of your team can enter yet (it needs 4 levels and a 5)"
    assert said[1] == "  `recruit 3` would let `build 9 9 9 / 7 7 / 5 / 3` enter with 5"
    none = _best_for(player, 5, recruits=[Recruit((8,))]).split("\n")
    assert none[1] == "  no recruit this turn is enough: `hint deep` looks further ahead"


# -- 5: `replay N` steps through the game, as `castell replay` does --------------------------------


async def test_replay_n_steps_through_the_game_on_the_board_and_back_to_the_lobby(
        server, url, tmp_path):
    from tests.support.screens import board, enter

    async with full_screen(url, "Anna", tmp_path, columns=80, rows=24) as anna:
        ctrl = anna.controller
        await bot_game(anna)
        await asked(anna, ctrl.handle("resign"), "resign this game?", "y")
        await until(lambda: ctrl.view.status == RoomStatus.FINISHED)
        await ctrl.handle("leave")
        await enter(anna, "replay 1")
        viewer = anna.replay
        assert viewer is not None and not anna.notes  # no pop-up of hundreds of lines
        shown = board(anna).split("\n")
        assert len(shown) <= 24
        assert f"step 0/{viewer.total} · " in shown[-1] and "n/p" in shown[-1], shown[-1]
        assert "the board as the game was set up" in shown[-2]
        anna.replay_go(1)  # n
        assert f"step 1/{viewer.total}" in board(anna).split("\n")[-1]
        anna.replay_go(to=viewer.total)  # End
        assert "Anna resigned" in board(anna).split("\n")[-2]
        anna.replay_go(-1)  # p
        assert viewer.at == viewer.total - 1
        anna.close_replay()  # q
        assert anna.replay is None and ctrl.mode == "lobby"
        assert board(anna).startswith("CASTELL · lobby")
        assert status_line(anna) == "replay of \"Anna's game\" closed"


def test_replay_keys_are_bound_while_a_replay_is_shown():
    """(each key's effect is a method of the screen, tested above; here, that the keys reach
    them only while a replay is shown, and win over the line's own keys)"""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.keys import Keys

    from client.control.controller import Controller
    from client.net.session import Session
    from client.screens.app import TerminalScreen
    from tests.support.screens import Sized

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        scr = TerminalScreen(Controller(Session("ws://127.0.0.1:1", "Anna")), color=False)
        kb = scr.app.key_bindings
        assert kb is not None
        for key in ("n", "p", "q", Keys.Escape, Keys.Home, Keys.End, Keys.PageDown):
            last = kb.get_bindings_for_keys((key,))[-1]
            assert not last.filter()  # no replay: the line's own keys
            scr.replay = object()  # type: ignore[assignment]
            assert last.filter(), key
            scr.replay = None
