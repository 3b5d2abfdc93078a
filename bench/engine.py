"""How fast the rules engine plays: random legal 4-seat games per second, and actions per second.

    python -m bench engine [--seconds S] [--seed N]

Each step of a game is what a bot does: ``legal_actions`` for the seat to act, a seeded random
pick, ``apply``. Whole games are played, each from its own seed, for ``--seconds``.

Baselines, timed on the very states those games went through:

* ``attrs.evolve(state, done=state.done)`` — the cheapest possible new state: one copy of the
  top-level ``GameState``. What one action costs is shown as a multiple of it;
* ``legal_actions`` alone and ``apply`` alone — how a step splits between listing and doing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import attrs

from bench.common import NAMES, best_of, machine, random_action, table
from shared import engine
from shared.actions import Action
from shared.state import GameState

#: States of the first games kept for the baselines.
KEEP = 2000


def play(seconds: float, seed: int) -> tuple[int, int, float, list[tuple[GameState, Action]]]:
    """Play random legal games for about ``seconds``: (games, actions, elapsed, some steps)."""
    rng = random.Random(seed)
    steps: list[tuple[GameState, Action]] = []
    games = actions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = engine.new_game(list(NAMES), "normal", rng.randrange(2**32))
        while not state.over:
            action = random_action(state, rng)
            if len(steps) < KEEP:
                steps.append((state, action))
            state, _ = engine.apply(state, state.turn, action)  # type: ignore[arg-type]
            actions += 1
        games += 1
        if time.perf_counter() >= deadline:
            return games, actions, time.perf_counter() - start, steps


def each(steps: list[tuple[GameState, Action]], fn: Callable[[GameState, Action], Any],
         ) -> float:
    """Seconds per step of ``fn`` over ``steps`` (the best of two passes)."""
    def over_steps() -> None:
        for state, action in steps:
            fn(state, action)  # the result is dropped at once, as in play

    return best_of(over_steps, 1, repeat=2) / len(steps)


def run(seconds: float, seed: int, rounds: int = 5) -> str:
    # Play and baselines alternate in rounds, so that drift in the machine's load hits both
    # alike; each figure is the median over the rounds.
    totals = {"games": 0, "actions": 0, "elapsed": 0.0}
    per_round: dict[str, list[float]] = {"action": [], "evolve": [], "legal": [], "apply": []}
    steps: list[tuple[GameState, Action]] = []
    for r in range(rounds):
        games, actions, elapsed, kept = play(seconds / rounds, seed + r)
        steps = steps or kept
        totals["games"] += games
        totals["actions"] += actions
        totals["elapsed"] += elapsed
        per_round["action"].append(elapsed / actions)

        per_round["evolve"].append(each(steps, lambda s, a: attrs.evolve(s, done=s.done)))
        per_round["legal"].append(each(steps, lambda s, a: engine.legal_actions(s, s.turn)))
        per_round["apply"].append(each(steps, lambda s, a: engine.apply(s, s.turn, a)))
    med = {name: statistics.median(values) for name, values in per_round.items()}
    ratios = {
        name: statistics.median(a / b for a, b in zip(per_round["action"], values, strict=True))
        for name, values in per_round.items()
    }
    games, actions, elapsed = totals["games"], totals["actions"], totals["elapsed"]
    lines = [
        f"engine: random legal {len(NAMES)}-seat games, seed {seed}, {elapsed:.1f} s — {machine()}",
        f"  {games / elapsed:.1f} games/s, {actions / elapsed:,.0f} actions/s, "
        f"{actions / games:.0f} actions/game; one action (legal_actions + pick + apply) "
        f"{med['action'] * 1e6:.1f} µs",
        "",
        table([
            ["baseline (same states, same rounds)", "µs/call", "one action ÷ it"],
            *[[label, f"{med[name] * 1e6:.2f}", f"{ratios[name]:.1f}×"] for name, label in (
                ("evolve", "attrs.evolve(state, done=…)"),
                ("legal", "legal_actions(state, seat)"),
                ("apply", "apply(state, seat, action)"),
            )],
        ]),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench engine",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to play")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(run(max(0.0, min(args.seconds, 600.0)), args.seed))


if __name__ == "__main__":
    main()
