"""Bots that sit in rooms: each level is a policy from a game state to one legal action.

Policies only ever choose among ``shared.engine.legal_actions`` (plus towers that
``shared.tower.check_tower`` accepts), so a bot can never break a rule the engine enforces.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from shared import engine
from shared.actions import Action, EndTurn
from shared.state import GameState

LEVELS = ("random", "greedy")

_NAMES = ("Pau", "Núria", "Jordi", "Montse", "Arnau", "Laia", "Oriol", "Mireia")


def bot_names(level: str) -> Iterator[str]:
    """Names for bots of a level, e.g. ``Pau (bot)``; endless so a free one always exists."""
    n = 0
    while True:
        for name in _NAMES:
            yield f"{name} ({level} bot)" if n == 0 else f"{name} {n + 1} ({level} bot)"
        n += 1


def choose(state: GameState, seat: int, level: str, rng: random.Random) -> Action:
    """The action a bot of ``level`` takes next at ``seat``."""
    actions = engine.legal_actions(state, seat)
    if not actions:
        return EndTurn()
    return rng.choice(actions)
