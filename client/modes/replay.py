"""``castell replay FILE``: step through a game record written by ``castell-server export``.

The record holds the seed and the actions (:mod:`shared.record`); :mod:`shared.replay`
rebuilds every state with the rules engine, and each step is drawn as a spectator sees it,
with the log of the steps so far, and a line under the board says what the step did.
Interactively: ``n``/→/Space forward, ``p``/← back, ``Home`` and ``End`` for the first and
last step, ↑/↓ to scroll a screen too short for the step, ``q`` to quit. ``--plain`` prints
every step as lines instead.
"""

from __future__ import annotations

import io
from typing import IO, Any

import attrs
from rich.cells import cell_len, set_cell_size
from rich.console import Console, Group

from client.screens.render import event_lines, render, render_plain
from shared.codec import event_to_wire
from shared.record import GameRecordFile
from shared.replay import record_steps
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo, View, make_view


@attrs.frozen
class Step:
    """One step of a replay: the view after it and the events it caused."""

    index: int
    view: View
    events: tuple[dict[str, Any], ...]
    seat: int | None  # who acted (None for the setup)


def steps_of(record: GameRecordFile) -> list[Step]:
    """Every step of the recorded game, from the setup to the last action."""
    seats = tuple(SeatInfo(i, name, bot=bot)
                  for i, (name, bot) in enumerate(zip(record.seats, record.bots, strict=True)))

    def view(state: GameState) -> View:
        room = RoomInfo(record.room, record.name, record.variant, len(record.seats),
                        turn_seconds=record.turn_seconds,
                        status=RoomStatus.FINISHED if state.over else RoomStatus.PLAYING,
                        players=seats)
        return make_view(room, state)

    out = []
    for i, (state, events) in enumerate(record_steps(record)):
        seat = record.actions[i - 1].seat if i else None
        wire = tuple(event_to_wire(e) for e in events)
        if i and record.actions[i - 1].timed_out:  # as the room's push said it
            wire = ({"kind": "timeout", "seat": seat}, *wire)
        out.append(Step(i, view(state), wire, seat))
    return out


#: How many steps back the viewer's log reaches (it shows the latest lines that fit).
LOG_STEPS = 40


def _header(step: Step, total: int) -> str:
    return f"step {step.index}/{total}"


def log_events(steps: list[Step], index: int) -> list[dict[str, Any]]:
    """The events of the steps up to ``index``, oldest first: the log of the game so far,
    not only of the step shown (a step is often one bare action)."""
    return [e for step in steps[max(1, index - LOG_STEPS):index + 1] for e in step.events]


def print_plain(record: GameRecordFile, out: IO[str]) -> None:
    """Every step as plain lines: the setup's board, each step's events, the final board."""
    steps = steps_of(record)
    total = len(steps) - 1

    def board(step: Step) -> list[str]:
        lines = render_plain(step.view, None)
        lines[0] = lines[0].replace(" · spectating", " · replay")
        return lines

    print(f"replay of {record.name!r} (room {record.room}, {total} actions)", file=out)
    print(*board(steps[0]), sep="\n", file=out)
    for step in steps[1:]:
        print(f"-- {_header(step, total)}", file=out)
        for line in event_lines(step.view, step.events):
            print(f"  {line}", file=out)
    print("-- the final board", file=out)
    print(*board(steps[-1]), sep="\n", file=out)


def step_text(step: Step) -> str:
    """What a step did, in one line: its events as the log says them (a festival's results
    after its title), or for step 0, that it is the board as the game was set up."""
    if step.index == 0:
        return "the board as the game was set up: → or n plays the first action"
    return " · ".join(line.strip() for line in event_lines(step.view, step.events)) \
        or "nothing to show"


