"""A room's time: the scheduler its waits go through, and its turn timer.

A :class:`Scheduler` is where a runner's waits go: :class:`LoopScheduler` waits on the event
loop (real seconds); :class:`VirtualClock` is both a clock and a scheduler whose time moves
only when told (:meth:`VirtualClock.advance`), so that a test drives a turn timer to its end
without waiting real time. Besides its waits (a coroutine that sleeps), a scheduler takes
deadlines (:meth:`Scheduler.call_later`: a callback at a time, no task): those of one
scheduler share one heap (:mod:`server.runtime.deadlines`), and the lobby gives one scheduler
to every room of the node.

:class:`TurnTimer` is one room's turn timer: one deadline at a time (arming it again replaces
the last), waiting in its scheduler's heap, and when it runs out, a task that gives the room
its ``timer_fired`` input, stored through the runner (:class:`Host`); when the store refuses
that, the timer is armed again after the room's backoff, cut short as soon as the store
takes a write again (:mod:`server.runtime.retries`). So a room whose turn lasts days costs
its entry in the heap while it waits, and no task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol

from server.runtime.deadlines import DeadlineHeap, LoopDeadlines
from server.runtime.runner_writes import StoreUnavailable

if TYPE_CHECKING:
    from server.core.room import Change, Room, TurnKey
    from server.ops.metrics import Metrics
    from server.runtime.retries import Retries


class Cancellable(Protocol):
    """A deadline that was set: it can be called off."""

    def cancel(self) -> None:
        """It will not run (nothing happens when it ran already)."""


class Scheduler(Protocol):
    """Where a runner waits."""

    async def sleep(self, delay: float) -> None:
        """Return after ``delay`` seconds."""

    async def wait(self, event: asyncio.Event, timeout: float) -> None:
        """Return when ``event`` is set, or after ``timeout`` seconds, whichever is first."""

    def call_later(self, delay: float, callback: Callable[..., object],
                   *args: Any) -> Cancellable:
        """Call ``callback(*args)`` (a plain function) in ``delay`` seconds; at once, on
        the loop's next turn, when ``delay`` is not positive."""

    def pending(self) -> int:
        """The deadlines set and still waiting (those of no delay not counted)."""


class LoopScheduler:
    """Real seconds, on the running event loop; its deadlines share one heap
    (:class:`~server.runtime.deadlines.LoopDeadlines`: one loop handle for them all)."""

    def __init__(self) -> None:
        self.deadlines = LoopDeadlines()

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)

    async def wait(self, event: asyncio.Event, timeout: float) -> None:
        try:
            async with asyncio.timeout(timeout):
                await event.wait()
        except TimeoutError:
            pass

    def call_later(self, delay: float, callback: Callable[..., object],
                   *args: Any) -> Cancellable:
        if delay <= 0:
            return asyncio.get_running_loop().call_soon(callback, *args)
        return self.deadlines.call_later(delay, callback, *args)

    def pending(self) -> int:
        return len(self.deadlines)


