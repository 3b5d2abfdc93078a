"""A game's review as work for the bot workers (:mod:`server.runtime.thinking`): its plan,
then one job per turn (:func:`shared.review.review_plan`, :func:`shared.review.search_turn`).

Each job crosses to a worker by pickle and runs there, off the server's event loop; a turn's
job is as long as one ``hard`` decision at the review's budget, so that a review waits its
turn between other rooms' bots instead of holding a worker for a whole game.
"""

from __future__ import annotations

from typing import Final

import attrs

from shared.record import GameRecordFile
from shared.review import Budget, Review, TurnReview, review_plan, search_turn
from shared.state import GameState

#: What a review's jobs are counted as, beside the bots' levels (``castell_bot_wait_seconds``).
REVIEW: Final = "review"


@attrs.frozen
class PlanJob:
    """The review of a game with no turn searched, and the turns to search."""

    record: GameRecordFile
    seed: int
    budget: Budget
    level: str = REVIEW

    def run(self) -> tuple[Review, tuple[tuple[int, GameState], ...]]:
        return review_plan(self.record, seed=self.seed, budget=self.budget)


@attrs.frozen
class TurnJob:
    """One turn of a review searched from its start."""

    turn: TurnReview
    start: GameState
    seed: int
    budget: Budget
    level: str = REVIEW

    def run(self) -> TurnReview:
        return search_turn(self.turn, self.start, seed=self.seed, budget=self.budget)
