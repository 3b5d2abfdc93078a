"""The client without a terminal: a view drawn by ``client.screens.render.render`` on a
recording console without colours, the way the render tests read it; the whole full-screen
client (Controller, Session, TerminalScreen) on an output that draws nothing, driven line by
line against a real server; and the plain client (Controller, Session, PlainScreen) run to its
end on lines given as its standard input."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from client.control.controller import Controller
from client.local.keys import KeyStore
from client.local.seats import SeatStore
from client.net.session import Session
from client.screens.app import TerminalScreen
from client.screens.plain import PlainScreen
from client.screens.render import render
from shared.view import RoomStatus, View
from tests.support.sample_views import NOW


def screen(view: View, me: int | None = None, events: Sequence[Any] = (), *, width: int = 100,
           now: float = NOW, max_event_lines: int = 4, **options: Any) -> str:
    """The text ``render`` puts on a ``width``-column console for seat ``me`` at ``now``."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(render(view, me, events, now=now, width=width,
                         max_event_lines=max_event_lines, **options))
    return console.export_text()


class Sized(DummyOutput):
    """prompt_toolkit's dummy output, of a chosen size (the screen asks it for its rows and
    columns): the full-screen client's logic runs with nothing drawn to a terminal."""

    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        #: How many times the bell was rung.
        self.bells = 0

    def bell(self) -> None:
        self.bells += 1

    def get_size(self) -> Size:
        return Size(rows=self.rows, columns=self.columns)


@contextlib.asynccontextmanager
async def full_screen(url: str, name: str, state: Path, *, columns: int = 100, rows: int = 40,
                      guest: bool = False, keys: Path | None = None,
                      home: str | None = None,
                      make: Callable[[Session], Controller] = Controller
                      ) -> AsyncIterator[TerminalScreen]:
    """The real full-screen client (its Controller, Session and TerminalScreen) connected to
    the server at ``url`` as ``name`` (with this home's account unless a ``guest``; seats and
    settings kept in ``state``, the account's key in ``keys``, ``state / "keys"`` unless
    given; seats under ``home`` if given, as ``castell play`` keeps them) and pumping, in this
    process, on a ``columns`` × ``rows`` output that draws nothing: what the pty tests see,
    without a pty or a client process.
    Lines are typed with ``await screen.controller.handle(line)``; the keys' effects are the
    screen's own methods (``page``, ``show_log``…), each bound to its key in one pty test.
    ``make``: the controller, from the session (``castell play``'s keeps a record)."""
    with create_pipe_input() as pipe, \
            create_app_session(input=pipe, output=Sized(columns, rows)):
        seats = SeatStore(state)
        client = Session(url, name, seats=seats, first_retry=0.05, max_retry=0.2,
                         keys=None if guest else KeyStore(keys or state / "keys"), home=home)
        screen = TerminalScreen(make(client), color=False)
        await client.open()
        pump = asyncio.create_task(client.run())
        try:
            yield screen
        finally:
            await client.stop()
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump


async def plain(url: str, name: str, state: Path, typed: str, *, guest: bool = False,
                startup: Callable[[Controller], Awaitable[None]] | None = None) -> str:
    """The real plain client (its Controller, Session and PlainScreen) connected to the server
    at ``url`` as ``name`` (seats, settings and keys kept as :func:`full_screen` keeps them),
    run in this process to its end on the lines ``typed`` as its standard input, as
    ``castell URL --plain`` runs through pipes; ``startup`` is what it does on connecting
    (``controller.start()``, as ``castell URL`` does, unless given). What it printed."""
    client = Session(url, name, seats=SeatStore(state), first_retry=0.05, max_retry=0.2,
                     keys=None if guest else KeyStore(state / "keys"))
    controller = Controller(client)
    out = io.StringIO()
    screen = PlainScreen(controller, stdin=io.StringIO(typed), stdout=out)
    begin = startup or (lambda c: c.start())
    await client.open()
    await screen.run(lambda: begin(controller))
    return out.getvalue()


def my_turn(screen: TerminalScreen) -> bool:
    """Whether a game is under way and it is the player's turn."""
    ctrl = screen.controller
    view = ctrl.view
    return (view is not None and view.status == RoomStatus.PLAYING and ctrl.me == view.turn
            and not view.done)


async def enter(screen: TerminalScreen, line: str) -> None:
    """``line`` typed at the prompt and Enter pressed: the prompt's own handling of a line
    (the notes it closes, the question it answers), and what that started, done."""
    before = set(screen._tasks)
    screen.input.text = line
    screen.input.validate_and_handle()
    await asyncio.gather(*(screen._tasks - before))


def board(screen: TerminalScreen) -> str:
    """The board as the screen draws it on its output's size, above the notes pane, the
    status line and the prompt (their rows taken from it), without its styles."""
    return "".join(text for _, text in screen._board())


async def until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Wait until ``predicate()`` holds (each push is handled as it arrives; this only looks
    again after each turn of the event loop), failing after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


def notes_pane(screen: TerminalScreen) -> str:
    """The notes pane as drawn: its title line, then the lines in view."""
    return "".join(text for _, text in screen._notes_text())


def status_line(screen: TerminalScreen) -> str:
    return "".join(text for _, text in screen._status())


def shown(screen: TerminalScreen) -> str:
    """The whole screen's text, top to bottom: the board, the notes pane if open, the status
    line and the prompt."""
    parts = [board(screen), notes_pane(screen) if screen.notes else "", status_line(screen),
             prompt(screen) + screen.input.text]
    return "\n".join(part for part in parts if part)


def prompt(screen: TerminalScreen) -> str:
    """What stands before the input on the prompt line: ``> ``, or the question asked."""
    return "".join(text for _, text in screen._prompt())


def read_whole_log(screen: TerminalScreen) -> list[str]:
    """Open the log, go to its start (Ctrl-Home) and page down (PgDn) to its end: every line
    it holds, as the pane showed them."""
    screen.show_log()
    screen.notes_top = 0
    assert "from the start" in notes_pane(screen).split("\n", 1)[0]
    seen: list[str] = []
    for _ in range(200):
        title, _, shown = notes_pane(screen).partition("\n")
        for line in shown.split("\n"):
            if not seen or line not in seen[-40:]:
                seen.append(line)
        if "more line" not in title:
            return seen
        screen.page(1)
    raise AssertionError("the log never reached its end")
