"""The rooms waiting out a store failure, and the moment the store is back.

A room whose write the store refused tries again after a growing backoff (a turn timer, a
bot's move: :mod:`server.runner`). Waiting out the whole backoff once the store works again
would stall the room for up to half a minute after the fault is over, while its players'
own requests (or another room's) are already stored. So every write the store accepts says
so here, and each room then waiting on a retry tries again at once: a room goes on as soon
as its store is back, whichever room's write showed it first.

One :class:`Retries` is shared by the rooms of one store (the lobby's).
"""

from __future__ import annotations

from typing import Protocol


class Retrying(Protocol):
    """A room with a retry waiting on its backoff."""

    def store_back(self) -> None:
        """The store took a write: try again now, without waiting out the backoff."""


class Retries:
    """The rooms waiting on a retry; :meth:`stored` wakes them all."""

    def __init__(self) -> None:
        self._waiting: set[Retrying] = set()

    def wait(self, room: Retrying) -> None:
        """``room`` waits on a backoff until it retries, or until :meth:`stored`."""
        self._waiting.add(room)

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
