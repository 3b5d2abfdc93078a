"""The asyncio side of one room: feeds the sans-I/O :class:`~server.room.Room` its inputs and
performs the effects it returns.

A :class:`RoomRunner` owns what the room itself may not: the room's lock, the store calls, the
turn timer's task, the bots' task, and the connections the effects name. Every public
coroutine takes the lock itself; none expects its caller to hold it, and none calls another
while holding it (an asyncio lock is not reentrant). So inputs reach the room one at a time,
and each change's writes are stored, in order, before the change is committed:
acknowledged means durable.

When the store fails, the change is dropped (the room stays as it was, nothing is faked): a
request is answered ``internal_error`` and the cause goes to the log; a turn timer or a bot
tries again after a growing backoff, so the room moves on by itself once the store is back;
and as soon as any write is stored again (this room's or another's, :mod:`server.retries`),
a retry waiting on its backoff goes at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import msgpack

from server.history import Entry, History, derive
from server.ratings import (
    finish_rated,
    provisional_of,
    rated_changes,
    rating_changes,
    shown_ratings,
)
from server.retries import Retries
from server.room import (
    AppendAction,
    AppendChat,
    ArmTimer,
    BotTurn,
    CancelTimer,
    Change,
    ClaimSeat,
    Close,
    Effect,
    Finish,
    Push,
    PutSeat,
    RemoveSeat,
    Room,
    Send,
    TurnKey,
    UpdateRoom,
    WakeBot,
    Write,
)
from server.store.base import CHAT_KEPT
from server.store.errors import VersionConflict
from server.thinking import Thinkers, ThinkingFailed
from shared import bots
from shared import events as ev
from shared.actions import Action, EndTurn
from shared.errors import CastellError, RoomMoved

if TYPE_CHECKING:
    from server.connection import Connection
    from server.metrics import Metrics
    from server.store.base import Store

log = logging.getLogger("castell.room")


class StoreUnavailable(CastellError):
    """Raised to a request whose change the store refused: nothing was changed."""

    code = "internal_error"


async def perform(store: Store, write: Write) -> Any:
    """Carry out one of a change's store writes (a rated game's end returns its rated
    games, :func:`server.ratings.finish_rated`)."""
    match write:
        case AppendAction(record, expect, progress):
            await store.append_action(record, expect_version=expect, progress=progress)
        case UpdateRoom(room, version, expect, status, started_at, progress):
            await store.update_room(room, version=version, expect_version=expect,
                                    status=status, started_at=started_at, progress=progress)
        case PutSeat(record, version, expect):
            await store.put_seat(record, version=version, expect_version=expect)
        case RemoveSeat(room, seat, version, expect):
            await store.remove_seat(room, seat, version=version, expect_version=expect)
        case Finish(room, result, finished_at, expect, rated):
            if rated:
                return await finish_rated(store, write)
            await store.finish(room, result, finished_at, expect_version=expect)
        case AppendChat(record, expect):
            await store.append_chat(record, expect_version=expect)
        case ClaimSeat(room, seat, account, expect):
            await store.claim_seat(room, seat, account, expect_version=expect)
    return None


class RoomRunner:
    """One room, driven. See the module docstring."""

    def __init__(self, room: Room[Connection], store: Store | None, *,
                 clock: Callable[[], float] = time.time,
                 on_change: Callable[[RoomRunner], None] | None = None,
                 on_empty: Callable[[RoomRunner], None] | None = None,
                 on_lost: Callable[[RoomRunner, str], None] | None = None,
                 held: Callable[[RoomRunner], bool] | None = None,
                 thinkers: Thinkers | None = None, bot_think: float = 1.5,
                 retries: Retries | None = None) -> None:
        self.room = room
        self.store = store
        self.clock = clock
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
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._bots: asyncio.Task[None] | None = None
        #: Where this room's bots think, for how long a hard bot may (seconds), and what
        #: each bot planned for the rest of its turn (by seat: played while the game is
        #: where the plan expects it).
        self.thinkers = thinkers if thinkers is not None else Thinkers(0)
        self.bot_think = bot_think
        self._plans: dict[int, bots.Decision] = {}
        #: The seats whose player the host removed (kicked) from the room, now: their turns
        #: end at once when they come, as the turn timer would end them (set by the server).
        self.away: Callable[[RoomRunner], set[int]] | None = None
        #: The rooms of this store waiting on a retry (shared by the lobby's rooms); the
        #: turn key whose timer is a retry of what the store refused, and the bots' task's
        #: wait before it retries its move (both cut short once the store is back).
        self.retries = retries if retries is not None else Retries()
        self._timer_retry: TurnKey | None = None
        self._bot_retry: asyncio.Event | None = None
        self._closed = False
        #: The server's metrics (None: not counted), set by the lobby.
        self.metrics: Metrics | None = None
        #: A version the store may or may not hold: a write's answer was lost and could not
        #: be read back (see :meth:`_settle`).
        self._doubt: int | None = None
        #: The room's history as derived from the store (None: not yet, or to derive
        #: again), kept up to date as changes commit; without a store, from memory alone.
        self._history: History | None = None if store is not None else History()
        #: The addresses this room counts against for ``--rooms-per-address`` besides its
        #: creator's (``room.host_address``): a quick match's players' (server.matchmaking).
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
        async with self._lock:
            self._check_held()
            await self._settle()
            rating = await self._rating_of(account)
            await self._request(self.room.take_seat(conn, name, re, now=self.clock(),
                                                    account=account, rating=rating,
                                                    provisional=await self._provisional(
                                                        account)))
            seat = self.room.seat_of(conn)
            assert seat is not None
            return seat

    async def resume(self, conn: Connection, token: str, re: int) -> int:
        """Give ``conn`` the seat whose token this is; returns the seat."""
        async with self._lock:
            self._check_held()
            await self._settle()
            await self._read_ratings()
            await self._request(self.room.resume(conn, token, re))
            seat = self.room.seat_of(conn)
            assert seat is not None
            return seat

    async def reclaim(self, conn: Connection, index: int, re: int) -> int:
        """Give ``conn`` seat ``index``, which belongs to its account; returns the seat."""
        async with self._lock:
            self._check_held()
            await self._settle()
            await self._read_ratings()
            await self._request(self.room.reclaim(conn, index, re))
            return index

    async def seat_matched(self, players: list[tuple[str, str, str | None]]) -> None:
        """A quick match's players (name, seat token, account) in seats 0, 1, ..., then the
        free seats filled with bots of the normal level, and the game started."""
        async with self._lock:
            self._check_held()
            for index, (name, token, account) in enumerate(players):
                rating = await self._rating_of(account)
                await self._request(self.room.seat_matched(
                    index, name, token, account, rating, await self._provisional(account)))
            for index in range(len(players), self.room.size):
                await self._request(self.room.seat_bot(index, "normal"))
            await self._request(self.room.start_matched(now=self.clock()))

    async def _rating_of(self, account: str | None) -> int | None:
        """The displayed rating of ``account`` in a rated room (None elsewhere)."""
        if not self.room.rated or account is None or self.store is None:
            return None
        return (await shown_ratings(self.store, (account,)))[account]

    async def _provisional(self, account: str | None) -> bool | None:
        """Whether ``account``'s rating is provisional, in a rated room (None elsewhere)."""
        if not self.room.rated or account is None or self.store is None:
            return None
        return (await provisional_of(self.store, (account,)))[account]

    async def _read_provisional(self, accounts: dict[int, str]) -> None:
        """Which of the seats' (seat → account) ratings are provisional now."""
        assert self.store is not None
        known = await provisional_of(self.store, tuple(set(accounts.values())))
        for index, account in accounts.items():
            self.room.provisional[index] = known[account]

    async def _read_ratings(self) -> None:
        """A rated room read from the store learns its seats' ratings (and a finished one,
        what its end changed) before someone takes a seat back."""
        room = self.room
        if not room.rated or room.ratings or self.store is None:
            return
        accounts = await self.store.seat_accounts(room.id)
        shown = await shown_ratings(self.store, tuple(accounts.values()))
        for index, account in accounts.items():
            room.ratings[index] = shown[account]
        await self._read_provisional(accounts)
        if room.status == "finished":
            room.rated_end(await rated_changes(self.store, room.id, accounts))

    async def seat_bots(self, levels: dict[int, str]) -> None:
        """A rematch's bots back in their seats (seat → level), one stored change each."""
        async with self._lock:
            self._check_held()
            for index, level in sorted(levels.items()):
                await self._request(self.room.seat_bot(index, level))

    async def watch(self, conn: Connection, re: int, *,
                    max_spectators: int | None = None) -> None:
        async with self._lock:
            self._check_held()
            self._perform(self.room.watch(conn, re, name=conn.name or "?",
                                          max_spectators=max_spectators))

    async def resync(self, conn: Connection, re: int) -> None:
        """Send ``conn`` the room's whole view again, then ``ok``."""
        async with self._lock:
            self._check_held()
            self._perform(self.room.resync(conn, re))

    async def leave(self, conn: Connection, *, dropped: bool) -> None:
        """``conn`` left the room, or its connection dropped; never refused."""
        async with self._lock:
            with contextlib.suppress(StoreUnavailable):
                await self._settle()
            self._perform(self.room.unwatch(conn))
            change = self.room.leave(conn, dropped=dropped)
            if change is not None:
                await self._store(change)
        if self.on_empty is not None and not self.room.members():
            self.on_empty(self)

    async def add_bot(self, conn: Connection, level: str, re: int) -> None:
        async with self._lock:
            self._check_held()
            await self._settle()
            await self._request(self.room.add_bot(conn, level, re))

    async def start(self, conn: Connection, re: int) -> None:
        async with self._lock:
            self._check_held()
            await self._settle()
            await self._request(self.room.start(conn, re, now=self.clock()))

    async def act(self, conn: Connection, action: Action, re: int) -> None:
        async with self._lock:
            self._check_held()
            await self._settle()
            await self._request(self.room.act(conn, action, re, now=self.clock()))

    async def chat(self, conn: Connection, name: str, text: str, re: int) -> None:
        """A chat line is kept with the room (stored first: acknowledged means durable),
        then said to everyone; it changes no version."""
        async with self._lock:
            self._check_held()
            await self._settle()
            write = self.room.chat_line(conn, name, text, now=self.clock())
            if self.store is not None:
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
            if self.store is not None:
                self.retries.stored()
            line = write.record
            if self._history is not None:
                self._history.add_chat(line.version, line.seat, line.name, line.text)
                if self.store is not None and self._history.chat_lines > CHAT_KEPT:
                    self._history = None  # the store forgot the oldest: derive it again
            self._perform(self.room.chat(conn, name, text, re))

    async def history(self, before: int | None, limit: int) -> list[Entry]:
        """The room's history entries below version ``before`` (the latest: None), at most
        ``limit``, oldest first (see :mod:`server.history`)."""
        async with self._lock:
            self._check_held()
            if self._history is None:
                assert self.store is not None
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
        async with self._lock:
            change = self.room.take_over()
            try:
                if self.store is not None:
                    for write in change.writes:
                        await perform(self.store, write)
            except BaseException:
                self.room.abort(change)
                raise
            self._commit(change)

    async def evict(self, code: int, reason: str) -> None:
        """Stop serving the room here: every member is closed with ``code``, nothing more is
        written, timers and bots stop."""
        async with self._lock:
            self._perform(self.room.evict(code, reason))
            self.close()

    def resume_play(self) -> None:
        """After a restore: the turn timer starts afresh and bots wake."""
        self._perform(self.room.resume_play(now=self.clock()))
        self._end_away_turn()

    async def away_changed(self) -> None:
        """The host removed a seat's player (or let them back): a removed player's turn at
        hand ends now."""
        async with self._lock:
            self._end_away_turn()

    def _end_away_turn(self) -> None:
        """When the turn at hand is a removed player's (:attr:`away`), its timer runs out
        at once (a ``timeout`` event and ``end_turn``, as the turn timer ends it)."""
        state = self.room.state
        if self.away is None or state is None or state.over or state.turn is None \
                or self._timer_retry is not None:
            return
        if state.turn in self.away(self):
            self._arm_timer((state.round, state.turn), 0.0)

    def close(self) -> None:
        """Stop the timer and the bots (the room is let go of)."""
        self._closed = True
        self.retries.forget(self)
        self._cancel_timer()
        if self._bots is not None and self._bots is not asyncio.current_task():
            self._bots.cancel()
        self.thinkers.cancel(self)  # a bot still thinking for this room stops

    def _check_held(self) -> None:
        """Refuse to serve a room this server no longer holds (and drop it)."""
        if self._closed:
            raise RoomMoved("this room is no longer served here: ask again", url=None)
        if self.held is not None and not self.held(self):
            self._lose("its lease ran out before a request was served")
            raise RoomMoved("this room is no longer served here: ask again", url=None)

    def _lose(self, why: str) -> None:
        if self.on_lost is not None and not self._closed:
            self.on_lost(self, why)

    # -- the write path ---------------------------------------------------------------------

    async def _request(self, change: Change) -> None:
        if not await self._store(change):
            raise StoreUnavailable("the game could not be saved just now, so nothing was "
                                   "changed: try again in a moment")

    async def _store(self, change: Change) -> bool:
        """Store the change's writes, then commit it; or abort it when the store failed
        (a forced change is committed all the same). Returns whether it was stored."""
        started = time.perf_counter()
        try:
            if self.store is not None:
                for write in change.writes:
                    done = await perform(self.store, write)
                    if isinstance(write, Finish) and done:
                        self.room.rated_end(rating_changes(done))
                        await self._read_provisional({g.seat: g.account for g in done})
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
            if await self._read_back(change, exc):
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
        if self.store is not None:
            self.retries.stored()
        if self.on_change is not None:
            self.on_change(self)
        return True

    async def _read_back(self, change: Change, exc: Exception) -> bool:
        """After a failed write: whether the store holds the change's version all the same
        (its answer, not the write, was lost: a connection cut after COMMIT). When even that
        cannot be read, the version is in doubt until :meth:`_settle` learns the truth."""
        if self.store is None or not self.room.stores_version(change):
            return False
        try:
            stored = await self.store.stored_version(self.room.id)
        except Exception:
            self._doubt = change.version
            return False
        return stored == change.version

    async def _settle(self) -> None:
        """Before the next change, when a version is in doubt: read what the store holds
        and go on from there (raises :class:`StoreUnavailable` while it cannot be read)."""
        if self._doubt is None or self.store is None:
            return
        try:
            stored = await self.store.stored_version(self.room.id)
            record = await self.store.load(self.room.id) if stored == self._doubt \
                and stored != self.room.version else None
        except Exception as exc:
            log.warning("room %s: the store still cannot say whether version %d was stored: "
                        "%s", self.room.id, self._doubt, exc)
            raise StoreUnavailable("the game could not be saved just now, so nothing was "
                                   "changed: try again in a moment") from exc
        self._doubt = None
        if stored == self.room.version:
            self.room.stored_version = stored
        elif record is not None:
            log.warning("room %s: version %d was stored although its answer was lost: the "
                        "room is reloaded from the store", self.room.id, stored)
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
        self._end_away_turn()

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
                    self._arm_timer(key, delay)
                case CancelTimer():
                    self._cancel_timer()
                case WakeBot(delay):
                    self._wake_bots(delay)

    # -- the turn timer and the bots ----------------------------------------------------------

    def _cancel_timer(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None
        self._timer_retry = None

    def _arm_timer(self, key: TurnKey, delay: float) -> None:
        self._cancel_timer()
        if not self._closed:
            self._timer = asyncio.get_running_loop().create_task(self._time(key, delay))

    async def _time(self, key: TurnKey, delay: float) -> None:
        await asyncio.sleep(delay)
        async with self._lock:
            if self._timer is asyncio.current_task():
                self._timer = None
                self._timer_retry = None
            try:
                await self._settle()
            except StoreUnavailable:
                self._arm_timer(key, self.room.retry_delay)
                self._wait_for_store(key)
                return
            change = self.room.timer_fired(key, now=self.clock())
            if change is not None and not await self._store(change):
                self._wait_for_store(key)  # the refusal re-armed the timer after a backoff

    def _wait_for_store(self, key: TurnKey) -> None:
        """The timer of turn ``key`` is armed again to retry what the store refused."""
        if self._timer is not None and not self._closed:
            self._timer_retry = key
            self.retries.wait(self)

    def store_back(self) -> None:
        """The store took a write (:mod:`server.retries`): a turn timer or a bot's move
        waiting on its backoff tries again now."""
        if self._closed:
            return
        if self._timer_retry is not None:
            self._arm_timer(self._timer_retry, 0.0)
        if self._bot_retry is not None:
            self._bot_retry.set()

    def _wake_bots(self, delay: float) -> None:
        if self._closed or (self._bots is not None and not self._bots.done()):
            return  # the bots' task is playing already: it goes on by itself
        self._bots = asyncio.get_running_loop().create_task(self._play_bots(delay))

    async def _play_bots(self, delay: float) -> None:
        """Play bot turns until a person is to act or the game is over. A bot thinks with
        the room unlocked (a hard bot may take seconds, and the room's people may still
        chat or watch meanwhile); its choice is played only if the game has not moved on."""
        retry = False
        while True:
            await (self._back_off(delay) if retry else asyncio.sleep(delay))
            async with self._lock:
                try:
                    await self._settle()
                except StoreUnavailable:
                    delay, retry = self.room.retry_delay, True
                    continue
                turn = self.room.bot_turn()
                if turn is None:
                    self._plans.clear()
                    return
                seed = turn.rng.getrandbits(63)
            decision = await self._choose(turn, seed)
            async with self._lock:
                if self._closed:
                    return
                change = self.room.bot_chose(turn, decision.action, now=self.clock())
                stored = change is None or await self._store(change)
                if change is not None and stored and decision.rest:
                    self._plans[turn.seat] = attrs.evolve(decision, expect=self.room.state)
                else:
                    self._plans.pop(turn.seat, None)
            delay = self.room.bot_delay if stored else self.room.retry_delay
            retry = not stored

    async def _back_off(self, delay: float) -> None:
        """The bots' wait before they retry a move the store refused: ``delay``, or until a
        write is stored again (:meth:`store_back`), whichever comes first."""
        woken = self._bot_retry = asyncio.Event()
        self.retries.wait(self)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await woken.wait()
        finally:
            self._bot_retry = None
            if self._timer_retry is None:
                self.retries.forget(self)

    async def _choose(self, turn: BotTurn, seed: int) -> bots.Decision:
        """The bot's choice: the next step of the turn it planned, or a decision made in a
        worker process (:mod:`server.thinking`); the ``normal`` choice when that fails."""
        planned = bots.follow(self._plans.get(turn.seat), turn.state, turn.seat)
        if planned is not None:
            return planned
        think = self.bot_think if bots.level_name(turn.level) == "hard" else None
        try:
            thinking = time.perf_counter()
            action, rest = await self.thinkers.decide(turn.state, turn.seat, turn.level, seed,
                                                      think=think, owner=self)
            if self.metrics is not None:
                self.metrics.bot_seconds.labels(level=bots.level_name(turn.level)).observe(
                    time.perf_counter() - thinking)
            return bots.Decision(action, rest)
        except ThinkingFailed as exc:
            log.warning("room %s: the %s bot in seat %d had no answer (%s); it plays the "
                        "normal choice", self.room.id, turn.level, turn.seat, exc)
        except Exception:
            log.exception("room %s: the bot in seat %d failed to choose; it plays the normal "
                          "choice", self.room.id, turn.seat)
        try:
            return await asyncio.to_thread(bots.decide, turn.state, turn.seat, "normal",
                                           random.Random(seed))
        except Exception:
            log.exception("room %s: the normal choice failed too; the turn of seat %d is "
                          "ended", self.room.id, turn.seat)
            return bots.Decision(EndTurn())

    async def wait_idle(self) -> None:
        """Wait until no input is being handled (tests, and a server that stops)."""
        async with self._lock:
            pass


def count_change(metrics: Metrics, change: Change, events: list[object]) -> None:
    """Count what a committed change did: the actions it stored (by kind), a game it
    started or ended."""
    for write in change.writes:
        if isinstance(write, AppendAction):
            fields = msgpack.unpackb(write.record.action, raw=False)
            kind = fields.get("kind") if isinstance(fields, dict) else None
            metrics.stored[str(kind)] += 1
    for event in events:
        if isinstance(event, ev.GameStarted):
            metrics.games_started.inc()
        elif isinstance(event, ev.GameEnded):
            metrics.games_finished.inc()
