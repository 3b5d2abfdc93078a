"""The full-screen terminal: the board above, the prompt at the bottom.

One prompt_toolkit ``Application`` holds four stacked parts: the board (the rich rendering
of :mod:`client.screens.render`, printed to a string and shown as ANSI text; the header
stays on top, PgUp/PgDn scroll the rest, Home goes back to its top, and the player's own
turn or line brings it back there too), whose last lines are the event lines
(:mod:`client.screens.eventline`: what the last turns did, every turn since the player's
last action among them, the player's own actions, the last festivals' results and the
server's word until the player's next action, the chat, and a marker of the turns and chat
lines they leave out, at the end of the board's ``↓`` line or on a line of its own), never
scrolled away — on a screen too short for everything, the event lines take the lines those
turns want as far as the regions and the player's own panel stay on the first page; a notes
pane (help, hints, rules, the room list, and the game's log: ``log`` or F2 opens it, it
follows the game and PgUp or Ctrl-Home scroll it back to the start of the game, the last
round's festivals' results standing on its first lines, one each, while they are above the
view; Esc closes it), a status line (the server's refusals in words, news, the connection's
state, a question too long for the input line) and the input line with tab completion of the
legal arguments (:class:`client.control.completion.CommandCompleter`, in a framed menu) and
a history kept between runs. A push only marks the board stale and asks for a redraw
(``invalidate``): prompt_toolkit repaints the screen around the input buffer, so what the
player is typing is never disturbed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import textwrap
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import (
    CompleteEvent,
    Completer,
    Completion,
    DynamicCompleter,
)
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_completions, is_done
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth
from prompt_toolkit.widgets import Frame
from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.text import Text

from client.control import lobby as lb
from client.control.completion import CommandCompleter
from client.control.controller import Controller
from client.modes.replay import Viewer
from client.net.session import RoomState
from client.screens import eventline
from client.screens.render import render
from shared import describe as d
from shared import messages as m
from shared.errors import CastellError
from shared.record import GameRecordFile
from shared.review import Review
from shared.sanitize import safe
from shared.view import RoomStatus

if TYPE_CHECKING:
    from client.modes.review import ReviewViewer

STYLE = Style.from_dict({
    "status.error": "bold fg:ansired",
    "status.info": "fg:ansigreen",
    "status.conn": "bold reverse fg:ansiyellow",
    "status.hint": "fg:ansibrightblack",
    "notes.title": "bold",
    "prompt": "bold",
})
EVENT_LINES = 12
#: The event lines a screen too short for the whole board keeps (one more while a festival's
#: result or the server's word is kept up).
MIN_EVENTS = 2
#: Cells an answer keeps on the input line: a question longer than that goes on the status
#: line, its choices (``end anyway? [y/N]``) stay on the input line.
ANSWER_ROOM = 12
BOARD_STEP = 10
LOBBY_REFRESH = 5  # seconds between two looks at the room list, in the lobby
SEAT_LOST_PAUSE = 4.0  # seconds the words stay up when another client took the seat back
STATUS_LINES = 3  # a long refusal wraps onto at most this many lines
#: The keys the review viewer takes while it is open (:meth:`ReviewViewer.key`).
REVIEW_KEYS = ("n", "right", "space", "p", "left", "home", "end", "x", "b", "c", "s", "down",
               "j", "up", "k", "pagedown", "pageup", "q", "escape", "c-c")
#: Cells the review's progress bar takes on the status line.
PROGRESS_WIDTH = 30
#: The smallest terminal the board is drawn on; a smaller one is told so instead.
MIN_COLUMNS, MIN_ROWS = 80, 24


def _lines(n: int, what: str = "") -> str:
    """``1 more line``, ``3 more lines``."""
    return f"{n} {what}line{'s' if n != 1 else ''}"


class WordsCompleter(Completer):
    """Completion for the lobby and a waiting room: command words, then room numbers/levels."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        text = document.text_before_cursor
        words = text.split()
        current = "" if not text or text[-1].isspace() else words[-1]
        done = words if not current else words[:-1]
        mode = self.controller.mode
        table = lb.lobby_help(self.controller.local) if mode == "lobby" else lb.ROOM_HELP
        options: list[tuple[str, str]]
        if not done:
            seen: dict[str, str] = {}
            for syntax, what in table:
                seen.setdefault(syntax.split()[0], what)
            options = list(seen.items())
        elif len(done) == 1 and done[0] in ("accept", "decline"):
            options = [(ident, f"from {push.from_}")
                       for ident, push in self.controller.challenges_to_me.items()]
        elif len(done) == 1 and done[0] in ("join", "watch"):
            options = [(str(i), r.name) for i, r in enumerate(self.controller.rooms, 1)]
        elif len(done) == 1 and done[0] in ("resume", "abandon") and \
                self.controller.session.account:
            options = [(str(i), g.name) for i, g in enumerate(self.controller.games, 1)
                       if g.status == "playing" and not g.resigned]
        elif len(done) == 1 and done[0] in ("resume", "abandon"):
            options = [(str(i), f"{h.name} (seat {h.seat})")
                       for i, h in enumerate(self.controller.session.held_seats(), 1)]
        elif len(done) == 1 and done[0] == "presence":
            options = [("on", "show where you are"), ("off", "hide it")]
        elif len(done) == 1 and done[0] == "inbox":
            options = [("clear", "delete every notification")]
        elif len(done) == 1 and done[0] in ("follow", "unfollow", "block", "unblock",
                                             "whois"):
            options = [(name, "a player you follow") for name in self.controller.followed]
        elif len(done) == 1 and done[0] in ("bot", "fill"):
            options = [(lv, "bot level") for lv in lb.BOT_LEVELS]
        elif done[0] == "create":
            options = [("seats=", "2 to 4"), ("advanced", "the advanced variant"),
                       ("timer=", "seconds per turn"), ("private", "join by code only")]
        else:
            options = []
        for word, meta in options:
            if word.startswith(current.lower()):
                yield Completion(word, start_position=-len(current), display_meta=meta)


