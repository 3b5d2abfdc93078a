"""The real ``castell play`` in a pseudo-terminal at 100x40, at 80x24 and below: names whole,
the header (round, whose turn) never scrolled away, refusals wrapped between words, PgDn
scrolling the pane that says so, and a terminal too small for the board told so plainly."""

from __future__ import annotations

import re

import pytest

from tests.support.terminal import Terminal

pytestmark = pytest.mark.timeout(60)

#: A refusal over two rows or more whose row ends fall inside words at 80 and 100 columns
#: (`beyond` at 80, `mountains` at 100), were it cut at the last column.
LONG = "move far away " + " ".join(["somewhere", "beyond", "the", "Pyrenees", "mountains"] * 5)


#: A name too long for a panel title with its marks (``▶ … (you)``) at 100x40.
NAME = "Montserrat Vilanova"


def _play(tmp_path, columns: int, rows: int) -> Terminal:
    return Terminal(["play", "--seats", "4", "--bot-delay", "0", "--name", NAME],
                    tmp_path, columns=columns, rows=rows)


def _quit(term: Terminal) -> None:
    term.type("\x1b")
    term.quit()


def _refusal(term: Terminal) -> list[str]:
    """The rows of the refusal on the status line, as shown."""
    lines = term.lines()
    end = next(i for i, line in enumerate(lines) if line.startswith(">"))
    # the last refusal above the prompt: the log's lines above may hold it as well
    start = max(i for i, line in enumerate(lines[:end]) if line.startswith("✗ "))
    return lines[start:end]


def _words_whole(rows: list[str]) -> None:
    """Every word of the refusal whole on one row: rows end between words."""
    said = " ".join(rows)
    assert len(re.findall(r"\bbeyond\b", said)) == 5, rows
    assert len(re.findall(r"\bmountains\b", said)) == 5, rows


def test_at_100_by_40_names_are_whole_and_a_long_refusal_wraps_between_words(tmp_path):
    term = _play(tmp_path, 100, 40)
    try:
        term.wait_for(rf"{NAME}'s game · round 1/10 · your turn")
        titles = [line for line in term.lines() if line.startswith(f"╭─ {NAME} ─")]
        assert titles, term.text()  # the whole name; `you` goes inside the panel
        assert any(line.startswith("│ you · ") for line in term.lines())
        # every bot's full name (Name·level) stands in a title, none cut with "…"
        names = re.findall(r"─ (?:▶ )?(\w+·\w+)[ (]", titles[0])
        assert len(names) == 3, titles[0]
        assert "…" not in titles[0]
        assert not re.search(r"[^─ ╮╭]─╮", titles[0])  # no title against its border
        term.type(LONG + "\r")
        term.wait_for(r"✗ ")
        rows = _refusal(term)
        assert len(rows) >= 2
        _words_whole(rows)
        _quit(term)
    finally:
        term.close()


def test_at_80_by_24_the_header_stays_after_pgdn_and_festivals_name_their_towns(tmp_path):
    term = _play(tmp_path, 80, 24)
    try:
        term.wait_for(r"your turn")
        lines = term.lines()
        head = lines[0]
        assert head.startswith(f"{NAME}'s game · R1/10 · your turn")
        assert re.search(r"next (festivals )?\(R3\): \w", term.text())  # towns, not rounds
        marker = term.wait_for(r"── ↓ (\d+) more lines? \(PgDn\) ──")
        below = int(marker.group(1))
        for _ in range(below // 10 + 2):
            term.type("\x1b[6~")  # PgDn, to the end of the board
            term.wait_for(r"↑ \d+ lines? above")
        lines = term.lines()
        assert lines[0] == head  # round and whose turn never scroll away
        assert any(re.search(r"↑ \d+ lines? above \(PgUp\)", line) for line in lines)
        assert not any("↓" in line for line in lines)  # the end of the board is shown
        assert any("took" in line for line in lines)  # the last player panel's last lines
        term.type(LONG + "\r")
        term.wait_for(r"✗ ")
        _words_whole(_refusal(term))
        _quit(term)
    finally:
        term.close()


def test_pgdn_with_help_open_scrolls_the_help_and_with_a_short_hint_the_board(tmp_path):
    term = _play(tmp_path, 80, 24)
    try:
        term.wait_for(r"your turn")
        term.type("help\r")
        term.wait_for(r"Esc closes · PgUp/PgDn scroll · \d+ more lines?")
        # the board's own marker says its keys are the help's while the help is open
        assert any("(Esc, then PgDn)" in line for line in term.lines())
        board = term.lines()[:3]
        assert any(line.startswith("move REGION") for line in term.lines())
        term.type("\x1b[6~")
        term.wait_for(r"\nquit +close Castell")
        assert not any(line.startswith("move REGION") for line in term.lines())  # help moved
        assert any(line.startswith("quit ") for line in term.lines())
        assert term.lines()[:3] == board  # and the board did not
        term.type("\x1b")
        term.type("chat a short note\r")
        term.type("undo\r")  # nothing to take back: a one-line refusal, not notes
        term.type("\x1b")
        term.type("help undo\r")  # a note short enough for its pane: no scroll mark on it
        term.wait_for(r"──── Esc closes")
        assert "PgUp/PgDn scroll" not in term.text()
        before = term.lines()[1:4]
        term.type("\x1b[6~")
        term.wait_for(r"↑ \d+ lines? above")
        assert term.lines()[1:4] != before  # the board, the pane marked (PgDn), scrolled
        assert term.lines()[0].startswith(f"{NAME}'s game · R1/10")
        # a question wider than the screen scrolls the input line; once answered, the
        # prompt is back in sight at the start of the last line
        term.type("\x1b")
        term.type("move bcn\r")
        term.wait_for(r"move ?✓")
        term.type("end\r")
        term.wait_for(r"end anyway\? \[y/N\]")
        term.type("y")  # typed past the screen's edge: the line scrolls
        term.settle()
        term.type("\r")
        term.wait_for(r"R1/10 · (?!your turn)|R2/10")
        term.settle()
        assert term.lines()[-1].startswith(">"), term.lines()[-1]
        _quit(term)
    finally:
        term.close()


@pytest.mark.parametrize(("columns", "rows"), [(60, 20), (79, 30), (100, 23)])
def test_below_80_by_24_the_terminal_is_said_to_be_too_small(tmp_path, columns, rows):
    term = _play(tmp_path, columns, rows)
    try:
        term.wait_for(rf"This terminal is {columns}×{rows}: the board needs at least 80×24",
                      timeout=20)
        text = term.text()
        assert "╭" not in text and "Regions" not in text  # no broken board
        assert "castell --plain" in text
        term.type("help\r")  # commands still work
        term.wait_for(r"move REGION")
        _quit(term)
    finally:
        term.close()
