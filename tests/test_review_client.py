"""``castell review FILE``: the charts at 80x24 and 100x40 and their plain tables, the review
in words, the viewer's keys in process (its prompt_toolkit application on a pipe), and the
real ``castell review`` in a pseudo-terminal of 80x24 and through a pipe."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys

import pexpect
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from bench.review import bot_game
from client.control.commands import action_to_command
from client.modes.review import BOARDS, ReviewViewer, build_app, compute
from client.screens import charts
from client.screens.review import plain_lines, summary_lines, turn_lines
from shared.record import GameRecordFile
from shared.review import Budget, Review, review_game
from tests.support.screens import Sized, until
from tests.support.terminal import ROOT, Terminal, client_env

#: One worker runs this module's tests (`--dist loadgroup` in .ci/run), so that its module
#: fixture is made once, not once in every worker that takes one of them.
pytestmark = [pytest.mark.timeout(90), pytest.mark.xdist_group("test_review_client")]

SMALL = Budget(samples=1, candidates=2)


@pytest.fixture(scope="module")
def game() -> tuple[GameRecordFile, Review]:
    record = bot_game(("easy", "hard"), seed=11, budget=SMALL)
    return record, review_game(record, budget=SMALL)


# The charts ------------------------------------------------------------------------------


@pytest.mark.parametrize(("columns", "rows"), [(80, 22), (100, 38)])
def test_the_charts_fit_the_screen_and_say_what_they_show(game, columns, rows):
    _, review = game
    for name, draw in charts.CHARTS:
        lines = draw(review, columns, rows)
        assert len(lines) <= rows, (name, len(lines))
        assert max(len(line) for line in lines) <= columns, name
        assert not any("\x1b" in line for line in lines)  # no colour asked, none given
    race = "\n".join(charts.score_race(review, columns, rows))
    assert "Score race" in race
    # the legend names each player with the final score, by the letter its line is drawn in
    for seat, name in enumerate(review.seats):
        mark = charts.seat_marks(review.seats)[seat]
        assert f"{mark} {name} {review.players[seat].final.total}" in race
        assert race.count(mark) > 10
    breakdown = "\n".join(charts.breakdown(review, columns, rows))
    assert "T tower · D diversity · P prizes · S sizes · L local perf." in breakdown
    lost = "\n".join(charts.points_lost(review, columns, rows))
    assert f"{review.players[0].lost:.1f} in all" in lost
    # in colour, each player's line in the seat's colour
    assert "\x1b[" in "\n".join(charts.score_race(review, columns, rows, color=True))


def test_the_breakdown_bars_are_as_long_as_the_points(game):
    _, review = game
    lines = charts.breakdown(review, 80, 22)
    for p in review.players:
        bar = next(line for line in lines if f"{review.seats[p.seat]} {p.final.total}┤" in line)
        drawn = bar.split("┤", 1)[1].rstrip("│ ")
        # each category's letter in proportion to its points: the biggest, the longest
        counts = {c: drawn.count(charts.CATEGORY_MARKS[c]) for c in charts.CATEGORY_MARKS}
        biggest = max(charts.CATEGORY_MARKS, key=lambda c: getattr(p.final, c))
        assert counts[biggest] == max(counts.values())


def test_the_tables_of_plain_give_the_charts_figures(game):
    _, review = game
    race = charts.race_table(review)
    assert race[0].split()[-1] == "10"
    for seat, name in enumerate(review.seats):
        row = next(line for line in race if line.startswith(name))
        assert [int(x) for x in row.split()[1:]] == [r[seat].total for r in review.scores[1:]]
    table = charts.breakdown_table(review)
    assert "tower  diversity  prizes  sizes  local perf.  total" in table[0]
    lost = charts.lost_table(review)
    row = next(line for line in lost if line.startswith(review.seats[1]))
    assert row.split()[-1] == f"{review.players[1].lost:.1f}"


def test_seat_marks_are_initials_or_numbers():
    assert charts.seat_marks(["Anna", "biel"]) == ["A", "B"]
    assert charts.seat_marks(["Anna", "Albert"]) == ["1", "2"]
    assert charts.seat_marks(["Ànna", "Biel"]) == ["1", "2"]
    assert charts.seat_marks(["\x1b[31mEve", "Bob"]) == ["E", "B"]


# The review in words ---------------------------------------------------------------------


def test_the_review_in_words(game):
    _, review = game
    summary = summary_lines(review, 80)
    assert all(len(line) <= 80 for line in summary)
    assert summary[0].startswith(f"Review of {review.name!r}: 20 turns against the hard bot")
    head = next(line for line in summary if line.startswith("player"))
    assert "points  accuracy  lost  good  inacc.  mistakes  blunders" in head
    costly = review.costliest(1)[0]
    text = "\n".join(turn_lines(review, costly, 80))
    assert f"{costly.lost:.1f} points lost" in text
    first = action_to_command(costly.hard[0])
    assert f"better: {first}" in text
    everything = "\n".join(plain_lines(review))
    assert "points after round" in everything and "final score" in everything
    assert everything.count("'s turn (") == 20


# The viewer, in process ------------------------------------------------------------------


def test_the_viewer_keys(game):
    record, review = game
    viewer = ReviewViewer(record, review, color=False)
    assert viewer.page == "summary" and "Costliest turns:" in "\n".join(viewer.body(80, 23))
    viewer.key("x")  # the costliest turn of the game
    worst = review.costliest(1)[0]
    assert (viewer.page, viewer.at, viewer.board) == ("turn", worst.index, 0)
    assert "points lost" in viewer.body(80, 23)[0]
    viewer.key("b")  # after the turn as played
    assert viewer.board == 1
    assert f"the board {BOARDS[1]}" in "\n".join(viewer.body(80, 23))
    viewer.key("b")  # after the better line: its board is the hard line played out
    state, _ = viewer.board_state()
    assert state.round >= worst.round and viewer.board == 2
    viewer.key("b")
    assert viewer.board == 0
    viewer.key("n")
    assert viewer.at == worst.index + 1 and viewer.board == 0
    viewer.key("p")
    viewer.key("p")
    assert viewer.at == worst.index - 1
    viewer.key("home")
    viewer.key("p")
    assert viewer.at == 0  # no turn before the first
    viewer.key("end")
    viewer.key("n")
    assert viewer.at == len(review.turns) - 1
    viewer.key("c")
    assert viewer.page == "chart" and viewer.chart == 0
    assert "Score race" in "\n".join(viewer.body(80, 23))
    viewer.key("c")
    viewer.key("c")
    assert viewer.chart == 2 and "Points lost" in "\n".join(viewer.body(80, 23))
    assert viewer.footer(80).startswith(" review ") and len(viewer.footer(80)) <= 80
    viewer.key("s")
    assert viewer.page == "summary"
    viewer.body(80, 10)
    assert viewer.hidden > 0
    viewer.key("down")
    viewer.key("pagedown")
    assert viewer.scroll == 11
    assert not viewer.key("z") and not viewer.quit
    viewer.key("q")
    assert viewer.quit


async def test_the_viewer_application_answers_its_keys(game):
    record, review = game
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=Sized(80, 24)):
        viewer = ReviewViewer(record, review, color=False)
        app = build_app(viewer)
        running = asyncio.ensure_future(app.run_async())
        pipe.send_text("x")
        await until(lambda: viewer.page == "turn")
        assert viewer.at == review.costliest(1)[0].index
        pipe.send_text("b")
        await until(lambda: viewer.board == 1)
        pipe.send_text("\x1b[C")  # →: the next turn
        await until(lambda: viewer.at == review.costliest(1)[0].index + 1)
        pipe.send_text("c")
        await until(lambda: viewer.page == "chart")
        pipe.send_text("s")
        await until(lambda: viewer.page == "summary")
        pipe.send_text("q")
        await asyncio.wait_for(running, 5)
    assert viewer.quit


# The real castell review -------------------------------------------------------------------


def test_the_progress_is_told_as_lines_in_plain(game):
    record, _ = game
    out = io.StringIO()
    compute(record, out=out, plain=True, budget=SMALL)
    lines = out.getvalue().splitlines()
    assert lines[0] == "reviewing 20 turns against the hard bot (1 samples × 2 candidates)…"
    assert lines[1:] == ["  10/20 turns reviewed", "  20/20 turns reviewed"]


def test_castell_review_plain_through_a_pipe(game, tmp_path):
    record, review = game
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    done = subprocess.run([sys.executable, "-m", "client", "review", str(path),
                           "--samples", "1", "--candidates", "2"], cwd=ROOT,
                          env=client_env(tmp_path), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    # not a terminal: plain lines, the very review computed here
    assert done.stdout.splitlines()[-len(plain_lines(review)):] == plain_lines(review)
    # a damaged record, a bad option: said in words
    path.write_text("{}")
    done = subprocess.run([sys.executable, "-m", "client", "review", str(path)], cwd=ROOT,
                          env=client_env(tmp_path), capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 1 and "not a Castell game record" in done.stderr
    done = subprocess.run([sys.executable, "-m", "client", "review", str(path), "--samples",
                           "0"], cwd=ROOT, env=client_env(tmp_path), capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 2 and "below 1" in done.stderr


def test_castell_review_in_a_terminal_of_80x24(game, tmp_path):
    record, review = game
    path = tmp_path / "game.json"
    path.write_text(record.to_json())
    term = Terminal(["review", str(path), "--samples", "1", "--candidates", "2"], tmp_path,
                    columns=80, rows=24)
    drawn = io.StringIO()
    term.child.logfile_read = drawn
    try:
        term.wait_for(r"review 'bench 11' · summary", timeout=60)
        # the progress bar was drawn turn by turn before the viewer took the screen
        bar = re.findall(r"reviewing 'bench 11' .*?(\d+)/20.*? turns", drawn.getvalue())
        assert len(set(bar)) >= 3 and bar[-1] == "20", bar
        text = term.text()
        assert "accuracy" in text and "Costliest turns:" in text
        assert all(len(line) <= 80 for line in term.lines())
        term.type("x")
        worst = review.costliest(1)[0]
        term.wait_for(rf"turn {worst.index + 1}/20 ")
        assert f"{worst.lost:.1f} points lost" in term.text()
        term.type("c")
        term.wait_for(r"Score race: points after each round")
        assert re.search(r"chart 1/3: score race", term.lines()[-1])
        term.type("q")
        term.child.expect(pexpect.EOF, timeout=10)
    finally:
        status = term.close()
    assert status == 0
