"""The game review's cost per game, and the measured distributions its marks are drawn from.

    python -m bench review [--games N] [--seed S] [--samples 3] [--candidates 4]
    python -m bench review --marks [--games N] ...      # points lost, by bot level

Every game is seeded (game ``i`` uses seed ``--seed + i``) and played headless by bots, four
seats of ``hard``, ``normal``, ``easy`` and ``normal`` (the lineup rotated one seat per
game); a ``hard`` bot searches with the review's budget (``--samples``, ``--candidates``:
the hard bot's own by default), so that its turns are reviewed at the budget they were
played with. Then :func:`shared.review.review_game` reviews the whole game, and the CPU time
of that (one process, one core) is the figure: p50 and max per game, against the target of
60 s. The baseline, measured in the same run on the same games: the ``hard`` bot deciding
once at the start of every turn (:func:`shared.search.choose` at the same budget) — the
search a review cannot do without; the review's extra is the played line's play-outs, the
solver's towers and the festivals' chances.

``--marks`` prints, by the level of the seat that played the turn, the distribution of
expected points lost (p50 … p99, max) and the share of turns at each mark, and for the
``hard`` bot's own turns the largest loss: the review's samples differ from the bot's, so
that is how far two searches at the same budget disagree. ``docs/review.md`` says how the
thresholds were chosen from it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict

from shared import bots, search
from shared.actions import Action
from shared.engine import apply, new_game
from shared.record import GameRecordFile, RecordedAction
from shared.review import MARKS, THRESHOLDS, Budget, Review, review_game, turn_start
from shared.state import GameState

LINEUP = ("hard", "normal", "easy", "normal")
#: The lineup of a 2-seat run (``--seats 2``: a quick look, as the tests take it).
LINEUP_2 = ("hard", "easy")
TARGET_SECONDS = 60.0


def bot_game(lineup: tuple[str, ...], seed: int, budget: Budget,
             variant: str = "normal") -> GameRecordFile:
    """A seeded game of bots (levels by seat), recorded; ``hard`` searches at ``budget``
    and plays its line out (as :func:`shared.bots.follow` does)."""
    state = new_game([f"{level}{i}" for i, level in enumerate(lineup)], variant, seed)
    rngs = [random.Random(seed * 16 + i) for i in range(len(lineup))]
    line: list[Action] = []
    actions = []
    while not state.over:
        seat = state.turn
        assert seat is not None
        if lineup[seat] == "hard":
            if not line:
                line = list(search.plan(state, seat, rngs[seat], samples=budget.samples,
                                        candidates=budget.candidates))
            action = line.pop(0)
        else:
            action = bots.choose(state, seat, lineup[seat], rngs[seat])
        state, _ = apply(state, seat, action)
        actions.append(RecordedAction(seat, action))
    return GameRecordFile(room=f"g{seed}", name=f"bench {seed}", variant=variant,
                          seats=tuple(p.name for p in state.players),
                          bots=(True,) * len(lineup), seed=seed, actions=tuple(actions))


def _rotated(lineup: tuple[str, ...], i: int) -> tuple[str, ...]:
    k = i % len(lineup)
    return lineup[-k:] + lineup[:-k] if k else lineup


def _baseline(record: GameRecordFile, review: Review, budget: Budget) -> float:
    """CPU seconds of the hard bot deciding at the start of every turn of the game."""
    from shared.replay import record_steps

    states = [s for s, _ in record_steps(record)]
    cpu = time.process_time()
    for turn in review.turns:
        start: GameState = turn_start(states[turn.start])
        search.choose(start, turn.seat, random.Random(turn.index), samples=budget.samples,
                      candidates=budget.candidates)
    return time.process_time() - cpu


def _q(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))] if ordered else 0.0


def cost(games: int, seed: int, budget: Budget, lineup: tuple[str, ...] = LINEUP) -> None:
    """The review's CPU per game, against the baseline and the target."""
    print(f"review: {games} seeded {len(lineup)}-seat games ({', '.join(lineup)}, rotated), "
          f"budget {budget.samples} samples × {budget.candidates} candidates")
    reviews, bases = [], []
    for i in range(games):
        record = bot_game(_rotated(lineup, i), seed + i, budget)
        cpu = time.process_time()
        review = review_game(record, seed=0, budget=budget)
        reviews.append(time.process_time() - cpu)
        bases.append(_baseline(record, review, budget))
        print(f"  game {seed + i}: {len(review.turns)} turns, review {reviews[-1]:.1f} s cpu, "
              f"baseline {bases[-1]:.1f} s")
    p50, worst = statistics.median(reviews), max(reviews)
    print(f"review cpu per game: p50 {p50:.1f} s, max {worst:.1f} s")
    print(f"baseline: the hard bot deciding once per turn, p50 {statistics.median(bases):.1f} "
          f"s per game; the review costs {p50 / statistics.median(bases):.2f}× that")
    met = "yes" if worst <= TARGET_SECONDS else "NO "
    print(f"target:\n  {met}  a whole {len(lineup)}-seat game within {TARGET_SECONDS:.0f} s "
          f"of cpu on one core ({worst:.1f} s at worst)")


