"""Bots that sit in rooms: the seat names the server gives them, and their policies.

The policies themselves are pure and live in :mod:`shared.bots`; they run in worker processes
(:mod:`server.runtime.thinking`). This module only adapts them to the room: a level's name, and
names
for its bots.
"""

from __future__ import annotations

from collections.abc import Iterator

from shared import bots

LEVELS = bots.LEVELS
level_name = bots.level_name

_NAMES = ("Pau", "Núria", "Jordi", "Montse", "Arnau", "Laia", "Oriol", "Mireia")


def bot_names(level: str) -> Iterator[str]:
    """Names for bots of a level, e.g. ``Pau·hard``; endless so a free one always exists.

    The view already flags bots (``bot`` true), so the name carries only the level.
    """
    n = 0
    while True:
        for name in _NAMES:
            yield f"{name}·{level}" if n == 0 else f"{name} {n + 1}·{level}"
        n += 1
