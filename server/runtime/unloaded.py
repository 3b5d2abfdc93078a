"""The turn deadlines of the games under way that a lone server holds no room for: games
unloaded while nobody was in them (:meth:`server.runtime.lobby.Lobby.remove`), and games left
in the store at start (:meth:`server.runtime.lobby.Lobby.restore`).

§4 gives each turn its time on the room's timer, and a game out of memory keeps it: each
such game is one deadline in the scheduler's one heap of deadlines
(:mod:`server.runtime.deadlines`), with no room, task or loop handle of its own. When a
deadline comes, the game is loaded back (the lobby's ``find_or_load``) and the room's own
timer, armed with that deadline (:meth:`server.core.room_game.RoomGame.resume_play`), ends
the turn at once. A game loaded back before then, for a player, takes its deadline along
(:meth:`UnloadedDeadlines.take`).

The games that come due are loaded one at a time, in the order they came due, by one task
(however many come due at once: after a restart, every game left in the store comes due one
turn after the start). A game that cannot be loaded when its turn comes (the store refuses,
or the lobby is full of rooms people are in: then it is not even read) is tried again in
:data:`DUE_RETRY` seconds, and at once when the store takes a write again: the turn then
ends late, never early. Those put off together are told in one warning for each reason, not
one per game: after a restart, thousands may wait for room together. A game that can no
longer be served (deleted, closed by the host, its record unreadable) has nothing due. When
the server stops, nothing more is loaded (:meth:`UnloadedDeadlines.close`): the next start
gives each turn at hand a fresh turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from server.runtime.retries import Retries
from server.runtime.timers import Cancellable, Scheduler
from server.store.errors import StoreError
from shared.errors import CastellError

log = logging.getLogger("castell.server")

#: Seconds before a game whose turn ran out while it was unloaded is tried again, when it
#: could not be loaded back (a store that refuses wakes it sooner, once it takes a write).
DUE_RETRY = 30.0
#: Why a game due is put off while the lobby has no room for it, nor a game to make way.
FULL = "the server holds as many rooms as it may"


class UnloadedDeadlines:
    """The deadlines (see the module's text), by room id."""

    def __init__(self, scheduler: Scheduler, retries: Retries,
                 load: Callable[[str], Awaitable[Any]], has_room: Callable[[], bool]) -> None:
        """``load``: bring a game back into memory by its id (its deadline is taken then);
        ``has_room``: whether the lobby could hold one more game now."""
        self._scheduler = scheduler
        self._retries = retries
        self._load = load
        self._has_room = has_room
        self._closed = False
        self._waiting: dict[str, tuple[float, Cancellable]] = {}
        #: The games whose load the store refused: tried again once it takes a write.
        self._refused: set[str] = set()
        #: The games due, in the order they came due (a dict as an ordered set), and the one
        #: task that loads them.
        self._due_now: dict[str, None] = {}
        self._loader: asyncio.Task[None] | None = None
        #: The games put off while loading the games due, by why (each once, in order: a
        #: game may come due again within one pass): told once the pass is over.
        self._put_off: dict[str, dict[str, None]] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    @property
    def loading(self) -> bool:
        """Whether games that came due are being loaded now."""
        return bool(self._due_now) or (self._loader is not None and not self._loader.done())

    def park(self, room_id: str, deadline: float, delay: float) -> None:
        """The game ``room_id`` is out of memory with its turn's ``deadline``: it is loaded
        in ``delay`` seconds."""
        if self._closed:
            return
        self.take(room_id)
        wait = self._scheduler.call_later(delay, self._due, room_id)
        self._waiting[room_id] = (deadline, wait)

    def take(self, room_id: str) -> float | None:
        """The deadline of ``room_id``'s turn, if it waits here; it no longer does (the game
        is in memory again, or gone for good)."""
        self._refused.discard(room_id)
        waiting = self._waiting.pop(room_id, None)
        if waiting is None:
            return None
        waiting[1].cancel()
        return waiting[0]

    def store_back(self) -> None:
        """The store took a write again (:class:`~server.runtime.retries.Retries`): the
        games whose load it refused are loaded now."""
        refused, self._refused = self._refused, set()
        for room_id in refused:
            self._due(room_id)

    def close(self) -> None:
        """The server stops: every wait is called off, and the loads under way too."""
        self._closed = True
        for room_id in list(self._waiting):
            self.take(room_id)
        self._due_now.clear()
        if self._loader is not None:
            self._loader.cancel()

    def _due(self, room_id: str) -> None:
        if self._closed or room_id not in self._waiting:
            return
        self._due_now[room_id] = None
        if self._loader is None or self._loader.done():
            self._loader = asyncio.get_running_loop().create_task(self._load_all_due())

    async def _load_all_due(self) -> None:
        try:
            while self._due_now:
                if not self._has_room():
                    # Not read at all while no game could make way; and until something is
                    # awaited nothing changes that, so every game due now is put off alike
                    # (asking again for each would look over every room each time: after a
                    # restart, thousands of games by thousands of rooms every DUE_RETRY).
                    due, self._due_now = self._due_now, {}
                    for room_id in due:
                        self._again(room_id, FULL)
                    return
                room_id = next(iter(self._due_now))
                del self._due_now[room_id]
                await self._load_due(room_id)
        finally:
            self._tell_put_off()

    def _tell_put_off(self) -> None:
        """One warning for each reason the games due were put off for."""
        put_off, self._put_off = self._put_off, {}
        for why, put in put_off.items():
            rooms = list(put)
            if len(rooms) == 1:
                log.warning("room %s: its turn ran out while it was unloaded, but it could not "
                            "be loaded back (%s); trying again in %.0f s", rooms[0], why,
                            DUE_RETRY)
            else:
                log.warning("%d games whose turns ran out while they were unloaded could not be "
                            "loaded back (%s; the first: room %s); trying again in %.0f s",
                            len(rooms), why, rooms[0], DUE_RETRY)

    async def _load_due(self, room_id: str) -> None:
        if room_id not in self._waiting:
            return  # loaded by a player, or removed, meanwhile
        try:
            await self._load(room_id)  # loaded: the deadline is taken with it
        except StoreError as exc:  # the store refused: again once it takes a write
            self._again(room_id, f"{type(exc).__name__}: {exc}")
            if room_id in self._waiting:
                self._refused.add(room_id)
                self._retries.wait(self)
        except CastellError as exc:
            if exc.code != "rate_limited":  # deleted, closed or unreadable: nothing is due
                log.info("room %s: its turn ran out while it was unloaded, and it is no "
                         "longer served (%s)", room_id, exc)
                self.take(room_id)
                return
            self._again(room_id, str(exc))
        except Exception as exc:
            log.exception("room %s: its turn ran out while it was unloaded, and loading it "
                          "back failed", room_id)
            self._again(room_id, f"{type(exc).__name__}: {exc}")

    def _again(self, room_id: str, why: str) -> None:
        """Try ``room_id`` again in :data:`DUE_RETRY` seconds, with the deadline it has now
        (a player's load meanwhile may have taken it, or parked it again)."""
        waiting = self._waiting.get(room_id)
        if waiting is None:
            return
        self._put_off.setdefault(why, {})[room_id] = None
        self.park(room_id, waiting[0], DUE_RETRY)
