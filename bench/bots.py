"""The bot ladder: each level against each, win rates with their 95% intervals, points by
category, festivals entered, and how long each level thinks.

    python -m bench bots                          # the ladder (below), 200 games a match
    python -m bench bots --games N                # the same, N games a match
    python -m bench bots --lineup hard,normal [--games N] [--variant V]   # one match

Every game is seeded (game ``i`` of a match uses seed ``--seed + i``) and played headless
through ``shared.engine`` with :func:`shared.bots.decide`, each seat with its own seeded
``random.Random``, exactly as the server plays them (a ``hard`` bot decides once a turn and
plays its line, :func:`shared.bots.follow`) but with no time limit: a ``hard`` search is
bounded by its count of samples only, so a run is repeated exactly on any machine. The
lineup is rotated one seat per game, so that every level sits in every seat.

The ladder's matches: in 2 seats easy–normal, normal–hard and easy–hard; in 4 seats one
``hard`` against three ``normal``, and one ``easy`` against three ``normal``. Printed per
match and level: how often it won (a shared victory counts for each winner) with a 95%
Wilson interval, the average score in each §9 category, festivals entered per game and as
a share of the festivals held, tiles performed per game, its lowest total; and each level's
decision time (CPU seconds of the decisions that searched — a ``hard`` bot's line is
played without thinking again), p50, p95 and max, against a baseline measured in the same
games: a ``random`` decision on the same states. The targets of the levels are checked at
the end (each a line saying ``yes`` or ``NO``). Games run in ``--jobs`` processes.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import time
from collections import defaultdict
from typing import Any

from shared.bots import LEVELS, Decision, decide, follow, level_name, random_action
from shared.engine import apply, new_game
from shared.events import FestivalResolved, Performed

CATEGORIES = ("tower", "diversity", "prizes", "sizes", "performances", "total")
#: The ladder's matches.
LADDER: tuple[tuple[str, ...], ...] = (
    ("easy", "normal"),
    ("normal", "hard"),
    ("easy", "hard"),
    ("hard", "normal", "normal", "normal"),
    ("easy", "normal", "normal", "normal"),
)
#: Every this many states, a random decision is timed there too (the baseline).
_BASELINE_EVERY = 5


def play(lineup: tuple[str, ...], seed: int, variant: str) -> dict[str, Any]:
    """One headless game; what happened, by seat."""
    seats = len(lineup)
    state = new_game([f"{level}{i}" for i, level in enumerate(lineup)], variant, seed)
    rngs = [random.Random(seed * 16 + i) for i in range(seats)]
    plans: dict[int, Decision] = {}
    thinking: list[list[float]] = [[] for _ in range(seats)]
    baseline: list[float] = []
    entered, tiles = [0] * seats, [0] * seats
    held = 0
    step = 0
    while not state.over:
        seat = state.turn
        assert seat is not None
        decision = follow(plans.get(seat), state, seat)
        if decision is None:
            cpu = time.process_time()
            decision = decide(state, seat, lineup[seat], rngs[seat])
            thinking[seat].append(time.process_time() - cpu)
        if step % _BASELINE_EVERY == 0:
            cpu = time.process_time()
            random_action(state, seat, random.Random(step))
            baseline.append(time.process_time() - cpu)
        step += 1
        state, events = apply(state, seat, decision.action)  # an illegal choice raises here
        plans[seat] = decision if decision.rest else Decision(decision.action)
        for event in events:
            if isinstance(event, FestivalResolved):
                held += 1
                for result in event.results:
                    entered[result.seat] += 1
            elif isinstance(event, Performed):
                tiles[event.seat] += 1
    assert state.scores is not None and state.winners is not None
    return {
        "lineup": lineup,
        "scores": [{c: getattr(s, c) for c in CATEGORIES} for s in state.scores],
        "winners": state.winners,
        "entered": entered,
        "held": held,
        "tiles": tiles,
        "thinking": thinking,
        "baseline": baseline,
    }


def _play(job: tuple[tuple[str, ...], int, str]) -> dict[str, Any]:
    return play(*job)


def match(lineup: tuple[str, ...], games: int, seed: int, variant: str,
          jobs: int) -> list[dict[str, Any]]:
    """Play ``games`` games, rotating the lineup, in ``jobs`` processes."""
    seats = len(lineup)
    tasks = [(lineup[-(i % seats):] + lineup[:-(i % seats)] if i % seats else lineup,
              seed + i, variant) for i in range(games)]
    if jobs <= 1:
        return [_play(task) for task in tasks]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        return list(pool.imap_unordered(_play, tasks))


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion ``wins / n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))] if ordered else 0.0


def summary(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per level: its figures over every seat it held."""
    rows: dict[str, dict[str, Any]] = {}
    for game in results:
        for seat, level in enumerate(game["lineup"]):
            row = rows.setdefault(level, defaultdict(list))
            for category in CATEGORIES:
                row[category].append(game["scores"][seat][category])
            row["won"].append(seat in game["winners"])
            row["entered"].append(game["entered"][seat])
            row["held"].append(game["held"])
            row["tiles"].append(game["tiles"][seat])
            row["thinking"].extend(game["thinking"][seat])
    return rows


