"""Finished games' reviews on a server (the ``review`` request, ``docs/review.md``): each
computed once, in the bot workers, and kept in the store.

:meth:`Reviews.review` answers with the review kept in the store (:class:`ReviewsStore`: every
node of a cluster reads the one any node kept), or computes it:

* **off the event loop, in the bot workers** (:class:`server.runtime.thinking.Thinkers`),
  under the rules of bots: first the review's plan (:class:`PlanJob`: the game replayed, the
  solver's towers and the festivals, every turn listed unsearched), then **one job per
  turn** (:class:`TurnJob`: the ``hard`` bot's search and the play-outs of that turn), one
  after the other. A review is one owner of the fair queue (:mod:`server.core.fairness`),
  drawing on the share of the address that asked for it: it has at most one job running at
  a time, and between two of its turns the workers go to whoever's turn it is, so a review
  never holds a worker longer than one turn's search and never starves another address's
  bots;
* at the server's budget (``--review-samples``, ``--review-candidates``; the review's seed is
  always 0), so that a review is a function of the game alone;
* **once**: two askers of the same game share one computation (the second is told the
  progress so far, then each step), and the review is stored when done (the first stored
  wins, :meth:`ReviewsStore.put_review`) and served from the store after;
* with its progress told to every asker as turns are done (``progress(done, total)``: the
  ``review_progress`` pushes); an asker that goes away does not stop it (the review is kept
  for the next);
* within :attr:`Reviews.per_address` computations at once for the askers of one address
  (``rate_limited`` past it; a review already kept, or being computed, is not counted).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Final

import attrs
import msgpack

from server.runtime.review_jobs import PlanJob, TurnJob
from server.runtime.thinking import Thinkers, ThinkingFailed
from shared.errors import CastellError
from shared.record import GameRecordFile
from shared.review import Budget, TurnReview, with_searched

if TYPE_CHECKING:
    from server.ops.metrics import Metrics
    from server.store.base import ReviewsStore

log = logging.getLogger("castell.reviews")

#: Seconds the plan of a review may take in a worker (the replay, the solver on each turn:
#: about half a second for a 4-seat game), and one turn's search (a second or two at the
#: default budget): past them the worker is replaced and the review fails.
PLAN_SECONDS: Final = 60.0
TURN_SECONDS: Final = 60.0
#: The seed of every review a server computes (docs/review.md: a review is a function of
#: the game, its seed and its budget).
SEED: Final = 0

Progress = Callable[[int, int], None]


@attrs.define(eq=False)
class _Computation:
    """One review being computed: its askers' progress callbacks, where it stands, and the
    task that computes it (the owner of its jobs in the fair queue)."""

    room: str
    share: Hashable
    listeners: list[Progress] = attrs.field(factory=list)
    last: tuple[int, int] | None = None
    task: asyncio.Task[dict[str, Any]] | None = None

    def tell(self, done: int, total: int) -> None:
        self.last = (done, total)
        for listener in list(self.listeners):
            try:
                listener(done, total)
            except Exception:  # an asker's connection gone: the others are still told
                log.debug("a review's progress could not be told", exc_info=True)


class Reviews:
    """Finished games' reviews: computed once in the bot workers, kept in the store (see the
    module's text)."""

    def __init__(self, store: ReviewsStore, thinkers: Thinkers, budget: Budget, *,
                 per_address: int = 2, metrics: Metrics | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.thinkers = thinkers
        self.budget = budget
        self.per_address = per_address
        self.metrics = metrics
        self.clock = clock
        #: The reviews being computed, by room.
        self.computing: dict[str, _Computation] = {}

    async def review(self, record: GameRecordFile, *, share: Hashable,
                     progress: Progress) -> dict[str, Any]:
        """The review of the finished game ``record`` as plain data
        (:meth:`shared.review.Review.to_data`): the stored one, or computed now (``share``:
        the asker's address; ``progress`` told each step). ``rate_limited`` when the
        asker's address has :attr:`per_address` reviews being computed; ``internal_error``
        when a worker could not compute it (nothing is kept: asking again tries again)."""
        stored = await self.store.review(record.room)
        if stored is not None:
            self._count("stored")
            data: dict[str, Any] = msgpack.unpackb(stored, raw=False)
            return data
        computation = self.computing.get(record.room)
        if computation is None:
            if sum(c.share == share for c in self.computing.values()) >= self.per_address:
                raise CastellError("reviews are being computed for your address: wait for "
                                   "one of them to end", code="rate_limited")
            computation = self._start(record, share)
            self._count("computed")
        else:
            self._count("joined")
            if computation.last is not None:
                progress(*computation.last)
        computation.listeners.append(progress)
        assert computation.task is not None
        try:
            return await asyncio.shield(computation.task)
        finally:
            computation.listeners.remove(progress)

    async def close(self) -> None:
        """Stop every review being computed (the server stops: nothing of them is kept)."""
        tasks = [c.task for c in self.computing.values() if c.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- computing -----------------------------------------------------------------------------

    def _start(self, record: GameRecordFile, share: Hashable) -> _Computation:
        computation = _Computation(record.room, share)
        self.computing[record.room] = computation
        task = asyncio.create_task(self._compute(record, computation))
        computation.task = task

        def ended(done: asyncio.Task[dict[str, Any]]) -> None:
            if self.computing.get(record.room) is computation:
                del self.computing[record.room]
            if not done.cancelled():
                done.exception()  # told to its askers; retrieved here if none is left

        task.add_done_callback(ended)
        return computation

    async def _compute(self, record: GameRecordFile, computation: _Computation
                       ) -> dict[str, Any]:
        started = time.monotonic()
        try:
            plan, jobs = await self.thinkers.run(
                PlanJob(record, SEED, self.budget), owner=computation,
                share=computation.share, seconds=PLAN_SECONDS)
            computation.tell(0, len(jobs))
            searched: list[TurnReview] = []
            for index, start in jobs:
                searched.append(await self.thinkers.run(
                    TurnJob(plan.turns[index], start, SEED, self.budget), owner=computation,
                    share=computation.share, seconds=TURN_SECONDS))
                computation.tell(len(searched), len(jobs))
        except ThinkingFailed as exc:
            log.warning("the review of %s could not be computed: %s", record.room, exc)
            raise CastellError("the server could not compute that review just now: ask "
                               "again later", code="internal_error") from None
        data = with_searched(plan, searched).to_data()
        await self.store.put_review(record.room, msgpack.packb(data, use_bin_type=True),
                                    self.clock())
        log.info("reviewed %s: %d turns in %.1f s", record.room, len(jobs),
                 time.monotonic() - started)
        return data

    def _count(self, source: str) -> None:
        if self.metrics is not None:
            self.metrics.reviewed(source)
