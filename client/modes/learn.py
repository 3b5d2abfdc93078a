"""``castell learn``: a guided first game, lesson by lesson, on the real board and rules.

The lessons are data (:mod:`client.learn.lessons`); this module runs them on the same screens
as any game (:mod:`client.screens.app`, or :mod:`client.screens.plain` with ``--plain``) and
the same :class:`~client.control.controller.Controller`, so the learner types the commands of
a real game, with their completion, ``hint``, ``help``, ``rules`` and ``log``:

* :class:`LessonTable` is the session the controller talks to: instead of a server, a lesson's
  position played on :mod:`shared.engine` in this process, each change pushed to the
  controller as a server's ``state`` push would be;
* :class:`LearnController` loads a lesson, says what it teaches and asks for one thing; an
  action the rules refuse is refused in the engine's own words (its
  :class:`~shared.errors.RuleError` message and rule); one the rules accept but the lesson did
  not ask for is not played, and the lesson says what it does ask; the thing done, the lesson
  says what it taught and ``next`` goes on. ``lesson``, ``lessons``, ``lesson N``, ``again``
  and ``next`` move between lessons;
* progress is kept (:class:`client.local.learning.LearnProgress`): ``quit`` at any moment, and
  the next ``castell learn`` starts again at the lesson left (from its start).

:func:`offer_lessons` is ``castell play``'s question on a first run: the lessons now, or
straight to the game (asked once, ever; Esc or ``n`` skips).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from client.control import commands as c
from client.control.controller import Controller, yes_answer
from client.learn.lessons import LEARNER, LESSONS, Lesson, Verdict
from client.local.learning import LearnProgress
from client.net.session import RoomState, Session
from client.screens.render import event_lines
from shared.actions import Action
from shared.codec import event_to_wire
from shared.describe import mark_regions
from shared.engine import apply
from shared.errors import RuleError
from shared.events import Event
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo, make_view

if TYPE_CHECKING:
    from prompt_toolkit.history import History

#: Where the lessons are "played": the session's address, never dialled.
HOME = "castell learn"
#: The commands of the lessons, besides a game's.
LEARN_HELP = (
    ("lesson", "show this lesson again"),
    ("lesson N", "go to lesson N"),
    ("lessons", "list the lessons"),
    ("next", "go on to the next lesson"),
    ("again", "play this lesson again from its start"),
    ("quit", "stop here: `castell learn` takes you back to this lesson"),
)


class LessonTable(Session):
    """The session of the lessons: a table in this process, no server. :meth:`put` lays a
    position on it (a lesson's start, or what an action made of it) and pushes it to the
    listener, as a ``state`` push of a room called after the lesson; whatever would need a
    server (a chat line, the room list, a rematch) is refused in words."""

    def __init__(self, name: str) -> None:
        super().__init__(HOME, name, home=HOME)
        self.seat = LEARNER
        #: The position on the table (None before the first lesson is laid).
        self.game: GameState | None = None
        self._version = 0
        self._closed = asyncio.Event()

    async def open(self) -> None:
        """Nothing to connect to."""

    async def run(self) -> None:
        """Nothing to pump: every change is made here, and pushed as it is made."""
        await self._closed.wait()

    async def stop(self) -> None:
        self.stopped = True
        self._closed.set()

    async def request(self, cls: type, /, **fields: Any) -> Any:
        raise c.CommandError("the lessons are played on this computer alone: there is no "
                             "server to ask, nor anyone to chat with")

    async def act(self, action: Action) -> int:
        raise c.CommandError("a lesson's actions are checked by the lesson")

    async def leave(self) -> None:
        self.room = None
        self.state = None

    def put(self, room: str, name: str, game: GameState, events: Sequence[Event] = ()) -> None:
        """Lay ``game`` on the table, in the room ``room`` named ``name``, with the events
        that made it, and push it to the listener."""
        self.game = game
        self._version += 1
        players = tuple(SeatInfo(p.seat, p.name) for p in game.players)
        status = RoomStatus.FINISHED if game.over else RoomStatus.PLAYING
        info = RoomInfo(room=room, name=name, variant=game.variant, seats=game.seats,
                        status=status.value, players=players)
        self.room, self.room_name = room, name
        self.state = RoomState(room, self._version, make_view(info, game),
                               tuple(event_to_wire(e) for e in events))
        self.listener.on_state(self.state)


def command_of(action: Action) -> str:
    """The command that plays ``action``."""
    return c.action_to_command(action)


def _commands(actions: Sequence[Action]) -> str:
    return ", then ".join(f"`{command_of(a)}`" for a in actions)


class LearnController(Controller):
    """See the module docstring. ``offer``: the lessons were offered by ``castell play``,
    which goes on to its game when they are over (or declined)."""

    def __init__(self, table: LessonTable, progress: LearnProgress, *,
                 offer: bool = False) -> None:
        super().__init__(table)
        self.table = table
        self.progress = progress
        self.offer = offer
        #: Whether ``castell play`` is to go on to its game once this screen closes.
        self.go_play = False
        self.index = 0
        self.origin: GameState | None = None  # the lesson's position
        self.complete = False  # whether the lesson's one thing is done
        self.log_from_start = True  # a lesson's log is whole: nothing to ask a server for

    @property
    def lesson(self) -> Lesson:
        return LESSONS[self.index]

    def heading(self, index: int | None = None) -> str:
        """``Lesson 3 of 8 · Training and skills``."""
        i = self.index if index is None else index
        return f"Lesson {i + 1} of {len(LESSONS)} · {LESSONS[i].title}"

    # -- starting ------------------------------------------------------------------------------

    async def begin(self, *, restart: bool = False) -> None:
        """The lessons: the first offered, if ``offer``; from the start with ``restart``,
        else where the learner left them."""
        if self.offer:
            self.progress.offer_made()
            self.screen.info("Esc or n: straight to your game (`castell learn` gives the "
                             "lessons any time)")
            self.screen.refresh()
            answer = await self.screen.ask(f"New to Castell? Take the guided first game "
                                           f"({len(LESSONS)} lessons) first? [Y/n] ")
            yes = yes_answer(answer, True)
            if not yes:
                self.go_play = True
                await self.quit()
                return
        keys = [lesson.key for lesson in LESSONS]
        at = 0 if restart else self.progress.resume_at(keys)
        back = self.progress.started and not restart
        self.load(at)
        if back and len(self.progress.done) < len(LESSONS):
            self.screen.info(f"back at lesson {at + 1} of {len(LESSONS)}: your progress was "
                             f"kept ({len(self.progress.done)} done)")
        elif back:
            self.screen.info(f"you did every lesson: here they are again (`lesson N` goes to "
                             f"one of {len(LESSONS)})")

    def lobby_lines(self) -> list[str]:
        """Before the first lesson: what the lessons are."""
        return [f"The guided first game: {len(LESSONS)} short lessons on the real board, "
                "each asking for one thing:", *self.list_lines()]

    def list_lines(self) -> list[str]:
        """The lessons, numbered, those done ticked, the one under way marked."""
        out = []
        for i, lesson in enumerate(LESSONS):
            mark = "✓" if lesson.key in self.progress.done else " "
            here = "  ◀ here" if self.session.room is not None and i == self.index else ""
            sections = " ".join(f"§{n}" for n in lesson.sections)
            out.append(f" {mark} {i + 1}. {lesson.title} ({sections}){here}")
        return out

    def load(self, index: int) -> None:
        """Lay lesson ``index``'s position on the table, and say what it teaches and asks."""
        self.index = index
        lesson = self.lesson
        self.origin = lesson.position(self.session.name)
        self.complete = False
        self.clear_log()
        self.log_from_start = True
        # A new lesson is no news of a turn: no bell for it.
        self._my_turn_key = (self.origin.round, LEARNER)
        self.progress.at(lesson.key)
        # (the board's header shows the room's name, cut short: the number alone)
        self.table.put(f"lesson-{index + 1}", f"Lesson {index + 1} of {len(LESSONS)}",
                       self.origin)
        self.screen.show(self.lesson_lines())

    # -- what the lesson says ------------------------------------------------------------------

    def ask_line(self) -> str:
        lesson = self.lesson
        return f"▶ {lesson.ask} One way: {_commands(lesson.answer)}."

    def lesson_lines(self) -> list[str]:
        lesson = self.lesson
        sections = " ".join(f"§{n}" for n in lesson.sections)
        return [
            f"{self.heading()} · rules {sections} (`rules {lesson.topic}`)",
            lesson.teaches,
            self.ask_line(),
            f"Try `{command_of(lesson.mistake)}` too if you like: the rules refuse it, and "
            "say why.",
            "`lesson` again · `lessons` · `next` · `help` · `quit` (your place is kept)",
        ]

    def _onwards(self) -> str:
        if self.index + 1 < len(LESSONS):
            return f"`next`: {self.heading(self.index + 1)}"
        if self.offer:
            return "`next`: your game against bots"
        return "that was the last lesson: `quit` closes, `castell play` starts a real game"

    def done_lines(self, events: Sequence[dict[str, Any]]) -> list[str]:
        view = self.view
        happened = event_lines(view, mark_regions(events, view)) if view is not None else []
        return [f"✓ {self.heading()}: done.", *happened, self.lesson.learned,
                f"{self._onwards()} · `again` plays this lesson again"]

    # -- lines -----------------------------------------------------------------------------------

    async def handle(self, line: str) -> None:
        words = line.lower().split()
        if words[:1] in (["next"], ["again"], ["lessons"], ["lesson"]):
            await self.guard(self._lesson_command(words))
        elif words == ["help"]:
            self.screen.show([*c.help_text().splitlines(), "In the lessons:",
                              *(f"{syntax:<10}  {what}" for syntax, what in LEARN_HELP)])
        elif words[:1] == ["leave"]:
            await self.quit()
        else:
            await super().handle(line)

    async def _lesson_command(self, words: list[str]) -> None:
        word, args = words[0], words[1:]
        if word == "lesson" and args:
            if len(args) != 1 or not args[0].isdigit() \
                    or not 1 <= int(args[0]) <= len(LESSONS):
                raise c.CommandError(f"`lesson N` takes a lesson's number, 1 to {len(LESSONS)}")
            self.load(int(args[0]) - 1)
        elif args:
            raise c.CommandError(f"{word} takes nothing")
        elif word == "lesson":
            self.screen.show(self.lesson_lines())
        elif word == "lessons":
            self.screen.show(["The lessons (`lesson N` goes to one):", *self.list_lines()])
        elif word == "again":
            self.load(self.index)
        elif self.index + 1 < len(LESSONS):
            self.load(self.index + 1)
        elif self.offer:
            self.go_play = True
            await self.quit()
        else:
            self.screen.show(["That was the last lesson: you know the game now.",
                              *self.list_lines(), "`again` plays the last lesson again, "
                              "`lesson N` another; `castell play` starts a real game."])
            self.screen.info("that was the last lesson: `quit` closes; `castell play` starts "
                             "a game against bots")

    async def act(self, action: Action) -> None:
        """Play ``action`` in the lesson: the engine's verdict first, then the lesson's."""
        game = self.table.game
        if self.complete or game is None or self.origin is None:
            raise c.CommandError(f"this lesson is done: {self._onwards()}")
        lesson = self.lesson
        try:
            after, events = apply(game, LEARNER, action)
        except RuleError as exc:
            self.screen.show([f"✗ The rules refuse `{command_of(action)}`: {exc.message} "
                              f"(rule `{exc.code}`).", self.ask_line()])
            raise
        verdict = lesson.judge(self.origin, action, after)
        if verdict is Verdict.OFF:
            self.screen.show([f"The rules allow `{command_of(action)}`, but it is not what "
                              f"this lesson asks: it was not played. {lesson.hint[0].upper()}"
                              f"{lesson.hint[1:]}.", self.ask_line()])
            raise c.CommandError(f"not this lesson's step: {lesson.ask}")
        self.table.put(self.table.room or "", self.table.room_name or "", after, events)
        if verdict is Verdict.DONE:
            self.complete = True
            self.progress.did(lesson.key)
            state = self.table.state
            self.screen.show(self.done_lines(state.events if state is not None else ()))
            self.screen.info(f"✓ done · {self._onwards()}")

    # -- leaving -------------------------------------------------------------------------------

    def kept_seat(self) -> str | None:
        """What the shell is told when the lessons close: where they will start again."""
        if self.go_play:
            return None
        if len(self.progress.done) == len(LESSONS) and self.complete:
            return "you did every lesson: `castell play` starts a game against bots"
        if self.session.room is None:
            return None
        # The lesson the next `castell learn` opens: this one, unless it is done (then the
        # next one not done), as LearnProgress.resume_at chooses it.
        at = self.progress.resume_at([lesson.key for lesson in LESSONS])
        return (f"your place in the lessons is kept: `castell learn` takes you back to "
                f"lesson {at + 1} of {len(LESSONS)} ({LESSONS[at].title})")

    async def quit(self, *, confirm: bool = True) -> None:
        """Close the lessons: nothing is lost (the progress is kept), so nothing is asked."""
        await self.session.stop()
        self.screen.exit()

    async def leave(self) -> None:
        await self.quit()


@attrs.frozen
class Outcome:
    """How the lessons ended: whether ``castell play`` goes on to its game, and what to tell
    the shell."""

    go_play: bool
    note: str | None


async def run_lessons(name: str, *, plain: bool, color: bool, restart: bool = False,
                      offer: bool = False, progress: LearnProgress | None = None,
                      history: History | None = None) -> Outcome:
    """The lessons on a screen, until the learner quits (or, ``offer``ed, declines);
    ``history``: the input line's, kept between runs."""
    table = LessonTable(name)
    controller = LearnController(table, progress or LearnProgress(), offer=offer)

    async def boot() -> None:
        await controller.begin(restart=restart)

    if plain:
        from client.screens.plain import PlainScreen

        await PlainScreen(controller).run(boot)
    else:
        from client.screens.app import TerminalScreen

        await TerminalScreen(controller, color=color, history=history).run(boot)
    note = controller.kept_seat()
    return Outcome(controller.go_play, f"{note[0].upper()}{note[1:]}." if note else None)


async def offer_lessons(name: str, *, color: bool, progress: LearnProgress | None = None,
                        played_before: bool = False, history: History | None = None
                        ) -> Outcome:
    """``castell play`` on a first run: offer the lessons (once, ever); on ``go_play`` it goes
    on to its game. Asked of nobody who played before or took a lesson already."""
    progress = progress or LearnProgress()
    if progress.offered or progress.started or played_before:
        return Outcome(True, None)
    return await run_lessons(name, plain=False, color=color, offer=True, progress=progress,
                             history=history)


