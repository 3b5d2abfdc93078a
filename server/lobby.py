"""The lobby: every room of this server, found by id or private code, listed for players."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from server.room import Room
from server.store.base import GameRecord, RoomRecord, Store
from shared.errors import CastellError

log = logging.getLogger("castell.lobby")

# Join codes avoid look-alike characters so they can be read out loud.
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


class Lobby:
    """Holds the rooms. Rooms are forgotten once empty and finished (or never started)."""

    def __init__(self, *, store: Store | None = None, max_rooms: int, bot_delay: float,
                 room_linger: float, unload_after: float | None = None,
                 turn_time_scale: float = 1.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._tasks: set[asyncio.Task[None]] = set()
        self.rooms: dict[str, Room] = {}
        self.codes: dict[str, Room] = {}
        self.max_rooms = max_rooms
        self.bot_delay = bot_delay
        self.room_linger = room_linger
        self.unload_after = unload_after
        self.turn_time_scale = turn_time_scale
        self.clock = clock
        #: Called with each room the lobby lets go of (a cluster node gives up its lease).
        self.on_remove: Callable[[Room], None] | None = None

    async def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
               private: bool, *, seed: int | None = None,
               room_id: str | None = None) -> Room:
        """A new room (``room_id``: one reserved beforehand, as a cluster node does)."""
        if len(self.rooms) >= self.max_rooms:
            raise CastellError("this server has as many rooms as it can hold; try later",
                               code="rate_limited")
        room_id = room_id or self._new_id()
        code = self._new_code() if private else None
        room = Room(
            room_id, name, seats, variant, turn_seconds, private,
            seed=secrets.randbits(63) if seed is None else seed, code=code,
            **self._room_options(),
        )
        if self.store is not None:
            await self.store.create_room(RoomRecord(
                room_id, name, seats, variant, turn_seconds, private, code, room.seed,
                created_at=room.created_at,
            ))
        self.add(room)
        log.info("room %s created: %r, %d seats, %s%s", room_id, name, seats, variant,
                 ", private" if private else "")
        return room

    def room_from_record(self, record: GameRecord) -> Room:
        """A stored room rebuilt with this lobby's settings (not added yet)."""
        return Room.from_record(record, **self._room_options())

    def _room_options(self) -> dict[str, Any]:
        return {"bot_delay": self.bot_delay, "time_scale": self.turn_time_scale,
                "clock": self.clock, "on_empty": self._on_empty, "store": self.store}

    async def restore(self) -> int:
        """Bring back every unfinished room of the store; returns how many."""
        if self.store is None:
            return 0
        records = await self.store.load_unfinished()
        for record in records:
            try:
                room = Room.from_record(record, **self._room_options())
            except Exception:
                log.exception("room %s could not be restored; it is left in the store",
                              record.room.room)
                continue
            self.add(room)
            room.resume_play()
            log.info("room %s restored at version %d (%s)", room.id, room.version, room.status)
        # Recently finished games stay listed (and watchable) for a while, restart or not.
        now = self.clock()
        for finished in await self.store.list_finished(limit=50):
            if finished.finished_at is None or now - finished.finished_at > self.room_linger:
                continue
            record = await self.store.load(finished.room)
            if record is None or finished.room in self.rooms:
                continue
            try:
                self.add(Room.from_record(record, **self._room_options()))
            except Exception:
                log.exception("finished room %s could not be restored", finished.room)
        return len(records)

    def add(self, room: Room) -> None:
        self.rooms[room.id] = room
        if room.code is not None:
            self.codes[room.code] = room

    def find(self, key: str, *, by_id_private: bool = False) -> Room:
        """A room by its id, or a private room by its join code (any case).

        A private room is found by its id only when ``by_id_private`` (a seat token comes
        with the request): its id alone must not let strangers in.
        """
        room = self.codes.get(key.upper())
        if room is None:
            room = self.rooms.get(key)
            if room is not None and room.private and not by_id_private:
                room = None
        if room is None:
            raise CastellError(f"there is no room {key!r} on this server",
                               code="room_not_found")
        return room

    async def find_or_load(self, key: str, *, by_id_private: bool = False) -> Room:
        """:meth:`find`, or else a started game of the store brought back into memory (it
        was unloaded while nobody played it, see :meth:`sweep`)."""
        try:
            return self.find(key, by_id_private=by_id_private)
        except CastellError as exc:
            if self.store is None or exc.code != "room_not_found":
                raise
            record = await self.store.load(key)
            if key in self.rooms:  # loaded by another request meanwhile
                return self.find(key, by_id_private=by_id_private)
            if record is None or record.room.status == "waiting" or (
                    record.room.private and not by_id_private):
                raise
            room = self.room_from_record(record)
            self.add(room)
            room.resume_play()
            log.info("room %s loaded back at version %d", room.id, room.version)
            return room

    def public(self) -> list[Room]:
        return [r for r in self.rooms.values() if not r.private]

    def _on_empty(self, room: Room) -> None:
        """A room nobody is in: a waiting room goes at once, a started one after a while
        (its players may come back with their tokens)."""
        if room.state is None:
            self.remove(room, forget=True)

    def sweep(self) -> None:
        """Forget rooms that finished (or were abandoned) more than ``room_linger`` ago."""
        now = self.clock()
        for room in list(self.rooms.values()):
            if room.members():
                continue
            if room.finished_at is not None and now - room.finished_at > self.room_linger:
                self.remove(room)
            elif room.state is None and now - room.created_at > self.room_linger:
                self.remove(room, forget=True)  # a restored waiting room nobody came back to
            elif (room.state is not None and self.store is not None
                  and self.unload_after is not None
                  and now - room.changed_at > self.unload_after):
                # An abandoned game costs memory for nothing: it is safe in the store and
                # comes back when a player does (see load()).
                log.info("room %s unloaded: nobody there for %.0f s", room.id,
                         now - room.changed_at)
                self.remove(room)

    def remove(self, room: Room, *, forget: bool = False) -> None:
        """Drop a room from memory; ``forget`` also deletes it from the store (a room whose
        game never started is worth nothing once empty)."""
        room.close()
        if forget and self.store is not None:
            task = asyncio.get_running_loop().create_task(self.store.delete_room(room.id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.rooms.pop(room.id, None)
        if room.code is not None:
            self.codes.pop(room.code, None)
        if self.on_remove is not None:
            self.on_remove(room)
        log.info("room %s closed", room.id)

    def _new_id(self) -> str:
        while True:
            room_id = "r" + secrets.token_hex(4)
            if room_id not in self.rooms:
                return room_id

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(6))
            if code not in self.codes:
                return code
