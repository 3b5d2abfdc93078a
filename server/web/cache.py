"""The web pages' cache: what was made once is served again until it is stale or pushed out.

A :class:`Cache` keeps at most ``size`` values, the least recently used going first, each for
as long as its key says it is good (a room's page is keyed by the room's version and public
facts, so a change makes a new key; a page of many sources lives a few seconds). Two requests
for one missing key wait for the one making it (:meth:`Cache.get`): a page is made once
however many ask at the same moment. So what a page costs is bounded by its keys, not by the
requests for it.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Cache(Generic[V]):
    """At most ``size`` values by key, each good for the seconds :meth:`get` is given."""

    def __init__(self, size: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.clock = clock
        self._values: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._making: dict[Hashable, asyncio.Future[V]] = {}
        #: How many :meth:`get` calls found their value, and how many made it.
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._values)

    def peek(self, key: Hashable) -> V | None:
        """The value kept for ``key`` while it is good (None: none)."""
        found = self._values.get(key)
        if found is None:
            return None
        expires, value = found
        if expires <= self.clock():
            del self._values[key]
            return None
        self._values.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V, ttl: float | None = None) -> None:
        """Keep ``value`` for ``ttl`` seconds (None: until it is pushed out)."""
        expires = float("inf") if ttl is None else self.clock() + ttl
        self._values[key] = (expires, value)
        self._values.move_to_end(key)
        while len(self._values) > self.size:
            self._values.popitem(last=False)

    async def get(self, key: Hashable, make: Callable[[], Awaitable[V]],
                  ttl: float | None = None) -> V:
        """The value for ``key``: the one kept, or ``make()``'s, kept for ``ttl`` seconds
        (None: until pushed out). Whoever asks while it is being made waits for it; an
        exception of ``make`` is raised to each of them, and nothing is kept."""
        found = self.peek(key)
        if found is not None:
            self.hits += 1
            return found
        making = self._making.get(key)
        if making is not None:
            self.hits += 1
            return await asyncio.shield(making)
        self.misses += 1
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._making[key] = future
        try:
            value = await make()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # (retrieved: no "never retrieved" warning when none waits)
            raise
        else:
            self.put(key, value, ttl)
            future.set_result(value)
            return value
        finally:
            del self._making[key]
