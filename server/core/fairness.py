"""The order bots' decisions wait in for a worker: a fair share per address, then per room.

Pure: no processes, no clock. :class:`FairQueue` holds what waits, each item with its
*owner* (a room) and its *share* (the address that created the room: rooms of one address
share one share). :meth:`FairQueue.pop` gives the next item to run:

* among the shares with something waiting, the one with the fewest items running now (the
  workers are divided evenly between the addresses that want them: that is an address's
  budget); between shares running as many, the one served least recently (round robin);
* within that share, its rooms in turn (round robin), and a room with an item running waits
  for it to be :meth:`FairQueue.done` before another of its items runs (a room at most one
  decision at a time in the rotation);
* within a room, its items in the order they came.

So one address with a hundred rooms of bots is one share among the others, not a hundred:
another address's room waits at most for a worker to come free, not for the hundred.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class FairQueue(Generic[T]):
    """Items waiting, taken in the fair order of the module's text."""

    def __init__(self) -> None:
        #: share → owner → its waiting items; both dicts in the order to be served next
        #: (an owner or share served goes to the end: round robin).
        self._waiting: dict[Hashable, dict[Hashable, deque[T]]] = {}
        #: Where each waiting or running item belongs: (owner, share).
        self._where: dict[T, tuple[Hashable, Hashable]] = {}
        #: Items running, by share and by owner.
        self._running: Counter[Hashable] = Counter()
        self._busy: Counter[Hashable] = Counter()
        self._started: set[T] = set()

    def __len__(self) -> int:
        """How many items wait (running ones not counted)."""
        return len(self._where) - len(self._started)

    def __iter__(self) -> Iterator[T]:
        """The waiting items (in no particular order)."""
        for owners in self._waiting.values():
            for items in owners.values():
                yield from items

    def push(self, item: T, owner: Hashable, share: Hashable) -> None:
        """``item`` waits, for ``owner`` (a room), in ``share`` (its address)."""
        self._where[item] = (owner, share)
        self._waiting.setdefault(share, {}).setdefault(owner, deque()).append(item)

    def running(self, share: Hashable) -> int:
        """How many items of ``share`` run now."""
        return self._running[share]

    def pop(self) -> T | None:
        """The next item to run (see the module's text), now counted as running until
        :meth:`done`; None when nothing may run (nothing waits, or only items of rooms
        with one running)."""
        best: tuple[int, Hashable, Hashable] | None = None
        for share, owners in self._waiting.items():
            if best is not None and self._running[share] >= best[0]:
                continue  # an earlier share in the rotation runs no more than this one
            owner = next((o for o in owners if not self._busy[o]), None)
            if owner is not None:
                best = (self._running[share], share, owner)
        if best is None:
            return None
        _, share, owner = best
        owners = self._waiting.pop(share)
        items = owners.pop(owner)
        item = items.popleft()
        if items:
            owners[owner] = items  # back of the share's rotation
        if owners:
            self._waiting[share] = owners  # back of the shares' rotation
        self._started.add(item)
        self._running[share] += 1
        self._busy[owner] += 1
        return item

    def done(self, item: T) -> None:
        """``item`` ended (answered, failed, or dropped): a waiting one leaves the queue, a
        running one frees its share's and its room's place. An unknown item is ignored."""
        where = self._where.pop(item, None)
        if where is None:
            return
        owner, share = where
        if item in self._started:
            self._started.discard(item)
            self._running[share] -= 1
            if not self._running[share]:
                del self._running[share]
            self._busy[owner] -= 1
            if not self._busy[owner]:
                del self._busy[owner]
            return
        owners = self._waiting[share]
        owners[owner].remove(item)
        if not owners[owner]:
            del owners[owner]
        if not owners:
            del self._waiting[share]

    def clear(self) -> None:
        """Forget every item, waiting or running."""
        self._waiting.clear()
        self._where.clear()
        self._running.clear()
        self._busy.clear()
        self._started.clear()