class TerminalScreen:
    """The full-screen :class:`client.control.controller.Screen`."""

    def __init__(self, controller: Controller, *, color: bool = True,
                 history: History | None = None) -> None:
        self.controller = controller
        controller.screen = self
        #: A person at a terminal answers: ``quit`` in a game asks first.
        self.interactive = True
        self.color = color
        self.notes: list[str] = []
        self.notes_top = 0
        self.notes_title = ""
        self.log_open = False  # the notes pane shows the game's log, and follows it
        self._log_len = 0
        #: The log's entries for the event lines, as last read, and the log they were read
        #: from (its identity and length: a log filled again from the history is new).
        self._found: list[eventline.Entry] = []
        self._log_seen = (id(controller.log), 0)
        #: Chat lines from this index of the log on are unread until shown; the event lines'
        #: unread ones left out, by log index.
        self._unread_from = 0
        self._hidden: list[int] = []
        self._found_view: Any = None
        self.board_top = 0  # lines of the board scrolled away (a terminal too short for it)
        self._board_overflow = 0
        self.message: tuple[str, str] | None = None
        #: The question asked: what the input line shows, and the answer's future; the whole
        #: question when it is too long for the input line (on the status line then).
        self._asking: tuple[str, asyncio.Future[str | None]] | None = None
        self._asked: str | None = None
        self._dirty = 0
        self._stage_seen: tuple[Any, ...] | None = None
        self._conn_since: float | None = None  # when the connection was lost
        self.lobby_refresh = LOBBY_REFRESH
        self._board_key: tuple[Any, ...] | None = None
        #: `replay N`: the finished game stepped through on the board, until closed.
        self.replay: Viewer | None = None
        self._board_cache: StyleAndTextTuples = []
        self._tasks: set[asyncio.Task[Any]] = set()
        #: The review viewer while a review is shown (over the board; ``q`` closes it).
        self.viewer: ReviewViewer | None = None
        self._game_completer = CommandCompleter(controller.legal, controller.team,
                                                 controller.skills)
        self._words_completer = WordsCompleter(controller)
        self.input = Buffer(
            completer=DynamicCompleter(self._completer), history=history, multiline=False,
            complete_while_typing=False, accept_handler=self._accept,
        )
        board = Window(FormattedTextControl(self._board), wrap_lines=False,
                       always_hide_cursor=True)
        notes = ConditionalContainer(
            Window(FormattedTextControl(self._notes_text), height=self._notes_height,
                   wrap_lines=True, always_hide_cursor=True),
            filter=Condition(self._has_notes),
        )
        status = Window(FormattedTextControl(self._status), height=self._status_height,
                        wrap_lines=False)
        prompt = self._prompt_window = Window(
            BufferControl(self.input, input_processors=[BeforeInput(self._prompt)]), height=1)
        root = FloatContainer(
            HSplit([board, notes, status, prompt]),
            # framed: over the event and status lines, a menu must not read as one of them
            floats=[Float(xcursor=True, ycursor=True, content=ConditionalContainer(
                Frame(CompletionsMenu(max_height=8, scroll_offset=1)),
                filter=has_completions & ~is_done))],
        )
        self.app: Application[None] = Application(
            layout=Layout(root, focused_element=prompt), key_bindings=self._keys(),
            full_screen=True, style=STYLE, mouse_support=False,
            color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        )
        self.app.ttimeoutlen = 0.05  # Esc answers at once

    # -- the Screen protocol ---------------------------------------------------------------

    def show(self, lines: Sequence[str]) -> None:
        self._set_notes(list(lines))
        self.refresh()

    def _set_notes(self, lines: list[str], title: str = "", log: bool = False) -> None:
        self.notes = lines
        self.notes_top = 0
        self.notes_title = title
        self.log_open = log

    def step_through(self, record: GameRecordFile) -> None:
        """`replay N`: the game's steps on the board, drawn as ``castell replay`` draws them
        (:class:`client.modes.replay.Viewer`), with its keys: n/→/Space forward, p/← back,
        PgDn/PgUp ten steps, Home/End, ↑/↓ scroll; q or Esc closes it, back to the lobby."""
        self.replay = Viewer(record, color=self.color)
        self.notes, self.log_open = [], False
        self.input.reset()
        self.message = None
        self.refresh()

    def replay_go(self, delta: int = 0, *, to: int | None = None) -> None:
        """The replay ``delta`` steps on (back when negative), or at step ``to``."""
        if self.replay is not None:
            self.replay.go(self.replay.at + delta if to is None else to)
            self.refresh()

    def replay_scroll(self, delta: int) -> None:
        if self.replay is not None:
            self.replay.scroll_by(delta)
            self.refresh()

    def close_replay(self) -> None:
        """The replay closed: the lobby again."""
        if self.replay is not None:
            name = self.replay.record.name
            self.replay = None
            self.info(f"replay of {name!r} closed")
            self.show_lobby()

    def show_log(self) -> None:
        """The game's log in the notes pane, its latest lines in view; it follows the game
        until closed (Esc, F2, or a pane of other notes)."""
        self._set_notes(self.controller.log_lines(), "Game log", log=True)
        self._log_len = len(self.controller.log)
        self._unread_from = len(self.controller.log)  # every chat line is in it: read
        self.notes_top = self._notes_end()
        self.refresh()

    def _notes_end(self) -> int:
        """The first line of the notes' last page (the open log's pinned festival, standing
        on the first line when it is above the view, takes a line of that page)."""
        end = max(0, len(self._note_lines()) - self._notes_rows())
        festival = self._festival_line()
        return end + len(festival[1]) if festival is not None and festival[0] < end else end

    def _festival_line(self) -> tuple[int, list[str]] | None:
        """In the open log, the last round's festivals while their result is kept up (until
        the player's next action): the line of the log where they start, and their results,
        each festival whole on its own line (in fewer words when too long for one, wrapped
        when still too long)."""
        if not self.log_open:
            return None
        found = self._entries()
        kept = [n for n, e in enumerate(found) if e.kind == "festival" and e.pinned]
        if not kept:
            return None
        group = [kept[-1]]  # the round's festivals: the last kept one and those just before
        while group[0] - 1 in kept:
            group.insert(0, group[0] - 1)
        title = found[group[0]].title
        lines = self._note_lines()
        at = [i for i, line in enumerate(lines) if title and line.startswith(title)]
        if not at:
            return None
        width, _ = self._size()
        said: list[str] = []
        for n in group:
            whole, short = f"▲ {d.plain(found[n].parts)}", found[n].short
            if get_cwidth(whole) > width and short is not None:
                whole = f"▲ {d.plain(short)}"
            said.extend(textwrap.wrap(whole, width, subsequent_indent="  ") or [whole])
        return at[-1], said

    def _follow_log(self) -> None:
        """New lines in the log: shown, and scrolled to, unless the player is reading
        further back."""
        if self.controller.mode == "lobby":  # the room was left: its log goes with it
            self.notes, self.log_open = [], False
            return
        if len(self.controller.log) == self._log_len:
            return
        # (at the end, whether or not a festival stands on the first line)
        at_end = self.notes_top >= max(0, len(self._note_lines()) - self._notes_rows())
        self._log_len = len(self.controller.log)
        self.notes = self.controller.log_lines()
        self.notes_top = self._notes_end() if at_end else min(self.notes_top, self._notes_end())

    def error(self, text: str) -> None:
        self.message = ("status.error", f"✗ {text}")
        self.refresh()

    def info(self, text: str) -> None:
        self.message = ("status.info", text)
        self.refresh()

    async def ask(self, question: str) -> str | None:
        """Ask on the input line; a question too long for it goes whole on the status line,
        and the input line keeps its last words and choices (``end anyway? [y/N]``)."""
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        width, _ = self._size()
        if get_cwidth(question) <= width - ANSWER_ROOM:
            self._asking, self._asked = (question, future), None
        else:
            self._asking = (_short_question(question, width - ANSWER_ROOM), future)
            self._asked = question.strip()
        self.refresh()
        try:
            return await future
        finally:
            self._asking = self._asked = None
            # A question wider than the terminal scrolled the input line sideways; scrolled
            # so, the `> ` prompt that comes back would stay out of sight.
            self._prompt_window.horizontal_scroll = 0
            self.refresh()

    def state_changed(self, push: RoomState, my_turn_began: bool) -> None:
        if any(event.get("kind") == "game_over" for event in push.events):
            self.board_top = 0  # the score table comes first: show it
        stage = (push.room, push.view.status)
        if my_turn_began or stage != self._stage_seen:
            # The player's turn begins (or the game starts or ends): last turn's refusals
            # and news are stale ("it is Anna's turn, not yours" while it is now theirs).
            # Another player's turn keeps them: a refusal typed just before a fast bot's
            # move must stay long enough to be read.
            self._stage_seen = stage
            self.message = None
        if my_turn_began:
            self.app.output.bell()
            self.board_top = 0  # the turn is played from the top of the board
        self.refresh()

    def chat(self, push: m.ChatPush) -> None:
        self.refresh()

    def bell(self) -> None:
        """Ring the terminal's bell (one of the player's games reached their turn)."""
        self.app.output.bell()

    def review_progress(self, name: str, done: int, total: int) -> None:
        """The server's review of ``name`` under way: a progress bar on the status line."""
        bar = Console(file=io.StringIO(), width=PROGRESS_WIDTH, color_system=None,
                      legacy_windows=False)
        with bar.capture() as drawn:
            bar.print(ProgressBar(total=max(1, total), completed=done, width=PROGRESS_WIDTH),
                      end="")
        self.message = ("status.info", f"reviewing {safe(name)!r} {drawn.get()} "
                                       f"{done}/{total} turns")
        self.refresh()

    def show_review(self, record: GameRecordFile, review: Review) -> None:
        """The review viewer over the board (:class:`client.modes.review.ReviewViewer`):
        its keys are the viewer's until ``q`` (or Esc) gives the board back."""
        from client.modes.review import ReviewViewer

        self.viewer = ReviewViewer(record, review, color=self.color)
        self.message = ("status.info", "the review: n/p turns · x costliest · b board · "
                                       "c charts · s summary · q back")
        self.refresh()

    def review_key(self, name: str) -> bool:
        """Key ``name`` (prompt_toolkit's) pressed while the review viewer is open: the
        viewer's to handle; ``q``, Esc or Ctrl-C close it. False when it does nothing."""
        viewer = self.viewer
        if viewer is None:
            return False
        done = viewer.key(name)
        if viewer.quit:
            self.viewer = None
            self.message = None
        self.refresh()
        return done

    def show_lobby(self) -> None:
        self.refresh()  # the lobby is the board when not in a room

    def refresh(self) -> None:
        conn = self.controller.connection
        if (conn is None) != (self._conn_since is None):  # the connection dropped or came back
            if conn is None and not self.controller.session.stopped:
                self.message = ("status.info", "connected again")
            self._conn_since = None if conn is None else time.monotonic()
        if self.log_open:
            self._follow_log()
        self._dirty += 1
        self.app.invalidate()

    def exit(self) -> None:
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit()

    # -- running -----------------------------------------------------------------------------

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run(self, startup: Callable[[], Awaitable[None]] | None = None) -> None:
        """Run until the player quits; the session pumps in the background."""
        session = self.controller.session
        pump = asyncio.create_task(session.run())

        async def boot() -> None:
            if startup is not None:
                await self.controller.guard(startup())

        self.spawn(boot())
        self.spawn(self._tick())
        self.spawn(self._close_when_seat_lost(pump))
        try:
            await self.app.run_async()
        finally:
            for task in list(self._tasks):
                task.cancel()
            await session.stop()
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump

    async def _close_when_seat_lost(self, pump: asyncio.Task[None]) -> None:
        """A newer connection took the seat back: this client has nothing left to do. It
        says why, leaves the words up for a moment, then closes."""
        with contextlib.suppress(Exception):
            await asyncio.shield(pump)
        if self.controller.session.seat_lost:
            await asyncio.sleep(SEAT_LOST_PAUSE)
            self.exit()

    async def _tick(self) -> None:
        """Redraw once a second while a turn timer runs, for its countdown, or while the
        connection is down, for the time it has been down; in the lobby,
        ask for the room list every few seconds, so that a friend's new room shows up
        without typing `list`."""
        seconds = 0
        while True:
            await asyncio.sleep(1.0)
            seconds += 1
            self.tick(seconds)

    def tick(self, seconds: int) -> asyncio.Task[None] | None:
        """What the clock does at its ``seconds``-th second (see :meth:`_tick`); the
        request for the room list, when it makes one."""
        view = self.controller.view
        down = self.controller.connection is not None \
            and not self.controller.session.stopped
        if down or (view is not None and view.deadline is not None):
            self.refresh()
        # not while a line is being typed: `join 2` must mean the room it meant
        if (seconds % self.lobby_refresh == 0 and self.controller.mode == "lobby"
                and self._asking is None and not self.input.text
                and self.controller.connection is None):
            return self.spawn(self._refresh_rooms())  # a slow answer must not stop the clock
        return None

    async def _refresh_rooms(self) -> None:
        with contextlib.suppress(CastellError):
            await self.controller.refresh_rooms()

    # -- input -------------------------------------------------------------------------------

    def _completer(self) -> Completer | None:
        if self._asking is not None:
            return None
        return self._game_completer if self.controller.mode == "game" else self._words_completer

    def _accept(self, buffer: Buffer) -> bool:
        line = buffer.text
        if self._asking is not None:
            future = self._asking[1]
            self.message = None  # the answer to a question settles its last complaint
            if not future.done():
                future.set_result(line)
            return False
        if not line.strip():
            self.notes = []
            self.log_open = False
            self.message = None
            self.refresh()
            return False
        self.message = None
        if not self.log_open:  # the log stays open while the game goes on
            self.notes = []
        self.board_top = 0  # what the line does shows from the top of the board
        # the chat lines the event lines show have been read; those they leave out have not
        self._unread_from = min(self._hidden, default=len(self.controller.log))
        self.spawn(self.controller.handle(line))
        self.refresh()
        return False

    def accept_completion(self) -> None:
        """Enter while the completion menu is open: the highlighted choice is taken into the
        line and the menu closes; nothing is sent (a half-typed `build 10 10 ` chosen from
        the menu is not a tower to build yet). With nothing highlighted the menu closes."""
        state = self.input.complete_state
        if state is None:
            return
        chosen = state.current_completion
        if chosen is not None:
            self.input.apply_completion(chosen)
        else:
            self.input.cancel_completion()
        self.input.complete_state = None
        self.refresh()

    def _keys(self) -> KeyBindings:
        kb = KeyBindings()

        @kb.add("c-c")
        def _interrupt(event: Any) -> None:
            if self._asking is not None:  # a second Ctrl-C confirms quitting
                if not self._asking[1].done():
                    self._asking[1].set_result("y" if self.controller.confirming_quit
                                               else None)
            elif self.input.text:
                self.input.reset()
            else:
                self.spawn(self.controller.quit())

        @kb.add("c-d")
        def _eof(event: Any) -> None:
            if not self.input.text:
                self.spawn(self.controller.quit(confirm=False))

        @kb.add("c-z")
        def _undo(event: Any) -> None:  # takes back the last action of the turn, as `undo`
            if self._asking is None and self.controller.mode == "game":
                self.spawn(self.controller.handle("undo"))

        @kb.add("enter", filter=Condition(lambda: self.input.complete_state is not None))
        def _choose(event: Any) -> None:  # with the menu open: the choice, not the line
            self.accept_completion()

        @kb.add("escape", eager=True)
        def _close(event: Any) -> None:
            if self.input.complete_state is not None:
                self.input.cancel_completion()
                return
            if self._asking is not None:
                self._asking[1].set_result(None)
                return
            self.notes = []
            self.log_open = False
            self.message = None
            self.refresh()

        @kb.add("f2")
        def _log(event: Any) -> None:
            if self.log_open:
                self.notes = []
                self.log_open = False
                self.refresh()
            elif self.controller.mode == "game":
                self.spawn(self.controller.guard(self.controller.show_log()))

        @kb.add("c-home", filter=Condition(self._has_notes))
        def _top(event: Any) -> None:  # the log's start: the start of the game
            self.notes_top = 0
            self.refresh()

        @kb.add("c-end", filter=Condition(self._has_notes))
        def _bottom(event: Any) -> None:
            self.notes_top = self._notes_end()
            self.refresh()

        @kb.add("pageup")
        def _up(event: Any) -> None:
            self.page(-1)

        @kb.add("pagedown")
        def _down(event: Any) -> None:
            self.page(1)

        # Home and End move along the line being typed; with nothing typed, they scroll
        nothing_typed = Condition(lambda: not self.input.text and self._asking is None)

        @kb.add("home", filter=nothing_typed)
        def _home(event: Any) -> None:
            self.scroll_end(-1)

        @kb.add("end", filter=nothing_typed)
        def _end(event: Any) -> None:
            self.scroll_end(1)

        # The review viewer's keys, while it is open (added last: they come first then).
        viewing = Condition(lambda: self.viewer is not None and self._asking is None)
        for name in REVIEW_KEYS:
            kb.add(name, filter=viewing, eager=name in ("q", "escape", "c-c"))(
                lambda event, name=name: self.review_key(name))
        # `replay N`'s keys while it is shown (added last: they win over the keys above)
        replaying = Condition(lambda: self.replay is not None)
        kb.add("<any>", filter=replaying)(lambda event: None)  # nothing goes to the line
        for keys, delta in (("n", 1), ("right", 1), ("space", 1), ("enter", 1), ("p", -1),
                            ("left", -1), ("backspace", -1), ("pagedown", 10),
                            ("pageup", -10)):
            kb.add(keys, filter=replaying)(lambda event, d=delta: self.replay_go(d))
        for keys, step in (("home", 0), ("g", 0), ("end", None), ("G", None)):
            kb.add(keys, filter=replaying)(
                lambda event, s=step: self.replay_go(to=s if s is not None else 1 << 30))
        for keys, delta in (("down", 1), ("j", 1), ("up", -1), ("k", -1)):
            kb.add(keys, filter=replaying)(lambda event, d=delta: self.replay_scroll(d))
        for keys in ("q", "escape", "c-c"):
            kb.add(keys, filter=replaying, eager=True)(lambda event: self.close_replay())
        return kb

    def page(self, direction: int) -> None:
        """PgDn (1) or PgUp (-1): scroll the pane whose title says PgUp/PgDn scroll it — the
        notes when they are longer than their pane, else the board."""
        if self._notes_scroll():
            rows = self._notes_rows()
            self.notes_top = max(0, min(self._notes_end(), self.notes_top + direction * rows))
        else:
            self.board_top = max(0, min(self._board_overflow,
                                        self.board_top + direction * BOARD_STEP))
        self.refresh()

    def scroll_end(self, direction: int) -> None:
        """Home (-1) or End (1), with nothing typed: the pane PgUp/PgDn scroll, to its top or
        its end."""
        if self._notes_scroll():
            self.notes_top = 0 if direction < 0 else self._notes_end()
        else:
            self.board_top = 0 if direction < 0 else self._board_overflow
        self.refresh()

    # -- drawing -----------------------------------------------------------------------------

    def _size(self) -> tuple[int, int]:
        size = self.app.output.get_size()
        return max(20, size.columns), max(6, size.rows)

    def _has_notes(self) -> bool:
        return bool(self.notes)

    def _notes_scroll(self) -> bool:
        """Whether the notes are longer than their pane (then PgUp/PgDn are theirs)."""
        return bool(self.notes) and len(self._note_lines()) > self._notes_rows()

    def _note_lines(self) -> list[str]:
        """The notes cut to the screen's width (a long line goes on, indented, below), so
        that the pane's height counts every row it shows and nothing is cut off unseen."""
        width, _ = self._size()
        out: list[str] = []
        for line in self.notes:
            if get_cwidth(line) <= width:
                out.append(line)
                continue
            # A table's row (``join ROOM   take a seat…``) goes on under its description;
            # any other line under its own start, a little further in.
            column = re.match(r"\s*\S.*?\s{2,}(?=\S)", line[:width // 2])
            indent = " " * (column.end() if column else len(line) - len(line.lstrip()) + 2)
            out.extend(textwrap.wrap(line, width, subsequent_indent=indent,
                                     break_on_hyphens=False) or [""])
        return out

    def _notes_rows(self) -> int:
        """Lines of notes text shown at once (the pane has one more, its title)."""
        _, rows = self._size()
        return max(2, min(len(self._note_lines()), rows // 2 - 1))

    def _notes_height(self) -> int:
        return self._notes_rows() + 1 if self.notes else 0

    def _notes_text(self) -> StyleAndTextTuples:
        rows = self._notes_rows()
        lines = self._note_lines()
        festival = self._festival_line()
        pinned: StyleAndTextTuples = []
        if festival is not None and festival[0] < self.notes_top:
            # the festivals' results, scrolled above the view, stand on the first lines
            pinned = [("bold", "\n".join(festival[1]) + "\n")]
            rows -= len(festival[1])
        shown = lines[self.notes_top:self.notes_top + rows]
        more = len(lines) - self.notes_top - len(shown)
        scroll = " · PgUp/PgDn scroll" if self._notes_scroll() else ""
        below = f" · {_lines(more, 'more ')}" if more > 0 else ""
        name = f"{self.notes_title} · " if self.notes_title else ""
        above = " · from the start" if self.log_open and not self.notes_top else ""
        title = f"──── {name}Esc closes{scroll}{below}{above}"
        return [("class:notes.title", title + "\n"), *pinned, ("", "\n".join(shown))]

    def _status_line(self) -> tuple[str, str]:
        """The status line's style and text: the connection's trouble, else the last news
        or refusal, else what can be typed now."""
        conn = self.controller.connection
        if conn is not None:
            # the time it has been down: a retry can take a while, the line should not freeze
            since = int(time.monotonic() - self._conn_since) if self._conn_since else 0
            if self.controller.session.stopped:  # not coming back: nothing to count
                since = 0
            return "status.conn", f" {conn}{f' ({since} s)' if since >= 3 else ''} "
        if self._asking is not None and self._asked is not None:
            # a question too long for the input line: here whole (after the complaint about
            # the last answer, if any)
            said = f"{self.message[1]} · " if self.message is not None \
                and self.message[0] == "status.error" else ""
            return "status.info", said + self._asked
        if self.message is not None:
            return self.message
        mode = self.controller.mode
        # Bots are for a player's unrated room (a spectator, or a rated room, is refused them);
        # `start` for its creator.
        bots = "" if self.controller.me is None or self.controller.rated_room() \
            else "`bot` · `fill` · "
        start = "`start` · " if self.controller.session.created else ""
        lobby = ("Tab completes · `new` · `games` · `resume N` · `help` · `quit`"
                 if self.controller.local else
                 "Tab completes · `list` · `create` · `join N` · `help` · `quit`")
        hint = {"lobby": lobby,
                "room": f"Tab completes · {bots}{start}`chat` · `help` · `leave`",
                "game": "Tab completes · `hint` · `help` · `log` · `rules` · `chat` · `leave` · "
                        "`quit`"
                }[mode]
        view = self.controller.view
        over = self.controller.over_line() if mode == "game" else None
        if over is not None:
            return "status.hint", over
        if mode == "game" and view is not None and view.status == RoomStatus.FINISHED:
            return "status.hint", ("The game is over. `leave` for the lobby, `quit` to close "
                                   "Castell.")
        if mode == "room" and self.controller.me is None:
            return "status.hint", "You are watching. `chat` · `help` · `leave` for the lobby"
        if mode == "game" and self.controller.resigned():
            return "status.hint", ("You resigned: your seat is played to the end. `score` · "
                                   "`leave` for the lobby · `quit`")
        if mode == "game" and self.controller.me is None:
            return "status.hint", ("You are watching. `chat` · `rules` · `leave` for the lobby "
                                   "· `quit`")
        if mode == "game" and view is not None and view.turn == self.controller.me:
            return "status.info", ("Your turn: Tab completes · `hint` suggests · `log` · "
                                   "`end` ends your turn")
        return "status.hint", hint

    def _status_rows(self) -> tuple[str, list[str]]:
        """The status line's style and its rows: a long text wraps between words, never in
        the middle of one, onto at most ``STATUS_LINES`` rows."""
        width, _ = self._size()
        style, text = self._status_line()
        if get_cwidth(text) <= width:
            return style, [text]
        rows = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
        if len(rows) > STATUS_LINES:
            rows = rows[:STATUS_LINES]
            rows[-1] = rows[-1][:width - 1] + "…"
        return style, rows

    def _status(self) -> StyleAndTextTuples:
        style, rows = self._status_rows()
        return [(f"class:{style}", "\n".join(rows))]

    def _status_height(self) -> int:
        return len(self._status_rows()[1])

    def _prompt(self) -> StyleAndTextTuples:
        if self._asking is not None:
            return [("class:prompt", self._asking[0])]
        return [("class:prompt", "> ")]

    def _board(self) -> StyleAndTextTuples:
        width, rows = self._size()
        height = max(1, rows - 1 - self._status_height() - self._notes_height())
        if self.replay is not None:
            return to_formatted_text(ANSI(self.board_text(width, height)))
        view = self.controller.view
        clock = int(time.time()) if view is not None and view.deadline else 0
        key = (self._dirty, width, height, clock)
        if key != self._board_key:
            self._board_key = key
            try:
                text = self.board_text(width, height)
            except Exception as exc:  # a bug in drawing must not take the game down with it
                text = f"the board cannot be drawn: {type(exc).__name__}: {exc}"
            self._board_cache = to_formatted_text(ANSI(text))
        return self._board_cache

    def board_text(self, width: int, height: int) -> str:
        """The board for a ``width`` × ``height`` area, as ANSI text (at most ``height`` lines)."""
        if self.viewer is not None:  # a review shown over the board, its footer under it
            body = self.viewer.body(width, max(1, height - 1))
            return "\n".join([*body, f"\x1b[7m{self.viewer.footer(width)}\x1b[0m"])
        if self.replay is not None:  # two rows under the step: what it did, and the keys
            viewer = self.replay
            return "\n".join([*viewer.body(width, max(1, height - 2)), viewer.step_line(width),
                              f"\x1b[7m{viewer.footer(width)}\x1b[0m"])
        mode = self.controller.mode
        if mode == "lobby":
            head = Text("CASTELL · lobby", style="bold")
            return self._print(Group(head, *(Text(line) for line in
                                             self.controller.lobby_lines())), width, height)
        if width < MIN_COLUMNS or self._size()[1] < MIN_ROWS:
            return self._too_small(width, height)
        # The event lines fill whatever height the panels leave, at least MIN_EVENTS (one
        # more while something is kept up for the player to read). A screen too short for the
        # whole board and them shows the player's own panel right after the regions, and
        # scrolls the rest under the header, above the event lines.
        found = self._entries()
        board = self._lines(self._screen(width), width)
        rule = False  # whether the board ends with its ↓ line
        room = height - len(board)
        need = eventline.need(found, width)
        short = None
        if room < min(need, EVENT_LINES) or room < MIN_EVENTS:
            # as many lines as the turns since the player's last action want, one each, as
            # far as the board keeps its header, the regions and the player's own panel
            # first (the rest scrolls, PgDn)
            kept = any(e.pinned for e in found[:-1])
            least = max(0, min(MIN_EVENTS + kept, height - 3))
            events = max(least, min(need, EVENT_LINES, height - 3))
            while True:
                page = height - events - 2  # under the header, above the ↓ line
                short = self._lines(self._screen(width, short=True, page=page), width)
                if events <= least or _own_panel_fits(short, page + 1):
                    break
                events -= 1
        if short is not None and (room < MIN_EVENTS or events > room):
            board = self._window(short, height - events)
            rule = self._board_overflow > 0
        else:  # the whole board, the event lines in what it leaves
            events = min(EVENT_LINES, room)
            self._board_overflow = 0
        me, name = self.controller.me, self.controller.session.name
        area = eventline.pick(found, width, events, unread_from=self._unread_from, me=me,
                              own_name=name)
        if area.mark is not None and rule and \
                get_cwidth(_plain(board[-1])) + 1 + get_cwidth(area.mark) <= width:
            # what the event lines leave out, said at the end of the board's ↓ line
            board[-1] += f" \x1b[1;7m{area.mark}\x1b[0m"
        elif area.mark is not None:
            area = eventline.pick(found, width, events, unread_from=self._unread_from, me=me,
                                  own_name=name, mark_row=True)
        self._hidden = area.hidden
        lines = self._lines(Group(*area.lines), width) if area.lines else []
        return "\n".join([*board, *lines])

    def _entries(self) -> list[eventline.Entry]:
        """The log's entries for the event lines (read again when the log changed)."""
        ctrl = self.controller
        log, view = ctrl.log, ctrl.view
        seen = (id(log), len(log))
        if seen == self._log_seen and view is self._found_view:
            return self._found
        if seen[0] != self._log_seen[0]:  # filled again from the history: what it holds is old
            self._unread_from = len(log)
        elif seen[1] < self._log_seen[1]:  # emptied: another room
            self._unread_from = 0
        self._log_seen, self._found_view = seen, view
        self._found = [] if view is None else eventline.entries(view, [e for _, e in log],
                                                                ctrl.me)
        return self._found

    def _too_small(self, width: int, height: int) -> str:
        """What a terminal smaller than ``MIN_COLUMNS`` × ``MIN_ROWS`` shows instead of a
        board that would not fit."""
        size = self.app.output.get_size()
        words = (f"This terminal is {size.columns}×{size.rows}: the board needs at least "
                 f"{MIN_COLUMNS}×{MIN_ROWS}. Make the window larger, or play in lines with "
                 "`castell --plain`. Commands still work here.")
        return "\n".join(textwrap.wrap(words, max(10, width))[:height])

    def _window(self, lines: list[str], height: int) -> list[str]:
        """The part of the board that fits, with a line saying what PgUp/PgDn would show.
        The first line (the header: round, whose turn, the clock) never scrolls away."""
        if len(lines) <= height:
            self._board_overflow = 0
            return lines
        head, body = lines[:1], lines[1:]
        rows = max(1, height - 2)
        self._board_overflow = len(body) - rows
        top = self.board_top = min(self.board_top, self._board_overflow)
        below = len(body) - top - rows
        keys = "Esc, then " if self._notes_scroll() else ""
        marks = [f"↑ {_lines(top)} above ({keys}PgUp)" if top else "",
                 f"↓ {_lines(below, 'more ')} ({keys}PgDn)" if below else ""]
        return [*head, *body[top:top + rows],
                "\x1b[2m── " + " · ".join(x for x in marks if x) + " ──\x1b[0m"]

    def _screen(self, width: int, short: bool = False, page: int | None = None
                ) -> RenderableType:
        ctrl = self.controller
        view = ctrl.view
        if view is None:
            return Text("joining…", style="dim")
        parts: list[RenderableType] = [render(view, ctrl.me, (), now=time.time(), width=width,
                                              max_event_lines=0, short=short, page=page)]
        if ctrl.mode == "room":
            parts.extend(Text(line, style="bold") for line in ctrl.room_lines())
        return Group(*parts)

    def _lines(self, renderable: RenderableType, width: int) -> list[str]:
        return self._print(renderable, width, None).split("\n")

    def _print(self, renderable: RenderableType, width: int, height: int | None) -> str:
        out = io.StringIO()
        console = Console(file=out, force_terminal=True, width=width, highlight=False,
                          color_system="256" if self.color else None, no_color=not self.color,
                          emoji=False, legacy_windows=False, soft_wrap=False)
        console.print(renderable)
        text = out.getvalue().rstrip("\n")
        if height is not None:
            text = "\n".join(text.split("\n")[:height])
        return text


def _own_panel_fits(lines: list[str], rows: int) -> bool:
    """Whether the short board's first ``rows`` lines hold the regions and the panel after
    them (the player's own) whole: the event lines may take more lines while they do."""
    ends = [i for i, line in enumerate(lines) if _plain(line).startswith("╰")]
    return len(ends) >= 2 and ends[1] < rows


def _plain(ansi: str) -> str:
    """``ansi`` without its escape sequences."""
    return re.sub(r"\x1b\[[0-9;]*m", "", ansi)


def _short_question(question: str, room: int) -> str:
    """What the input line keeps of a question too long for it: its last words and choices
    (``end anyway? [y/N] ``), else the choices alone (``[y/N] ``), else ``? ``."""
    found = re.search(r"([^:.]*\?)\s*(\[[^\]]*\])", question)
    if found is None:
        return "? "
    whole = f"{found.group(1).strip()} {found.group(2)} "
    return whole if get_cwidth(whole) <= room else f"{found.group(2)} "