def report(lineup: tuple[str, ...], results: list[dict[str, Any]], elapsed: float) -> None:
    """Print the figures of one match."""
    rows = summary(results)
    n = len(results)
    print(f"\n{len(lineup)} seats, {', '.join(lineup)} (rotated), {n} games, {elapsed:.0f} s")
    print("level   " + "".join(c[:6].rjust(8) for c in CATEGORIES)
          + "   lowest  won (95% interval)   fest/g  entered  tiles/g")
    for level in [lv for lv in LEVELS if lv in rows]:
        row = rows[level]
        won = sum(row["won"])
        low, high = wilson(won, len(row["won"]))
        print(level.ljust(8)
              + "".join(f"{statistics.fmean(row[c]):8.1f}" for c in CATEGORIES)
              + f"  {min(row['total']):7d}  {100 * won / len(row['won']):5.1f}%"
              + f" [{100 * low:4.1f}–{100 * high:4.1f}%]"
              + f"  {statistics.fmean(row['entered']):6.2f}"
              + f"  {100 * sum(row['entered']) / max(1, sum(row['held'])):6.1f}%"
              + f"  {statistics.fmean(row['tiles']):7.2f}")
    for level in [lv for lv in LEVELS if lv in rows]:
        times = rows[level]["thinking"]
        if times:
            print(f"{level} decision (cpu): p50 {_quantile(times, 0.5) * 1e3:.1f} ms, p95 "
                  f"{_quantile(times, 0.95) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms over "
                  f"{len(times)} decisions")
    base = [t for g in results for t in g["baseline"]]
    if base:
        print(f"baseline: a random bot's decision on the same states, p50 "
              f"{_quantile(base, 0.5) * 1e3:.2f} ms, p95 {_quantile(base, 0.95) * 1e3:.2f} ms")


def targets(played: dict[tuple[str, ...], list[dict[str, Any]]]) -> None:
    """Say whether each level meets its target (when the match that shows it was played)."""
    lines: list[tuple[str, bool]] = []
    duel = played.get(("easy", "normal"))
    if duel:
        easy = summary(duel)["easy"]
        normal_won = statistics.fmean(summary(duel)["normal"]["won"])
        lines += [
            (f"easy scores more than 0 in every game (lowest {min(easy['total'])})",
             min(easy["total"]) > 0),
            (f"easy enters >= 40% of the festivals "
             f"({100 * sum(easy['entered']) / max(1, sum(easy['held'])):.1f}%)",
             sum(easy["entered"]) >= 0.4 * sum(easy["held"])),
            (f"easy loses to normal in >= 80% of games (normal won {100 * normal_won:.1f}%)",
             normal_won >= 0.8),
        ]
    duel = played.get(("normal", "hard"))
    if duel:
        won = statistics.fmean(summary(duel)["hard"]["won"])
        lines.append((f"hard beats normal in >= 60% of 2-seat games ({100 * won:.1f}%)",
                      won >= 0.6))
    four = played.get(("hard", "normal", "normal", "normal"))
    if four:
        row = summary(four)["hard"]
        won = statistics.fmean(row["won"])
        lines.append((f"hard wins >= 40% of 4-seat games against three normal "
                      f"({100 * won:.1f}%)", won >= 0.4))
        p95 = _quantile(row["thinking"], 0.95)
        lines.append((f"hard decides in <= 2 s at p95 on one core, 4 seats ({p95:.2f} s)",
                      p95 <= 2.0))
    if lines:
        print("\ntargets:")
        for text, met in lines:
            print(f"  {'yes' if met else 'NO '}  {text}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The bot ladder: each level against each.")
    parser.add_argument("--games", type=int, default=200, help="games per match")
    parser.add_argument("--lineup", help="one match: levels by seat, e.g. hard,normal")
    parser.add_argument("--seats", type=int, choices=(2, 3, 4),
                        help="one match of normal against easy bots in this many seats")
    parser.add_argument("--variant", default="normal", choices=("normal", "advanced"))
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args(argv)

    matches: tuple[tuple[str, ...], ...] = LADDER
    if args.lineup:
        try:
            lineup = tuple(level_name(level) for level in args.lineup.split(","))
        except ValueError as exc:
            parser.error(str(exc))
        if not 2 <= len(lineup) <= 4:
            parser.error("a lineup is 2 to 4 levels")
        matches = (lineup,)
    elif args.seats:
        matches = (("normal",) + ("easy",) * (args.seats - 1),)
    played = {}
    for lineup in matches:
        start = time.monotonic()
        played[lineup] = results = match(lineup, args.games, args.seed, args.variant,
                                         args.jobs)
        report(lineup, results, time.monotonic() - start)
    targets(played)
    print(f"\n(seeds {args.seed} to {args.seed + args.games - 1}, variant {args.variant})")


if __name__ == "__main__":
    main()
