"""``--plain``: the game as lines of text, commands read line by line from standard input.

For scripts and screen readers: no colours, no boxes, no cursor movement. Each change prints
its events, one line each (:func:`client.screens.render.event_lines`); the whole board
(:func:`client.screens.render.render_plain`) is printed on joining, when the player's turn begins,
when the game ends, and on ``look``. ``wait`` blocks until it is the player's turn (or the
game starts, or ends), so that a script can play without guessing when to type.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import IO

from client.control.controller import Controller
from client.net.session import RoomState
from client.screens.render import chat_text, event_lines, render_plain
from client.screens.review import plain_lines
from shared import messages as m
from shared.record import GameRecordFile
from shared.review import Review
from shared.sanitize import safe
from shared.view import RoomStatus

#: A line that stands for Ctrl-C typed on a terminal (a line read never holds it).
INTERRUPT = "\x03"

#: Turns between two lines of a review's progress.
REVIEW_EVERY = 10

PLAIN_HELP = ("look       print the whole board again",
              "wait       wait until it is your turn (or the game starts or ends)")


class PlainScreen:
    """The line-by-line :class:`client.control.controller.Screen`."""

    def __init__(self, controller: Controller, *, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, echo: bool | None = None) -> None:
        self.controller = controller
        controller.screen = self
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.echo = (not self.stdin.isatty()) if echo is None else echo
        #: Whether a person answers (standard input is a terminal): only then does ``quit``
        #: ask before leaving a game, and Ctrl-C ask instead of closing at once.
        self.interactive = self.stdin.isatty()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._room: str | None = None
        self._changed = asyncio.Event()
        self._exiting = False
        self._connection: str | None = None
        #: While the startup runs (``castell play`` seats its bots and starts), a waiting
        #: room is not shown: a game against bots has no friends to invite.
        self._starting = False

    # -- output ------------------------------------------------------------------------------

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.stdout)
        self.stdout.flush()

    def show(self, lines: Sequence[str]) -> None:
        self.say(*lines)

    def show_log(self) -> None:
        """The game's log, printed as a block of lines (no pane here)."""
        self.show(self.controller.log_lines())

    def step_through(self, record: GameRecordFile) -> None:
        """`replay N` in lines: every step printed, as ``castell replay --plain`` prints."""
        from client.modes.replay import print_plain

        out = io.StringIO()
        print_plain(record, out)
        self.show(out.getvalue().splitlines())

    def bell(self) -> None:
        """Ring the terminal's bell (one of the player's games reached their turn)."""
        self.stdout.write("\a")
        self.stdout.flush()

    def review_progress(self, name: str, done: int, total: int) -> None:
        """A review's progress as lines, as ``castell review --plain`` prints them: one as it
        starts, then one every :data:`REVIEW_EVERY` turns and at the end."""
        if done == 0:
            self.say(f"the server reviews {safe(name)!r}: {total} turns against the hard "
                     "bot…")
        elif done % REVIEW_EVERY == 0 or done == total:
            self.say(f"  {done}/{total} turns reviewed")

    def show_review(self, record: GameRecordFile, review: Review) -> None:
        """The whole review as text, its charts as tables
        (:func:`client.screens.review.plain_lines`)."""
        self.show(plain_lines(review))

    def error(self, text: str) -> None:
        self.say(f"error: {text}")

    def info(self, text: str) -> None:
        if text:  # (an empty one clears a status line: a plain screen has none)
            self.say(text)

    async def ask(self, question: str) -> str | None:
        self.say(question.rstrip())
        line = await self._lines.get()
        if line == INTERRUPT:  # Ctrl-C: confirms quitting, cancels any other question
            return "y" if self.controller.confirming_quit else None
        if line is not None and self.echo:
            self.say(f"> {line}")
        return line

    def show_lobby(self) -> None:
        self._room = None
        self.say(*self.controller.lobby_lines())

    def board(self) -> None:
        view = self.controller.view
        if view is not None:
            self.say(*render_plain(view, self.controller.me, now=time.time()))

    def state_changed(self, push: RoomState, my_turn_began: bool) -> None:
        view = push.view
        me = self.controller.me
        if self._starting and view.status == RoomStatus.WAITING:
            self._changed.set()
            return  # shown once the startup is over, if the room is still waiting then
        first = push.room != self._room
        self._room = push.room
        if first:
            self.board()
            if self.controller.mode == "room":
                self.say(*self.controller.room_lines())
            self.say(*event_lines(view, push.events))  # the start, when it came meanwhile
        else:
            self.say(*event_lines(view, push.events))
        if view.status == RoomStatus.FINISHED and any(
                e.get("kind") == "game_over" for e in push.events):
            self.board()
            self.say(self.controller.over_line()
                     or "The game is over. `leave` for the lobby, `quit` to close Castell.")
        elif my_turn_began and not first:
            self.board()
            self.say("Your turn. `hint` lists what you can do.")
        elif my_turn_began:
            self.say("Your turn. `hint` lists what you can do.")
        elif not first and view.turn == me and view.status == RoomStatus.PLAYING:
            self.say(render_plain(view, me, now=time.time())[0])
        self._changed.set()

    def chat(self, push: m.ChatPush) -> None:
        self.say(chat_text(self.controller.view, {"seat": push.seat, "name": push.name,
                                  "text": push.text}).plain)

    def refresh(self) -> None:
        status = self.controller.connection
        if status != self._connection:
            self._connection = status
            self.say(f"connection: {status}" if status is not None else "connection: back")

    def exit(self) -> None:
        self._exiting = True
        self._lines.put_nowait(None)

    # -- input -------------------------------------------------------------------------------

    def _reader(self, loop: asyncio.AbstractEventLoop) -> None:
        """A thread: standard input, line by line, into the event loop's queue."""
        try:
            for line in self.stdin:
                loop.call_soon_threadsafe(self._lines.put_nowait, line.rstrip("\r\n"))
        finally:
            with contextlib.suppress(RuntimeError):  # the loop may be closed already
                loop.call_soon_threadsafe(self._lines.put_nowait, None)

    async def wait_turn(self) -> None:
        """Until it is the player's turn, the game starts, or it ends."""
        def ready() -> bool:
            view = self.controller.view
            if view is None:
                return self.controller.mode == "lobby"
            if view.status == RoomStatus.FINISHED:
                return True
            if view.status == RoomStatus.WAITING:
                return False
            return view.turn == self.controller.me or self.controller.me is None
        while not ready() and not self._exiting:
            self._changed.clear()
            await self._changed.wait()

    async def run(self, startup: Callable[[], Awaitable[None]] | None = None) -> None:
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reader, args=(loop,), daemon=True).start()
        session = self.controller.session
        pump = asyncio.create_task(session.run())
        if self.interactive:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGINT, self._lines.put_nowait, INTERRUPT)
        try:
            if startup is not None:
                self._starting = True
                try:
                    await self.controller.guard(startup())
                finally:
                    self._starting = False
                state = session.state
                if state is not None and state.room != self._room and \
                        self.controller.mode == "room":
                    self.state_changed(state, my_turn_began=False)
            if self.controller.mode == "lobby" and not self._exiting:
                self.say(*self.controller.lobby_lines())
            while not self._exiting:
                line = await self._lines.get()
                if line is None:
                    break
                if line == INTERRUPT:
                    await self.controller.guard(self.controller.quit())
                    continue
                if self.echo:
                    self.say(f"> {line}")
                await self.handle(line)
        finally:
            if self.interactive:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(signal.SIGINT)
            await session.stop()
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump

    async def handle(self, line: str) -> None:
        word = line.strip().split()[0].lower() if line.strip() else ""
        if word == "look":
            if self.controller.view is None:
                self.say(*self.controller.lobby_lines())
            else:
                self.board()
        elif word == "wait":
            await self.wait_turn()
        else:
            await self.controller.handle(line)
            if word in ("help", "?") and len(line.split()) == 1:  # not under `help build`
                self.say(*PLAIN_HELP)


