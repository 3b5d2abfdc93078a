"""Bots against bots: win rates, scores per category, festivals and performances, by level.

    python -m bench.bots                         # the two standard matches (below)
    python -m bench.bots --games N --seats S [--lineup greedy,random,...] [--variant V]

Every game is seeded (game ``i`` uses seed ``--seed + i``) and played headless through
``shared.engine`` with the policies of ``shared.bots``, each bot with its own seeded
``random.Random``. The lineup lists the levels by seat; it is rotated one seat per game, so
that every level sits in every seat (the first player is drawn by the game itself). Without
``--games``/``--seats`` two matches run: 200 two-seat games of greedy against random, and 100
four-seat games of one greedy against three random.

Printed per level (per seat of that level, averaged over games): how often it won (a shared
victory counts for each winner) and how often it won alone; the average score in each §9
category and in total; how many festivals it entered and won (rank 1) per game; how many
tiles it performed per game. Per match: how many festivals had at least one participant, how
many tiles were performed out of those dealt, the greedy decision time per action (mean,
p50, p95, max; by wall clock, which counts whatever else the machine runs, and by the
worker's CPU time), against a baseline measured in the same games: the mean decision of the
other levels (a random bot's: one call to ``legal_actions`` and a draw), and the most actions
a bot of each level took in one turn. Games run in ``--jobs`` worker processes (default 2);
``--budget`` seconds bound a match: games not started by then are skipped (the report says
how many ran).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import time
from collections import Counter, defaultdict
from typing import Any

from shared.board import FESTIVALS_PER_ROUND, REGIONS, TILES_PER_ROW
from shared.bots import LEVELS, POLICIES
from shared.engine import apply, new_game
from shared.events import FestivalResolved, Performed

CATEGORIES = ("tower", "diversity", "prizes", "sizes", "performances", "total")


def play(lineup: tuple[str, ...], seed: int, variant: str) -> dict[str, Any]:
    """One headless game; what happened, by seat."""
    seats = len(lineup)
    state = new_game([f"{level}{i}" for i, level in enumerate(lineup)], variant, seed)
    rngs = [random.Random(seed * 16 + i) for i in range(seats)]
    decisions: list[tuple[float, float]] = []  # greedy decisions: wall, cpu seconds
    baseline: list[tuple[float, float]] = []  # every other decision
    entered, won, tiles = [0] * seats, [0] * seats, [0] * seats
    festivals_with_someone = 0
    longest = [0] * seats
    this_turn = 0
    while not state.over:
        seat = state.turn
        assert seat is not None
        wall, cpu = time.perf_counter(), time.process_time()
        action = POLICIES[lineup[seat]](state, seat, rngs[seat])
        spent = (time.perf_counter() - wall, time.process_time() - cpu)
        (decisions if lineup[seat] == "greedy" else baseline).append(spent)
        state, events = apply(state, seat, action)  # an illegal choice raises here
        this_turn += 1
        if action.KIND == "end_turn":
            longest[seat] = max(longest[seat], this_turn)
            this_turn = 0
        for event in events:
            if isinstance(event, FestivalResolved):
                festivals_with_someone += bool(event.results)
                for result in event.results:
                    entered[result.seat] += 1
                    won[result.seat] += result.score == event.results[0].score
            elif isinstance(event, Performed):
                tiles[event.seat] += 1
    assert state.scores is not None and state.winners is not None
    return {
        "lineup": lineup,
        "scores": [
            {
                "tower": s.tower, "diversity": s.diversity, "prizes": s.prizes,
                "sizes": s.sizes, "performances": s.performances, "total": s.total,
            }
            for s in state.scores
        ],
        "winners": state.winners,
        "entered": entered,
        "won": won,
        "tiles": tiles,
        "festivals": sum(FESTIVALS_PER_ROUND[seats].values()),
        "festivals_with_someone": festivals_with_someone,
        "decisions": decisions,
        "baseline": baseline,
        "longest": longest,
    }


def _play(job: tuple[tuple[str, ...], int, str]) -> dict[str, Any]:
    return play(*job)


def match(
    lineup: tuple[str, ...], games: int, seed: int, variant: str, jobs: int, budget: float
) -> list[dict[str, Any]]:
    """Play ``games`` games (rotating the lineup), in ``jobs`` processes, within ``budget``."""
    seats = len(lineup)
    tasks = [
        (lineup[-(i % seats):] + lineup[:-(i % seats)] if i % seats else lineup, seed + i, variant)
        for i in range(games)
    ]
    deadline = time.monotonic() + budget
    results: list[dict[str, Any]] = []
    if jobs <= 1:
        for task in tasks:
            if time.monotonic() > deadline:
                break
            results.append(_play(task))
        return results
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for result in pool.imap_unordered(_play, tasks):
            results.append(result)
            if time.monotonic() > deadline:
                pool.terminate()
                break
    return results


def report(lineup: tuple[str, ...], results: list[dict[str, Any]], elapsed: float) -> None:
    """Print the figures of one match."""
    seats = len(lineup)
    levels = [level for level in LEVELS if level in lineup]
    per_level: dict[str, dict[str, list[float]]] = {
        level: defaultdict(list) for level in levels
    }
    sole: Counter[str] = Counter()
    best_beats: Counter[tuple[str, str]] = Counter()
    for game in results:
        for seat, level in enumerate(game["lineup"]):
            row = per_level[level]
            for category in CATEGORIES:
                row[category].append(game["scores"][seat][category])
            row["won"].append(seat in game["winners"])
            row["sole"].append(game["winners"] == (seat,))
            row["entered"].append(game["entered"][seat])
            row["first"].append(game["won"][seat])
            row["tiles"].append(game["tiles"][seat])
            row["longest"].append(game["longest"][seat])
        if len(game["winners"]) == 1:
            sole[game["lineup"][game["winners"][0]]] += 1
        # the best of one level against the best of another (§9 tie-break: best tower)
        best = {
            level: max(
                (game["scores"][s]["total"], game["scores"][s]["tower"])
                for s, lv in enumerate(game["lineup"]) if lv == level
            )
            for level in levels
        }
        for a in levels:
            for b in levels:
                if a != b and best[a] > best[b]:
                    best_beats[a, b] += 1
    n = len(results)
    print(f"\n{seats} seats, lineup {','.join(lineup)} (rotated), {n} games,"
          f" {elapsed:.1f} s")
    head = "level".ljust(8) + "".join(c[:6].rjust(8) for c in CATEGORIES)
    print(head + "     won    sole  fest/g  1st/g  tiles/g")
    for level in levels:
        row = per_level[level]
        line = level.ljust(8) + "".join(
            f"{statistics.fmean(row[c]):8.1f}" for c in CATEGORIES
        )
        line += f"  {100 * statistics.fmean(row['won']):5.1f}%"
        line += f" {100 * statistics.fmean(row['sole']):5.1f}%"
        line += f" {statistics.fmean(row['entered']):6.2f} {statistics.fmean(row['first']):6.2f}"
        line += f" {statistics.fmean(row['tiles']):7.2f}"
        print(line)
    for (a, b), count in sorted(best_beats.items()):
        print(f"best {a} beats best {b}: {count}/{n} games ({100 * count / n:.1f}%)")
    if "greedy" in per_level and "random" in per_level:
        greedy = statistics.fmean(per_level["greedy"]["total"])
        rand = statistics.fmean(per_level["random"]["total"])
        ratio = f"{greedy / rand:.1f}x" if rand else "unbounded (random scored nothing)"
        print(f"greedy average total {greedy:.2f} / random average total {rand:.2f}: {ratio}")
    festivals = sum(g["festivals"] for g in results)
    with_someone = sum(g["festivals_with_someone"] for g in results)
    tiles = sum(sum(g["tiles"]) for g in results)
    dealt = n * len(REGIONS) * TILES_PER_ROW
    print(f"festivals with a participant: {with_someone}/{festivals}"
          f" ({100 * with_someone / max(festivals, 1):.1f}%)")
    print(f"tiles performed: {tiles}/{dealt} dealt ({100 * tiles / max(dealt, 1):.1f}%)")
    for i, clock in enumerate(("wall", "cpu")):
        times = sorted(t[i] for g in results for t in g["decisions"])
        base = [t[i] for g in results for t in g["baseline"]]
        if times:
            p50 = times[len(times) // 2] * 1e3
            p95 = times[round(0.95 * (len(times) - 1))] * 1e3
            mean = statistics.fmean(times) * 1e3
            print(f"greedy decision ({clock}): mean {mean:.2f} ms,"
                  f" p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {times[-1] * 1e3:.1f} ms"
                  f" over {len(times)} actions")
        if times and base:
            print(f"  baseline: a random bot's decision, mean {statistics.fmean(base) * 1e3:.3f} ms"
                  f" (greedy {mean / max(statistics.fmean(base) * 1e3, 1e-9):.0f}x)")
    for level in levels:
        print(f"most actions in one {level} turn: {max(per_level[level]['longest']):.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Bots against bots, by level.")
    parser.add_argument("--games", type=int, help="games per match")
    parser.add_argument("--seats", type=int, choices=(2, 3, 4), help="seats per game")
    parser.add_argument("--lineup", help="levels by seat, e.g. greedy,random,random")
    parser.add_argument("--variant", default="normal", choices=("normal", "advanced"))
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per match")
    args = parser.parse_args(argv)

    if args.lineup:
        lineup = tuple(args.lineup.split(","))
        unknown = set(lineup) - set(LEVELS)
        if unknown or not 2 <= len(lineup) <= 4:
            parser.error(f"a lineup is 2 to 4 of {', '.join(LEVELS)}")
        matches = [(lineup, args.games or 100)]
    elif args.seats or args.games:
        seats = args.seats or 2
        matches = [(("greedy",) + ("random",) * (seats - 1), args.games or 100)]
    else:
        matches = [(("greedy", "random"), 200), (("greedy", "random", "random", "random"), 100)]
    for lineup, games in matches:
        start = time.monotonic()
        results = match(lineup, games, args.seed, args.variant, args.jobs, args.budget)
        report(lineup, results, time.monotonic() - start)


if __name__ == "__main__":
    main()