def _wake(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


class VirtualClock:
    """A clock (call it for the time) and a :class:`Scheduler` whose time moves only by
    :meth:`advance`: a wait returns, and a deadline runs, once the time has been advanced to
    it. Its waits and deadlines share one heap."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self._heap = DeadlineHeap()
        self._changed = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        if delay <= 0:
            await asyncio.sleep(0)
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = self._heap.push(self.now + delay, _wake, done)
        self._changed.set()
        try:
            await done
        finally:
            entry.cancel()  # (nothing, once it ran)

    async def wait(self, event: asyncio.Event, timeout: float) -> None:
        sleeping = asyncio.ensure_future(self.sleep(timeout))
        waiting = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait((sleeping, waiting), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            waiting.cancel()

    def call_later(self, delay: float, callback: Callable[..., object],
                   *args: Any) -> Cancellable:
        if delay <= 0:
            return asyncio.get_running_loop().call_soon(callback, *args)
        entry = self._heap.push(self.now + delay, callback, *args)
        self._changed.set()
        return entry

    def pending(self) -> int:
        return len(self._heap)

    @property
    def deadlines(self) -> list[float]:
        """The deadlines of the waits and deadlines still waiting, soonest first."""
        return self._heap.waiting()

    async def deadline(self, later_than: float = float("-inf")) -> float:
        """The soonest deadline after ``later_than`` of a wait (or deadline) still waiting,
        once there is one (waits for one to be set, never for time to pass)."""
        while True:
            later = [at for at in self.deadlines if at > later_than]
            if later:
                return later[0]
            self._changed.clear()
            await self._changed.wait()

    def advance(self, seconds: float) -> None:
        """Move the time on by ``seconds``: every wait whose deadline that reaches returns,
        and every deadline it reaches runs."""
        self.advance_to(self.now + seconds)

    def advance_to(self, at: float) -> None:
        """Move the time on to ``at`` (a deadline, exactly: no rounding of a difference),
        unless it is there already: every wait whose deadline that reaches returns, and
        every deadline it reaches runs, soonest first."""
        self.now = max(self.now, at)
        self._heap.run_due(self.now)


class Host(Hashable, Protocol):
    """What a room's timer and bots need of the runner that drives them."""

    room: Room[Any]
    lock: asyncio.Lock
    closed: bool
    retries: Retries
    clock: Callable[[], float]
    scheduler: Scheduler
    metrics: Metrics | None
    #: The seats whose player the host removed (kicked), now (None: no moderation).
    away: Callable[[Any], set[int]] | None

    async def settle(self) -> None:
        """Learn what the store holds of a version in doubt (:class:`StoreUnavailable`
        while it cannot say)."""

    async def save(self, change: Change) -> bool:
        """Store and commit ``change``, or abort it; whether it was stored."""

    def store_back(self) -> None:
        """The store took a write: whatever waits on a backoff tries again now."""


class TurnTimer:
    """One room's turn timer. See the module docstring."""

    def __init__(self, host: Host) -> None:
        self.host = host
        #: The deadline armed, waiting in the scheduler's heap (None: none waits).
        self._deadline: Cancellable | None = None
        #: The task ending a turn whose deadline came, while it does (None: none).
        self._task: asyncio.Task[None] | None = None
        #: The turn whose timer is armed again to retry what the store refused (None: not
        #: retrying).
        self.retrying: TurnKey | None = None
        #: Whether the deadline armed had no time left (it runs on the loop's next turn).
        self._now = False

    @property
    def armed(self) -> bool:
        """Whether a deadline waits, or a turn is being ended by this timer."""
        return self._deadline is not None or self._task is not None

    @property
    def due(self) -> bool:
        """Whether this timer is ending a turn, or is about to (armed with no time left)."""
        return self._task is not None or (self._now and self._deadline is not None)

    def arm(self, key: TurnKey, delay: float) -> None:
        """The turn ``key`` ends in ``delay`` seconds (the last deadline is replaced)."""
        self.cancel()
        if not self.host.closed:
            self._deadline = self.host.scheduler.call_later(delay, self._fire, key)
            self._now = delay <= 0

    def cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._now = False
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._task = None
        self.retrying = None

    def store_back(self) -> None:
        """The store took a write: a retry waiting on its backoff goes now."""
        if self.retrying is not None:
            self.arm(self.retrying, 0.0)

    def _fire(self, key: TurnKey) -> None:
        """The deadline of turn ``key`` came: end the turn, in a task of its own."""
        self._deadline = None
        self._now = False
        self._task = asyncio.get_running_loop().create_task(self._run(key))

    async def _run(self, key: TurnKey) -> None:
        host = self.host
        async with host.lock:
            if self._task is asyncio.current_task():
                self._task = None
                self.retrying = None
            try:
                await host.settle()
            except StoreUnavailable:
                self.arm(key, host.room.retry_delay)
                self._wait_for_store(key)
                return
            state = host.room.state
            removed = (host.away is not None and state is not None
                       and state.turn in host.away(host))
            change = host.room.timer_fired(key, now=host.clock(), removed=removed)
            if change is not None and not await host.save(change):
                self._wait_for_store(key)  # the refusal re-armed the timer after a backoff

    def _wait_for_store(self, key: TurnKey) -> None:
        """The timer of turn ``key`` is armed again to retry what the store refused."""
        if self._deadline is not None and not self.host.closed:
            self.retrying = key
            self.host.retries.wait(self.host)
