"""The full-screen client without a terminal: a view drawn by ``client.screens.render.render`` on a
recording console without colours, the way the render tests read it; and the whole
full-screen client (Controller, Session, TerminalScreen) on an output that draws nothing,
driven line by line against a real server."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable, Sequence
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
from client.screens.render import render
from shared.view import View
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

    def get_size(self) -> Size:
        return Size(rows=self.rows, columns=self.columns)


@contextlib.asynccontextmanager
async def full_screen(url: str, name: str, state: Path, *, columns: int = 100, rows: int = 40,
                      guest: bool = False, make: Callable[[Session], Controller] = Controller
                      ) -> AsyncIterator[TerminalScreen]:
    """The real full-screen client (its Controller, Session and TerminalScreen) connected to
    the server at ``url`` as ``name`` (with this home's account unless a ``guest``; seats and
    keys kept under ``state``) and pumping, in this process, on a ``columns`` × ``rows``
    output that draws nothing: what the pty tests see, without a pty or a client process.
    Lines are typed with ``await screen.controller.handle(line)``; the keys' effects are the
    screen's own methods (``page``, ``show_log``…), each bound to its key in one pty test.
    ``make``: the controller, from the session (``castell play``'s keeps a record)."""
    with create_pipe_input() as pipe, \
            create_app_session(input=pipe, output=Sized(columns, rows)):
        seats = SeatStore(state)
        client = Session(url, name, seats=seats, first_retry=0.05, max_retry=0.2,
                         keys=None if guest else KeyStore(state / "keys"))
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
