"""``castell replay FILE``: step through a game record written by ``castell-server export``.

The record holds the seed and the actions (:mod:`shared.record`); :mod:`shared.replay`
rebuilds every state with the rules engine, and each step is drawn as a spectator sees it,
with the log of the steps so far. Interactively: ``n``/→/Space forward, ``p``/← back,
``Home`` and ``End`` for the first and last step, ↑/↓ to scroll a screen too short for the
step, ``q`` to quit. ``--plain`` prints every step as lines instead.
"""

from __future__ import annotations

import io
from typing import IO, Any

import attrs
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


def run_viewer(record: GameRecordFile, *, color: bool = True) -> None:
    """The interactive viewer (full screen)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import ANSI, to_formatted_text
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
    from prompt_toolkit.output.color_depth import ColorDepth

    steps = steps_of(record)
    total = len(steps) - 1
    at = [0]
    #: The first line of the step shown (↑/↓), and how many lines are hidden below.
    scroll = [0]
    hidden = [0]
    kb = KeyBindings()

    def go(index: int) -> None:
        at[0] = max(0, min(total, index))

    def scroll_by(delta: int) -> None:
        scroll[0] = max(0, scroll[0] + delta)

    for keys, delta in ((("down",), 1), (("j",), 1), (("up",), -1), (("k",), -1)):
        kb.add(*keys)(lambda event, d=delta: scroll_by(d))

    for keys, delta in ((("n",), 1), (("right",), 1), (("space",), 1), (("enter",), 1),
                        (("p",), -1), (("left",), -1), (("backspace",), -1),
                        (("pagedown",), 10), (("pageup",), -10)):
        kb.add(*keys)(lambda event, d=delta: go(at[0] + d))
    for keys in (("home",), ("g",)):
        kb.add(*keys)(lambda event: go(0))
    for keys in (("end",), ("G",)):
        kb.add(*keys)(lambda event: go(total))
    for keys in (("q",), ("c-c",), ("escape",)):
        kb.add(*keys, eager=True)(lambda event: event.app.exit())

    def body() -> Any:
        size = app.output.get_size()
        step = steps[at[0]]
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=True, width=size.columns, highlight=False,
                          color_system="256" if color else None, no_color=not color,
                          emoji=False)
        short = False
        while True:  # a screen too short for the board shows the players first
            buf.seek(0)
            buf.truncate()
            # The header needs no mark of its own: the footer says it is a replay.
            console.print(Group(render(step.view, None, log_events(steps, at[0]),
                                       width=size.columns, max_event_lines=8, short=short,
                                       watching="")))
            lines = buf.getvalue().rstrip("\n").split("\n")
            if short or len(lines) < size.rows:
                break
            short = True
        rows = max(1, size.rows - 1)
        scroll[0] = min(scroll[0], max(0, len(lines) - rows))
        hidden[0] = max(0, len(lines) - rows - scroll[0])
        shown = lines[scroll[0]:scroll[0] + rows]
        return to_formatted_text(ANSI("\n".join(shown)))

    def footer() -> Any:
        where = f" replay {record.name!r} · {_header(steps[at[0]], total)}"
        more = hidden[0] or scroll[0]
        if more:  # the step is taller than the screen: say how to see the rest
            where += f" · ↑/↓ scroll{f' ({hidden[0]} more)' if hidden[0] else ''}"
        keys = " · n/→ next · p/← back · PgDn/PgUp ±10 · Home/End · q quit "
        for shorter in (" · n/p · PgDn/PgUp · Home/End · q ", " · n/p · Home/End · q "):
            if len(where + keys) > app.output.get_size().columns:
                keys = shorter
        return [("reverse", where + keys)]

    app: Application[None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(body), wrap_lines=False),
                              Window(FormattedTextControl(footer), height=1)])),
        key_bindings=kb, full_screen=True,
        color_depth=None if color else ColorDepth.DEPTH_1_BIT,
    )
    app.ttimeoutlen = 0.05
    app.run()


def load(path: str) -> GameRecordFile:
    with open(path, encoding="utf-8") as f:
        return GameRecordFile.from_json(f.read())
