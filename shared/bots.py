"""Bot policies: from a game state and a seat to the seat's next action (sans-I/O).

A policy is a pure function of ``(state, seat, rng)``; whatever is random comes from the
``random.Random`` passed in, never from global randomness, so a seeded game with bots is
reproduced exactly. Two levels:

``random``
    The candidates are every action :func:`shared.engine.legal_actions` lists plus, when the
    team is not empty, one more candidate: *build*. One candidate is drawn uniformly. When
    *build* is drawn, the bot builds a random legal tower (:func:`random_tower`) — without
    that, a random player could never perform a tile or enter a festival (§5, §6).

``greedy``
    Plans the rest of its turn each time it is asked and takes the plan's first step (see
    :mod:`shared.greedy`). It uses no randomness: its choice is a function of the state.

:func:`choose` never returns an illegal action: should a policy ever propose one, or fail,
it ends the turn instead (a bot must not stall a game). Nor does it ever return an ``undo``
(a bot has no misclicks to take back, and one that undid could loop forever): the policies
choose among :func:`~shared.engine.legal_actions`, which never lists it, and :func:`choose`
ends the turn instead of passing one on.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from shared import engine, greedy
from shared.actions import Action, Build, EndTurn, Undo
from shared.state import GameState
from shared.tower import check_tower

#: The bot levels, weakest first.
LEVELS = ("random", "greedy")

Policy = Callable[[GameState, int, random.Random], Action]

#: How many random towers :func:`random_tower` tries before settling for one casteller.
_TOWER_TRIES = 8


def random_tower(
    team: tuple[int, ...], ranks: object, rng: random.Random
) -> tuple[tuple[int, ...], ...]:
    """A random legal tower (§7) from ``team`` for a player with skill ``ranks``.

    Draws up to 8 candidates: 1 to 6 levels, each of one size strictly smaller than the level
    below (sometimes the same size, for Strength) and no wider than it (as wide only
    sometimes, for Balance), 1 to 3 + 2 castellers wide at the bottom; the first candidate
    that :func:`~shared.tower.check_tower` accepts is built. If none is legal, a tower of one
    casteller, a random member of the team (always legal).
    """
    for _ in range(_TOWER_TRIES):
        pool = Counter(team)
        levels: list[tuple[int, ...]] = []
        width = rng.randint(1, 5)
        ceiling = 10
        for _ in range(rng.randint(1, 6)):
            sizes = [s for s in pool if s <= ceiling and pool[s] >= width]
            if not sizes:
                break
            size = rng.choice(sizes)
            pool[size] -= width
            levels.append((size,) * width)
            ceiling = size if rng.random() < 0.2 else size - 1
            if width > 1 and rng.random() < 0.8:
                width -= 1
        if levels and check_tower(levels, ranks).legal:
            return tuple(levels)
    return ((rng.choice(team),),)


def random_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """The ``random`` level: uniform over the legal actions and one *build* candidate."""
    actions: list[Action | None] = list(engine.legal_actions(state, seat))
    if not actions:
        return EndTurn()
    player = state.players[seat]
    if player.team:
        actions.append(None)  # the build candidate
    action = rng.choice(actions)
    if action is None:
        return Build(random_tower(player.team, player.skills, rng))
    return action


def greedy_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """The ``greedy`` level: the first step of the best plan for the rest of the turn."""
    return greedy.next_action(state, seat)


POLICIES: dict[str, Policy] = {"random": random_action, "greedy": greedy_action}


def choose(state: GameState, seat: int, level: str, rng: random.Random) -> Action:
    """The action a bot of ``level`` takes next at ``seat`` (``EndTurn`` when it may not act).

    Raises :class:`ValueError` for an unknown level.
    """
    try:
        policy = POLICIES[level]
    except KeyError:
        raise ValueError(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}") from None
    if state.over or state.turn != seat:
        return EndTurn()
    try:
        action = policy(state, seat, rng)
        if isinstance(action, Undo):
            return EndTurn()
        engine.apply(state, seat, action)
    except Exception:  # a bot's bug must not stall the room; the tests call policies bare
        return EndTurn()
    return action
