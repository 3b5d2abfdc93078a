"""Matched seats are held for a while, not for ever (``--match-reserve``).

A quick match makes a room, seats its players in it before they are there and starts its
game (server.features.matchmaking); each player takes the seat with the token ``matched`` gave them.
:class:`Reservations` holds a room's matched seats for ``seconds``: once every one of them
has been taken by a connection the room is left alone; if one still has not been taken
then, the game is called off (:meth:`Reservations.call_off`): a room nobody came to is
forgotten (deleted from the store), and one some came to is saved as abandoned, the players
in it told why and their connections closed. So players who are matched and never come
cannot keep rooms of the server for longer than that.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

import attrs

from server.core.room import Finish
from server.runtime.runner import perform
from shared import messages as m
from shared.codec import encode

if TYPE_CHECKING:
    from server.runtime.lobby import Lobby
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.match")

#: Why a room is called off (the notice its players hear, and its stored result's reason).
CALLED_OFF = "a matched player did not take their seat in time: the game is called off"


@attrs.define
class _Held:
    runner: RoomRunner
    #: The matched seats not taken yet, and the seats that have been.
    missing: set[int]
    came: set[int]
    timer: asyncio.TimerHandle


class Reservations:
    """The matched seats of one server's quick-match rooms, held ``seconds`` each."""

    def __init__(self, lobby: Lobby, seconds: float) -> None:
        self.lobby = lobby
        self.seconds = seconds
        self.held: dict[str, _Held] = {}
        #: Rooms called off so far (for the log and the tests).
        self.called_off = 0
        self._tasks: set[asyncio.Task[None]] = set()
        lobby.subscribe(on_change=self._changed, on_remove=self._removed)

    def hold(self, runner: RoomRunner, seats: int) -> None:
        """Hold seats 0 to ``seats`` - 1 of ``runner``'s room for their matched players."""
        timer = asyncio.get_running_loop().call_later(self.seconds, self.expire, runner)
        self.held[runner.id] = _Held(runner, set(range(seats)), set(), timer)
        self._changed(runner)

    def _changed(self, runner: RoomRunner) -> None:
        """After every stored change of a room (a seat taken back is one): the seats now
        taken are no longer waited for."""
        held = self.held.get(runner.id)
        if held is None or held.runner is not runner:
            return
        for index in list(held.missing):
            seat = runner.room.seats[index]
            if seat is not None and seat.member is not None:
                held.missing.discard(index)
                held.came.add(index)
        if not held.missing:
            held.timer.cancel()
            del self.held[runner.id]

    def _removed(self, runner: RoomRunner) -> None:
        held = self.held.get(runner.id)
        if held is not None and held.runner is runner:
            held.timer.cancel()
            del self.held[runner.id]

    def expire(self, runner: RoomRunner) -> None:
        """The reservation of ``runner``'s room runs out (its timer's input, which a test may
        give it sooner): called off if a matched seat is still not taken, else nothing."""
        held = self.held.pop(runner.id, None)
        if held is None or held.runner is not runner:
            return
        held.timer.cancel()
        task = asyncio.get_running_loop().create_task(self.call_off(runner, bool(held.came)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def call_off(self, runner: RoomRunner, came: bool) -> None:
        """Call a matched room's game off (see the module docstring); never raises."""
        lobby = self.lobby
        if lobby.rooms.get(runner.id) is not runner:
            return
        self.called_off += 1
        try:
            if not came:
                log.info("room %s: nobody took a matched seat in %.0f s; called off",
                         runner.id, self.seconds)
                lobby.remove(runner, forget=True)
                return
            log.info("room %s: a matched seat was not taken in %.0f s; called off",
                     runner.id, self.seconds)
            notice = encode(m.NoticePush(room=runner.id, text=CALLED_OFF))
            for member in runner.room.members():
                member.send_bytes(notice)
                member.leave_room()
            await runner.evict(1000, CALLED_OFF[:120])
            if runner.room.status != "finished":
                await perform(lobby.store, Finish(runner.id, {"abandoned": CALLED_OFF},
                                                  time.time(),
                                                  expect_version=runner.room.fence))
        except Exception:
            log.exception("room %s: calling off its matched game failed", runner.id)
        finally:
            if lobby.rooms.get(runner.id) is runner:
                lobby.remove(runner)

    async def close(self) -> None:
        """Stop every reservation's timer and task. Waits for the tasks' ends, not their
        exceptions: a cancellation of the closer itself still reaches the closer."""
        for held in self.held.values():
            held.timer.cancel()
        self.held.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
