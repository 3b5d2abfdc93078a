"""The lobby: every room of this server, found by id or private code, listed for players.

It holds each room as its :class:`~server.runtime.runner.RoomRunner`, and gives the cluster
(:mod:`server.cluster.node`) what it needs through methods, never by reaching inside: the room-id
format (:func:`new_room_id`), the capacity check (:meth:`Lobby.check_capacity`), rooms made
from stored records (:meth:`Lobby.runner_from_record`, :meth:`Lobby.admit`), and a word when a
room changes or goes (:meth:`Lobby.subscribe`).
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.core.room import Room
from server.features.moderation import closed_reason, refuse_closed, refuse_closed_code
from server.runtime.residency import Residency
from server.runtime.retries import PROBE_EVERY, Retries
from server.runtime.runner import RoomRunner
from server.runtime.thinking import Thinkers
from server.runtime.timers import LoopScheduler, Scheduler
from server.runtime.unloaded import UnloadedDeadlines
from server.store.base import GameRecord, RoomRecord, Store, StoredRoom
from shared.errors import CastellError, RoomNotFound
from shared.setup import SEED_BITS
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.ops.metrics import Metrics
    from server.runtime.connection import Connection

log = logging.getLogger("castell.lobby")

# Join codes avoid look-alike characters so they can be read out loud.
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: Characters of a private room's code: 32^8 = 2^40 codes (docs/security.md, "Private codes").
CODE_LENGTH = 8

#: What the lobby tells its listeners of a room.
Listener = Callable[[RoomRunner], None]


#: Rooms in a room list come in this order: those one can join first.
LIST_ORDER: dict[str, int] = {RoomStatus.WAITING: 0, RoomStatus.PLAYING: 1,
                              RoomStatus.FINISHED: 2}


def list_key(status: str, created_at: float, room: str) -> tuple[int, float, str]:
    """Where a room stands in a room list (:data:`LIST_ORDER`, then newest first, then by
    id): what a page of the list starts after."""
    return (LIST_ORDER.get(status, 3), -created_at, room)


def new_room_id() -> str:
    """A fresh room id (``r`` and 8 hex digits: 32 random bits)."""
    return "r" + secrets.token_hex(4)


def not_found(key: str) -> RoomNotFound:
    return RoomNotFound(f"there is no room {key!r} on this server")


def _key(room: Room[Any]) -> tuple[int, float, str]:
    return list_key(room.status, room.created_at, room.id)


class Lobby:
    """Holds the rooms. Rooms are forgotten once empty and finished (or never started)."""

    def __init__(self, *, store: Store, max_rooms: int, bot_delay: float,
                 room_linger: float, unload_after: float | None = None,
                 unattended_after: float | None = None,
                 turn_time_scale: float = 1.0, store_probe_every: float = PROBE_EVERY,
                 thinkers: Thinkers | None = None, bot_think: float = 1.5,
                 guard: Callable[[RoomRunner], bool] | None = None,
                 metrics: Metrics | None = None,
                 away: Callable[[RoomRunner], set[int]] | None = None,
                 clock: Callable[[], float] = time.time,
                 scheduler: Scheduler | None = None) -> None:
        """``guard``: whether this server still holds a room (a cluster node's lease; None:
        it holds every room it has); ``metrics``: the server's, given to every room (None:
        not counted); ``clock`` and ``scheduler``: the rooms' time and where their waits and
        turn deadlines go (None: the event loop's real seconds, one heap of deadlines for
        every room of the lobby), given to every room made after they are set
        (a test gives a :class:`~server.runtime.timers.VirtualClock` as both);
        ``store_probe_every``: seconds between two probes of a store that refused a write
        while a room waits to try again."""
        self.store = store
        #: Where the rooms' bots think (none given: a thread of this process).
        self.thinkers = thinkers if thinkers is not None else Thinkers(0)
        self.bot_think = bot_think
        #: The rooms waiting out a store failure: any write stored wakes them all.
        self.retries = Retries(store.probe, every=store_probe_every)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.rooms: dict[str, RoomRunner] = {}
        self.codes: dict[str, RoomRunner] = {}
        self.max_rooms = max_rooms
        self.bot_delay = bot_delay
        self.room_linger = room_linger
        self.unload_after = unload_after
        #: Seconds a started game stays in memory once nobody is in it (None: no such limit).
        self.unattended_after = unattended_after
        #: Set once the server stops: its connections close, but the seats they held stay as
        #: they are stored, and no room is forgotten for being empty.
        self.stopping = False
        self.turn_time_scale = turn_time_scale
        self.clock = clock
        #: One scheduler for every room of this lobby: their turn deadlines share its one
        #: heap (server.runtime.deadlines), however many rooms wait.
        self.scheduler: Scheduler = scheduler if scheduler is not None else LoopScheduler()
        self._on_change: list[Listener] = []
        #: The public rooms' list keys (:func:`list_key`), in list order, and each one's key
        #: by room id: a page is a slice of it, whatever the number of rooms.
        self._listed: list[tuple[int, float, str]] = []
        self._keys: dict[str, tuple[int, float, str]] = {}
        self._on_remove: list[Listener] = []
        self.guard = guard
        self.metrics = metrics
        #: The join codes of the private rooms the host closed here (code -> the reason):
        #: joined by its code, a closed room is told closed (a store finds older ones).
        self.closed_codes: dict[str, str] = {}
        #: The seats of a room whose player the host kicked (the server's moderation):
        #: given to every room, whose turns then end at once.
        self.away = away
        #: Which rooms stay in memory: the sweep, and a full lobby making way for a game.
        self.residency = Residency(self)
        #: The turn deadlines of the games under way this lobby holds no room for (see
        #: :meth:`remove`): in the scheduler's one heap, each loads its game when it comes.
        self.unloaded = UnloadedDeadlines(
            self.scheduler, self.retries,
            lambda room_id: self.find_or_load(room_id, by_id_private=True),
            self.residency.can_make_way)

    def subscribe(self, *, on_change: Listener | None = None,
                  on_remove: Listener | None = None) -> None:
        """Be told after every stored change of a room, and of each room the lobby lets go."""
        if on_change is not None:
            self._on_change.append(on_change)
        if on_remove is not None:
            self._on_remove.append(on_remove)

    def _changed(self, runner: RoomRunner) -> None:
        self._index(runner)
        for listener in self._on_change:
            listener(runner)

    @property
    def has_room_for_more(self) -> bool:
        return len(self.rooms) < self.max_rooms

    def rooms_by_address(self) -> Counter[str]:
        """How many of this server's rooms count against each address (``--rooms-per-address``):
        those created from it, and the quick matches of its players."""
        out: Counter[str] = Counter()
        for runner in self.rooms.values():
            host = runner.room.host_address
            out.update(runner.addresses | ({host} if host is not None else set()))
        return out

    def check_capacity(self) -> None:
        """Refuse a new room once this server holds as many as it may (``--max-rooms``)."""
        if not self.has_room_for_more:
            raise CastellError("this server has as many rooms as it can hold; try later",
                               code="rate_limited")

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, seed: int | None = None, room_id: str | None = None,
                     fenced: bool = False, rated: bool = False,
                     offers: dict[int, str] | None = None) -> RoomRunner:
        """A new room, stored before it is listed (``room_id``: one reserved beforehand, as
        a cluster node does; ``fenced``: every write expects the version stored last;
        ``offers``: the seats a rematch offers, seat → name, stored with the room)."""
        self.check_capacity()
        room_id = room_id or self._new_id()
        code = self._new_code() if private else None
        room: Room[Connection] = Room(
            room_id, name, seats, variant, turn_seconds, private,
            seed=secrets.randbits(SEED_BITS) if seed is None else seed, code=code,
            now=self.clock(), fenced=fenced, rated=rated, **self._room_options(),
        )
        room.offer_seats(offers or {})
        await self.store.create_room(RoomRecord(
            room_id, name, seats, variant, turn_seconds, private, code, room.seed,
            created_at=room.created_at, rated=rated,
            offers=tuple(sorted(room.reserved.items())),
        ))
        runner = self._runner(room)
        self.add(runner)
        log.info("room %s created: %r, %d seats, %s%s", room_id, name, seats, variant,
                 ", private" if private else "")
        return runner

    def runner_from_record(self, record: GameRecord) -> RoomRunner:
        """A stored room rebuilt with this lobby's settings (not added yet)."""
        room: Room[Connection] = Room.from_record(record, now=self.clock(),
                                                  **self._room_options())
        return self._runner(room)

    def _runner(self, room: Room[Connection]) -> RoomRunner:
        return RoomRunner(room, self.store, clock=self.clock, on_change=self._changed,
                          on_empty=self._on_empty, on_lost=self._lost, held=self._held,
                          thinkers=self.thinkers, bot_think=self.bot_think,
                          retries=self.retries, scheduler=self.scheduler,
                          metrics=self.metrics, away=self.away)

    def _held(self, runner: RoomRunner) -> bool:
        return self.guard is None or self.guard(runner)

    def _lost(self, runner: RoomRunner, why: str) -> None:
        """This server may no longer serve a room (see RoomRunner.on_lost): its members are
        sent to find it again (4002) and it is let go of, without writing anything."""
        log.warning("room %s is no longer served here: %s", runner.id, why)
        task = asyncio.get_running_loop().create_task(self.drop(runner))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drop(self, runner: RoomRunner) -> None:
        """Stop serving a room another server serves now; nothing more is written."""
        if self.rooms.get(runner.id) is not runner:
            return
        await runner.evict(4002, "room moved: another server serves it now; connect again")
        if self.rooms.get(runner.id) is runner:
            self.remove(runner)

    def _room_options(self) -> dict[str, Any]:
        return {"bot_delay": self.bot_delay, "time_scale": self.turn_time_scale}

    def admit(self, runner: RoomRunner, why: str) -> None:
        """Serve a room rebuilt from the store: listed, its timer and bots going again (the
        turn at hand keeps the deadline it had if the room was unloaded here meanwhile)."""
        deadline = self.unloaded.take(runner.id)
        self.add(runner)
        runner.resume_play(deadline=deadline)
        log.info("room %s %s at version %d (%s)", runner.id, why, runner.room.version,
                 runner.room.status)

    async def restore(self) -> int:
        """Bring back the unfinished rooms of the store that are worth having in memory at
        once; returns how many.

        Reading a game back means replaying it, so only these are, newest first, as long as
        ``max_rooms`` allows: a started game that moves by itself (bots, or a turn timer
        that runs out while the game is still in memory), then waiting rooms (so that they
        are listed again). Every other stored game stays in the store until one of its
        players comes back with a seat token (:meth:`find_or_load`): a game nobody is in,
        whose turn lasts longer than such a game stays in memory (:meth:`Residency.sweep`: a
        correspondence game's days), would only be unloaded before its timer ran out. Its
        turn at hand starts afresh with the restart (§4, as every restored game's does), and
        that turn's deadline waits in the one heap, as an unloaded game's does
        (:meth:`remove`): when it comes, the game is loaded and the turn runs out.
        """
        stored = await self.store.unfinished_summaries()
        # How long a started game nobody is in stays in memory here (None: for ever).
        limits = [s for s in (self.unattended_after, self.unload_after) if s is not None]
        stays = min(limits) if limits else None

        def rank(summary: StoredRoom) -> int | None:
            room = summary.room
            if room.status == RoomStatus.WAITING:
                return 1
            if summary.bots:
                return 0
            if room.turn_seconds is None:
                return None
            turn = room.turn_seconds * self.turn_time_scale
            return 0 if stays is None or turn <= stays else None

        ranked = [(rank(summary), -summary.room.created_at, summary.room.room)
                  for summary in stored]
        restored = 0
        for _rank, _, room_id in sorted(r for r in ranked if r[0] is not None):
            if not self.has_room_for_more:
                break
            record = await self.store.load(room_id)
            if record is None or record.room.status == RoomStatus.FINISHED:
                continue
            try:
                runner = self.runner_from_record(record)
            except Exception:
                log.exception("room %s could not be restored; it is left in the store",
                              room_id)
                continue
            self.admit(runner, "restored")
            restored += 1
        if len(stored) > restored:
            log.info("%d unfinished room(s) stay in the store until a player comes back",
                     len(stored) - restored)
        # The games left in the store with a turn timer: the fresh turn the restart gives
        # each runs out in the one heap, whether or not anybody loads the game before.
        start = self.clock()
        for summary in stored:
            room = summary.room
            if (self.guard is None and room.status == RoomStatus.PLAYING
                    and room.turn_seconds is not None and room.room not in self.rooms):
                seconds = room.turn_seconds * self.turn_time_scale
                self.unloaded.park(room.room, start + seconds, seconds)
        # Recently finished games stay listed (and watchable) for a while, restart or not.
        now = self.clock()
        for finished in await self.store.list_finished(limit=50):
            if not self.has_room_for_more:
                break
            if finished.finished_at is None or now - finished.finished_at > self.room_linger:
                continue
            done = await self.store.load(finished.room)
            if done is None or finished.room in self.rooms:
                continue
            if closed_reason(done.result) is not None:
                continue  # closed by the host (server.ops.admin): not listed again
            try:
                self.add(self.runner_from_record(done))
            except Exception:
                log.exception("finished room %s could not be restored", finished.room)
        return restored

    def add(self, runner: RoomRunner) -> None:
        self.rooms[runner.id] = runner
        self._index(runner)
        if runner.room.code is not None:
            self.codes[runner.room.code] = runner

    def find(self, key: str, *, by_id_private: bool = False) -> RoomRunner:
        """A room by its id, or a private room by its join code (any case).

        A private room is found by its id only when ``by_id_private`` (a seat token comes
        with the request): its id alone must not let strangers in.
        """
        runner = self.codes.get(key.upper())
        if runner is None:
            runner = self.rooms.get(key)
            if runner is not None and runner.room.private and not by_id_private:
                runner = None
        if runner is None:
            reason = self.closed_codes.get(key.upper())
            if reason is not None:
                raise CastellError(f"the host closed this room: {reason}", code="room_closed")
            raise not_found(key)
        return runner

    async def find_or_load(self, key: str, *, by_id_private: bool = False) -> RoomRunner:
        """:meth:`find`, or else a room of the store brought back into memory: a game that
        was unloaded while nobody played it (:meth:`Residency.sweep
        <server.runtime.residency.Residency.sweep>`), or one left in the store at
        start (see :meth:`restore`). At ``max_rooms``, the game nobody has been in longest
        makes way for it (it stays stored); when there is none, ``rate_limited``."""
        try:
            return self.find(key, by_id_private=by_id_private)
        except RoomNotFound:
            pass
        record = await self.store.load(key)
        if key in self.rooms:  # loaded by another request meanwhile
            return self.find(key, by_id_private=by_id_private)
        if record is None or (record.room.private and not by_id_private):
            await refuse_closed_code(self.store, key)
            raise not_found(key)
        refuse_closed(record)  # stored finished, its game not over: never served again
        runner = self.rebuild(record)
        self.residency.make_way()
        self.admit(runner, "loaded back")
        return runner

    def rebuild(self, record: GameRecord) -> RoomRunner:
        """:meth:`runner_from_record` for a player who asked for the room: a stored game
        that cannot be read back (an action that no longer decodes, or that the rules
        refuse) is logged for the operator, and the player told ``internal_error``."""
        try:
            return self.runner_from_record(record)
        except Exception as exc:
            log.error("room %s: its stored game cannot be read back (%s: %s); it is left in "
                      "the store as it is", record.room.room, type(exc).__name__, exc)
            raise CastellError("this game's saved record cannot be read back, so it cannot "
                               "be played here; the server's operator has been told",
                               code="internal_error") from exc

    def public(self) -> list[RoomRunner]:
        return [r for r in self.rooms.values() if not r.room.private]

    def list_page(self, after: str | None, limit: int) -> tuple[list[Room[Any]], bool]:
        """A page of the public rooms in list order (:func:`list_key`): at most ``limit``,
        those after the room ``after`` (from the start when None, or when that room is not
        listed), and whether more follow: a slice of the list's index, however many rooms
        there are."""
        while True:
            start = 0
            if after is not None and after in self._keys:
                start = bisect.bisect_right(self._listed, self._keys[after])
            keys = self._listed[start:start + limit + 1]
            runners = [self.rooms[key[2]] for key in keys]
            # A room's place moves with its status, which every stored change reports
            # (_changed); one that moved otherwise (a change kept in memory while the store
            # was down) is put in its place now, and the page taken again.
            stale = [r for r, key in zip(runners, keys, strict=True) if _key(r.room) != key]
            if not stale:
                return [r.room for r in runners[:limit]], len(keys) > limit
            for runner in stale:
                self._unindex(runner.id)
                self._index(runner)

    def _index(self, runner: RoomRunner) -> None:
        """Put a public room in its place in the list (or keep it there)."""
        if runner.room.private or self.rooms.get(runner.id) is not runner:
            return
        key = _key(runner.room)
        if self._keys.get(runner.id) == key:
            return
        self._unindex(runner.id)
        bisect.insort(self._listed, key)
        self._keys[runner.id] = key

    def _unindex(self, room_id: str) -> None:
        key = self._keys.pop(room_id, None)
        if key is not None:
            index = bisect.bisect_left(self._listed, key)
            if index < len(self._listed) and self._listed[index] == key:
                del self._listed[index]

    def _on_empty(self, runner: RoomRunner) -> None:
        """A room nobody is in: a waiting room goes at once, a started one after a while
        (its players may come back with their tokens). Not while the server stops: its
        players come back to it after the restart."""
        if self.stopping:
            return
        if runner.room.state is None and self.rooms.get(runner.id) is runner:
            self.remove(runner, forget=True)

    def remove(self, runner: RoomRunner, *, forget: bool = False, unload: bool = False
               ) -> None:
        """Drop a room from memory; ``forget`` also deletes it from the store (a room whose
        game never started is worth nothing once empty).

        ``unload``: a game under way that nobody is in leaves memory; it is safe in the
        store and comes back when a player does (:meth:`find_or_load`). Its turn timer does
        not stop with it: on a server that holds its rooms alone (no cluster), the turn's
        deadline stays in the one heap (:class:`~server.runtime.unloaded.UnloadedDeadlines`)
        and when it comes the game is loaded back and its turn runs out as it would have in
        memory (§4), so an absent player cannot hold a game up by nobody looking at it; a
        player back before then finds the turn's deadline as it was. (After a restart, or
        where another node may take the game over, the turn at hand starts afresh instead:
        the deadline is this process's alone.)"""
        deadline = runner.room.deadline
        runner.close()
        if forget:
            task = asyncio.get_running_loop().create_task(
                self.store.delete_room(runner.id, expect_version=runner.room.fence))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.rooms.pop(runner.id, None)
        self._unindex(runner.id)
        self.residency.gone(runner.id)
        self.unloaded.take(runner.id)
        if runner.room.code is not None:
            self.codes.pop(runner.room.code, None)
        for listener in self._on_remove:
            listener(runner)
        log.info("room %s closed", runner.id)
        if unload and deadline is not None and self.guard is None and not self.stopping:
            self.unloaded.park(runner.id, deadline, deadline - self.clock())

    def _new_id(self) -> str:
        while True:
            room_id = new_room_id()
            if room_id not in self.rooms:
                return room_id

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.codes:
                return code
