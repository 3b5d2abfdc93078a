"""``castell learn`` through the real client in this process: the lessons' controller on the
real full-screen client (an output that draws nothing, of a chosen size) and on the plain one,
the lessons' positions on the rules engine. A refusal in the engine's words, an action off the
lesson's point not played, a lesson done and the next one; leaving and coming back; the
question ``castell play`` asks on a first run. (The whole walk, in a terminal: tests/
test_learn_terminal.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from client.cli import build_parser
from client.cli import main as cli_main
from client.control.commands import action_to_command
from client.learn.lessons import LEARNER, LESSONS
from client.local.learning import LearnProgress
from client.modes.learn import LearnController, LessonTable, offer_lessons, run_lessons
from client.screens.app import TerminalScreen
from client.screens.plain import PlainScreen
from shared.engine import apply
from shared.errors import RuleError
from tests.support.screens import Sized, status_line, until

pytestmark = pytest.mark.timeout(30)


@contextlib.contextmanager
def lessons(state: Path, name: str = "Anna", *, offer: bool = False, columns: int = 80,
            rows: int = 24) -> Iterator[TerminalScreen]:
    """The lessons on the full-screen client, their progress kept under ``state``."""
    with create_pipe_input() as pipe, \
            create_app_session(input=pipe, output=Sized(columns, rows)):
        controller = LearnController(LessonTable(name), LearnProgress(state), offer=offer)
        yield TerminalScreen(controller, color=False)


def ctrl(screen: TerminalScreen) -> LearnController:
    assert isinstance(screen.controller, LearnController)
    return screen.controller


def notes(screen: TerminalScreen) -> str:
    return "\n".join(screen.notes)


def refusal(index: int) -> RuleError:
    """The engine's refusal of lesson ``index``'s mistake, as the engine words it."""
    lesson = LESSONS[index]
    try:
        apply(lesson.position("Anna"), LEARNER, lesson.mistake)
    except RuleError as exc:
        return exc
    raise AssertionError("the mistake was accepted")


async def test_a_refusal_is_said_in_the_engines_own_words(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        assert c.view is not None and c.view.name == "Lesson 1 of 8"
        assert "Your pawn stands in Tarragona" in notes(screen)
        assert "▶ Move your pawn from Tarragona to Lleida. One way: `move lle`." \
            in notes(screen)
        start = c.table.game
        await c.handle("move gir")
        engine = refusal(0)
        assert engine.message == "Girona is not adjacent to Tarragona"
        assert status_line(screen) == f"✗ {engine.message}"
        assert f"✗ The rules refuse `move gir`: {engine.message} (rule `not_adjacent`)." \
            in notes(screen)
        assert c.table.game is start and not c.complete


async def test_a_legal_action_off_the_lessons_point_is_not_played(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        version = c.session.state.version
        await c.handle("move cen")  # adjacent, so legal: but the lesson asks for Lleida
        assert c.session.state.version == version and c.table.game == c.origin
        assert "not this lesson's step: Move your pawn" in status_line(screen)
        assert "The rules allow `move cen`, but it is not what this lesson asks: it was not " \
               "played. Lleida (`lle`) is next to Tarragona." in notes(screen)
        await c.handle("build 9 9 9 / 7 7 / 3")  # a free action is a step: it stands
        assert c.view.players[0].tower == ((9, 9, 9), (7, 7), (3,))
        await c.handle("undo")
        assert c.view.players[0].tower == ()
        await c.handle("undo")  # nothing left to take back: the engine says so
        assert status_line(screen) == "✗ you have nothing to take back this turn"


async def test_a_lesson_done_says_what_it_taught_and_next_goes_on(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        await c.handle("move lle")
        assert c.complete and c.view.players[0].region == "lle"
        assert screen.notes[:2] == ["✓ Lesson 1 of 8 · Moving: done.", "Anna moved to lle"]
        assert LESSONS[0].learned in screen.notes
        assert status_line(screen).startswith("✓ done · `next`: Lesson 2 of 8 · Recruiting")
        assert LearnProgress(tmp_path).done == ["moving"]
        await c.handle("recruit 9")
        assert status_line(screen).startswith("✗ this lesson is done: `next`: Lesson 2 of 8")
        await c.handle("next")
        assert c.view.name == "Lesson 2 of 8" and not c.complete
        assert c.view.players[0].region == "lle" and c.view.done == ("move",)
        assert LearnProgress(tmp_path).current == "recruiting"


async def test_the_festival_lesson_holds_the_festival_only_for_a_tower_that_can_win(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        await c.handle("lesson 5")
        assert c.view.name == "Lesson 5 of 8"
        await c.handle("end")  # the tower holds no 5: ending now wins nothing
        assert c.view.round == 3 and not c.complete
        assert "Your tower holds no 5, so it cannot take part" in notes(screen)
        for action in LESSONS[4].answer:
            await c.handle(action_to_command(action))
        assert c.complete and c.view.round == 4
        assert "Festival at Manresa (cen), size 5" in screen.notes
        assert "  Anna 6 trophy + size token" in screen.notes
        assert "  Biel 5 medal" in screen.notes


async def test_every_lesson_walked_in_turn_ends_with_the_game_over(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        for index, lesson in enumerate(LESSONS):
            assert c.index == index
            await c.handle(action_to_command(lesson.mistake))
            assert status_line(screen).startswith(f"✗ {refusal(index).message[:30]}")
            for action in lesson.answer:
                await c.handle(action_to_command(action))
            assert c.complete, (lesson.key, status_line(screen))
            await c.handle("next")
        assert c.view.status == "finished" and c.view.winners == (LEARNER,)
        assert "that was the last lesson" in status_line(screen)
        assert screen.notes[0] == "That was the last lesson: you know the game now."
        assert " ✓ 8. Final scoring (§9)  ◀ here" in screen.notes
        assert LearnProgress(tmp_path).done == [lesson.key for lesson in LESSONS]
        assert c.kept_seat() == "you did every lesson: `castell play` starts a game against bots"


async def test_leaving_keeps_the_place_and_coming_back_resumes_it(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        await c.handle("move lle")
        await c.handle("next")
        await c.handle("recruit 6")  # half way through lesson 2: a lesson starts again whole
        assert c.kept_seat() == ("your place in the lessons is kept: `castell learn` takes "
                                 "you back to lesson 2 of 8 (Recruiting)")
        await c.handle("quit")
        assert c.session.stopped
    kept = json.loads((tmp_path / "learn.json").read_text())
    assert kept == {"lesson": "recruiting", "done": ["moving"], "offered": False}
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        assert c.index == 1 and c.view.name == "Lesson 2 of 8"
        assert c.table.game == LESSONS[1].position("Anna")
        assert status_line(screen) == "back at lesson 2 of 8: your progress was kept (1 done)"
        await c.handle("lessons")
        assert " ✓ 1. Moving (§2 §4)" in screen.notes
        assert "   2. Recruiting (§4)  ◀ here" in screen.notes
        await c.handle("recruit 6 6")
        await c.handle("again")  # the lesson from its start, still done
        assert c.table.game == c.origin and not c.complete
    with lessons(tmp_path) as screen:  # a lesson done is left: the next one is taken up
        c = ctrl(screen)
        await c.begin(restart=False)
        assert c.index == 2
        await c.begin(restart=True)
        assert c.index == 0


async def test_the_lesson_commands_and_what_needs_a_server(tmp_path):
    with lessons(tmp_path) as screen:
        c = ctrl(screen)
        await c.begin()
        await c.handle("help")
        assert "In the lessons:" in screen.notes and any(
            line.startswith("next") for line in screen.notes)
        await c.handle("lesson 9")
        assert status_line(screen) == "✗ `lesson N` takes a lesson's number, 1 to 8"
        await c.handle("lesson")
        assert screen.notes[0] == "Lesson 1 of 8 · Moving · rules §2 §4 (`rules map`)"
        await c.handle("chat hello")
        assert "played on this computer alone" in status_line(screen)
        await c.handle("hint")
        assert "you can:" in screen.notes
        await c.handle("leave")  # leaving the table is closing the lessons
        assert c.session.stopped


async def test_the_lessons_on_the_plain_screen(tmp_path):
    out = io.StringIO()
    controller = LearnController(LessonTable("Anna"), LearnProgress(tmp_path))
    plain = PlainScreen(controller, stdin=io.StringIO("move gir\nmove lle\nnext\nquit\n"),
                        stdout=out, echo=True)
    await plain.run(controller.begin)
    text = out.getvalue()
    assert "Lesson 1 of 8 · Moving · rules §2 §4 (`rules map`)" in text
    assert "error: Girona is not adjacent to Tarragona" in text
    assert "✓ Lesson 1 of 8 · Moving: done." in text
    assert "Lesson 2 of 8 · Recruiting · rules §4 (`rules turn`)" in text


# The question castell play asks on a first run -------------------------------------------------


async def test_the_first_run_offer_declined_goes_to_the_game_and_is_asked_once(tmp_path):
    with lessons(tmp_path, offer=True) as screen:
        c = ctrl(screen)
        begun = screen.spawn(c.begin())
        await until(lambda: screen._asking is not None)
        question, answer = screen._asking
        assert question == "New to Castell? Take the guided first game (8 lessons) first? " \
                           "[Y/n] "
        assert "Esc or n: straight to your game" in status_line(screen)
        assert "   1. Moving (§2 §4)" in c.lobby_lines()  # the board, meanwhile
        answer.set_result(None)  # Esc
        await begun
        assert c.go_play and c.session.stopped and c.kept_seat() is None
    progress = LearnProgress(tmp_path)
    assert progress.offered and not progress.started
    # asked once, ever: the next castell play goes straight on, without a screen
    outcome = await offer_lessons("Anna", color=False, progress=progress)
    assert (outcome.go_play, outcome.note) == (True, None)


async def test_no_offer_to_a_player_who_played_or_learned_before(tmp_path):
    assert (await offer_lessons("Anna", color=False, progress=LearnProgress(tmp_path),
                                played_before=True)).go_play
    learning = LearnProgress(tmp_path)
    learning.at("training")
    assert (await offer_lessons("Anna", color=False, progress=LearnProgress(tmp_path))).go_play
    assert not LearnProgress(tmp_path).offered  # never asked


async def test_the_first_run_offer_taken_gives_the_lessons_then_the_game(tmp_path):
    with lessons(tmp_path, offer=True) as screen:
        c = ctrl(screen)
        begun = screen.spawn(c.begin())
        await until(lambda: screen._asking is not None)
        screen._asking[1].set_result("")  # Enter: yes
        await begun
        assert c.view.name == "Lesson 1 of 8" and not c.go_play
        await c.handle("lesson 8")
        await c.handle("end")
        assert c.complete and "`next`: your game against bots" in status_line(screen)
        await c.handle("next")
        assert c.go_play and c.session.stopped


async def test_the_offer_on_a_running_screen_is_answered_with_a_key(tmp_path):
    """``offer_lessons`` as ``castell play`` calls it: the real screen runs, `n` answers."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        asking = asyncio.ensure_future(
            offer_lessons("Anna", color=False, progress=LearnProgress(tmp_path)))
        # (marked as made just before the question is put, with nothing awaited between)
        await until(lambda: LearnProgress(tmp_path).offered)
        pipe.send_text("n\r")
        offered = await asyncio.wait_for(asking, 10)
    assert offered.go_play and offered.note is None


async def test_run_lessons_says_where_the_learner_will_come_back(tmp_path):
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        task = asyncio.ensure_future(run_lessons("Anna", plain=False, color=False,
                                                 progress=LearnProgress(tmp_path)))
        await until(lambda: LearnProgress(tmp_path).current == "moving")
        pipe.send_text("move lle\r")
        await until(lambda: LearnProgress(tmp_path).done == ["moving"])
        pipe.send_text("next\r")
        await until(lambda: LearnProgress(tmp_path).current == "recruiting")
        pipe.send_text("\x04")  # Ctrl-D
        outcome = await asyncio.wait_for(task, 10)
    assert not outcome.go_play
    assert outcome.note == ("Your place in the lessons is kept: `castell learn` takes you "
                            "back to lesson 2 of 8 (Recruiting).")


def test_the_usage_names_castell_learn(capsys):
    assert "castell learn" in build_parser().format_usage()
    with pytest.raises(SystemExit) as done:
        cli_main(["learn", "--help"])
    assert done.value.code == 0
    assert "--restart" in capsys.readouterr().out
