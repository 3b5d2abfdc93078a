"""Bots that sit in rooms: the seat names the server gives them, and their policies.

The policies themselves are pure and live in :mod:`shared.bots`; this module only adapts them
to the room: a level's name, names for its bots, and one call per action.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from shared import bots
from shared.actions import Action
from shared.state import GameState

LEVELS = bots.LEVELS

_NAMES = ("Pau", "Núria", "Jordi", "Montse", "Arnau", "Laia", "Oriol", "Mireia")


def bot_names(level: str) -> Iterator[str]:
    """Names for bots of a level, e.g. ``Pau·greedy``; endless so a free one always exists.

    The view already flags bots (``bot`` true), so the name carries only the level.
    """
    n = 0
    while True:
        for name in _NAMES:
            yield f"{name}·{level}" if n == 0 else f"{name} {n + 1}·{level}"
        n += 1


def choose(state: GameState, seat: int, level: str, rng: random.Random) -> Action:
    """The action a bot of ``level`` takes next at ``seat`` (always a legal one)."""
    return bots.choose(state, seat, level, rng)
