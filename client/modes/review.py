"""``castell review FILE``: review a recorded game on this computer, then step through it.

The record (written by ``castell-server export`` or ``castell play --export``) is reviewed
by :func:`shared.review.review_game`, with a progress bar (``--plain``: a line every ten
turns); then the viewer opens on the summary (``--plain`` prints the whole review instead,
:func:`client.screens.review.plain_lines`).

The viewer's keys (:meth:`ReviewViewer.key`, each bound in :func:`build_app`): ``n``/→/Space
the next turn, ``p``/← the one before, ``Home``/``End`` the first and last, ``x`` the next of
the costliest turns (worst first, over and over), ``b`` the board of the turn as it stood,
after the turn as played, then after the better line, ``c`` the charts (again: the next
one), ``s`` the summary, ↑/↓ to scroll a page taller than the screen, ``q`` to quit.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, Final

from rich.cells import cell_len, set_cell_size
from rich.console import Console, Group
from rich.text import Text

from client.screens.charts import CHARTS
from client.screens.render import render
from client.screens.review import plain_lines, summary_lines, turn_lines
from shared.codec import event_to_wire
from shared.engine import apply
from shared.errors import CastellError
from shared.events import Event
from shared.record import GameRecordFile
from shared.replay import record_steps
from shared.review import DEFAULT_BUDGET, Budget, Review, TurnReview, review_game
from shared.sanitize import safe
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo, View, make_view

#: The boards a turn can show (``b`` goes round them).
BOARDS: Final = ("as it stood", "after the turn as played", "after the better line")
#: How each mark is coloured.
MARK_STYLES: Final = {"good": "green", "inaccuracy": "yellow", "mistake": "dark_orange",
                      "blunder": "bold red"}
#: Turns between two progress lines of ``--plain``.
PLAIN_EVERY: Final = 10


def plain_progress(out: IO[str], budget: Budget = DEFAULT_BUDGET) -> Callable[[int, int], None]:
    """A review's progress as lines on ``out`` (``--plain``, screen readers): one as it
    starts, then one every :data:`PLAIN_EVERY` turns and at the end."""
    def said(done: int, total: int) -> None:
        if done == 0:
            print(f"reviewing {total} turns against the hard bot "
                  f"({budget.samples} samples × {budget.candidates} candidates)…",
                  file=out, flush=True)
        elif done % PLAIN_EVERY == 0 or done == total:
            print(f"  {done}/{total} turns reviewed", file=out, flush=True)

    return said


@contextmanager
def progress_bar(out: IO[str], name: str, *, color: bool = True
                 ) -> Iterator[Callable[[int, int], None]]:
    """A review's progress bar on the terminal ``out`` while the block runs: the block calls
    what it is given with (turns done, turns in all), as :func:`shared.review.review_game`'s
    ``progress`` or as a server's ``review_progress`` pushes say them."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(file=out, force_terminal=True, color_system="256" if color else None,
                      no_color=not color, highlight=False)
    with Progress(TextColumn("reviewing {task.description}"), BarColumn(),
                  MofNCompleteColumn(), TextColumn("turns"), TimeElapsedColumn(),
                  TextColumn("left"), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task(repr(safe(name))[:30], total=None)

        def moved(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield moved


def compute(record: GameRecordFile, *, out: IO[str], plain: bool, seed: int = 0,
            budget: Budget = DEFAULT_BUDGET, color: bool = True) -> Review:
    """The record's review, with a progress bar on ``out`` (``plain``: lines instead)."""
    if plain:
        return review_game(record, seed=seed, budget=budget,
                           progress=plain_progress(out, budget))
    with progress_bar(out, record.name, color=color) as moved:
        return review_game(record, seed=seed, budget=budget, progress=moved)


def print_plain(review: Review, out: IO[str]) -> None:
    print(*plain_lines(review), sep="\n", file=out)


def _fit(text: str, columns: int) -> str:
    if cell_len(text) <= columns:
        return text
    return set_cell_size(text, max(0, columns - 1)) + "…"


class ReviewViewer:
    """The review viewer's state and what it draws, apart from the terminal: the page (the
    summary, a turn, a chart), the turn shown and its board, and how far the page is
    scrolled; :meth:`key` does what a key does, :meth:`body` and :meth:`footer` draw."""

    def __init__(self, record: GameRecordFile, review: Review, *, color: bool = True) -> None:
        self.record = record
        self.review = review
        self.color = color
        steps = record_steps(record)
        self.states: list[GameState] = [s for s, _ in steps]
        self.events: list[list[Event]] = [e for _, e in steps]
        self.page = "summary"
        self.at = 0
        self.board = 0
        self.chart = 0
        self.scroll = 0
        self.hidden = 0
        #: The costliest turns, worst first: each player's named ones, together.
        named = {i for p in review.players for i in p.costliest}
        self.costly = [t.index for t in review.costliest() if t.index in named]
        self.costly_at = -1
        self.quit = False

    # What the keys do ---------------------------------------------------------------------

    def key(self, name: str) -> bool:
        """Do what key ``name`` does (its prompt_toolkit name: ``n``, ``right``, ``home``…);
        False for a key that does nothing here."""
        action = self._keys().get(name)
        if action is None:
            return False
        action()
        return True

    def _keys(self) -> dict[str, Callable[[], None]]:
        last = len(self.review.turns) - 1
        return {
            "n": lambda: self.go(self.at + 1 if self.page == "turn" else self.at),
            "right": lambda: self.go(self.at + 1 if self.page == "turn" else self.at),
            "space": lambda: self.go(self.at + 1 if self.page == "turn" else self.at),
            "p": lambda: self.go(self.at - 1),
            "left": lambda: self.go(self.at - 1),
            "home": lambda: self.go(0),
            "end": lambda: self.go(last),
            "x": self.next_costly,
            "b": self.next_board,
            "c": self.next_chart,
            "s": lambda: self._page("summary"),
            "down": lambda: self.scroll_by(1),
            "j": lambda: self.scroll_by(1),
            "up": lambda: self.scroll_by(-1),
            "k": lambda: self.scroll_by(-1),
            "pagedown": lambda: self.scroll_by(10),
            "pageup": lambda: self.scroll_by(-10),
            "q": self._quit,
            "escape": self._quit,
            "c-c": self._quit,
        }

    def _quit(self) -> None:
        self.quit = True

    def _page(self, page: str) -> None:
        if page != self.page:
            self.scroll = 0
        self.page = page

    def go(self, index: int) -> None:
        """Show turn ``index`` (kept within the game), as it stood."""
        if not self.review.turns:
            return
        index = max(0, min(len(self.review.turns) - 1, index))
        if index != self.at or self.page != "turn":
            self.scroll = 0
            self.board = 0
        self.at = index
        self.page = "turn"

    def next_costly(self) -> None:
        """The next of the costliest turns (worst first, then round again)."""
        if not self.costly:
            return
        self.costly_at = (self.costly_at + 1) % len(self.costly)
        self.go(self.costly[self.costly_at])

    def next_board(self) -> None:
        """The turn's next board (:data:`BOARDS`); on another page, the turn's first."""
        if self.page != "turn":
            self.go(self.at)
            return
        self.board = (self.board + 1) % len(BOARDS)
        if self.board == 2 and not self.turn.reviewed:
            self.board = 0
        self.scroll = 0

    def next_chart(self) -> None:
        if self.page == "chart":
            self.chart = (self.chart + 1) % len(CHARTS)
        self._page("chart")

    def scroll_by(self, delta: int) -> None:
        self.scroll = max(0, self.scroll + delta)

    @property
    def turn(self) -> TurnReview:
        return self.review.turns[self.at]

    # Drawing ------------------------------------------------------------------------------

    def _console(self, buf: io.StringIO, columns: int) -> Console:
        return Console(file=buf, force_terminal=True, width=columns, highlight=False,
                       color_system="256" if self.color else None, no_color=not self.color,
                       emoji=False)

    def _view(self, state: GameState) -> View:
        record = self.record
        seats = tuple(SeatInfo(i, name, bot=bot)
                      for i, (name, bot) in enumerate(zip(record.seats, record.bots,
                                                          strict=True)))
        room = RoomInfo(record.room, record.name, record.variant, len(record.seats),
                        turn_seconds=record.turn_seconds,
                        status=RoomStatus.FINISHED if state.over else RoomStatus.PLAYING,
                        players=seats)
        return make_view(room, state)

    def board_state(self) -> tuple[GameState, list[dict[str, Any]]]:
        """The state of the turn's board shown now (:data:`BOARDS`), with the events that
        led there from the turn's start."""
        turn = self.turn
        if self.board == 0:
            return self.states[turn.start], []
        if self.board == 1:
            events = [e for i in range(turn.start + 1, turn.end + 1) for e in self.events[i]]
            return self.states[turn.end], [event_to_wire(e) for e in events]
        state = self.states[turn.start]
        happened: list[Event] = []
        for action in turn.hard or ():
            try:
                state, new = apply(state, turn.seat, action)
            except CastellError:
                break
            happened.extend(new)
        return state, [event_to_wire(e) for e in happened]

    def _turn_text(self, columns: int) -> Text:
        turn = self.turn
        lines = turn_lines(self.review, turn, columns)
        text = Text()
        head_style = MARK_STYLES.get(turn.mark or "", "") if self.color else ""
        for i, line in enumerate(lines):
            text.append(line + ("\n" if i < len(lines) - 1 else ""),
                        style=f"bold {head_style}" if i == 0 else "")
        return text

    def _lines(self, columns: int, rows: int) -> list[str]:
        buf = io.StringIO()
        console = self._console(buf, columns)
        if self.page == "summary":
            for line in summary_lines(self.review, columns):
                console.print(Text(line), overflow="crop", no_wrap=True)
            return buf.getvalue().rstrip("\n").split("\n")
        if self.page == "chart":
            _name, draw = CHARTS[self.chart]
            return draw(self.review, columns, max(1, rows), color=self.color)
        state, events = self.board_state()
        short = False
        while True:  # a screen too short for the board shows the players first
            buf.seek(0)
            buf.truncate()
            console.print(self._turn_text(columns), overflow="crop", no_wrap=True)
            console.print(Text(f"─ the board {BOARDS[self.board]} (b: the next board) ",
                               style="dim"))
            console.print(Group(render(self._view(state), None, events, width=columns,
                                       max_event_lines=6, short=short, watching="")))
            lines = buf.getvalue().rstrip("\n").split("\n")
            if short or len(lines) <= rows:
                return lines
            short = True

    def body(self, columns: int, rows: int) -> list[str]:
        """The page in ``rows`` lines of ``columns`` (ANSI text); what does not fit scrolls."""
        rows = max(1, rows)
        lines = self._lines(columns, rows)
        self.scroll = min(self.scroll, max(0, len(lines) - rows))
        self.hidden = max(0, len(lines) - rows - self.scroll)
        return lines[self.scroll:self.scroll + rows]

    def footer(self, columns: int) -> str:
        """Where the viewer is and its keys, on one line of ``columns``."""
        if self.page == "summary":
            where = "summary"
        elif self.page == "chart":
            where = f"chart {self.chart + 1}/{len(CHARTS)}: {CHARTS[self.chart][0]}"
        else:
            where = f"turn {self.at + 1}/{len(self.review.turns)}"
        head = f" review {safe(self.record.name)!r} · {where}"
        if self.hidden or self.scroll:
            head += f" · ↑/↓{f' ({self.hidden} more)' if self.hidden else ''}"
        keys = " · n/p turns · x costliest · b board · c charts · s summary · q quit "
        for shorter in (" · n/p · x worst · b board · c charts · s · q ", " · n/p x b c s q "):
            if cell_len(head + keys) > columns:
                keys = shorter
        return _fit(head + keys, columns)


def build_app(viewer: ReviewViewer) -> Any:
    """The full-screen application of ``viewer``: the page, then the footer."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import ANSI, to_formatted_text
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
    from prompt_toolkit.output.color_depth import ColorDepth

    kb = KeyBindings()
    for name in viewer._keys():
        def press(event: Any, name: str = name) -> None:
            viewer.key(name)
            if viewer.quit:
                event.app.exit()

        kb.add(name, eager=name in ("q", "escape", "c-c"))(press)
    for name, same in (("enter", "n"), ("backspace", "p"), ("g", "home"), ("G", "end")):
        kb.add(name)(lambda event, same=same: viewer.key(same))

    def body() -> Any:
        size = app.output.get_size()
        return to_formatted_text(ANSI("\n".join(viewer.body(size.columns, size.rows - 1))))

    def footer() -> Any:
        return [("reverse", viewer.footer(app.output.get_size().columns))]

    app: Application[None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(body), wrap_lines=False),
                              Window(FormattedTextControl(footer), height=1)])),
        key_bindings=kb, full_screen=True,
        color_depth=None if viewer.color else ColorDepth.DEPTH_1_BIT,
    )
    app.ttimeoutlen = 0.05
    return app


def run_viewer(record: GameRecordFile, review: Review, *, color: bool = True) -> None:
    """The interactive viewer (full screen), until ``q``."""
    build_app(ReviewViewer(record, review, color=color)).run()
