"""Where bots think: a bounded pool of worker processes, off the server's event loop.

A bot's decision (:func:`shared.bots.decide`) is pure and may take seconds (``hard``); in the
server's process it would hold every other room still, even in a thread (the interpreter runs
one thread of Python at a time). :class:`Thinkers` sends each decision, by value (the frozen
``GameState`` pickles, without its undo chain), to one of at most ``workers`` processes
started on first need, and waits for the answer without blocking.

Decisions wait for a worker in a fair order (:mod:`server.core.fairness`): the addresses that
created the rooms share the workers evenly, each address's rooms take turns, and a room has
at most one decision running. One address's hundred rooms of ``hard`` bots are one share, so
another address's bot waits for a worker to come free, not behind all of them. How long each
decision waited is told to :attr:`Thinkers.waited` (``/metrics``:
``castell_bot_wait_seconds``).

What can go wrong is bounded and answered by :class:`ThinkingFailed`, on which the caller
plays the ``normal`` choice instead (``server.runtime.runner``):

* a decision that runs past its budget (``think`` seconds and a grace) — its worker is
  killed and replaced, so a stuck worker (stopped, looping) costs one decision;
* a worker that dies (killed, out of memory) — the decision fails at once and the next one
  starts a new worker;
* the owner of a decision no longer wants it (:meth:`Thinkers.cancel`, a room let go of): a
  queued decision is dropped, a running one's worker is killed;
* the pool is closed (:meth:`Thinkers.close`, the server stopping): every worker is
  terminated and reaped: none outlives the server.

With ``workers=0`` decisions run in a thread of the server's process instead (a host with
one core, or tests that want no processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import random
import time
from collections.abc import Callable, Hashable
from typing import Any, Protocol

import attrs

from server.core.fairness import FairQueue
from shared import bots
from shared.actions import Action
from shared.state import GameState

log = logging.getLogger("castell.thinking")

#: Seconds a decision may run past its ``think`` budget before its worker is killed.
GRACE = 2.0
#: Seconds a decision of a level without a budget (easy, normal, random) may run.
QUICK = 10.0
#: Seconds a new worker may take to start (its first answer) before it counts as stuck.
START = 30.0
#: What :class:`ThinkingFailed` says of work that ran past its time.
TOO_LONG = "the work took too long"


class ThinkingFailed(Exception):
    """A decision had no answer: it timed out, its worker died, or it was cancelled."""


class Work(Protocol):
    """A piece of work for a worker (it crosses to it by pickle): a bot's decision
    (:class:`Job`), a turn of a game's review (:mod:`server.runtime.review_jobs`)."""

    #: What the work is, as the wait metric is labelled (a bot's level, ``review``).
    @property
    def level(self) -> str: ...

    def run(self) -> Any:
        """Do the work, in the worker; its answer goes back (None: it failed)."""


@attrs.frozen
class Job:
    """One decision to make, as it crosses to a worker."""

    state: GameState
    seat: int
    level: str
    seed: int
    think: float | None

    def run(self) -> tuple[Action, tuple[Action, ...]]:
        decision = bots.decide(self.state, self.seat, self.level, random.Random(self.seed),
                               think=self.think)
        return decision.action, decision.rest


#: How much lower a worker's priority is than the server's.
WORKER_NICENESS = 5
#: What a worker says once it has started (its imports done): it may be given jobs.
READY = "ready"


