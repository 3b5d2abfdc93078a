"""Time the tower solver on random teams with every skill at rank 3.

    python -m bench.solver [--runs N] [--seed S]

Teams of 10, 20 and 30 castellers are drawn from a full bag (15 of each size); each team is
solved for the tallest tower, a festival (random size token) and a local performance tile
(random tile). The baseline, measured in the same run, is one ``check_tower`` call on a legal
five-level tower: the cost of merely checking a tower; the solver's p95 is also shown as a
multiple of it. Wall-clock and CPU time are both shown: on a busy machine the wall clock
also counts the time other processes held the CPU. The target is a p95 under 20 ms for
teams of 30.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from shared.board import SIZES, TILES
from shared.solver import FestivalGoal, TallestGoal, TileGoal, best_tower
from shared.tower import SKILL_NAMES, check_tower

RANKS = dict.fromkeys(SKILL_NAMES, 3)
BASELINE_TOWER = ((9, 9, 9, 9, 9), (8, 8, 7, 7), (6, 6, 6), (4, 4), (2,))


def _p50_p95(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[round(0.95 * (len(ordered) - 1))]


def _time(fn: Callable[..., object], *args: object) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time the tower solver.")
    parser.add_argument("--runs", type=int, default=200, help="teams per team size")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    bag = [size for size in SIZES for _ in range(15)]

    baseline = [_time(check_tower, BASELINE_TOWER, RANKS)[0] for _ in range(2000)]
    base50, base95 = _p50_p95(baseline)
    print(f"baseline: one check_tower on a 5-level tower, p50 {base50 * 1e6:.1f} us,"
          f" p95 {base95 * 1e6:.1f} us")
    print(f"{'team':>4} {'goal':<9} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8}"
          f" {'cpu p95':>8}  (ms)  {'p95/baseline':>12}")
    for n in (10, 20, 30):
        walls: dict[str, list[float]] = {"tallest": [], "festival": [], "tile": []}
        cpus: dict[str, list[float]] = {name: [] for name in walls}
        for _ in range(args.runs):
            team = rng.sample(bag, n)
            goals = {
                "tallest": TallestGoal(),
                "festival": FestivalGoal(rng.choice(SIZES)),
                "tile": TileGoal(rng.choice(sorted(TILES))),
            }
            for name, goal in goals.items():
                wall, cpu = _time(best_tower, team, RANKS, goal)
                walls[name].append(wall)
                cpus[name].append(cpu)
        walls["all"] = [t for times in walls.values() for t in times]
        cpus["all"] = [t for times in cpus.values() for t in times]
        for name in walls:
            w50, w95 = _p50_p95(walls[name])
            c50, c95 = _p50_p95(cpus[name])
            print(f"{n:>4} {name:<9} {w50 * 1e3:9.2f} {w95 * 1e3:9.2f} {c50 * 1e3:8.2f}"
                  f" {c95 * 1e3:8.2f}        {w95 / base50:11.0f}x")


if __name__ == "__main__":
    main()
