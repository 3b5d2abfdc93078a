"""The lobby: every room of this server, found by id or private code, listed for players."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable

from shared.errors import CastellError

from server.room import Room

log = logging.getLogger("castell.lobby")

# Join codes avoid look-alike characters so they can be read out loud.
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


class Lobby:
    """Holds the rooms. Rooms are forgotten once empty and finished (or never started)."""

    def __init__(self, *, max_rooms: int, bot_delay: float, room_linger: float,
                 turn_time_scale: float = 1.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.rooms: dict[str, Room] = {}
        self.codes: dict[str, Room] = {}
        self.max_rooms = max_rooms
        self.bot_delay = bot_delay
        self.room_linger = room_linger
        self.turn_time_scale = turn_time_scale
        self.clock = clock

    def create(self, name: str, seats: int, variant: str, turn_seconds: int | None,
               private: bool, *, seed: int | None = None) -> Room:
        if len(self.rooms) >= self.max_rooms:
            raise CastellError("this server has as many rooms as it can hold; try later",
                               code="rate_limited")
        room_id = self._new_id()
        code = self._new_code() if private else None
        room = Room(
            room_id, name, seats, variant, turn_seconds, private,
            seed=secrets.randbits(63) if seed is None else seed,
            bot_delay=self.bot_delay, code=code, time_scale=self.turn_time_scale, clock=self.clock,
            on_empty=self._on_empty,
        )
        self.add(room)
        log.info("room %s created: %r, %d seats, %s%s", room_id, name, seats, variant,
                 ", private" if private else "")
        return room

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

    def public(self) -> list[Room]:
        return [r for r in self.rooms.values() if not r.private]

    def _on_empty(self, room: Room) -> None:
        """A room nobody is in: a waiting room goes at once, a started one after a while
        (its players may come back with their tokens)."""
        if room.state is None:
            self.remove(room)

    def sweep(self) -> None:
        """Forget rooms that finished (or were abandoned) more than ``room_linger`` ago."""
        now = self.clock()
        for room in list(self.rooms.values()):
            if room.members():
                continue
            if room.finished_at is not None and now - room.finished_at > self.room_linger:
                self.remove(room)

    def remove(self, room: Room) -> None:
        room.close()
        self.rooms.pop(room.id, None)
        if room.code is not None:
            self.codes.pop(room.code, None)
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