def _work(conn: multiprocessing.connection.Connection) -> None:
    """A worker's life: say it is ready, then answer each job with what its ``run`` gives
    (a decision's ``(action, rest)``), or ``None`` if it failed, until the pipe closes. It
    runs at a lower priority than the server (``nice`` +5): on a busy machine, people's
    requests come before bots' thoughts."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    try:
        conn.send(READY)
    except (OSError, ValueError):
        return
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            answer: Any = job.run()
        except Exception:  # pragma: no cover - decide ends the turn on a policy's error
            log.exception("a worker's job failed")
            answer = None
        try:
            conn.send(answer)
        except (OSError, ValueError):
            return


def _reap_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.reap()


class _Worker:
    """One worker process and the pipe to it; ``busy`` while it holds a job."""

    def __init__(self, context: Any) -> None:
        here, there = context.Pipe()
        self.conn: multiprocessing.connection.Connection = here
        self.process = context.Process(target=_work, args=(there,), daemon=True,
                                       name="castell-bot")
        self.process.start()
        there.close()
        #: Whether it has said it is ready, and whether it holds a job.
        self.ready = False
        self.busy = False

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        if self.process.is_alive():
            self.process.kill()

    def reap(self, timeout: float = 5.0) -> None:
        self.process.join(timeout)


@attrs.define(eq=False)
class _Pending:
    job: Work
    owner: object
    future: asyncio.Future[Any]
    worker: _Worker | None = None
    #: When it was asked for (``time.monotonic``): how long it waited is told when it runs.
    asked: float = attrs.field(factory=time.monotonic)
    #: Set when a worker takes the job, or when the job ends before one does.
    started: asyncio.Event = attrs.field(factory=asyncio.Event)

    def fail(self, why: str) -> None:
        if not self.future.done():
            self.future.set_exception(ThinkingFailed(why))
            self.future.exception()  # said to whoever still awaits it, or to no one
        self.started.set()


class Thinkers:
    """The pool (see the module's text)."""

    def __init__(self, workers: int, *, grace: float = GRACE,
                 waited: Callable[[str, float], None] | None = None) -> None:
        self.size = max(0, workers)
        self.grace = grace
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._queue: FairQueue[_Pending] = FairQueue()
        #: Told, for each decision a worker takes, its level and the seconds it waited for
        #: one (the server's metrics).
        self.waited = waited
        self._running: set[_Pending] = set()
        #: Workers killed and being reaped (in a thread: a join may take a moment).
        self._reaping: set[asyncio.Future[None]] = set()
        self._closed = False

    @property
    def busy(self) -> bool:
        """Whether a decision is under way in a worker."""
        return bool(self._running)

    @property
    def waiting(self) -> int:
        """How many decisions wait for a worker."""
        return len(self._queue)

    @property
    def processes(self) -> list[int]:
        """The process ids of the live workers (tests, and a host's ``ps``)."""
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    async def decide(self, state: GameState, seat: int, level: str, seed: int, *,
                     think: float | None, owner: Hashable, share: Hashable | None = None
                     ) -> tuple[Action, tuple[Action, ...]]:
        """The bot's action and the rest of its planned turn; :class:`ThinkingFailed` when
        no answer came in time (see the module's text). ``owner`` is the room asking, and
        ``share`` whose share of the workers it draws on: the address that created the
        room; None for a room whose creator's address is not known (a room restored from
        the store): those rooms share one share together, so that many rooms restored
        after a restart do not count as many addresses."""
        job = Job(attrs.evolve(state, undo=None), seat, level, seed, think)
        budget = (QUICK if think is None else think + self.grace)
        try:
            answer: tuple[Action, tuple[Action, ...]] = await self.run(
                job, owner=owner, share=share, seconds=budget)
        except ThinkingFailed as exc:
            if exc.args == (TOO_LONG,):
                log.warning("a %s bot's decision took over %.1f s: its worker is replaced and "
                            "the normal choice is played", level, budget)
            raise
        return answer

    async def run(self, work: Work, *, owner: Hashable, share: Hashable | None = None,
                  seconds: float) -> Any:
        """What ``work`` gives, done by a worker in the fair order (``owner`` and ``share``
        as for :meth:`decide`), within ``seconds`` from when a worker takes it;
        :class:`ThinkingFailed` when no answer came in time (see the module's text)."""
        if self._closed:
            raise ThinkingFailed("the server is stopping")
        if self.size == 0:
            return await asyncio.to_thread(work.run)
        loop = asyncio.get_running_loop()
        pending = _Pending(work, owner, loop.create_future())
        self._queue.push(pending, owner, share)
        self._dispatch()
        try:
            # the clock runs from when a worker takes the job (a queue is no one's fault)
            await asyncio.wait_for(pending.started.wait(), START + seconds)
            return await asyncio.wait_for(asyncio.shield(pending.future), seconds)
        except TimeoutError:
            self._drop(pending, kill=True)
            raise ThinkingFailed(TOO_LONG) from None
        except asyncio.CancelledError:
            self._drop(pending, kill=True)
            raise
        finally:
            self._dispatch()

    def cancel(self, owner: object) -> None:
        """Drop every decision ``owner`` asked for: queued ones, and running ones (their
        workers are killed)."""
        for pending in [p for p in (*self._queue, *self._running) if p.owner is owner]:
            self._drop(pending, kill=True)
            pending.fail("cancelled")
        self._dispatch()

    async def close(self) -> None:
        """Stop every worker and wait for them to end; decisions still asked for fail."""
        self._closed = True
        for pending in [*self._queue, *self._running]:
            pending.fail("the server is stopping")
        self._queue.clear()
        self._running.clear()
        workers, self._workers = self._workers, []
        for worker in workers:
            self._unwatch(worker)
            worker.kill()
        await asyncio.to_thread(_reap_all, workers)
        if self._reaping:  # those killed just before (a room's cancelled decision)
            await asyncio.gather(*self._reaping, return_exceptions=True)

    # -- the workers -------------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Give queued jobs to free workers, starting workers up to the pool's size."""
        while self._queue and not self._closed:
            worker = next((w for w in self._workers if w.ready and not w.busy), None)
            if worker is None:
                # a new worker takes the job once it has started (its start is not counted
                # in the job's budget), unless another becomes free first
                starting = sum(not w.ready for w in self._workers)
                if starting < len(self._queue) and len(self._workers) < self.size:
                    self._start()
                return
            pending = self._queue.pop()
            if pending is None:  # only rooms with a decision running have more waiting
                return
            if pending.future.done():
                self._queue.done(pending)
                continue
            try:
                worker.conn.send(pending.job)
            except (OSError, ValueError) as exc:
                self._lost(worker, f"it could not be sent a job ({exc})")
                self._queue.done(pending)
                pending.fail("the worker died")
                continue
            worker.busy = True
            pending.worker = worker
            pending.started.set()
            self._running.add(pending)
            if self.waited is not None:
                self.waited(pending.job.level, time.monotonic() - pending.asked)

    def _start(self) -> _Worker:
        worker = _Worker(self._context)
        self._workers.append(worker)
        asyncio.get_running_loop().add_reader(worker.conn.fileno(), self._answered, worker)
        log.debug("bot worker %s started", worker.process.pid)
        return worker

    def _answered(self, worker: _Worker) -> None:
        pending = next((p for p in self._running if p.worker is worker), None)
        try:
            answer = worker.conn.recv()
        except (EOFError, OSError) as exc:
            self._lost(worker, f"it ended ({type(exc).__name__}, exit code "
                               f"{worker.process.exitcode})")
            if pending is not None:
                self._running.discard(pending)
                self._queue.done(pending)
                pending.fail("the worker died")
            self._dispatch()
            return
        if answer == READY:
            worker.ready = True
            self._dispatch()
            return
        worker.busy = False
        if pending is not None:
            self._running.discard(pending)
            self._queue.done(pending)
            if not pending.future.done():
                if answer is None:
                    pending.fail("the bot failed")
                else:
                    pending.future.set_result(answer)
        self._dispatch()

    def _drop(self, pending: _Pending, *, kill: bool) -> None:
        self._queue.done(pending)
        if pending in self._running:
            self._running.discard(pending)
            if kill and pending.worker is not None:
                self._lost(pending.worker, "its decision was no longer wanted")

    def _lost(self, worker: _Worker, why: str) -> None:
        if worker not in self._workers:
            return
        log.info("bot worker %s stopped: %s", worker.process.pid, why)
        self._workers.remove(worker)
        self._unwatch(worker)
        worker.kill()
        # reaped without blocking the loop
        reaping = asyncio.get_running_loop().run_in_executor(None, worker.reap)
        self._reaping.add(reaping)
        reaping.add_done_callback(self._reaping.discard)

    def _unwatch(self, worker: _Worker) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(worker.conn.fileno())
