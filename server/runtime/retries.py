"""The rooms waiting out a store failure, and the moment the store is back.

A room whose write the store refused tries again after a growing backoff (a turn timer, a
bot's move: :mod:`server.runtime.runner`). Waiting out the whole backoff once the store works again
would stall the room for up to half a minute after the fault is over, while its players'
own requests (or another room's) are already stored. So every write the store accepts says
so here, and each room then waiting on a retry tries again at once: a room goes on as soon
as its store is back, whichever room's write showed it first.

When no write shows it (a lone room, its bot backing off, nobody else acting), the store is
asked: while any room waits, a write that changes nothing (:meth:`Store.probe`) is tried every
:data:`PROBE_EVERY` seconds (``--store-probe-every``), and the first one the store takes wakes
every waiting room.

One :class:`Retries` is shared by the rooms of one store (the lobby's).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from server.store.errors import StoreError

log = logging.getLogger("castell.server")

#: Seconds between two probes of a store that refused a write, while a room waits on it,
#: unless told (the server's ``store_probe_every``).
PROBE_EVERY = 0.5


class Retrying(Protocol):
    """A room with a retry waiting on its backoff."""

    def store_back(self) -> None:
        """The store took a write: try again now, without waiting out the backoff."""


class Retries:
    """The rooms waiting on a retry; :meth:`stored` wakes them all."""

    def __init__(self, probe: Callable[[], Awaitable[None]] | None = None, *,
                 every: float = PROBE_EVERY) -> None:
        self._waiting: set[Retrying] = set()
        #: A write that changes nothing, to ask the store whether it takes writes again.
        self._probe = probe
        self._every = every
        self._probing: asyncio.Task[None] | None = None

    def wait(self, room: Retrying) -> None:
        """``room`` waits on a backoff until it retries, or until :meth:`stored` (a write
        stored, or the store's probe taken)."""
        self._waiting.add(room)
        if self._probe is not None and (self._probing is None or self._probing.done()):
            self._probing = asyncio.get_running_loop().create_task(self._probe_until_back())

    async def _probe_until_back(self) -> None:
        """Ask the store every few tenths of a second, while a room waits, until it takes a
        write: then every waiting room goes on."""
        assert self._probe is not None
        while self._waiting:
            await asyncio.sleep(self._every)
            if not self._waiting:
                return
            try:
                await self._probe()
            except StoreError:
                continue  # still refused: the rooms keep waiting
            except Exception:
                log.exception("the store's probe failed")
                continue
            self.stored()
            return

    async def close(self) -> None:
        """Stop probing (the server is closing)."""
        task, self._probing = self._probing, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])  # its end, not its CancelledError: the closer's own
            # cancellation still reaches the closer

    def forget(self, room: Retrying) -> None:
        """``room`` no longer waits (it retried, or was let go of)."""
        self._waiting.discard(room)

    def stored(self) -> None:
        """The store accepted a write: every waiting room tries again now."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, set()
        for room in waiting:
            room.store_back()

    def __len__(self) -> int:
        return len(self._waiting)
