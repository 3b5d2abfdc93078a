"""What the player's lines do, whichever screen shows the result.

The :class:`Controller` sits between a :class:`client.net.session.Session` and a :class:`Screen`
(the full-screen terminal of :mod:`client.screens.app`, or the line-by-line one of
:mod:`client.screens.plain`). It keeps what both screens draw — the last view, recent events and
chat,
the game's log, the lobby's room list, the connection's state — and turns each typed line into
requests: lobby lines (:mod:`client.control.lobby`) before a room, room lines while a room waits,
game
commands (:mod:`client.control.commands`) once the game runs. Errors end up on the screen, in words.

The log is the whole game as this client knows it: every event of every push, the chat, and
the refusals of the player's own lines. After a ``resume``, a reconnect or a ``watch`` it is
filled from the room's ``history`` (docs/protocol.md), so that it reaches back to the start of
the game; the ``log`` command shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from client.control import commands as c
from client.control import lobby as lb
from client.control import tournaments as tn
from client.control.hints import DEEP_HINT_SECONDS, deep_hint_lines, hint_lines
from client.local.seats import HeldSeat
from client.local.settings import Settings
from client.net.net import ServerError
from client.net.session import RoomState, Session
from client.screens.render import event_lines
from client.screens.rulebook import rules_page
from shared import messages as m
from shared.actions import Action, EndTurn, Move, Recruit, Special, Train
from shared.board import ROUNDS
from shared.describe import mark_regions, score_lines
from shared.engine import legal_actions
from shared.errors import CastellError
from shared.record import GameRecordFile
from shared.review import Review
from shared.sanitize import safe
from shared.state import Skills
from shared.view import RoomStatus, View, state_from_view
from shared.wire import ROOM_NAME_MAX

EVENTS_KEPT = 16
CHATS_KEPT = 6
#: A whole game's history is a few hundred entries: a page of 500 is usually all of it.
HISTORY_PAGE = 500
HISTORY_PAGES = 20
#: Client-side lines of the log that the server's history does not hold.
OWN_KINDS = ("chat", "refused")


class Screen(Protocol):
    """What the controller needs from a screen."""

    def show(self, lines: Sequence[str]) -> None:
        """Show a block of text (help, hints, rules, the room list)."""
    def error(self, text: str) -> None:
        """Show a refusal or a mistake, in words, near the prompt."""
    def info(self, text: str) -> None:
        """Show a short piece of news near the prompt."""
    async def ask(self, question: str) -> str | None:
        """Ask a question; the answer typed, or None when the player cancels."""
    def show_lobby(self) -> None:
        """The room list changed, or the player is back in the lobby."""
    def state_changed(self, push: RoomState, my_turn_began: bool) -> None: ...
    def chat(self, push: m.ChatPush) -> None: ...
    def refresh(self) -> None: ...
    def exit(self) -> None: ...
    def bell(self) -> None:
        """Ring the terminal's bell (one of the player's games reached their turn)."""
    def show_log(self) -> None:
        """Show the game's log (:meth:`Controller.log_lines`): in a pane of its own where the
        screen has one, as a block of text where it has not."""
    def review_progress(self, name: str, done: int, total: int) -> None:
        """The server's review of game ``name`` stands at ``done`` of ``total`` turns (its
        ``review_progress`` pushes): a progress bar where the screen draws one."""
    def show_review(self, record: GameRecordFile, review: Review) -> None:
        """Show a finished game's review: the review viewer (:mod:`client.modes.review`)
        where the screen is a full one, the review as text where it is not."""
    def step_through(self, record: GameRecordFile) -> None:
        """`replay N`: step through a finished game's record where the screen can (as
        ``castell replay`` does), else show its steps as lines."""

    #: Whether a person answers (a terminal): only then does ``quit`` ask first.
    interactive: bool


class Controller:
    """See the module docstring."""

    def __init__(self, session: Session, screen: Screen | None = None) -> None:
        self.session = session
        self.screen: Screen = screen  # type: ignore[assignment]  # set by the screen
        self.events: deque[Mapping[str, Any]] = deque(maxlen=EVENTS_KEPT)
        self.chats: deque[m.ChatPush] = deque(maxlen=CHATS_KEPT)
        #: The game's log, oldest first: (the room's version then, event).
        self.log: list[tuple[int, Mapping[str, Any]]] = []
        #: Whether the log reaches back to the start of the game.
        self.log_from_start = False
        self.rooms: tuple[m.RoomSummary, ...] = ()
        #: The account's games as `games` last showed them (numbered for resume and replay).
        self.games: tuple[m.GameEntry, ...] = ()
        #: The names of the players followed, as the last ``friends`` listed them (for
        #: completion).
        self.followed: tuple[str, ...] = ()
        #: The rematch another player invited us to, not yet joined.
        self.invite: m.InvitePush | None = None
        #: The challenges made to us that are open, and those we made, by id (newest last).
        self.challenges_to_me: dict[str, m.ChallengePush] = {}
        self.challenges_mine: dict[str, tuple[str, ...]] = {}
        #: While in the quick-match queue: since when (monotonic), found, of how many.
        self.queued: list[float] | None = None
        #: The tournaments as `tournaments` last listed them (numbered for `tournament N`).
        self.tournaments: tuple[m.TournamentEntry, ...] = ()
        #: The last tournament table we were given and have not sat at yet.
        self.waiting_table: m.TournamentTablePush | None = None
        self._ticking: asyncio.Task[None] | None = None
        self.connection: str | None = None
        self._legal: tuple[int, int | None, list[Action]] | None = None
        seats = session.seats
        self.settings = Settings(seats.folder if seats is not None else None)
        session.listener = self
        session.on_reconnected = self._reconnected

    # -- what the screens draw -------------------------------------------------------------

    @property
    def view(self) -> View | None:
        state = self.session.state
        return state.view if state is not None else None

    @property
    def me(self) -> int | None:
        return self.session.seat

    @property
    def mode(self) -> str:
        """``lobby`` (no room), ``room`` (waiting for the start) or ``game``."""
        if self.session.room is None:
            return "lobby"
        view = self.view
        if view is None or view.status == RoomStatus.WAITING:
            return "room"
        return "game"

    def legal(self) -> list[Action]:
        """The player's legal actions now (empty when it is not their turn)."""
        push = self.session.state
        me = self.me
        if push is None or me is None or push.view.status != RoomStatus.PLAYING \
                or push.view.turn != me or me in (push.view.resigned or ()):
            return []
        key = (push.version, me)
        if self._legal is None or self._legal[:2] != key:
            try:
                actions = legal_actions(state_from_view(push.view), me)
            except CastellError:
                actions = []
            self._legal = (*key, actions)
        return self._legal[2]

    def team(self) -> list[int]:
        for p in self.view.players if self.view is not None else ():
            if p.seat == self.me:
                return list(p.team)
        return []

    def skills(self) -> Skills:
        """The player's skills, for the towers ``build`` completes (none when watching)."""
        for p in self.view.players if self.view is not None else ():
            if p.seat == self.me:
                return p.skills
        return Skills()

    def lobby_lines(self) -> list[str]:
        """The lobby as text: the open rooms, numbered for `join N`, and the held seats. The
        lobby of ``castell play`` (:attr:`local`) is this computer's games: nobody else comes
        to it, so it asks nobody to invite friends, and offers a new game against bots."""
        if self.local:
            lines = [f"Open rooms on this computer (castell play; you are "
                     f"{safe(self.session.name)}):"]
        else:
            lines = [f"Open rooms on {self.session.url} (you are {safe(self.session.name)}):"]
        # The list comes open rooms first, then games under way, then finished ones (still
        # listed a while, to watch how they ended): each kind under its own heading.
        headings: dict[str, str] = {RoomStatus.PLAYING: "Games under way (`watch N` follows one):",
                    RoomStatus.FINISHED: "Finished games (`watch N` shows how one ended):"}
        if not any(r.status == RoomStatus.WAITING for r in self.rooms):
            lines.append("  none yet — `new` starts a game against bots" if self.local
                         else "  none yet — `create` one, then invite your friends")
        said: set[str] = set()
        for i, r in enumerate(self.rooms, 1):
            if r.status in headings and r.status not in said:
                said.add(r.status)
                lines.append(headings[r.status])
            timer = f"{lb.timer_text(r.turn_seconds)} turns" if r.turn_seconds else "no timer"
            rated = " · rated" if r.rated else ""
            lines.append(f"  {i:>2}. {safe(r.name)} — {r.taken}/{r.seats} seats · {r.variant}"
                         f"{rated} · {timer} · {r.status} · id {r.room}")
        if self.rooms and self.session.more_rooms:
            lines.append("  … more rooms: `list more`")
        held = [] if self.session.account else self.session.held_seats()
        if self.session.account and self.games:
            lines.append("Your games (`resume N`, `replay N`, `rematch N`, `abandon N`; "
                         "`games` again):")
            lines.extend(self.game_lines())
            again = self.rematch_line()
            if again is not None:
                lines.append(again)
        if held:
            lines.append("Your seats (`resume N`, `abandon N`):")
            lines.extend(f"  {i}. {safe(h.name)} (seat {h.seat}) · id {h.room}"
                         for i, h in enumerate(held, 1))
        if self.local:
            lines.append("`new` game against bots · `games` · `resume N` · `replay N` · "
                         "`abandon N` · `help` · `quit`")
        else:
            lines.append("`create` a room · `join N` · `watch N` · `list` · `help` · `quit`")
        return lines

    def game_lines(self) -> list[str]:
        """The account's games, numbered for `resume N` and `replay N`."""
        return lb.game_lines(self.games)

    async def refresh_games(self) -> None:
        """Ask the server for the account's games (newest first)."""
        self.games = await self.session.my_games()

    def room_lines(self) -> list[str]:
        """What a waiting room adds to its view: its settings, how friends join, what to type."""
        view = self.view
        if view is None:
            return []
        session = self.session
        # A private room is joined by its code: its creator was given it, a friend typed it.
        key = session.join_key
        code = session.code or (key.upper() if key and key != session.room else None)
        timer = view.turn_seconds
        private = bool(view.private) or code is not None
        lines = [f"{view.seats} seats · {view.variant} game"
                 f" · {f'{lb.timer_text(timer)} per turn' if timer else 'no turn timer'}"
                 f"{' · private' if private else ''}"]
        rated = self.rating_lines()
        if rated:
            lines.append("Rated game (accounts only, no bots): " + " · ".join(rated)
                         + self.provisional_note())
        if code:  # (its creator's, or the code a friend typed: never the room's id)
            lines.append(f"Private room: friends join with `join {code}`")
        elif not private and not self.local:  # (castell play's server is this computer's)
            lines.append(f"Friends join with `join {session.room}` (or pick it from `list`)")
        free = view.seats - len(view.players)
        creator = session.invited.get(session.room or "")
        who = safe(creator) if creator else "the room's creator"
        waiting = f"waiting for {who} to start"
        seats = f"{free} seat{'s' if free != 1 else ''} free"
        if self.me is None:
            lines.append("You are watching. `leave` returns to the lobby.")
        elif free and self.rated_room():  # a rated room seats no bot (rated_room)
            lines.append(f"{seats}: wait for players (a rated game seats no bots); "
                         + ("`start` once every seat is taken" if session.created
                            else waiting))
        elif free and self.local:
            lines.append(f"{seats}: `bot` / `fill` gives {'them' if free != 1 else 'it'} to "
                         "bots; then `start`")
        elif free and session.created:
            lines.append(f"{seats}: wait for friends, or `bot` / `fill` for bots; then `start`")
        elif free:
            lines.append(f"{seats}: waiting for more players, then for {who} to start")
        elif session.created:
            lines.append("Every seat is taken: `start` begins the game")
        else:
            lines.append(f"Every seat is taken: {waiting}")
        return lines

    # -- from the session --------------------------------------------------------------------

    def on_state(self, push: RoomState) -> None:
        view = push.view
        before = self._my_turn_key
        events = mark_regions(push.events, view)
        self.events.extend(events)
        self.log.extend((push.version, event) for event in events)
        if any(event.get("kind") == "started" for event in events):
            self.log_from_start = True
        now = self._turn_key(view)
        began = now is not None and now != before
        self._my_turn_key = now
        self.screen.state_changed(push, began)
        if any(event.get("kind") == "game_over" for event in events):
            note = self.finished_note()
            rated = self.rating_lines()
            if rated and any(p.rating_before is not None for p in view.players):
                self.screen.show(["Ratings: " + " · ".join(rated) + self.provisional_note()])
            if view.unrated:
                self.screen.show([f"Ratings unchanged: {safe(view.unrated)}"])
            if note is not None:  # (over the status line, which says what comes next)
                self.screen.info(note + ("; `rematch` plays it again" if self.me is not None
                                         else ""))

    _my_turn_key: tuple[int, int] | None = None

    def _turn_key(self, view: View) -> tuple[int, int] | None:
        if view.status == RoomStatus.PLAYING and self.me is not None and view.turn == self.me \
                and self.me not in (view.resigned or ()):
            return (view.round, self.me)
        return None

    def on_chat(self, push: m.ChatPush) -> None:
        self.chats.append(push)
        # Said between two moves, shown between them: a chat line joins the event lines.
        line = {"kind": "chat", "seat": push.seat, "name": push.name, "text": push.text}
        self.events.append(line)
        self._log_own(line)
        self.screen.chat(push)

    def on_connection(self, status: str | None) -> None:
        self.connection = status
        if status is not None and self.session.stopped:
            self.screen.error(status)
        self.screen.refresh()
        if self.session.barred is not None:
            # Barred by the host: nothing is left to do here. The screen closes, and the
            # shell is told why (run_screen prints it).
            self.screen.exit()

    def on_your_turn(self, push: m.YourTurnPush) -> None:
        """One of the account's games reached our turn: the bell (unless `bell off`) and a
        word on the status line, wherever we are. The game on screen says it itself."""
        if push.room == self.session.room:
            return
        if self.settings.bell:
            self.screen.bell()
        self.screen.info(f"your turn in {safe(push.name)!r} (id {push.room}): `games` "
                         f"lists your games")
        self.screen.refresh()

    def on_note(self, note: m.Note) -> None:
        """A notification came: the bell (unless `bell off`) and its sentence on the status
        line, wherever we are."""
        if self.settings.bell:
            self.screen.bell()
        self.screen.info(f"new: {safe(note.text)} — `inbox` lists them")
        self.screen.refresh()

    def on_inbox_new(self, push: m.InboxNewPush) -> None:
        """Signed in with new notifications: ``3 new: …``, and the bell."""
        if self.settings.bell:
            self.screen.bell()
        self.screen.info(lb.new_notes_line(push.count, push.notes))
        self.screen.refresh()

    def on_invite(self, push: m.InvitePush) -> None:
        self.invite = push
        view = self.view
        # From the finished game, `rematch` takes the offered seat; from anywhere else,
        # joining the invite's room does (the server finds a private one by id for us).
        if self.session.room is None:
            how = f"`join {push.room}`"
        elif view is not None and view.status == RoomStatus.FINISHED:
            how = "`rematch`"
        else:  # in another room: it is left first
            how = f"`leave`, then `join {push.room}`,"
        self.screen.info(f"{safe(push.from_)} invites you to a rematch of {safe(push.name)!r}:"
                         f" {how} takes your seat")
        self.screen.refresh()

    def on_notice(self, text: str) -> None:
        self.clear_log()
        self.screen.info(text)
        self.screen.refresh()

    def on_removed(self, text: str) -> None:
        """The host closed the room, or removed us from it: back in the lobby, told why."""
        self.clear_log()
        self.chats.clear()
        self._my_turn_key = None
        self.screen.info(text)
        self.screen.show_lobby()
        self._refreshing = asyncio.get_running_loop().create_task(
            self.guard(self._lobby_again()))

    _refreshing: asyncio.Task[None] | None = None

    async def _lobby_again(self) -> None:
        """Back in the lobby without `leave` (the room closed, or we were removed): the rooms,
        and signed in the account's games, as they stand now (the game left is no longer
        one to play)."""
        await self.refresh_rooms()
        if self.session.account:
            await self.refresh_games()
            self.screen.refresh()

    async def _reconnected(self) -> None:
        if self.session.room is None:
            with contextlib.suppress(CastellError):
                await self.refresh_rooms()
        else:  # what happened while the connection was down is in the history
            await self.load_history()

    # -- the log -----------------------------------------------------------------------------

    def _log_own(self, event: Mapping[str, Any]) -> None:
        """A line of this client's own (chat, a refusal) in the log, at the room's version."""
        state = self.session.state
        self.log.append((state.version if state is not None else 0, event))

    def refused(self, text: str) -> None:
        """A refusal: on the screen near the prompt, and, in a room, kept in the log (a
        refusal of a line typed quickly after another must not hide the first)."""
        if self.session.room is not None:
            line = {"kind": "refused", "text": text}
            self.events.append(line)
            self._log_own(line)
        self.screen.error(text)

    def clear_log(self) -> None:
        self.events.clear()
        self.log.clear()
        self.log_from_start = False

    async def load_history(self) -> None:
        """Fill the log from the room's ``history``, back to the start of its game; what
        arrived since, and this client's own lines, stay after it. Quietly nothing when the
        server cannot say (a refusal, the connection down)."""
        session = self.session
        room, state = session.room, session.state
        if room is None or state is None or state.view.status == RoomStatus.WAITING:
            return
        entries: list[m.HistoryEntry] = []
        before: int | None = None
        try:
            for _ in range(HISTORY_PAGES):
                reply = await session.request(m.HistoryRequest, before=before,
                                              limit=HISTORY_PAGE)
                if not reply.entries:
                    break
                entries[:0] = reply.entries
                if any(e.get("kind") == "started" for e in reply.entries[0].events):
                    break
                before = reply.entries[0].version
        except CastellError:
            return
        if session.room != room or session.state is None or not entries:
            return
        top = entries[-1].version
        said = {_said(e) for e in entries[-1].events if e.get("kind") in OWN_KINDS}
        newer = [(v, e) for v, e in self.log
                 if v > top or (v == top and e.get("kind") in OWN_KINDS and _said(e) not in said)]
        versions = [entry.version for entry in entries for _ in entry.events]
        events = mark_regions([dict(e) for entry in entries for e in entry.events],
                              session.state.view)
        self.log = [*zip(versions, events, strict=True), *newer]
        self.log_from_start = True
        self.events = deque((e for _, e in self.log), maxlen=EVENTS_KEPT)
        self.screen.refresh()

    def log_lines(self) -> list[str]:
        """The log as text lines, a festival's results under it."""
        view = self.view
        if view is None:
            return []
        lines = event_lines(view, [e for _, e in self.log])
        return lines or ["nothing has happened yet"]

    async def show_log(self) -> None:
        """The ``log`` command: the whole game so far (its history asked for when the log
        does not reach the start)."""
        if not self.log_from_start:
            await self.load_history()
        self.screen.show_log()

    # -- starting ----------------------------------------------------------------------------

    async def start(self, *, resume: bool = False) -> None:
        """After connecting: offer (or, with ``resume``, take) a held seat, else list rooms.
        The question says which game it is (its round, players and start, when the account's
        list of games knows it); Esc (or `n`) leaves the seat for later, and says how to take
        it back."""
        held = await self._held_open()
        take = False
        kept = await self._describe(held[:1]) if held else []
        if kept:
            k = kept[0]
            take = resume
            if not resume:
                answer = await self._confirm(
                    [f"Your unfinished game: {k.text()}.",
                     "Enter resumes it; `n` or Esc leaves it for later."],
                    f"resume your game in {safe(k.name)!r} (seat {k.seat})? [Y/n] ")
                take = yes_answer(answer, True)
                if not take:
                    self.screen.info(f"not resumed: your seat in {safe(k.name)!r} stays yours "
                                     "— `resume` in the lobby takes it back")
        refusal: str | None = None
        if kept and take:
            try:
                await self._take(kept[0])
            except CastellError as exc:  # (a kick's reason and end, say): said last
                refusal = exc.message
        if self.session.room is None:
            await self.guard(self.refresh_rooms())
        if self.session.account and self.session.room is None:
            await self.guard(self._arrival())
        if refusal is not None:  # after the arrival's news, so that it is what stays
            self.refused(refusal)

    async def _held_open(self) -> list[HeldSeat]:
        """The remembered seats, less those played no more (:meth:`Session.seat_standing`):
        a room the host closed, a game that is over, a public room the server no longer
        has. Each of those is forgotten, told in one line why, and never offered."""
        open_ = []
        for h in self.session.held_seats():
            try:
                standing = await self.session.seat_standing(h.room, private=h.private)
            except CastellError:
                standing = None
            if standing is None:
                open_.append(h)
                continue
            self.session.forget_seat(h)
            self.screen.info(f"{safe(h.name)!r}: {standing[1]}; its seat is forgotten")
        return open_

    async def _describe(self, held: list[HeldSeat], *, mine: bool = False) -> list[Kept]:
        """The games of ``held`` seats, with what the account's list of games says of each
        (signed in); with ``mine``, the account's unfinished games held by no seat token
        too (after them). Newest first; never one the account resigned or the host
        closed."""
        entries: dict[str, m.GameEntry] = {}
        if self.session.account:
            with contextlib.suppress(CastellError):
                await self.refresh_games()
            entries = {g.room: g for g in self.games}
        kept = []
        for h in held:
            entry = entries.get(h.room)
            if entry is not None and entry.resigned:
                self.session.forget_seat(h)  # resigned elsewhere: played no more by us
                continue
            kept.append(Kept(h.room, h.name, h.seat, h, entry))
        if mine:
            rooms = {k.room for k in kept}
            kept.extend(Kept(g.room, g.name, g.seat, None, g) for g in self.games
                        if g.room not in rooms and g.status == RoomStatus.PLAYING
                        and not g.resigned)
            kept.sort(key=lambda k: -(k.entry.started_at or 0) if k.entry else 0)
        return kept

    async def _take(self, kept: Kept) -> None:
        """Take the seat of a kept game back: with its token, or (signed in) by the account."""
        if kept.held is not None:
            await self._resume(kept.held)
            return
        self.clear_log()
        reply = await self.session.take_back(kept.room, kept.name)
        self.screen.info(f"back in {safe(kept.name)!r}, seat {reply.seat}")
        await self.load_history()

    async def _arrival(self) -> None:
        """Signed in, arriving in the lobby: the account's games, and in how many it is our
        turn."""
        await self.refresh_games()
        waiting = sum(g.your_turn for g in self.games)
        if waiting:
            self.screen.info(f"your turn in {waiting} game{'s' if waiting != 1 else ''}: "
                             "`games` lists them, `resume N` takes one up")
        # (the screen shows the lobby, games included, once the start is over: only once)
        self.screen.refresh()

    async def _confirm(self, context: list[str], question: str) -> str | None:
        """Ask ``question`` with ``context`` (what it means, what each answer does) shown
        above it, in the notes (where no push's news takes its place) while it stands."""
        self.screen.show(context)
        try:
            return await self.screen.ask(question)
        finally:
            self.screen.show([])

    #: ``castell play``: the lobby is this computer's games (:meth:`lobby_lines`), and `new`
    #: starts a game against bots with these (seats, variant, level).
    local = False
    play_options: tuple[int, str, str] | None = None

    async def start_play(self, seats: int, variant: str, level: str,
                         resume: str | None = None) -> None:
        """``castell play``: back to the unfinished game (``resume="resume"``, or when the
        player says so), else a room of our own, bots in every other seat, and go
        (``resume="new"``: a new game without asking).

        The question says which game it is (its round, its players — the bots' names say
        their level — and when it started), and how many others are kept. `n` starts a new
        game; Esc starts nothing: the lobby of this computer's games, where `games` lists
        them, `resume N` takes one up, `abandon N` gives one up and `new` starts one."""
        self.local = True
        self.play_options = (seats, variant, level)
        kept = await self._describe(await self._held_open(), mine=True) \
            if resume != "new" else []
        if kept:
            k = kept[0]
            take = resume == "resume"
            if not take:
                more = [f"({len(kept) - 1} more kept: Esc, then `games`.)"] \
                    if len(kept) > 1 else []
                answer = await self._confirm(
                    [f"Your unfinished game: {k.text()}.", *more,
                     "Enter resumes it, `n` starts a new one, Esc goes to the lobby (nothing "
                     "starts)."],
                    f"resume your unfinished game {safe(k.name)!r} (seat {k.seat})? [Y/n] ")
                if answer is None:  # Esc: back, not forward into a new game
                    await self._to_local_lobby()
                    return
                take = yes_answer(answer, True)
            if take:
                await self.guard(self._take(k))
                if self.session.room is not None:
                    return
        elif resume == "resume":
            self.screen.info("no unfinished game to resume: a new one starts")
        await self.new_play_game()

    async def _to_local_lobby(self) -> None:
        """``castell play``'s lobby, nothing started, and what can be done there."""
        await self.guard(self.refresh_rooms())
        self.screen.show_lobby()
        # (in the notes, until Esc: where no push's news takes its place)
        self.screen.show(["Nothing started: `games` lists the games kept here — `resume N` "
                          "takes one up, `abandon N` gives one up, `new` starts a new one."])

    async def new_play_game(self) -> None:
        """``castell play``'s new game: a room of our own, bots in every other seat, started."""
        assert self.play_options is not None
        seats, variant, level = self.play_options
        await self.session.create_room(await self._play_game_name(), seats, variant)
        for _ in range(seats - 1):
            await self.session.add_bot(level)
        await self.session.start_game()

    async def _play_game_name(self) -> str:
        """A new ``castell play`` game's name: ``Anna's game``, then ``Anna's game #2``,
        ``#3``... by how many games the account has here, so that `games` tells them apart."""
        base = f"{self.session.name}'s game"[:ROOM_NAME_MAX - 5]
        with contextlib.suppress(CastellError):
            await self.refresh_games()
        if not self.games:
            return base
        taken = {g.name for g in self.games}
        number = len(self.games) + 1
        while f"{base} #{number}" in taken:
            number += 1
        return f"{base} #{number}"

    async def refresh_rooms(self, *, more: bool = False) -> None:
        """The first page of the room list; with ``more``, the next page added after the
        rooms shown (their numbers stay, for `join N`)."""
        if more and self.rooms:
            self.rooms += await self.session.list_rooms(after=self.rooms[-1].room)
        else:
            self.rooms = await self.session.list_rooms()
        self.screen.refresh()

    # -- lines -------------------------------------------------------------------------------

    async def handle(self, line: str) -> None:
        """Do what one typed line says; every refusal is shown, nothing is raised."""
        if not line.strip():
            return
        mode = self.mode
        words = line.lower().split()
        if words[:1] == ["bell"]:
            await self.guard(self._bell(words[1:]))
        elif mode != "lobby" and words == ["log"]:
            await self.guard(self.show_log())
        elif mode == "lobby":
            await self.guard(self._lobby(line))
        elif mode == "room":
            await self.guard(self._room(line))
        else:
            await self.guard(self._game(line))

    async def guard(self, work: Awaitable[Any]) -> None:
        """Await ``work``, showing any refusal on the screen instead of raising it."""
        try:
            await work
        except CastellError as exc:  # refusals: the server's, the parser's, the connection's
            self.refused(exc.message)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug of ours: say so, and keep the game going
            self.refused(f"the client failed: {type(exc).__name__}: {exc}")

    async def _lobby(self, line: str) -> None:
        if self.local and line.split() == ["new"]:  # castell play: a new game against bots
            await self.new_play_game()
            return
        cmd = lb.parse_lobby(line)
        if isinstance(cmd, lb.ListRooms):
            await self.refresh_rooms(more=cmd.more)
            self.screen.show_lobby()
        elif isinstance(cmd, lb.CreateRoom):
            await self._create(cmd)
        elif isinstance(cmd, lb.JoinRoom):
            await self._join(cmd)
        elif isinstance(cmd, lb.Games):
            await self._show_games()
        elif isinstance(cmd, lb.Replay):
            await self._replay(cmd.number)
        elif isinstance(cmd, lb.Review):
            self._signed_in()
            game = await self._game_number(cmd.number, finished=True)
            await self.review(game.room, game.name)
        elif isinstance(cmd, lb.Rematch):
            await self._lobby_rematch(cmd.number)
        elif isinstance(cmd, lb.Bell):
            await self._bell(["on" if cmd.on else "off"])
        elif isinstance(cmd, lb.Top | lb.Whois):
            await self._look_up(cmd)
        elif isinstance(cmd, lb.TournamentCommand):
            await self.tournament(cmd)
        elif isinstance(cmd, lb.Abandon):
            await self._abandon(cmd.number)
        elif isinstance(cmd, lb.Quick):
            await self.quick(cmd)
        elif isinstance(cmd, lb.CancelQuick):
            await self._cancel_quick()
        elif isinstance(cmd, lb.Social | lb.Friends | lb.Presence | lb.Inbox):
            await self._social(cmd)
        elif isinstance(cmd, lb.Challenge):
            await self._challenge(cmd)
        elif isinstance(cmd, lb.AnswerChallenge):
            await self._answer_challenge(cmd)
        elif isinstance(cmd, lb.Resume) and self.session.account:
            await self._resume_game(cmd.number)
        elif isinstance(cmd, lb.Resume):
            held = self.session.held_seats()
            if not held:
                raise c.CommandError("you hold no seat on this server")
            n = cmd.number or 1
            if not 1 <= n <= len(held):
                raise c.CommandError(f"you hold {len(held)} seat(s): `resume 1`"
                                     f"{' to ' + str(len(held)) if len(held) > 1 else ''}")
            await self._resume(held[n - 1])
        elif isinstance(cmd, c.Help):
            self.screen.show(lb.help_lines(lb.lobby_help(self.local)))
        elif isinstance(cmd, c.Quit):
            await self.quit()

    async def _social(self, cmd: lb.Social | lb.Friends | lb.Presence | lb.Inbox) -> None:
        """``follow``, ``unfollow``, ``block``, ``unblock``, ``friends``, ``presence`` and
        ``inbox`` (accounts only: the server refuses a guest, and says why)."""
        if isinstance(cmd, lb.Social):
            kind = {"follow": m.Follow, "unfollow": m.Unfollow, "block": m.Block,
                    "unblock": m.Unblock}[cmd.what]
            await self.session.request(kind, name=cmd.name)
            done = {"follow": f"you follow {cmd.name}: `friends` shows where they are",
                    "unfollow": f"you no longer follow {cmd.name}",
                    "block": f"{cmd.name} is blocked: no chat, invites or challenges from "
                             "them, never matched with you",
                    "unblock": f"{cmd.name} is no longer blocked"}[cmd.what]
            self.screen.info(safe(done))
        elif isinstance(cmd, lb.Friends):
            reply = await self.session.request(m.FriendsRequest)
            self.followed = tuple(f.name for f in reply.friends)
            self.screen.show(lb.friends_lines(reply))
        elif isinstance(cmd, lb.Presence):
            await self.session.request(m.PresenceRequest, visible=cmd.visible)
            self.screen.info("your presence is shown to those who follow you" if cmd.visible
                             else "your presence is hidden: you show as hidden")
        else:
            reply = await self.session.request(m.InboxRequest, clear=cmd.clear)
            if cmd.clear:
                self.screen.info(f"inbox cleared ({reply.cleared} notification(s))")
            else:
                self.screen.show(lb.inbox_lines(reply.notes))

    async def _look_up(self, cmd: lb.Top | lb.Whois) -> None:
        """``top`` and ``whois``: from the lobby, and from a game (the server answers them
        anywhere)."""
        if isinstance(cmd, lb.Top):
            reply = await self.session.request(m.Leaderboard, limit=cmd.limit,
                                               around_me=cmd.around_me)
            self.screen.show(["Leaderboard (rating · rated games · won):",
                              *lb.leaderboard_lines(reply.entries)])
        else:
            self.screen.show(lb.profile_lines(await self.session.request(
                m.ProfileRequest, name=cmd.name)))

    async def _abandon(self, number: int) -> None:
        """``abandon N``: give up a kept game (signed in, game N of `games`; else held seat
        N): asked first, then its seat is taken back, the game resigned (docs/rules.md §10)
        and left. Against bots alone the game ends at once; it is then over, and replayable,
        never offered again."""
        if self.session.account:
            game = await self._game_number(number, finished=False)
            if game.status == RoomStatus.WAITING:
                raise c.CommandError(f"game {number} has not started: `resume {number}`, "
                                     "then `leave`, gives its seat up")
            kept = Kept(game.room, game.name, game.seat, None, game)
        else:
            held = self.session.held_seats()
            if not 1 <= number <= len(held):
                raise c.CommandError(f"no seat number {number}: the lobby lists your seats")
            h = held[number - 1]
            kept = Kept(h.room, h.name, h.seat, h)
        name, room = kept.name, kept.room
        question = await self._confirm(
            [f"Abandoning {kept.text()} resigns it: you rank last in it and cannot come back "
             "to it; the game stays kept (`replay` once it is over)."],
            f"abandon {safe(name)!r}? [y/N] ")
        if not yes_answer(question, False):
            self.screen.info(f"not abandoned: {safe(name)!r} is kept as it was")
            return
        await self._take(kept)
        over = False
        try:
            await self.session.resign()
            over = self.view is not None and self.view.status == RoomStatus.FINISHED
        finally:
            await self.leave()
        self.screen.info(f"you resigned {safe(name)!r} (id {room}): "
                         + ("it is over" if over else "it is played to its end without you"))

    # -- quick match -------------------------------------------------------------------------

    async def quick(self, cmd: lb.Quick) -> None:
        """Wait in the quick-match queue; a live line says how far the game is."""
        if cmd.rated:
            self._signed_in()
        await self.session.quick_match(cmd.seats, cmd.rated, cmd.bots_after)
        self.queued = [time.monotonic(), 1, min(cmd.seats)]
        self.screen.info(self.waiting_line())
        if self._ticking is None or self._ticking.done():
            self._ticking = asyncio.get_running_loop().create_task(self._tick())

    def waiting_line(self) -> str:
        """``waiting: 1 of 3 found, 12 s`` (and how to leave the queue)."""
        if self.queued is None:
            return ""
        since, found, of = self.queued
        return (f"waiting: {int(found)} of {int(of)} found, "
                f"{int(time.monotonic() - since)} s (`cancel` leaves the queue)")

    async def _tick(self) -> None:
        while self.queued is not None:
            await asyncio.sleep(1.0)
            if self.queued is not None:
                self.screen.info(self.waiting_line())
                self.screen.refresh()

    def on_match_waiting(self, push: m.MatchWaitingPush) -> None:
        if self.queued is not None:
            self.queued[1:] = [push.found, push.of]
            self.screen.info(self.waiting_line())
            self.screen.refresh()

    def on_matched(self, push: m.MatchedPush) -> None:
        """A quick match found a game: take the seat (on whichever node serves it)."""
        self.queued = None
        self._taking = asyncio.get_running_loop().create_task(
            self.guard(self._take_matched(push)))

    _taking: asyncio.Task[None] | None = None

    # -- challenges ------------------------------------------------------------------------

    def on_challenge(self, push: m.ChallengePush | m.ChallengeEndedPush) -> None:
        """A challenge made to us (the bell, unless `bell off`, and how to answer it), or
        the end of one (said; an accepted one's seat comes with ``matched``)."""
        if isinstance(push, m.ChallengePush):
            self.challenges_to_me[push.challenge] = push
            if self.settings.bell:
                self.screen.bell()
            others = [n for n in push.to if n.casefold() != (self.session.name or "").casefold()]
            game = f"a {push.seats}-seat{' rated' if push.rated else ''} game"
            if push.turn_seconds:
                game += f" ({push.turn_seconds} s a turn)"
            also = f" with {', '.join(safe(n) for n in others)}" if others else ""
            self.screen.info(f"{safe(push.from_)} challenges you to {game}{also}: `accept` or "
                             f"`decline` (id {push.challenge})")
        else:
            to_me = self.challenges_to_me.pop(push.challenge, None)
            mine = self.challenges_mine.pop(push.challenge, None)
            who = f"{safe(to_me.from_)}'s challenge" if to_me is not None else \
                f"your challenge to {', '.join(safe(n) for n in mine)}" if mine else \
                f"challenge {push.challenge}"
            how = {"accepted": "was accepted: taking your seat",
                   "declined": f"was declined{' by ' + safe(push.by) if push.by else ''}",
                   "expired": "expired unanswered",
                   "cancelled": "was cancelled"}[push.why]
            self.screen.info(f"{who} {how}")
        self.screen.refresh()

    async def _challenge(self, cmd: lb.Challenge) -> None:
        self._signed_in()
        seats = cmd.seats if cmd.seats is not None else len(cmd.names) + 1
        sent = await self.session.challenge(cmd.names, seats, cmd.variant, cmd.turn_seconds,
                                            cmd.rated)
        self.challenges_mine[sent.challenge] = cmd.names
        minutes = max(1, round((sent.expires - time.time()) / 60))
        self.screen.info(f"challenge sent to {', '.join(safe(n) for n in cmd.names)} "
                         f"(id {sent.challenge}; it waits {minutes} min; `challenge cancel` "
                         f"takes it back)")

    async def _answer_challenge(self, cmd: lb.AnswerChallenge) -> None:
        self._signed_in()
        open_ = self.challenges_mine if cmd.how == "cancel" else self.challenges_to_me
        challenge = cmd.challenge
        if challenge is None:
            if not open_:
                raise c.CommandError("no challenge is open: give its id" if cmd.how == "cancel"
                                     else "nobody has challenged you")
            challenge = list(open_)[-1]
        await self.session.answer_challenge(challenge, cmd.how)
        self.challenges_to_me.pop(challenge, None)
        taking = self._taking is not None and not self._taking.done()
        if cmd.how == "accept" and not taking and self.session.room is None:
            # (when the game was made at once, the seat being taken says more: ``matched``)
            self.screen.info("challenge accepted: your seat comes once everyone has accepted")

    async def _take_matched(self, push: m.MatchedPush) -> None:
        self.clear_log()
        reply = await self.session.take_matched(push)
        self.screen.info(f"matched! you sit in seat {reply.seat}")
        await self.load_history()
        self.screen.refresh()

    # -- tournaments -------------------------------------------------------------------------

    async def tournament(self, cmd: lb.TournamentCommand) -> None:
        """The ``tournament…`` lines (docs/protocol.md, "Swiss tournaments"): from the lobby,
        and from a game (a game's own seat stays as it is, but for `tournament table`)."""
        if isinstance(cmd, lb.TournamentList):
            reply = await self.session.request(m.TournamentsRequest)
            self.tournaments = reply.entries
            self.screen.show(tn.list_lines(self.tournaments))
        elif isinstance(cmd, lb.TournamentShow):
            reply = await self.session.request(m.TournamentRequest,
                                               tournament=await self._tournament_id(cmd.key))
            self.screen.show(tn.tournament_lines(reply))
        elif isinstance(cmd, lb.TournamentNew):
            self._signed_in()
            made = await self.session.request(
                m.TournamentCreate, name=cmd.name, rounds=cmd.rounds, seats=cmd.seats,
                turn_seconds=cmd.turn_seconds, rated=cmd.rated, starts_in=cmd.starts_in)
            self.tournaments = (await self.session.request(m.TournamentsRequest)).entries
            self.screen.show(tn.tournament_lines(made))
            when = "`tournament start " + made.tournament + "` starts it" \
                if cmd.starts_in is None else f"it starts in {lb.timer_text(cmd.starts_in)}"
            self.screen.info(f"tournament {safe(made.name)!r} made (id {made.tournament}): "
                             f"`tournament join {made.tournament}` enters it; {when}")
        elif isinstance(cmd, lb.TournamentAct):
            self._signed_in()
            kind = {"join": m.TournamentJoin, "leave": m.TournamentLeave,
                    "start": m.TournamentStart}[cmd.verb]
            reply = await self.session.request(kind,
                                               tournament=await self._tournament_id(cmd.key))
            self.screen.show(tn.tournament_lines(reply))
            self.screen.info({"join": f"you are in {safe(reply.name)!r}",
                              "leave": f"you left {safe(reply.name)!r}",
                              "start": f"{safe(reply.name)!r} has begun: round 1 is paired"
                              }[cmd.verb])
        else:
            if self.waiting_table is None:
                raise c.CommandError("no tournament table waits for you")
            if self.session.room is not None:
                await self.leave()
            await self._take_table(self.waiting_table)

    async def _tournament_id(self, key: str) -> str:
        """A tournament's id from what was typed: a number of `tournaments`, or an id."""
        if not key.isdigit():
            return key
        if not self.tournaments:
            self.tournaments = (await self.session.request(m.TournamentsRequest)).entries
        n = int(key)
        if not 1 <= n <= len(self.tournaments):
            raise c.CommandError(f"no tournament number {n}: `tournaments` lists them")
        return self.tournaments[n - 1].tournament

    def on_tournament(self, push: m.TournamentTablePush | m.TournamentEndedPush) -> None:
        """A round paired or a tournament over: said with the bell (unless `bell off`). A
        table is taken at once from the lobby or a finished game (as a quick match's seat
        is); from a game under way, `tournament table` takes it."""
        if self.settings.bell:
            self.screen.bell()
        if isinstance(push, m.TournamentEndedPush):
            self.screen.info(tn.ended_text(push))
            self.screen.refresh()
            return
        if push.bye or push.room is None:
            self.screen.info(tn.table_text(push))
            self.screen.refresh()
            return
        self.waiting_table = push
        view = self.view
        if self.session.room is None or (view is not None
                                         and view.status == RoomStatus.FINISHED):
            self._taking = asyncio.get_running_loop().create_task(
                self.guard(self._take_table(push)))
            return
        self.screen.info(tn.table_text(push) + ": `leave`, then `tournament table` takes "
                         "your seat")
        self.screen.refresh()

    async def _take_table(self, push: m.TournamentTablePush) -> None:
        """Sit at a tournament's table: the quick match's way (its seat token)."""
        assert push.room is not None and push.seat is not None and push.token is not None
        if self.session.room is not None:  # a finished game of the round before
            await self.leave()
        self.clear_log()
        self.chats.clear()
        self._my_turn_key = None
        reply = await self.session.take_matched(
            m.MatchedPush(push.room, push.seat, push.token))
        if self.waiting_table is push:
            self.waiting_table = None
        self.screen.info(tn.table_text(push) + f": you sit in seat {reply.seat}")
        await self.load_history()
        self.screen.refresh()

    async def _cancel_quick(self) -> None:
        if self.queued is None:
            raise c.CommandError("you are not waiting for a quick match")
        await self.session.cancel_match()
        self.queued = None
        self.screen.info("you left the quick-match queue")

    def rated_room(self) -> bool:
        """Whether the room's game is rated (its players are shown with their ratings)."""
        view = self.view
        return view is not None and any(p.rating is not None for p in view.players)

    def provisional_note(self) -> str:
        """What the ``?`` of a provisional rating means, for the line that shows one."""
        view = self.view
        if view is None or not any(p.provisional and p.rating is not None
                                   for p in view.players):
            return ""
        return " (? provisional: too few rated games, or opponents, to be sure yet)"

    def rating_lines(self) -> list[str]:
        """A rated game's players and ratings; once it is over, each one's change."""
        view = self.view
        if view is None:
            return []
        out = []
        for p in view.players:
            if p.rating is None:
                continue
            mark = "?" if p.provisional else ""
            if p.rating_before is not None:
                out.append(f"{safe(p.name)} {lb.change_text(p.rating_before, p.rating)}{mark}")
            else:
                out.append(f"{safe(p.name)} {lb.rating_text(p.rating, p.provisional)}")
        return out

    async def _bell(self, args: list[str]) -> None:
        self.settings.bell = lb.parse_bell(args).on
        self.screen.info("the bell rings when one of your games reaches your turn"
                         if self.settings.bell else "no bell (`bell on` rings it again)")

    def _signed_in(self) -> None:
        if not self.session.account:
            raise c.CommandError("you play as a guest here: an account (the key `castell` "
                                 "keeps for this server) lists your games")

    async def _show_games(self) -> None:
        self._signed_in()
        await self.refresh_games()
        self.screen.show(["Your games (`resume N`, `replay N`):", *self.game_lines()])

    async def _game_number(self, number: int | None, *, finished: bool) -> m.GameEntry:
        if not self.games:
            await self.refresh_games()
        # A game the host closed is neither taken up nor replayed: it is played no more.
        kind = [g for g in self.games if g.status != lb.CLOSED
                and (g.status == RoomStatus.FINISHED) == finished
                and (finished or not g.resigned)]
        if number is None:  # resume alone: the first game whose turn is ours, else the latest
            if not kind:
                raise c.CommandError("you have no game to resume: `games` lists yours")
            return next((g for g in kind if g.your_turn), kind[0])
        if not 1 <= number <= len(self.games):
            raise c.CommandError(f"no game number {number}: `games` lists your games")
        game = self.games[number - 1]
        if game.status == lb.CLOSED:
            raise c.CommandError(f"game {number} was closed by the host: it is played no "
                                 "more")
        if (game.status == RoomStatus.FINISHED) != finished:
            raise c.CommandError(f"game {number} is over: `replay {number}` steps through it"
                                 if not finished else
                                 f"game {number} is not over: `resume {number}` takes it up")
        if game.resigned and not finished:
            raise c.CommandError(f"you resigned game {number}: it is played to its end "
                                 f"without you (`replay {number}` once it is over)")
        return game

    async def _resume_game(self, number: int | None) -> None:
        self._signed_in()
        game = await self._game_number(number, finished=False)
        self.clear_log()
        reply = await self.session.take_back(game.room, game.name)
        self.screen.info(f"back in {safe(game.name)!r}, seat {reply.seat}")
        await self.load_history()

    async def _replay(self, number: int) -> None:
        """A finished game of `games`, fetched from the server (``record``) and stepped
        through by the screen (the full screen: as ``castell replay`` steps)."""
        self._signed_in()
        game = await self._game_number(number, finished=True)
        record = await self.session.record(game.room)
        self.screen.step_through(record)

    async def review(self, room: str, name: str) -> None:
        """A finished game's review (docs/review.md): its record and the server's review of
        it (computed there, once, its progress shown as a bar), then shown."""
        record = await self.session.record(room)
        review = await self.session.review(
            room, lambda done, total: self.screen.review_progress(name, done, total))
        self.screen.show_review(record, review)

    async def _rematch(self) -> None:
        """In a finished game: the rematch we were invited to, or a new one."""
        view = self.view
        if view is None or view.status != RoomStatus.FINISHED or self.me is None:
            raise c.CommandError("a rematch comes once the game is over")
        invite, self.invite = self.invite, None
        self.clear_log()
        self.chats.clear()
        self._my_turn_key = None
        # The server gives this game's rematch: the seat offered to us in the one another
        # player made (staying here if it is refused), or a new one.
        reply = await self.session.rematch()
        if not self.session.created:
            maker = self.session.invited.get(reply.room) or (
                invite.from_ if invite is not None else "the room's creator")
            self.screen.info(f"rematch: you sit in seat {reply.seat}; waiting for "
                             f"{safe(maker)} to start")
        else:
            self.screen.info(f"rematch {reply.room}: the others are invited; `start` once "
                             "every seat is taken")

    async def _lobby_rematch(self, number: int | None) -> None:
        """``rematch [N]`` in the lobby: finished game N of `games` (the latest finished one
        without N) played again: its seat is taken back (a finished game's seat stays its
        player's), then its rematch made or joined as from the final table; a refused
        rematch leaves that table for the lobby again."""
        self._signed_in()
        await self.refresh_games()
        if number is None and not any(g.status == RoomStatus.FINISHED for g in self.games):
            raise c.CommandError("you have no finished game to play again: `games` lists "
                                 "yours")
        game = await self._game_number(number, finished=True)
        await self._take(Kept(game.room, game.name, game.seat, None, game))
        try:
            await self._rematch()
        except CastellError:
            with contextlib.suppress(CastellError):
                await self.leave()
            raise

    def rematch_line(self) -> str | None:
        """In the lobby, signed in, when the latest game is finished: that `rematch` plays it
        again."""
        games = [g for g in self.games if g.status != lb.CLOSED]
        if not games or games[0].status != RoomStatus.FINISHED:
            return None
        return (f"`rematch` plays {safe(games[0].name)!r} again with its players "
                "(`rematch N`: another finished game of `games`)")

    async def _resume(self, held: Any) -> None:
        self.clear_log()
        try:
            await self.session.resume(held)
        except ServerError as exc:
            if exc.code in ("bad_token", "room_not_found"):
                raise c.CommandError(f"{safe(held.name)!r} cannot be resumed: {exc.message} "
                                     f"(forgotten)") from None
            raise
        self.screen.info(f"back in {safe(held.name)!r}, seat {held.seat}")
        await self.load_history()

    async def _join(self, cmd: lb.JoinRoom) -> None:
        key = cmd.key
        if key.isdigit():
            n = int(key)
            if not 1 <= n <= len(self.rooms):
                raise c.CommandError(f"no room number {n}: `list` shows the rooms")
            key = self.rooms[n - 1].room
        if cmd.spectate and await self._own_game(key):
            return
        self.clear_log()
        try:
            reply = await self.session.join(key, spectate=cmd.spectate)
        except ServerError as exc:
            if exc.code == "already_started":  # say it with this client's commands
                held = "; if you play in it, `resume` takes your seat back" \
                    if self.session.held_seats() else ""
                raise c.CommandError(f"that game has started: `watch {cmd.key}` follows it"
                                     f"{held}") from None
            if exc.code == "room_full" and not cmd.spectate:
                raise c.CommandError(f"every seat of that room is taken: `watch {cmd.key}` "
                                     "follows its game") from None
            if exc.code == "name_taken":
                raise c.CommandError(f"someone in that room is already called "
                                     f"{safe(self.session.name)!r}: come back under another "
                                     "name (`castell --name NAME`)") from None
            raise
        self.screen.info("you are watching" if reply.seat is None
                         else f"you sit in seat {reply.seat}")
        await self.load_history()  # a game already under way: what happened so far

    async def _own_game(self, room: str) -> bool:
        """``watch`` of a game this player has a seat in: the seat is taken back instead (a
        finished game shows its final table, and `rematch` plays it again); a player is not
        a spectator of their own game (the room has their name already). False when it is
        not theirs."""
        entry: m.GameEntry | None = None
        if self.session.account:
            with contextlib.suppress(CastellError):
                await self.refresh_games()
            entry = next((g for g in self.games if g.room == room), None)
        held = next((h for h in self.session.held_seats() if h.room == room), None)
        if entry is None and held is None:
            return False
        if entry is not None and entry.status == lb.CLOSED:
            raise c.CommandError(f"{safe(entry.name)!r} was closed by the host: it is played "
                                 "no more")
        name = entry.name if entry is not None else held.name if held is not None else room
        seat = entry.seat if entry is not None else held.seat if held is not None else 0
        await self._take(Kept(room, name, seat, held if entry is None else None, entry))
        self.screen.info(f"it is your game: back in your seat ({seat}) of {safe(name)!r}"
                         + (" — `rematch` plays it again" if self.view is not None
                            and self.view.status == RoomStatus.FINISHED else ""))
        return True

    async def _ask(self, question: str, parse: Any) -> Any:
        while True:
            answer = await self.screen.ask(question)
            if answer is None or answer.strip().lower() in ("cancel", "quit"):
                raise c.CommandError("cancelled")
            try:
                return parse(answer)
            except c.CommandError as exc:
                self.screen.error(exc.message)

    async def _create(self, cmd: lb.CreateRoom) -> None:
        if cmd.name is None:  # guided: one question per setting, Enter keeps the default
            default = f"{self.session.name}'s table"[:ROOM_NAME_MAX]
            name = await self._ask(f"room name [{default}]: ",
                                   lambda a: lb.room_name(a) if a.strip() else default)
            seats = await self._ask("seats, 2 to 4 [4]: ",
                                    lambda a: lb.parse_seats(a) if a.strip() else 4)
            variant = await self._ask("variant, normal or advanced [normal]: ",
                                      lambda a: lb.parse_variant(a) if a.strip() else "normal")
            timer = await self._ask("turn timer (90, 5m, 12h, 2d), or none [none]: ",
                                    lb.parse_timer)
            private = await self._ask("private (join by code only)? [y/N] ",
                                      lambda a: lb.parse_yes(a, False))
            rated = self.session.account and await self._ask(
                "rated (accounts only, ratings change)? [y/N] ",
                lambda a: lb.parse_yes(a, False))
            cmd = lb.CreateRoom(name, seats, variant, timer, private, bool(rated))
        self.clear_log()
        assert cmd.name is not None
        reply = await self.session.create_room(cmd.name, cmd.seats, cmd.variant,
                                               cmd.turn_seconds, cmd.private, cmd.rated)
        code = f" · private code {reply.code}" if reply.code else ""
        self.screen.info(f"room {safe(cmd.name)!r} created (id {reply.room}{code})")

    async def _room(self, line: str) -> None:
        cmd = lb.parse_room(line)
        if isinstance(cmd, lb.AddBots):
            view = self.view
            free = view.seats - len(view.players) if view is not None else 0
            count = free if cmd.count is None else cmd.count
            if free <= 0:
                raise c.CommandError("every seat is taken: `start` begins the game")
            for _ in range(count):
                await self.session.add_bot(cmd.level)
        elif isinstance(cmd, lb.StartGame):
            await self.session.request(m.StartGame)
        elif isinstance(cmd, lb.LeaveRoom):
            await self.leave()
        elif isinstance(cmd, c.Chat):
            await self.session.request(m.Chat, text=cmd.text)
        elif isinstance(cmd, c.Help):
            self.screen.show(lb.help_lines(lb.ROOM_HELP))
        elif isinstance(cmd, c.Quit):
            await self.quit()

    async def leave(self) -> None:
        await self.session.leave()
        self.clear_log()
        self.chats.clear()
        self._my_turn_key = None
        with contextlib.suppress(CastellError):
            await self.refresh_rooms()
            if self.session.account:  # the game just left stands as it is now
                await self.refresh_games()
        self.screen.show_lobby()

    async def _game(self, line: str) -> None:
        cmd = c.parse(line)
        if isinstance(cmd, c.Chat):
            await self.session.request(m.Chat, text=cmd.text)
        elif isinstance(cmd, c.Hint) and cmd.deep:
            self.screen.info("thinking… (as the hard bot does, up to "
                             f"{DEEP_HINT_SECONDS:g} s)")
            self.screen.refresh()
            lines = await asyncio.to_thread(deep_hint_lines, self.view, self.me,
                                            DEEP_HINT_SECONDS)
            self.screen.info("")  # the thinking is over
            self.screen.show(lines)
        elif isinstance(cmd, c.Hint):
            self.screen.show(hint_lines(self.view, self.me))
        elif isinstance(cmd, c.Help):
            lines = c.help_text(cmd.command).splitlines()
            if cmd.command is None and self.over_line() is not None:
                lines = [str(self.over_line()), *lines]
            self.screen.show(lines)
        elif isinstance(cmd, c.Score):
            if self.view is None:
                raise c.CommandError("no game to score")
            self.screen.show(score_lines(self.view, self.me))
        elif isinstance(cmd, c.Resign):
            await self.resign()
        elif isinstance(cmd, c.Rematch):
            await self._rematch()
        elif isinstance(cmd, c.Review):
            view = self.view
            if view is None or view.status != RoomStatus.FINISHED:
                raise c.CommandError("`review` comes once the game is over: no help during a "
                                     "game")
            await self.review(view.room, view.name)
        elif isinstance(cmd, c.Lookup):
            looked = lb.parse_lobby(cmd.line)
            if isinstance(looked, lb.TournamentCommand):
                await self.tournament(looked)
            else:
                assert isinstance(looked, lb.Top | lb.Whois)
                await self._look_up(looked)
        elif isinstance(cmd, c.Rules):
            self.screen.show(rules_page(cmd.topic).splitlines())
        elif isinstance(cmd, c.Leave):
            await self.leave()
        elif isinstance(cmd, c.Quit):
            await self.quit()
        elif isinstance(cmd, c.Warn):
            self.settings.warn_end = cmd.on
            self.screen.info("`end` asks first when you could still move, recruit or train, "
                             "or leave tokens no turn can spend" if cmd.on else
                             "`end` ends the turn without asking (`warn on` asks again)")
        elif isinstance(cmd, c.EndNow):
            await self.act(EndTurn())
        elif isinstance(cmd, EndTurn):
            await self._end()
        else:
            await self.act(cmd)

    # -- the end warning ---------------------------------------------------------------------

    _warned: tuple[str | None, int, int | None] | None = None

    def unused(self) -> list[str]:
        """What the player could still do this turn that ``end`` would give up: ``moved``,
        ``recruited``, ``trained`` (from the legal actions, in that order). Not ``moved``
        while the pawn stands where a festival of this round is held (§5: staying there is
        the point)."""
        kinds = {type(a) for a in self.legal()}
        staying = self._at_festival()
        return [word for kind, word in ((Move, "moved"), (Recruit, "recruited"),
                                        (Train, "trained"))
                if kind in kinds and not (kind is Move and staying)]

    def _at_festival(self) -> bool:
        """Whether the player's pawn stands in the region of a festival held at the end of
        this round (§5)."""
        view = self.view
        me = next((p for p in view.players if p.seat == self.me), None) if view else None
        return view is not None and me is not None and me.region is not None and any(
            f.round == view.round and not f.done and f.region == me.region
            for f in view.festivals)

    def unspent(self) -> str | None:
        """Special action tokens that ``end`` would leave more of than the turns after this
        one can spend (a turn spends at most one, §4; an unspent token scores nothing, §9),
        said in words; None when a special action is not open now, or the tokens fit."""
        view = self.view
        if view is None or not any(isinstance(a, Special) for a in self.legal()):
            return None
        me = next((p for p in view.players if p.seat == self.me), None)
        later = ROUNDS - view.round  # this player's turns after this one
        if me is None or me.tokens <= later:
            return None
        tokens = f"{me.tokens} token{'s' if me.tokens != 1 else ''}"
        if not later:
            return f"{tokens} left, and unspent ones score nothing"
        return (f"{tokens} left for {later} more turn{'s' if later != 1 else ''} "
                "(unspent ones score nothing)")

    async def _end(self) -> None:
        """``end``: once a turn, when actions are still available, ask before ending."""
        view = self.view
        turn = (self.session.room, view.round, self.me) if view is not None \
            and self.me is not None else None
        asking = self.settings.warn_end and turn != self._warned
        left = self.unused() if asking else []
        tokens = self.unspent() if asking else None
        if left or tokens:
            self._warned = turn
            words = [f"you have not {left[0] if len(left) == 1 else ', '.join(left[:-1])}"
                     f"{'' if len(left) == 1 else f' or {left[-1]}'}"] if left else []
            words += [tokens] if tokens else []
            answer = await self.screen.ask(
                f"{'; '.join(words)}: end anyway? [y/N] (`warn off` stops asking) ")
            try:
                yes = answer is not None and lb.parse_yes(answer, False)
            except c.CommandError:
                yes = False
            if not yes:
                self.screen.info("the turn goes on (`end` again ends it)")
                return
            view = self.view
            now = (self.session.room, view.round, self.me) if view is not None \
                and self.me is not None else None
            if now != turn:  # the room was left, closed or moved on while we asked
                self.screen.info("that turn is no longer yours to end: nothing was sent")
                return
        await self.act(EndTurn())

    async def act(self, action: Action) -> None:
        if self.me is None:
            raise c.CommandError("you are watching: only players act (`leave` for the lobby)")
        view = self.view
        if view is not None and view.status == RoomStatus.FINISHED:
            raise c.CommandError("the game is over: `leave` for the lobby, `quit` to leave")
        if view is not None and self.me in (view.resigned or ()):
            raise c.CommandError("you resigned this game: the rest of it is played for your "
                                 "seat (`leave` for the lobby)")
        await self.session.act(action)

    def resigned(self) -> bool:
        """Whether this player resigned the game on screen."""
        view = self.view
        return view is not None and self.me is not None and self.me in (view.resigned or ())

    def over_line(self) -> str | None:
        """What a finished game's player can do next (None: not a player of a finished
        game)."""
        view = self.view
        if view is None or view.status != RoomStatus.FINISHED or self.me is None:
            return None
        return ("The game is over. `rematch` plays it again with the same players · `review` "
                "goes over it turn by turn · `score` · `leave` for the lobby · `quit` closes "
                "Castell.")

    def resign_effect(self) -> str:
        """What resigning now would do (docs/rules.md §10), for the question that asks."""
        view = self.view
        assert view is not None
        gone = set(view.resigned or ())
        others = [p for p in view.players if p.seat != self.me and p.seat not in gone]
        if len(others) == 1:
            return f"{safe(others[0].name)} wins at once"
        if all(p.bot for p in others):
            return "the game ends at once"
        if any(p.rating is not None for p in view.players):
            return "the game goes on, each of your turns ending at once"
        return "the game goes on, a bot playing your seat to the end"

    async def resign(self) -> None:
        """``resign``: concede the game, once the player said yes (docs/rules.md §10)."""
        view, me = self.view, self.me
        if me is None:
            raise c.CommandError("you are watching: only players resign (`leave` for the "
                                 "lobby)")
        if view is None or view.status == RoomStatus.WAITING:
            raise c.CommandError("the game has not started: `leave` gives your seat up")
        if view.status == RoomStatus.FINISHED:
            raise c.CommandError("the game is over: there is nothing to resign")
        if self.resigned():
            raise c.CommandError("you have resigned this game already: `leave` for the lobby")
        room = self.session.room
        answer = await self._confirm(
            [f"Resigning: {self.resign_effect()}; you rank last and win nothing. It cannot be "
             "taken back."], "resign this game? [y/N] ")
        if not yes_answer(answer, False):
            self.screen.info("not resigned: the game goes on")
            return
        now = self.view
        if self.session.room != room or now is None or now.status != RoomStatus.PLAYING:
            self.screen.info("that game is no longer under way: nothing was sent")
            return
        effect = self.resign_effect()
        await self.session.resign()
        over = self.view is not None and self.view.status == RoomStatus.FINISHED
        self.screen.info(f"you resigned: {effect} · " + (
            "`rematch` plays it again · `leave` for the lobby" if over
            else "`score` · `leave` for the lobby"))

    #: The command that brings this player back to a game left with ``quit`` (set by
    #: ``castell``: ``castell play --resume``, ``castell ADDRESS --resume``).
    comeback: str | None = None
    #: How a finished game of this server is kept, ``{room}`` standing for its id (set by
    #: ``castell play``: its games stay on this computer).
    keeps_games: str | None = None
    #: True while ``quit`` waits for its confirmation (a second Ctrl-C confirms).
    confirming_quit = False

    def kept_seat(self) -> str | None:
        """In a game under way with a seat: that the seat is kept, and how to come back."""
        view = self.view
        if self.me is None or view is None or view.status != RoomStatus.PLAYING \
                or self.session.seat_lost or self.session.barred is not None \
                or self.resigned():
            return None
        how = f"`{self.comeback}` takes it back" if self.comeback else \
            "`resume` in the lobby takes it back"
        return f"your seat in {safe(self.session.room_name or view.name)!r} (seat {self.me}) " \
               f"is kept: {how}"

    def finished_note(self) -> str | None:
        """In a finished game this server keeps: how to write it to a file."""
        view, room = self.view, self.session.room
        if self.keeps_games is None or view is None or room is None \
                or view.status != RoomStatus.FINISHED:
            return None
        return self.keeps_games.format(room=room)

    async def quit(self, *, confirm: bool = True) -> None:
        """Close Castell; in a game under way, after asking once (the seat is kept)."""
        kept = self.kept_seat()
        if kept is not None and confirm and self.screen.interactive:
            self.confirming_quit = True
            self.screen.info(f"{kept[0].upper()}{kept[1:]}.")
            try:
                answer = await self.screen.ask("quit now? [y/N] ")
            finally:
                self.confirming_quit = False
            try:
                sure = answer is not None and lb.parse_yes(answer, False)
            except c.CommandError:
                sure = False
            if not sure:
                self.screen.info("not quitting: the game goes on")
                return
        await self.session.stop()
        self.screen.exit()


