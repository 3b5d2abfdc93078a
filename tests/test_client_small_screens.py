"""``castell play`` at 100x40, at 80x24 and below: names whole, the header (round, whose turn)
never scrolled away, refusals wrapped between words, PgDn scrolling the pane that says so,
and a terminal too small for the board told so plainly.

What each size shows is the full-screen client's own drawing: those tests run the real
client (Controller, Session, TerminalScreen) against a real server in this process, at the
size given, the game started as ``castell play`` starts it
(:func:`tests.support.screens.full_screen`). The real ``castell play`` in a pseudo-terminal
checks what only a terminal shows: an 80x24 one, the keys of the game's log, its prompt
scrolled sideways by a long question; and one too small."""

from __future__ import annotations

import re

import pexpect
import pytest

from tests.support.screens import (
    board,
    enter,
    full_screen,
    my_turn,
    notes_pane,
    status_line,
    until,
)
from tests.support.terminal import Terminal

pytestmark = pytest.mark.timeout(60)

#: A refusal over two rows or more whose row ends fall inside words at 80 and 100 columns
#: (`beyond` at 80, `mountains` at 100), were it cut at the last column.
LONG = "move far away " + " ".join(["somewhere", "beyond", "the", "Pyrenees", "mountains"] * 5)

PAGE_UP = "\x1b[5~"
PAGE_DOWN = "\x1b[6~"
CTRL_HOME = "\x1b[1;5H"
F2 = "\x1bOQ"
ESC = "\x1b"


#: A name too long for a panel title with its marks (``▶ … (you)``) at 100x40.
NAME = "Montserrat Vilanova"


async def _play(screen) -> None:
    """The game ``castell play --seats 4`` starts (bots in the other seats), at the player's
    turn."""
    await screen.controller.start_play(4, "normal", "normal")
    await until(lambda: my_turn(screen))


def _lines(screen) -> list[str]:
    return [line.rstrip() for line in board(screen).split("\n")]


def _words_whole(rows: list[str]) -> None:
    """Every word of the refusal whole on one row: rows end between words."""
    said = " ".join(rows)
    assert len(re.findall(r"\bbeyond\b", said)) == 5, rows
    assert len(re.findall(r"\bmountains\b", said)) == 5, rows


async def _refused_long(screen) -> list[str]:
    """The rows of the status line once LONG is refused."""
    await enter(screen, LONG)
    rows = status_line(screen).split("\n")
    assert rows[0].startswith("✗ "), rows
    return rows


async def test_at_100_by_40_names_are_whole_and_a_long_refusal_wraps_between_words(
        server, url, tmp_path):
    async with full_screen(url, NAME, tmp_path, columns=100, rows=40, guest=True) as screen:
        await _play(screen)
        lines = _lines(screen)
        assert f"{NAME}'s game · round 1/10 · your turn" in lines[0], lines[0]
        titles = [line for line in lines if line.startswith(f"╭─ {NAME} ─")]
        assert titles, "\n".join(lines)  # the whole name; `you` goes inside the panel
        assert any(line.startswith("│ you · ") for line in lines)
        # every bot's full name (Name·level) stands in a title, none cut with "…"
        names = re.findall(r"─ (?:▶ )?(\w+·\w+)[ (]", titles[0])
        assert len(names) == 3, titles[0]
        assert "…" not in titles[0]
        assert not re.search(r"[^─ ╮╭]─╮", titles[0])  # no title against its border
        rows = await _refused_long(screen)
        assert len(rows) >= 2 and all(len(row) <= 100 for row in rows)
        _words_whole(rows)


