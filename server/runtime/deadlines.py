"""One heap for every deadline of a node: the rooms' turn timers wait here, not in tasks.

A correspondence game waits days for its next action. Were each room's turn timer a task
sleeping out its turn (or a handle of its own in the event loop's queue), a node holding
10,000 such games would keep 10,000 sleeping coroutines and their timers for nothing. Here a
deadline is one small entry in a heap:

* :class:`DeadlineHeap` is the heap alone, pure: entries pushed with their time, cancelled
  (an entry cancelled stays in the heap until it comes to the top, or until the cancelled
  ones are half of it: then the heap is rebuilt without them), and the due ones popped in
  order of their time, those of one time in the order they were pushed. Time is whatever the
  caller says it is, so it is tested without a clock.
* :class:`LoopDeadlines` drives one heap on the running event loop with a single
  ``loop.call_at`` for the soonest deadline: when it runs, every entry due is called, and it
  is set again for the next. However many rooms wait, the loop holds one handle for them
  (:attr:`LoopDeadlines.handles`, 0 or 1).

An entry's callback is plain (not a coroutine): a turn timer's starts the task that ends the
turn (:class:`server.runtime.timers.TurnTimer`), which lives only while it does so. A
callback that raises is logged, and the others due still run.

:class:`~server.runtime.timers.LoopScheduler` keeps one :class:`LoopDeadlines`; the lobby
gives its one scheduler to every room of the node (:mod:`server.runtime.lobby`), so a node's
turn deadlines share one heap. A :class:`~server.runtime.timers.VirtualClock` keeps a
:class:`DeadlineHeap` of its own, moved by the test.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("castell.room")

#: The heap is rebuilt without its cancelled entries once they are more than this many and
#: more than half of it (as asyncio's own timer queue does).
COMPACT_AT = 64


class Deadline:
    """One entry of a :class:`DeadlineHeap`: a callback and the time it is due."""

    __slots__ = ("_args", "_callback", "_heap", "when")

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...],
                 heap: DeadlineHeap) -> None:
        self.when = when
        self._callback = callback
        self._args = args
        #: The heap that holds it while it waits (None: it ran, or was cancelled).
        self._heap: DeadlineHeap | None = heap

    @property
    def pending(self) -> bool:
        """Whether it still waits (neither run nor cancelled)."""
        return self._heap is not None

    def cancel(self) -> None:
        """It will not run (nothing happens when it ran already, or was cancelled)."""
        heap, self._heap = self._heap, None
        if heap is not None:
            heap._cancelled_one()

    def run(self) -> None:
        """Call its callback (the heap popped it: it is due)."""
        self._callback(*self._args)

    def __repr__(self) -> str:
        state = "pending" if self.pending else "done"
        return f"<Deadline at {self.when:.3f} {state} {self._callback!r}>"


class DeadlineHeap:
    """Deadlines in order of their time (see the module docstring). Pure: no clock."""

    def __init__(self, emptied: Callable[[], object] | None = None) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        #: Entries still waiting; the rest of ``_heap`` are cancelled ones not yet dropped.
        self._pending = 0
        #: Called when a cancellation leaves no entry waiting.
        self._emptied = emptied

    def push(self, when: float, callback: Callable[..., object], *args: Any) -> Deadline:
        """An entry calling ``callback(*args)`` once the time reaches ``when``."""
        entry = Deadline(when, callback, args, self)
        heapq.heappush(self._heap, (when, next(self._order), entry))
        self._pending += 1
        return entry

    def _cancelled_one(self) -> None:
        self._pending -= 1
        if not self._pending:
            self._heap.clear()
            if self._emptied is not None:
                self._emptied()
            return
        dropped = len(self._heap) - self._pending
        if dropped > COMPACT_AT and dropped * 2 > len(self._heap):
            self._heap = [item for item in self._heap if item[2].pending]
            heapq.heapify(self._heap)

    def _drop_cancelled(self) -> None:
        heap = self._heap
        while heap and not heap[0][2].pending:
            heapq.heappop(heap)

    @property
    def soonest(self) -> float | None:
        """The time of the soonest entry still waiting (None: none waits)."""
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> Deadline | None:
        """The soonest waiting entry if it is due at ``now`` (taken out of the heap: it no
        longer waits), else None."""
        self._drop_cancelled()
        if not self._heap or self._heap[0][0] > now:
            return None
        _, _, entry = heapq.heappop(self._heap)
        entry._heap = None
        self._pending -= 1
        return entry

    def run_due(self, now: float) -> int:
        """Run every entry due at ``now``, soonest first (those of one time in the order
        they were pushed; one pushed meanwhile and due runs too); returns how many ran. A
        callback that raises is logged, and the others still run."""
        ran = 0
        while (entry := self.pop_due(now)) is not None:
            ran += 1
            try:
                entry.run()
            except Exception:
                log.exception("a deadline's callback failed: %r", entry)
        return ran

    def waiting(self) -> list[float]:
        """The times of the entries still waiting, soonest first."""
        return sorted(when for when, _, entry in self._heap if entry.pending)

    def __len__(self) -> int:
        """Entries still waiting."""
        return self._pending

    @property
    def size(self) -> int:
        """Entries the heap holds, cancelled ones not yet dropped included (bounded: see
        :data:`COMPACT_AT`)."""
        return len(self._heap)


class LoopDeadlines:
    """A :class:`DeadlineHeap` on the running event loop: one ``call_at`` handle, for the
    soonest deadline (see the module docstring)."""

    def __init__(self) -> None:
        self.heap = DeadlineHeap(emptied=self._stop)
        self._handle: asyncio.TimerHandle | None = None
        #: When the handle is set to run, and on which loop.
        self._handle_at = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   ) -> Deadline:
        """``callback(*args)`` in ``delay`` seconds of the running loop's time."""
        loop = asyncio.get_running_loop()
        entry = self.heap.push(loop.time() + delay, callback, *args)
        self._wake(loop)
        return entry

    @property
    def handles(self) -> int:
        """The handles this heap holds in the event loop's queue: 1 while any deadline
        waits, else 0."""
        return 0 if self._handle is None or self._handle.cancelled() else 1

    def __len__(self) -> int:
        """Deadlines still waiting."""
        return len(self.heap)

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        """Set the one handle for the soonest deadline, unless it is set for it already (or
        sooner: it then finds nothing due, and is set again)."""
        soonest = self.heap.soonest
        handle = self._handle
        if soonest is None:
            self._stop()
            return
        if handle is not None and self._loop is loop and self._handle_at <= soonest:
            return
        if handle is not None:
            handle.cancel()
        self._handle = loop.call_at(soonest, self._run)
        self._handle_at, self._loop = soonest, loop

    def _stop(self) -> None:
        """No deadline waits any more: no handle either."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _run(self) -> None:
        loop = asyncio.get_running_loop()
        self._handle = None
        # The loop runs a handle up to its clock's resolution early: what the handle was set
        # for is due, whatever the clock says.
        self.heap.run_due(max(loop.time(), self._handle_at))
        self._wake(loop)
