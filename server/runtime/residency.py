"""Which rooms the lobby keeps in memory, and which wait in the store (docs/deploy.md, "One
machine"): the lobby's sweeper forgets rooms long finished or abandoned and unloads the games
nobody attends (:meth:`Residency.sweep`); a full lobby makes way for one more game by
unloading the one nobody has been in for longest (:meth:`Residency.make_way`).

A game may leave memory only when it comes back from the store unchanged and nothing is
about to happen in it by itself (:meth:`Residency.unloadable`). Its turn's deadline does not
leave with it: the lobby parks it (:mod:`server.runtime.unloaded`), and that deadline loads
the game again only where one can make way (:meth:`Residency.can_make_way`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from server.runtime.runner import RoomRunner
from shared.view import RoomStatus

log = logging.getLogger("castell.lobby")


class Holder(Protocol):
    """What residency reads of the lobby that holds the rooms, and asks of it."""

    rooms: dict[str, RoomRunner]
    clock: Callable[[], float]
    room_linger: float
    unload_after: float | None
    unattended_after: float | None

    @property
    def has_room_for_more(self) -> bool: ...

    def check_capacity(self) -> None: ...

    def remove(self, runner: RoomRunner, *, forget: bool = False, unload: bool = False
               ) -> None: ...


class Residency:
    """The lobby's rooms in memory: since when nobody has been in each, which may leave, and
    the sweep that lets them go."""

    def __init__(self, lobby: Holder) -> None:
        self.lobby = lobby
        #: Since when each room has had nobody in it, as the sweeper saw it.
        self._unattended: dict[str, float] = {}

    def unloadable(self, runner: RoomRunner) -> bool:
        """Whether a room may leave memory and come back from the store unchanged: a game
        under way, nobody in it, no change in flight, and nothing about to happen in it by
        itself: a bot about to play, a turn being timed out (or about to be), or a turn's
        timeout the store refused and that waits to be written (it would only be loaded
        back at once)."""
        room = runner.room
        return (room.status == RoomStatus.PLAYING and not room.members()
                and not room.busy and room.bot_turn() is None
                and runner.timer.retrying is None and not runner.timer.due)

    def can_make_way(self) -> bool:
        """Whether one more game can be held: the lobby has room for it, or a game in memory
        may leave to make way."""
        return self.lobby.has_room_for_more or any(map(self.unloadable,
                                                       self.lobby.rooms.values()))

    def make_way(self) -> None:
        """Unload the game nobody has been in for longest when the lobby is full (it is
        safe in the store); refuse (``rate_limited``) when no game can make way."""
        lobby = self.lobby
        if lobby.has_room_for_more:
            return
        idle = [r for r in lobby.rooms.values() if self.unloadable(r)]
        if idle:
            runner = min(idle, key=lambda r: self._unattended.get(r.id, r.room.changed_at))
            log.info("room %s unloaded to make way for another", runner.id)
            lobby.remove(runner, unload=True)
        lobby.check_capacity()

    def gone(self, room_id: str) -> None:
        """The room left memory."""
        self._unattended.pop(room_id, None)

    def sweep(self) -> None:
        """Forget rooms that finished (or were abandoned) more than ``room_linger`` ago;
        unload from memory the games nobody has been in for ``unattended_after`` (or that
        have not changed for ``unload_after``): they stay stored."""
        lobby = self.lobby
        now = lobby.clock()
        for runner in list(lobby.rooms.values()):
            room = runner.room
            if room.members():
                self._unattended.pop(runner.id, None)
                continue
            since = self._unattended.setdefault(runner.id, now)
            if room.busy:
                continue
            if room.finished_at is not None and now - room.finished_at > lobby.room_linger:
                lobby.remove(runner)
            elif room.state is None and now - room.changed_at > lobby.room_linger:
                lobby.remove(runner, forget=True)  # a restored waiting room nobody came back to
            elif not self.unloadable(runner):
                continue
            elif lobby.unattended_after is not None and now - since >= lobby.unattended_after:
                # A game nobody attends costs memory and a room slot for nothing: it is safe
                # in the store and comes back when a player does (Lobby.find_or_load).
                log.info("room %s unloaded: nobody in it for %.0f s", room.id, now - since)
                lobby.remove(runner, unload=True)
            elif lobby.unload_after is not None and now - room.changed_at > lobby.unload_after:
                log.info("room %s unloaded: nobody there for %.0f s", room.id,
                         now - room.changed_at)
                lobby.remove(runner, unload=True)