def marks(games: int, seed: int, budget: Budget) -> dict[str, list[float]]:
    """The points lost by level (printed), from ``games`` reviewed games."""
    lost: dict[str, list[float]] = defaultdict(list)
    cpu = time.process_time()
    for i in range(games):
        lineup = _rotated(LINEUP, i)
        review = review_game(bot_game(lineup, seed + i, budget), seed=0, budget=budget)
        for turn in review.turns:
            lost[lineup[turn.seat]].append(turn.lost)
    print(f"review --marks: {games} games, {sum(map(len, lost.values()))} turns, budget "
          f"{budget.samples} samples × {budget.candidates} candidates, "
          f"{time.process_time() - cpu:.0f} s cpu")
    print("expected points lost per turn, by the level that played it")
    qs = (0.5, 0.75, 0.9, 0.95, 0.99)
    print("level     turns   " + "".join(f"p{round(q * 100):<6}" for q in qs)
          + "max     mean   " + "  ".join(f"{m[:6]:>6}" for m in MARKS))
    for level in ("hard", "normal", "easy"):
        values = lost.get(level, [])
        if not values:
            continue
        share = [sum(_mark(v) == m for v in values) / len(values) for m in MARKS]
        print(f"{level:<8}{len(values):6d}   " + "".join(f"{_q(values, q):<7.2f}" for q in qs)
              + f"{max(values):<8.2f}{statistics.fmean(values):<7.2f}"
              + "  ".join(f"{100 * s:5.1f}%" for s in share))
    hard = lost.get("hard", [])
    if hard:
        print(f"the hard bot's own turns, reviewed with other samples at the same budget: "
              f"{sum(v > 0 for v in hard)} of {len(hard)} lose anything, the most "
              f"{max(hard):.2f} (mistake from {THRESHOLDS[1]:.1f})")
    return lost


def _mark(lost: float) -> str:
    return MARKS[sum(lost >= t for t in THRESHOLDS)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The game review's cost per game, and the "
                                                 "distribution of its marks.")
    parser.add_argument("--games", type=int, default=5, help="games to review")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument("--samples", type=int, default=search.SAMPLES)
    parser.add_argument("--candidates", type=int, default=search.CANDIDATES)
    parser.add_argument("--seats", type=int, choices=(2, 4), default=4,
                        help=f"4 seats ({', '.join(LINEUP)}) or 2 ({', '.join(LINEUP_2)})")
    parser.add_argument("--marks", action="store_true",
                        help="the distribution of points lost by level, not the cost")
    args = parser.parse_args(argv)
    budget = Budget(args.samples, args.candidates)
    if args.marks:
        marks(args.games, args.seed, budget)
    else:
        cost(args.games, args.seed, budget, LINEUP if args.seats == 4 else LINEUP_2)


if __name__ == "__main__":
    main()