async def test_at_80_by_24_the_header_stays_after_pgdn_and_festivals_name_their_towns(
        server, url, tmp_path):
    async with full_screen(url, NAME, tmp_path, columns=80, rows=24, guest=True) as screen:
        await _play(screen)
        lines = _lines(screen)
        head = lines[0]
        assert head.startswith(f"{NAME}'s game · R1/10 · your turn"), head
        assert re.search(r"next (festivals )?\(R3\): \w", board(screen))  # towns, not rounds
        # (the marker stands over the event lines, which never scroll)
        marker = next(filter(None, (re.search(r"── ↓ (\d+) more lines? \(PgDn\) ──", line)
                                    for line in lines)), None)
        assert marker, lines
        for _ in range(int(marker.group(1)) // 10 + 2):
            screen.page(1)  # PgDn, to the end of the board
        lines = _lines(screen)
        assert lines[0] == head  # round and whose turn never scroll away
        assert any(re.search(r"↑ \d+ lines? above \(PgUp\)", line) for line in lines)
        assert not any("↓" in line for line in lines)  # the end of the board is shown
        assert any("took" in line for line in lines)  # the last player panel's last lines
        rows = await _refused_long(screen)
        assert all(len(row) <= 80 for row in rows)
        _words_whole(rows)


async def test_pgdn_with_help_open_scrolls_the_help_and_with_a_short_hint_the_board(
        server, url, tmp_path):
    async with full_screen(url, NAME, tmp_path, columns=80, rows=24, guest=True) as screen:
        await _play(screen)
        await enter(screen, "help")
        assert re.match(r"──── Esc closes · PgUp/PgDn scroll · \d+ more lines?$",
                        notes_pane(screen).split("\n")[0]), notes_pane(screen)
        # the board's own marker says its keys are the help's while the help is open
        assert "(Esc, then PgDn)" in board(screen)
        top = _lines(screen)[:3]
        assert any(line.startswith("move REGION") for line in notes_pane(screen).split("\n"))
        screen.page(1)  # PgDn
        help_ = notes_pane(screen)
        assert re.search(r"\nquit +close Castell", help_), help_
        assert not any(line.startswith("move REGION") for line in help_.split("\n"))  # moved
        assert _lines(screen)[:3] == top  # and the board did not
        screen.notes, screen.log_open = [], False  # (Esc)
        await enter(screen, "chat a short note")
        await enter(screen, "undo")  # nothing to take back: a one-line refusal, not notes
        assert status_line(screen).startswith("✗ ") and not screen.notes
        await enter(screen, "help undo")  # a note short enough for its pane: no scroll mark
        assert notes_pane(screen).startswith("──── Esc closes\n"), notes_pane(screen)
        assert "PgUp/PgDn scroll" not in notes_pane(screen) + board(screen)
        before = _lines(screen)[1:4]
        screen.page(1)  # PgDn
        lines = _lines(screen)
        assert any(re.search(r"↑ \d+ lines? above", line) for line in lines)
        assert lines[1:4] != before  # the board, the pane marked (PgDn), scrolled
        assert lines[0].startswith(f"{NAME}'s game · R1/10")


@pytest.mark.parametrize(("columns", "rows"), [(60, 20), (79, 30), (100, 23)])
async def test_below_80_by_24_the_board_is_said_not_to_fit(server, url, tmp_path, columns,
                                                           rows):
    async with full_screen(url, NAME, tmp_path, columns=columns, rows=rows,
                           guest=True) as screen:
        await _play(screen)
        text = board(screen)
        assert re.sub(r"\s+", " ", text).startswith(
            f"This terminal is {columns}×{rows}: the board needs at least 80×24"), text
        assert "╭" not in text and "Regions" not in text  # no broken board
        assert "castell --plain" in text
        await enter(screen, "help")  # commands still work
        assert "move REGION" in notes_pane(screen)


def test_below_80_by_24_the_terminal_is_said_to_be_too_small(tmp_path):
    term = Terminal(["play", "--seats", "4", "--bot-delay", "0", "--name", NAME], tmp_path,
                    columns=60, rows=20)
    try:
        term.wait_for(r"This terminal is 60×20: the board needs at least 80×24", timeout=20)
        term.wait_for(r"`hint`")  # the game's status line: no longer its waiting room
        text = term.text()
        assert "╭" not in text and "Regions" not in text  # no broken board
        assert "castell --plain" in text
        term.type("help\r")  # commands still work
        term.wait_for(r"move REGION")
        term.type("\x1b")
        term.quit()
    finally:
        term.close()


def test_an_80_by_24_terminal_its_board_the_log_s_keys_and_the_prompt_after_a_question(
        tmp_path):
    """The real ``castell play`` in an 80x24 terminal: the board and the player's own panel
    at once; the keys of the log (F2, Ctrl-Home, PgDn, PgUp, Esc), and three wrong lines
    typed at once, all kept; a question wider than the screen scrolls the input line, and
    once it is answered the prompt is back in sight at the start of the last line; a typo
    is answered with a suggestion, Tab completes, and `leave` goes to the lobby."""
    rows = 24
    term = Terminal(["play", "--seats", "3", "--bot-delay", "0", "--name", "Anna"], tmp_path,
                    columns=80, rows=rows)
    try:
        term.wait_for(r"your turn")
        lines = term.lines()
        assert "Anna's game" in lines[0] and lines[1].startswith("╭─ Regions")  # one line
        assert "festivals" in next(line for line in lines if line.startswith("│ reg "))
        assert any("Anna (you)" in line for line in lines)  # her team without scrolling
        assert lines[-2].startswith("Your turn")

        # the log's keys, and refusals typed faster than they are answered
        term.type("mvoe\rmove nowhere\rrecruit 99\r")
        term.wait_for(r"✗ .*casteller size")
        term.type("".join(f"chat line {i}\r" for i in range(rows // 2)))  # a log to page
        term.type("log\r")
        term.wait_for(r"──── Game log")
        term.wait_for(rf"Anna: line {rows // 2 - 1}")  # it follows the game: its latest lines
        assert "from the start" not in term.text()
        term.type(CTRL_HOME)
        term.wait_for(r"Game log · .*from the start")
        first = term.text()
        term.type(PAGE_DOWN)
        term.wait_for(r"(?m)──── Game log · Esc closes · PgUp/PgDn scroll( · \d+ more lines?)?$")
        assert term.text() != first
        term.type(PAGE_UP)
        term.wait_for(r"Game log · .*from the start")
        # PgDn to the log's end (the bots' turns before hers make it one page or more)
        seen = [first]
        while more := re.search(r"(?m)^──── Game log · .* · (\d+) more lines?", term.text()):
            term.type(PAGE_DOWN)
            term.wait_for(r"(?m)^──── Game log · Esc closes · PgUp/PgDn scroll"
                          rf"(?! · {more.group(1)} more)( · \d+ more lines?)?$")
            seen.append(term.text())
        log = "\n".join(seen)
        assert "Anna: line" in log
        refusals = list(dict.fromkeys(re.findall(r"(?m)^✗ .*$", log)))
        assert len(refusals) == 3, log
        assert "mvoe" in refusals[0] and "nowhere" in refusals[1] and "99" in refusals[2]
        term.type(ESC)
        term.wait_for(r"^(?![\s\S]*──── Game log)")
        assert "`log`" in term.lines()[-2]  # the status line offers the log
        term.type(F2)  # F2 opens it too, and closes it
        term.wait_for(r"──── Game log")
        term.type(F2)
        term.wait_for(r"^(?![\s\S]*──── Game log)")

        # a question wider than the screen
        term.type("move bcn\r")  # (the first move goes anywhere)
        term.wait_for(r"move ?✓")
        term.type("end\r")
        term.wait_for(r"end anyway\? \[y/N\]")
        term.type_drawn("y")  # typed past the screen's edge: the line scrolls
        term.type("\r")
        term.wait_for(r"R1/10 · (?!your turn)|R2/10")
        assert term.lines()[-1].startswith(">"), term.lines()[-1]

        term.type("mvoe\r")
        term.wait_for(r"did you mean `move`")
        term.type("le\t")
        term.wait_for(r"> leave")
        term.type("\r")
        term.wait_for(r"Open rooms on")
        term.type("quit\r")
        term.child.expect(pexpect.EOF, timeout=5)
    finally:
        status = term.close()
    assert status == 0