def _said(event: Mapping[str, Any]) -> tuple[Any, ...]:
    """A chat line or refusal, comparable with the same line from the history."""
    return (event.get("kind"), event.get("seat"), event.get("name"), event.get("text"))


def yes_answer(answer: str | None, default: bool) -> bool:
    """A yes-or-no answer (None: the question was cancelled, which is no); anything
    unreadable is no."""
    try:
        return answer is not None and lb.parse_yes(answer, default)
    except c.CommandError:
        return False


@attrs.frozen
class Kept:
    """A game this player may take up again: a seat token kept for it (``held``), or what
    the account's list of games says of it (``entry``), or both."""

    room: str
    name: str
    seat: int
    held: HeldSeat | None = None
    entry: m.GameEntry | None = None

    def text(self) -> str:
        """``'Anna's game' · round 4/10 · Anna, Pau·normal, Laia·normal · started
        2026-05-02 18:02`` (as much as is known)."""
        parts = [repr(safe(self.name))]
        g = self.entry
        if g is None:
            parts.append(f"seat {self.seat}")
        else:
            if g.round is not None:
                parts.append(f"round {g.round}/{ROUNDS}")
            parts.append(", ".join(safe(p) for p in g.players))
            if g.started_at is not None:
                parts.append("started " + time.strftime("%Y-%m-%d %H:%M",
                                                        time.localtime(g.started_at)))
        return " · ".join(parts)
