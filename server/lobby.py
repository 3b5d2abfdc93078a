"""The lobby: every room of this server, found by id or private code, listed for players.

It holds each room as its :class:`~server.runner.RoomRunner`, and gives the cluster
(:mod:`server.cluster`) what it needs through methods, never by reaching inside: the room-id
format (:func:`new_room_id`), the capacity check (:meth:`Lobby.check_capacity`), rooms made
from stored records (:meth:`Lobby.runner_from_record`, :meth:`Lobby.admit`), and a word when a
room changes or goes (:meth:`Lobby.subscribe`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.room import Room
from server.runner import RoomRunner
from server.store.base import GameRecord, RoomRecord, Store
from shared.errors import CastellError, RoomNotFound
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.connection import Connection

log = logging.getLogger("castell.lobby")

# Join codes avoid look-alike characters so they can be read out loud.
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

#: What the lobby tells its listeners of a room.
Listener = Callable[[RoomRunner], None]


#: Rooms in a room list come in this order: those one can join first.
LIST_ORDER: dict[str, int] = {RoomStatus.WAITING: 0, RoomStatus.PLAYING: 1,
                              RoomStatus.FINISHED: 2}


def new_room_id() -> str:
    """A fresh room id (``r`` and 8 hex digits: 32 random bits)."""
    return "r" + secrets.token_hex(4)


def not_found(key: str) -> RoomNotFound:
    return RoomNotFound(f"there is no room {key!r} on this server")


class Lobby:
    """Holds the rooms. Rooms are forgotten once empty and finished (or never started)."""

    def __init__(self, *, store: Store | None = None, max_rooms: int, bot_delay: float,
                 room_linger: float, unload_after: float | None = None,
                 turn_time_scale: float = 1.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._tasks: set[asyncio.Task[Any]] = set()
        self.rooms: dict[str, RoomRunner] = {}
        self.codes: dict[str, RoomRunner] = {}
        self.max_rooms = max_rooms
        self.bot_delay = bot_delay
        self.room_linger = room_linger
        self.unload_after = unload_after
        self.turn_time_scale = turn_time_scale
        self.clock = clock
        self._on_change: list[Listener] = []
        self._on_remove: list[Listener] = []
        #: Whether this server still holds a room (set by a cluster node: its lease).
        self.guard: Callable[[RoomRunner], bool] | None = None

    def subscribe(self, *, on_change: Listener | None = None,
                  on_remove: Listener | None = None) -> None:
        """Be told after every stored change of a room, and of each room the lobby lets go."""
        if on_change is not None:
            self._on_change.append(on_change)
        if on_remove is not None:
            self._on_remove.append(on_remove)

    def _changed(self, runner: RoomRunner) -> None:
        for listener in self._on_change:
            listener(runner)

    @property
    def has_room_for_more(self) -> bool:
        return len(self.rooms) < self.max_rooms

    def check_capacity(self) -> None:
        """Refuse a new room once this server holds as many as it may (``--max-rooms``)."""
        if not self.has_room_for_more:
            raise CastellError("this server has as many rooms as it can hold; try later",
                               code="rate_limited")

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
                     private: bool, *, seed: int | None = None, room_id: str | None = None,
                     fenced: bool = False) -> RoomRunner:
        """A new room, stored before it is listed (``room_id``: one reserved beforehand, as
        a cluster node does; ``fenced``: every write expects the version stored last)."""
        self.check_capacity()
        room_id = room_id or self._new_id()
        code = self._new_code() if private else None
        room: Room[Connection] = Room(
            room_id, name, seats, variant, turn_seconds, private,
            seed=secrets.randbits(63) if seed is None else seed, code=code,
            now=self.clock(), fenced=fenced, **self._room_options(),
        )
        if self.store is not None:
            await self.store.create_room(RoomRecord(
                room_id, name, seats, variant, turn_seconds, private, code, room.seed,
                created_at=room.created_at,
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
                          on_empty=self._on_empty, on_lost=self._lost, held=self._held)

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
        """Serve a room rebuilt from the store: listed, its timer and bots going again."""
        self.add(runner)
        runner.resume_play()
        log.info("room %s %s at version %d (%s)", runner.id, why, runner.room.version,
                 runner.room.status)

    async def restore(self) -> int:
        """Bring back every unfinished room of the store; returns how many."""
        if self.store is None:
            return 0
        records = await self.store.load_unfinished()
        for record in records:
            try:
                runner = self.runner_from_record(record)
            except Exception:
                log.exception("room %s could not be restored; it is left in the store",
                              record.room.room)
                continue
            self.admit(runner, "restored")
        # Recently finished games stay listed (and watchable) for a while, restart or not.
        now = self.clock()
        for finished in await self.store.list_finished(limit=50):
            if finished.finished_at is None or now - finished.finished_at > self.room_linger:
                continue
            done = await self.store.load(finished.room)
            if done is None or finished.room in self.rooms:
                continue
            try:
                self.add(self.runner_from_record(done))
            except Exception:
                log.exception("finished room %s could not be restored", finished.room)
        return len(records)

    def add(self, runner: RoomRunner) -> None:
        self.rooms[runner.id] = runner
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
            raise not_found(key)
        return runner

    async def find_or_load(self, key: str, *, by_id_private: bool = False) -> RoomRunner:
        """:meth:`find`, or else a started game of the store brought back into memory (it
        was unloaded while nobody played it, see :meth:`sweep`)."""
        try:
            return self.find(key, by_id_private=by_id_private)
        except RoomNotFound:
            if self.store is None:
                raise
        record = await self.store.load(key)
        if key in self.rooms:  # loaded by another request meanwhile
            return self.find(key, by_id_private=by_id_private)
        if record is None or record.room.status == RoomStatus.WAITING or (
                record.room.private and not by_id_private):
            raise not_found(key)
        runner = self.runner_from_record(record)
        self.admit(runner, "loaded back")
        return runner

    def public(self) -> list[RoomRunner]:
        return [r for r in self.rooms.values() if not r.room.private]

    def _on_empty(self, runner: RoomRunner) -> None:
        """A room nobody is in: a waiting room goes at once, a started one after a while
        (its players may come back with their tokens)."""
        if runner.room.state is None and self.rooms.get(runner.id) is runner:
            self.remove(runner, forget=True)

    def sweep(self) -> None:
        """Forget rooms that finished (or were abandoned) more than ``room_linger`` ago."""
        now = self.clock()
        for runner in list(self.rooms.values()):
            room = runner.room
            if room.members() or room.busy:
                continue
            if room.finished_at is not None and now - room.finished_at > self.room_linger:
                self.remove(runner)
            elif room.state is None and now - room.created_at > self.room_linger:
                self.remove(runner, forget=True)  # a restored waiting room nobody came back to
            elif (room.state is not None and self.store is not None
                  and self.unload_after is not None
                  and now - room.changed_at > self.unload_after):
                # An abandoned game costs memory for nothing: it is safe in the store and
                # comes back when a player does (see find_or_load()).
                log.info("room %s unloaded: nobody there for %.0f s", room.id,
                         now - room.changed_at)
                self.remove(runner)

    def remove(self, runner: RoomRunner, *, forget: bool = False) -> None:
        """Drop a room from memory; ``forget`` also deletes it from the store (a room whose
        game never started is worth nothing once empty)."""
        runner.close()
        if forget and self.store is not None:
            task = asyncio.get_running_loop().create_task(
                self.store.delete_room(runner.id, expect_version=runner.room.fence))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.rooms.pop(runner.id, None)
        if runner.room.code is not None:
            self.codes.pop(runner.room.code, None)
        for listener in self._on_remove:
            listener(runner)
        log.info("room %s closed", runner.id)

    def _new_id(self) -> str:
        while True:
            room_id = new_room_id()
            if room_id not in self.rooms:
                return room_id

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(6))
            if code not in self.codes:
                return code
