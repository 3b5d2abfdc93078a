"""The asyncio side of one room: feeds the sans-I/O :class:`~server.core.room.Room` its inputs and
performs the effects it returns.

A :class:`RoomRunner` owns what the room itself may not: the room's lock, the store calls, the
turn timer (a deadline in the lobby's one heap), the bots' task, and the connections the
effects name. Every public
coroutine takes the lock itself; none expects its caller to hold it, and none calls another
while holding it (an asyncio lock is not reentrant). So inputs reach the room one at a time,
and each change's writes are stored, in order, before the change is committed:
acknowledged means durable.

Its concerns each have a module of their own, composed here: the turn timer and the
scheduler its waits go through (:mod:`server.runtime.timers`: a test passes a virtual clock), the
bots' driving and their backoff (:mod:`server.runtime.bot_driver`), the writes and the read-back
after a lost answer (:mod:`server.runtime.runner_writes`), and a rated room's ratings
(:mod:`server.runtime.runner_ratings`).

When the store fails, the change is dropped (the room stays as it was, nothing is faked): a
request is answered ``internal_error`` and the cause goes to the log; a turn timer or a bot
tries again after a growing backoff, so the room moves on by itself once the store is back;
and as soon as any write is stored again (this room's or another's, :mod:`server.runtime.retries`),
a retry waiting on its backoff goes at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.core.history import Entry, History, derive
from server.core.room import (
    ArmTimer,
    CancelTimer,
    Change,
    Close,
    Effect,
    Finish,
    Push,
    Room,
    Send,
    WakeBot,
)
from server.features.ratings import rating_changes
from server.runtime import runner_ratings as ratings
from server.runtime.bot_driver import BotDriver
from server.runtime.retries import Retries
from server.runtime.runner_writes import Doubt, StoreUnavailable, count_change, perform
from server.runtime.thinking import Thinkers
from server.runtime.timers import LoopScheduler, Scheduler, TurnTimer
from server.store.base import CHAT_KEPT
from server.store.errors import VersionConflict
from shared.actions import Recorded
from shared.errors import RoomMoved

if TYPE_CHECKING:
    from server.ops.metrics import Metrics
    from server.runtime.connection import Connection
    from server.store.base import Store

log = logging.getLogger("castell.room")


#: Where these moved (their importers know them as the runner's).
__all__ = ["RoomRunner", "StoreUnavailable", "count_change", "perform"]


class RoomRunner:
    """One room, driven. See the module docstring."""

    def __init__(self, room: Room[Connection], store: Store, *,
                 clock: Callable[[], float] = time.time,
                 on_change: Callable[[RoomRunner], None] | None = None,
                 on_empty: Callable[[RoomRunner], None] | None = None,
                 on_lost: Callable[[RoomRunner, str], None] | None = None,
                 held: Callable[[RoomRunner], bool] | None = None,
                 thinkers: Thinkers | None = None, bot_think: float = 1.5,
                 retries: Retries | None = None, scheduler: Scheduler | None = None,
                 metrics: Metrics | None = None,
                 away: Callable[[RoomRunner], set[int]] | None = None) -> None:
        self.room = room
        self.store = store
        #: The room's time, and where its waits go (a test passes a virtual clock as both,
        #: :class:`server.runtime.timers.VirtualClock`).
        self.clock = clock
        self.scheduler: Scheduler = scheduler if scheduler is not None else LoopScheduler()
        #: Called after every stored change (a cluster node refreshes the room's summary).
        self.on_change = on_change
        #: Called when the last member left.
        self.on_empty = on_empty
        #: Called (with why) when this server may no longer serve the room: the store
        #: refused a write as fenced out (``version_conflict``: another node took the room
        #: over), or its lease ran out. The room is to be dropped at once.
        self.on_lost = on_lost
        #: Whether this server still holds the room (a cluster node: its lease, checked on
        #: this node's clock); asked before every request is served.
        self.held = held
        #: Taken by every input: inputs reach the room one at a time.
        self.lock = asyncio.Lock()
        #: Set once the room is let go of (:meth:`close`).
        self.closed = False
        #: The seats whose player the host removed (kicked) from the room, now: their turns
        #: end at once when they come, as the turn timer would end them.
        self.away = away
        #: The rooms of this store waiting on a retry (shared by the lobby's rooms): a turn
        #: timer or the bots waiting on their backoff go at once when the store is back.
        self.retries = retries if retries is not None else Retries()
        #: The server's metrics (None: not counted).
        self.metrics = metrics
        self.timer = TurnTimer(self)
        #: The bots: where they think (``thinkers``), for how long a hard bot may.
        self.bots = BotDriver(self, self.timer,
                              thinkers if thinkers is not None else Thinkers(0), bot_think)
        #: A version the store may or may not hold: a write's answer was lost and could not
        #: be read back (see :meth:`settle`).
        self._doubt = Doubt()
        #: The room's history as derived from the store (None: not yet, or to derive
        #: again), kept up to date as changes commit.
        self._history: History | None = None
        #: The addresses this room counts against for ``--rooms-per-address`` besides its
        #: creator's (``room.host_address``): a quick match's players'
        #: (server.features.matchmaking).
        self.addresses: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        return self.room.id

    def __repr__(self) -> str:
        return f"<RoomRunner {self.room.id} v{self.room.version} {self.room.status}>"

    # -- requests (each answers its requester through the room's effects) ---------------------

    async def join(self, conn: Connection, name: str, re: int, *,
                   account: str | None = None) -> int:
        """Seat ``conn`` in the lowest free seat (belonging to ``account``, when signed in);
        returns the seat."""
        async with self.lock:
            self._check_held()
            await self.settle()
            rating = await ratings.rating_of(self.store, self.room, account)
            provisional = await ratings.provisional(self.store, self.room, account)
            await self._request(self.room.take_seat(conn, name, re, now=self.clock(),
                                                    account=account, rating=rating,
                                                    provisional=provisional))
            seat = self.room.seat_of(conn)
            assert seat is not None
            return seat

    async def resume(self, conn: Connection, token: str, re: int) -> int:
        """Give ``conn`` the seat whose token this is; returns the seat."""
        async with self.lock:
            self._check_held()
            await self.settle()
            await ratings.read_ratings(self.store, self.room)
            await self._request(self.room.resume(conn, token, re))
            seat = self.room.seat_of(conn)
            assert seat is not None
            return seat

    async def reclaim(self, conn: Connection, index: int, re: int) -> int:
        """Give ``conn`` seat ``index``, which belongs to its account; returns the seat."""
        async with self.lock:
            self._check_held()
            await self.settle()
            await ratings.read_ratings(self.store, self.room)
            await self._request(self.room.reclaim(conn, index, re))
            return index

    async def seat_matched(self, players: list[tuple[str, str, str | None]]) -> None:
        """A quick match's players (name, seat token, account) in seats 0, 1, ..., then the
        free seats filled with bots of the normal level, and the game started."""
        async with self.lock:
            self._check_held()
            await self.settle()
            for index, (name, token, account) in enumerate(players):
                rating = await ratings.rating_of(self.store, self.room, account)
                provisional = await ratings.provisional(self.store, self.room, account)
                await self._request(self.room.seat_matched(
                    index, name, token, account, rating, provisional))
            for index in range(len(players), self.room.size):
                await self._request(self.room.seat_bot(index, "normal"))
            await self._request(self.room.start_matched(now=self.clock()))

    async def seat_bots(self, levels: dict[int, str]) -> None:
        """A rematch's bots back in their seats (seat → level), one stored change each."""
        async with self.lock:
            self._check_held()
            await self.settle()
            for index, level in sorted(levels.items()):
                await self._request(self.room.seat_bot(index, level))

    async def watch(self, conn: Connection, re: int, *,
                    max_spectators: int | None = None) -> None:
        async with self.lock:
            self._check_held()
            self._perform(self.room.watch(conn, re, name=conn.name or "?",
                                          max_spectators=max_spectators))

    async def resync(self, conn: Connection, re: int) -> None:
        """Send ``conn`` the room's whole view again, then ``ok``."""
        async with self.lock:
            self._check_held()
            self._perform(self.room.resync(conn, re))

    async def leave(self, conn: Connection, *, dropped: bool) -> None:
        """``conn`` left the room, or its connection dropped; never refused."""
        async with self.lock:
            with contextlib.suppress(StoreUnavailable):
                await self.settle()
            self._perform(self.room.unwatch(conn))
            change = self.room.leave(conn, dropped=dropped)
            if change is not None:
                await self.save(change)
        if self.on_empty is not None and not self.room.members():
            self.on_empty(self)

    async def add_bot(self, conn: Connection, level: str, re: int) -> None:
        async with self.lock:
            self._check_held()
            await self.settle()
            await self._request(self.room.add_bot(conn, level, re))

    async def start(self, conn: Connection, re: int) -> None:
        async with self.lock:
            self._check_held()
            await self.settle()
            await self._request(self.room.start(conn, re, now=self.clock()))

    async def act(self, conn: Connection, action: Recorded, re: int) -> None:
        """``conn``'s seat plays ``action``, or (a :class:`~shared.actions.Resign`) concedes
        the game (docs/rules.md §10): either is stored in the game's list of actions."""
        async with self.lock:
            self._check_held()
            await self.settle()
            await self._request(self.room.act(conn, action, re, now=self.clock()))

    async def chat(self, conn: Connection, name: str, text: str, re: int) -> None:
        """A chat line is kept with the room (stored first: acknowledged means durable),
        then said to everyone; it changes no version."""
        async with self.lock:
            self._check_held()
            await self.settle()
            write = self.room.chat_line(conn, name, text, now=self.clock())
            try:
                await perform(self.store, write)
            except VersionConflict as exc:
                log.warning("room %s: a chat line was refused, another server holds the "
                            "room: %s", self.room.id, exc)
                self._lose("another server wrote to it (version_conflict)")
                raise RoomMoved("this room is no longer served here: ask again",
                                url=None) from exc
            except Exception as exc:
                log.error("room %s: a chat line could not be stored: %s", self.room.id,
                          exc, exc_info=exc)
                raise StoreUnavailable("the chat line could not be saved just now: try "
                                       "again in a moment") from exc
            self.retries.stored()
            line = write.record
            if self._history is not None:
                self._history.add_chat(line.version, line.seat, line.name, line.text)
                if self._history.chat_lines > CHAT_KEPT:
                    self._history = None  # the store forgot the oldest: derive it again
            speaker = conn.account
            # Members whose account blocks the speaker's do not hear it (features.social).
            self._perform(self.room.chat(
                conn, name, text, re,
                deaf=None if speaker is None else lambda x: speaker in x.blocked))

    async def history(self, before: int | None, limit: int) -> list[Entry]:
        """The room's history entries below version ``before`` (the latest: None), at most
        ``limit``, oldest first (see :mod:`server.core.history`)."""
        async with self.lock:
            self._check_held()
            if self._history is None:
                try:
                    record = await self.store.load(self.room.id)
                    chat = await self.store.load_chat(self.room.id)
                except Exception as exc:
                    log.error("room %s: its history could not be read: %s", self.room.id, exc,
                              exc_info=exc)
                    raise StoreUnavailable("the game's history could not be read just now: "
                                           "try again in a moment") from exc
                if record is None:
                    raise StoreUnavailable("the game's history could not be read just now")
                self._history = derive(record, chat)
            return self._history.page(before, limit)

    # -- what the lobby and the cluster ask -------------------------------------------------

    async def take_over(self) -> None:
        """Fence out the room's previous holder (see :meth:`Room.take_over`); raises the
        store's error (``version_conflict``) when that fails."""
        async with self.lock:
            change = self.room.take_over()
            try:
                for write in change.writes:
                    await perform(self.store, write)
            except BaseException:
                self.room.abort(change)
                raise
            self._commit(change)

    async def evict(self, code: int, reason: str) -> None:
        """Stop serving the room here: every member is closed with ``code``, nothing more is
        written, timers and bots stop."""
        async with self.lock:
            self._perform(self.room.evict(code, reason))
            self.close()

    def resume_play(self, deadline: float | None = None) -> None:
        """After a restore: the turn timer starts afresh (or runs on to ``deadline``, the
        one the turn had when the room was unloaded) and bots wake."""
        self._perform(self.room.resume_play(now=self.clock(), deadline=deadline))
        end_away_turn(self)

    async def away_changed(self) -> None:
        """The host removed a seat's player (or let them back): a removed player's turn at
        hand ends now."""
        async with self.lock:
            end_away_turn(self)

    def close(self) -> None:
        """Stop the timer and the bots (the room is let go of)."""
        self.closed = True
        self.retries.forget(self)
        self.timer.cancel()
        self.bots.stop()

    def _check_held(self) -> None:
        """Refuse to serve a room this server no longer holds (and drop it)."""
        if self.closed:
            raise RoomMoved("this room is no longer served here: ask again", url=None)
        if self.held is not None and not self.held(self):
            self._lose("its lease ran out before a request was served")
            raise RoomMoved("this room is no longer served here: ask again", url=None)

    def _lose(self, why: str) -> None:
        if self.on_lost is not None and not self.closed:
            self.on_lost(self, why)

    # -- the write path ---------------------------------------------------------------------

    async def _request(self, change: Change) -> None:
        if not await self.save(change):
            raise StoreUnavailable("the game could not be saved just now, so nothing was "
                                   "changed: try again in a moment")

    async def save(self, change: Change) -> bool:
        """Store the change's writes, then commit it; or abort it when the store failed
        (a forced change is committed all the same). Returns whether it was stored."""
        started = time.perf_counter()
        try:
            for write in change.writes:
                done = await perform(self.store, write)
                if isinstance(write, Finish) and done:
                    self.room.rated_end(rating_changes(done))
                    await ratings.read_provisional(self.store, self.room,
                                                   {g.seat: g.account for g in done})
            if self.metrics is not None:
                self.metrics.commit_seconds.observe(time.perf_counter() - started)
        except Exception as exc:
            if isinstance(exc, VersionConflict):
                # Another server took the room over: this one must stop serving it now,
                # and nothing of the change stands (not even a forced one).
                log.warning("room %s: version %d was refused, another server holds the "
                            "room: %s", self.room.id, change.version, exc)
                self.room.abort(change)
                self._lose("another server wrote to it (version_conflict)")
                return False
            try:
                held = await self._doubt.read_back(
                    self.store, self.room, change)
            except BaseException:  # cancelled while reading back (its version in doubt)
                self.room.abort(change)
                raise
            if held:
                log.warning("room %s: the store's answer to version %d was lost, but the "
                            "version was stored: the room goes on from it", self.room.id,
                            change.version)
                self._commit(change)
                return True
            if change.forced:
                log.error("room %s: version %d could not be stored (%s); it stands in "
                          "memory", self.room.id, change.version, exc, exc_info=exc)
                self._commit(change, stored=False)
            else:
                log.error("room %s: the store refused version %d, which was dropped: %s",
                          self.room.id, change.version, exc, exc_info=exc)
                self._perform(self.room.abort(change))
            return False
        except BaseException:  # cancelled mid-write: the room must not stay mid-change
            self.room.abort(change)
            raise
        if self.room.failures:
            log.info("room %s: the store works again", self.room.id)
        self._commit(change)
        self.retries.stored()
        if self.on_change is not None:
            self.on_change(self)
        return True

    async def settle(self) -> None:
        """Before the next change, when a version is in doubt: read what the store holds
        and go on from there (raises :class:`StoreUnavailable` while it cannot be read)."""
        doubted = self._doubt.version
        try:
            record = await self._doubt.settle(self.store, self.room)
        except Exception as exc:
            log.warning("room %s: the store still cannot say whether version %s was stored: "
                        "%s", self.room.id, doubted, exc)
            raise StoreUnavailable("the game could not be saved just now, so nothing was "
                                   "changed: try again in a moment") from exc
        if record is not None:
            log.warning("room %s: version %d was stored although its answer was lost: the "
                        "room is reloaded from the store", self.room.id, record.room.version)
            self.room, effects = self.room.reloaded(record, now=self.clock())
            self._history = None  # derived again from what the store holds
            self._perform(effects)

    def _commit(self, change: Change, *, stored: bool = True) -> None:
        """Commit a change the store holds (or a forced one), perform its effects, and add
        its events to the history."""
        self._perform(self.room.commit(change, now=self.clock(), stored=stored))
        if self.metrics is not None:
            count_change(self.metrics, change, self.room.committed[1])
        if self._history is not None:
            version, events = self.room.committed
            self._history.add(version, events)
        end_away_turn(self)

    def _perform(self, effects: list[Effect[Connection]]) -> None:
        for effect in effects:
            match effect:
                case Send(to, data, lossy):
                    for conn in to:
                        conn.send_bytes(data, lossy=lossy)
                case Push(to):
                    for conn in to:
                        conn.show(effect)
                case Close(conn, code, reason):
                    conn.leave_room()
                    conn.close(code, reason)
                case ArmTimer(key, delay):
                    self.timer.arm(key, delay)
                case CancelTimer():
                    self.timer.cancel()
                case WakeBot(delay):
                    self.bots.wake(delay)

    def store_back(self) -> None:
        """The store took a write (:mod:`server.runtime.retries`): a turn timer or a bot's move
        waiting on its backoff tries again now."""
        if self.closed:
            return
        self.timer.store_back()
        self.bots.store_back()

    async def wait_idle(self) -> None:
        """Wait until no input is being handled (tests, and a server that stops)."""
        async with self.lock:
            pass


def end_away_turn(runner: RoomRunner) -> None:
    """When the turn at hand is a removed player's (``runner.away``), its timer runs out
    at once (a ``timeout`` event and ``end_turn``, as the turn timer ends it)."""
    state = runner.room.state
    if runner.away is None or state is None or state.over or state.turn is None \
            or runner.timer.retrying is not None:
        return
    if state.turn in runner.away(runner):
        runner.timer.arm((state.round, state.turn), 0.0)
