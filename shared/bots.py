"""Bot policies: from a game state and a seat to the seat's next action (sans-I/O).

A policy is a pure function of ``(state, seat, rng)``; whatever is random comes from the
``random.Random`` passed in, never from global randomness, so a seeded game with bots is
reproduced exactly. The levels, weakest first:

``random``
    The candidates are every action :func:`shared.engine.legal_actions` lists plus, when the
    team is not empty, one more candidate: *build*. One candidate is drawn uniformly. When
    *build* is drawn, the bot builds a random legal tower (:func:`random_tower`) — without
    that, a random player could never perform a tile or enter a festival (§5, §6). Kept for
    tests: it scores next to nothing.

``easy``
    The ``normal`` bot short-sighted (:data:`shared.greedy.EASY`): no special moves, no
    planning of skills or of where the turn ends, and a random error in how it rates each
    plan. It goes to festivals and performs tiles, badly: a first game's opponent.

``normal`` (also called ``greedy``)
    Plans the rest of its turn each time it is asked and takes the plan's first step (see
    :mod:`shared.greedy`). It uses no randomness: its choice is a function of the state.

``hard``
    Plays the future out: the rest of its turn chosen by a determinised Monte Carlo search
    whose samples play every seat with ``normal`` to the end of the next round (see
    :mod:`shared.search`). It decides once per turn and returns the whole line
    (:class:`Decision`'s ``rest``), which :func:`follow` then plays without searching again.

:func:`decide` never returns an illegal action: should a policy ever propose one, or fail,
it ends the turn instead (a bot must not stall a game), and says why to this module's logger
(``shared.bots``: the server's logging sets where that goes, nothing here does). Nor does it
ever return an ``undo`` (a bot has no misclicks to take back, and one that undid could loop
forever): the policies choose among :func:`~shared.engine.legal_actions`, which never lists
it, and :func:`decide` ends the turn instead of passing one on.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable

import attrs

from shared import engine, greedy, search
from shared.actions import Action, Build, EndTurn, Undo
from shared.state import GameState
from shared.tower import check_tower

#: The bot levels, weakest first.
LEVELS = ("random", "easy", "normal", "hard")
#: Other names a level is known by: ``greedy`` was ``normal``'s name before there were three.
ALIASES = {"greedy": "normal"}

log = logging.getLogger(__name__)

Policy = Callable[[GameState, int, random.Random], Action]


def level_name(level: str) -> str:
    """The level ``level`` names (an alias resolved); :class:`ValueError` for no level."""
    name = ALIASES.get(level, level)
    if name not in LEVELS:
        known = ", ".join([*LEVELS, *ALIASES])
        raise ValueError(f"unknown bot level {level!r}: one of {known}")
    return name


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
    """The ``normal`` level: the first step of the best plan for the rest of the turn."""
    return greedy.next_action(state, seat)


def easy_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """The ``easy`` level: the first step of the best plan as a short-sighted eye sees it."""
    return greedy.next_action(state, seat, style=greedy.EASY, rng=rng)


def hard_action(state: GameState, seat: int, rng: random.Random) -> Action:
    """The ``hard`` level's next action, searched afresh (:func:`decide` keeps its line)."""
    return search.plan(state, seat, rng)[0]


POLICIES: dict[str, Policy] = {"random": random_action, "easy": easy_action,
                               "normal": greedy_action, "hard": hard_action}


@attrs.frozen
class Decision:
    """A bot's choice: ``action`` now, and (``hard``) the ``rest`` of the turn it planned,
    to be played while the game is ``expect`` — the state ``action`` leads to."""

    action: Action
    rest: tuple[Action, ...] = ()
    expect: GameState | None = None


def decide(state: GameState, seat: int, level: str, rng: random.Random, *,
           think: float | None = None) -> Decision:
    """What a bot of ``level`` does next at ``seat`` (``EndTurn`` when it may not act), and
    what it plans after; ``think`` seconds bound a ``hard`` search (None: its samples do).

    Raises :class:`ValueError` for an unknown level.
    """
    name = level_name(level)
    if state.over or state.turn != seat:
        return Decision(EndTurn())
    try:
        if name == "hard":
            deadline = None if think is None else time.monotonic() + think
            line = search.plan(state, seat, rng, deadline=deadline)
        else:
            line = (POLICIES[name](state, seat, rng),)
        action, rest = line[0], line[1:]
        if isinstance(action, Undo):
            return Decision(EndTurn())
        after, _ = engine.apply(state, seat, action)
    except Exception as exc:  # a bot's bug must not stall the room; the tests call policies bare
        log.warning("the %s bot in seat %d failed to choose (%s: %s); it ends its turn instead",
                    name, seat, type(exc).__name__, exc, exc_info=exc)
        return Decision(EndTurn())
    return Decision(action, rest, after if rest else None)


def follow(plan: Decision | None, state: GameState, seat: int) -> Decision | None:
    """The next step of ``plan`` if the game is where the plan expected it and the step is
    still legal (None: decide afresh)."""
    if plan is None or not plan.rest or plan.expect is None or state.turn != seat \
            or plan.expect != state:
        return None
    action, rest = plan.rest[0], plan.rest[1:]
    try:
        after, _ = engine.apply(state, seat, action)
    except Exception:
        return None
    return Decision(action, rest, after if rest else None)


def choose(state: GameState, seat: int, level: str, rng: random.Random) -> Action:
    """The action a bot of ``level`` takes next at ``seat`` (``EndTurn`` when it may not act).

    Raises :class:`ValueError` for an unknown level.
    """
    return decide(state, seat, level, rng).action