def _fit(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` cells, an ellipsis marking the cut."""
    if cell_len(text) <= columns:
        return text
    return set_cell_size(text, max(0, columns - 1)) + "…"


class Viewer:
    """The interactive viewer's state and what it draws, apart from the terminal: the step
    shown and how far it is scrolled, the board of that step (:meth:`body`), the line that
    says what the step did (:meth:`step_line`) and the footer (:meth:`footer`)."""

    def __init__(self, record: GameRecordFile, *, color: bool = True) -> None:
        self.record = record
        self.color = color
        self.steps = steps_of(record)
        self.total = len(self.steps) - 1
        self.at = 0
        #: The first line of the step shown (↑/↓), and how many lines are hidden below.
        self.scroll = 0
        self.hidden = 0

    def go(self, index: int) -> None:
        self.at = max(0, min(self.total, index))

    def scroll_by(self, delta: int) -> None:
        self.scroll = max(0, self.scroll + delta)

    def body(self, columns: int, rows: int) -> list[str]:
        """The step's board in ``rows`` lines of ``columns`` (ANSI text): a screen too short
        for the board shows the players first; what does not fit scrolls."""
        step = self.steps[self.at]
        buf = io.StringIO()
        color = self.color
        console = Console(file=buf, force_terminal=True, width=columns, highlight=False,
                          color_system="256" if color else None, no_color=not color,
                          emoji=False)
        short = False
        while True:  # a screen too short for the board shows the players first
            buf.seek(0)
            buf.truncate()
            # The header needs no mark of its own: the footer says it is a replay.
            console.print(Group(render(step.view, None, log_events(self.steps, self.at),
                                       width=columns, max_event_lines=8, short=short,
                                       watching="")))
            lines = buf.getvalue().rstrip("\n").split("\n")
            if short or len(lines) <= rows:
                break
            short = True
        rows = max(1, rows)
        self.scroll = min(self.scroll, max(0, len(lines) - rows))
        self.hidden = max(0, len(lines) - rows - self.scroll)
        return lines[self.scroll:self.scroll + rows]

    def step_line(self, columns: int) -> str:
        """What the step shown did, on one line (it stays in view however the board is
        scrolled: on a small screen the log is below the board)."""
        return _fit(f" {step_text(self.steps[self.at])}", columns)

    def footer(self, columns: int) -> str:
        where = f" replay {self.record.name!r} · {_header(self.steps[self.at], self.total)}"
        if self.hidden or self.scroll:  # the step is taller than the screen: say so
            where += f" · ↑/↓ scroll{f' ({self.hidden} more)' if self.hidden else ''}"
        keys = " · n/→ next · p/← back · PgDn/PgUp ±10 · Home/End · q quit "
        for shorter in (" · n/p · PgDn/PgUp · Home/End · q ", " · n/p · Home/End · q "):
            if len(where + keys) > columns:
                keys = shorter
        return where + keys


def run_viewer(record: GameRecordFile, *, color: bool = True) -> None:
    """The interactive viewer (full screen)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import ANSI, to_formatted_text
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
    from prompt_toolkit.output.color_depth import ColorDepth

    viewer = Viewer(record, color=color)
    kb = KeyBindings()

    for keys, delta in ((("down",), 1), (("j",), 1), (("up",), -1), (("k",), -1)):
        kb.add(*keys)(lambda event, d=delta: viewer.scroll_by(d))

    for keys, delta in ((("n",), 1), (("right",), 1), (("space",), 1), (("enter",), 1),
                        (("p",), -1), (("left",), -1), (("backspace",), -1),
                        (("pagedown",), 10), (("pageup",), -10)):
        kb.add(*keys)(lambda event, d=delta: viewer.go(viewer.at + d))
    for keys in (("home",), ("g",)):
        kb.add(*keys)(lambda event: viewer.go(0))
    for keys in (("end",), ("G",)):
        kb.add(*keys)(lambda event: viewer.go(viewer.total))
    for keys in (("q",), ("c-c",), ("escape",)):
        kb.add(*keys, eager=True)(lambda event: event.app.exit())

    def body() -> Any:
        size = app.output.get_size()
        # two rows below the board: what the step did, and the footer
        return to_formatted_text(ANSI("\n".join(viewer.body(size.columns, size.rows - 2))))

    def step_line() -> Any:
        return [("bold", viewer.step_line(app.output.get_size().columns))]

    def footer() -> Any:
        return [("reverse", viewer.footer(app.output.get_size().columns))]

    app: Application[None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(body), wrap_lines=False),
                              Window(FormattedTextControl(step_line), height=1),
                              Window(FormattedTextControl(footer), height=1)])),
        key_bindings=kb, full_screen=True,
        color_depth=None if color else ColorDepth.DEPTH_1_BIT,
    )
    app.ttimeoutlen = 0.05
    app.run()


def load(path: str) -> GameRecordFile:
    with open(path, encoding="utf-8") as f:
        return GameRecordFile.from_json(f.read())
