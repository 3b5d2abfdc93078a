"""Time the tower solver on random teams with every skill at rank 3.

Run ``python -m bench.solver [--runs N] [--seed S]``. Teams of 10, 20 and 30 castellers are
drawn from a full bag (15 of each size); each team is solved for the tallest tower, a
festival (random size token) and a local performance tile (random tile). The baseline,
measured in the same run, is one ``check_tower`` call on a legal five-level tower: the
cost of merely checking a tower, against which the solver's cost is shown as a ratio.
The target is a p95 under 20 ms for teams of 30.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from shared.board import SIZES, TILES
from shared.solver import FestivalGoal, TallestGoal, TileGoal, best_tower
from shared.tower import SKILL_NAMES, check_tower

RANKS = dict.fromkeys(SKILL_NAMES, 3)
BASELINE_TOWER = ((9, 9, 9, 9, 9), (8, 8, 7, 7), (6, 6, 6), (4, 4), (2,))


def _quantiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95, ordered[-1]


def _time(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="teams per team size")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    bag = [size for size in SIZES for _ in range(15)]

    baseline = [_time(check_tower, BASELINE_TOWER, RANKS) for _ in range(2000)]
    b50, b95, _ = _quantiles(baseline)
    print(f"baseline check_tower (5 levels): p50 {b50 * 1e6:7.1f} us  p95 {b95 * 1e6:7.1f} us")
    print(f"{'team':>4} {'goal':<9} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p95/base':>9}")
    for n in (10, 20, 30):
        by_goal: dict[str, list[float]] = {"tallest": [], "festival": [], "tile": []}
        for _ in range(args.runs):
            team = rng.sample(bag, n)
            goals = {
                "tallest": TallestGoal(),
                "festival": FestivalGoal(rng.choice(SIZES)),
                "tile": TileGoal(rng.choice(sorted(TILES))),
            }
            for name, goal in goals.items():
                by_goal[name].append(_time(best_tower, team, RANKS, goal))
        by_goal["all"] = [t for times in by_goal.values() for t in times]
        for name, times in by_goal.items():
            p50, p95, top = _quantiles(times)
            print(
                f"{n:>4} {name:<9} {p50 * 1e3:8.2f} {p95 * 1e3:8.2f} {top * 1e3:8.2f}"
                f" {p95 / b50:8.0f}x"
            )


if __name__ == "__main__":
    main()
