"""The garbage collector's policy while a server runs: its pauses off the players' round trip.

What the collector finds here, measured (BENCHMARKS.md, "Round three"): a game at play
makes almost no cyclic garbage — a room's new state replaces its old one, freed by its last
reference; a closed connection leaves some — yet with CPython's defaults it walked tens of
thousands of objects several times a second (each action frees old objects and makes young
ones, so the young generation holds far more than its threshold of 700 by the time it is
collected), and every few seconds it walked every room and connection whole (100–400 ms at
2,000 connections) to free nothing.

:class:`Collector` does this instead, for the server's process only:

* **Young collections are rare**: the first threshold is :data:`YOUNG` allocations, not 700,
  so that most young objects (a state an action replaces a second later) are freed by their
  last reference before any collection looks at them.
* **What survives is frozen**: after each collection the survivors go into the permanent
  generation (``gc.freeze()``, which costs nothing however many they are), where no
  collection walks them again. Frozen objects are freed as usual when their last reference
  goes; only a cycle among them waits for the next thaw. (Freezing only after collections
  of the older generations let the middle one fill with every connection and room made
  since: one of its collections took 103 ms at 1,000 rooms.)
* **A thaw at most once every :data:`THAW_EVERY` seconds**, and only when the frozen set
  has grown by at least :data:`THAW_FLOOR` objects since the last: everything is unfrozen,
  collected whole once (freeing the cycles frozen objects made since, such as a closed
  connection's: websockets' own objects hold about 90 in cycles, measured), and frozen
  again. That whole collection pauses the server for as long as it takes to walk every
  live object (235 ms at 1,000 rooms of four, measured), so it is kept rare; what cycles
  can hold meanwhile is what an interval's closed connections left.
* **The frozen objects are counted rarely**: CPython counts them by walking every one
  (``gc.get_freeze_count``: 24 ms at two million), so they are counted at the start, after
  a thaw, and at most once an interval when a thaw may be due; :attr:`Collector.frozen`
  (the metrics') is the last count.

The collector's callbacks may run on any thread (a store's worker allocates too), and a
collection may not be started from inside one: they only ask ``schedule`` (the event loop's
``call_soon_threadsafe``) to freeze or thaw soon, on the loop's thread.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("castell.server")

#: Allocations (less deallocations) between two young collections; CPython's own is 700.
YOUNG = 20_000
#: The least growth of the frozen set, in objects, that brings a thaw (besides doubling).
THAW_FLOOR = 200_000
#: Seconds at least between two thaws (and from the start to the first).
THAW_EVERY = 3600.0


class Collector:
    """The collector's policy for one process (see the module docstring); :meth:`start`
    puts it in place, :meth:`stop` puts CPython's thresholds back (what is frozen stays)."""

    def __init__(self, schedule: Callable[[Callable[[], None]], Any], *,
                 young: int = YOUNG, floor: int = THAW_FLOOR, every: float = THAW_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.schedule = schedule
        self.young = young
        self.floor = floor
        self.every = every
        self.clock = clock
        #: When the last thaw was (or the start).
        self.thawed_at = 0.0
        #: Objects frozen after the last thaw (or the start): what a thaw's growth is from.
        self.baseline = 0
        #: The last count of the frozen objects, and when it was made.
        self.counted = 0
        self.counted_at = 0.0
        #: Thaws so far, and the seconds the last one took (its pause).
        self.thaws = 0
        self.last_thaw_seconds = 0.0
        self._thresholds: tuple[int, int, int] | None = None

    def start(self) -> None:
        """Collect what start-up left, freeze the rest, and take over the thresholds."""
        gc.collect()
        gc.freeze()
        self.baseline = self.counted = gc.get_freeze_count()
        self.thawed_at = self.counted_at = self.clock()
        self._thresholds = gc.get_threshold()
        _, middle, oldest = self._thresholds
        gc.set_threshold(self.young, middle, oldest)
        gc.callbacks.append(self._collected)

    def stop(self) -> None:
        """CPython's thresholds again, and no more freezing or thawing."""
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None

    @property
    def frozen(self) -> int:
        """The frozen objects as last counted (see the module docstring: counting walks them
        all, so a scrape does not)."""
        return self.counted

    def thaw_due(self) -> bool:
        """Whether :attr:`every` seconds have passed since the last thaw (or the start) and
        the frozen set has grown by :attr:`floor` since; it is counted again only when its
        last count is :attr:`every` seconds old."""
        now = self.clock()
        if now - self.thawed_at < self.every:
            return False
        if now - self.counted_at >= self.every:
            self.counted, self.counted_at = gc.get_freeze_count(), now
        return self.counted - self.baseline >= self.floor

    def freeze(self) -> None:
        """Freeze what the collections so far left alive; thaw instead when one is due."""
        if self.thaw_due():
            self.thaw()
        else:
            gc.freeze()

    def thaw(self) -> None:
        """Unfreeze everything, collect it whole once (cycles among frozen objects are freed
        here), and freeze what is left: the new baseline. When the collection did not run
        (another thread's was under way: ``gc.collect`` then returns at once) it is not
        counted, and the next freeze tries again."""
        started = time.perf_counter()
        frozen = self.counted
        whole = gc.get_stats()[2]["collections"]
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        if gc.get_stats()[2]["collections"] == whole:
            return
        self.last_thaw_seconds = time.perf_counter() - started
        self.baseline = self.counted = gc.get_freeze_count()
        self.thawed_at = self.counted_at = self.clock()
        self.thaws += 1
        log.info("collector: about %d objects were frozen, %d freed in a whole collection "
                 "of %.0f ms, %d frozen again", frozen, found,
                 self.last_thaw_seconds * 1000, self.baseline)

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        # Any thread, inside a collection: only ask for the freeze (see the module docstring).
        # A freeze asked twice is one that moves nothing (it costs no walk).
        if phase == "stop":
            try:
                self.schedule(self.freeze)
            except RuntimeError:  # the loop has closed: nothing is frozen any more
                self.stop()
