"""Games for the tests: seeded games, precise changes to a state via attrs.evolve, and whole
games played out action by action (random legal actions unless told otherwise)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs

from shared.actions import Action, Build
from shared.board import REGION_INDEX, wheel_segments, wheel_tile_index
from shared.engine import apply, legal_actions, new_game
from shared.errors import RuleError
from shared.solver import TallestGoal, best_tower
from shared.state import GameState

NAMES = ("Anna", "Biel", "Carme", "Dani")


def game(seats: int = 3, seed: int = 1, variant: str = "normal") -> GameState:
    return new_game(NAMES[:seats], variant=variant, seed=seed)


def with_player(state: GameState, seat: int, **changes: Any) -> GameState:
    players = list(state.players)
    players[seat] = attrs.evolve(players[seat], **changes)
    return attrs.evolve(state, players=tuple(players))


def on_turn(state: GameState, seat: int, **changes: Any) -> GameState:
    """The state with ``seat`` to act at the start of a fresh turn."""
    return attrs.evolve(state, turn=seat, done=(), **changes)


def with_region(state: GameState, region: str, castellers: tuple[int, ...]) -> GameState:
    regions = list(state.regions)
    regions[REGION_INDEX[region]] = tuple(sorted(castellers, reverse=True))
    return attrs.evolve(state, regions=tuple(regions))


def with_row(state: GameState, region: str, **changes: Any) -> GameState:
    rows = list(state.rows)
    rows[REGION_INDEX[region]] = attrs.evolve(rows[REGION_INDEX[region]], **changes)
    return attrs.evolve(state, rows=tuple(rows))


def showing(state: GameState, segment: str, tile: str) -> GameState:
    """The state with its wheel ring rearranged so that ``segment`` shows ``tile`` now."""
    index = wheel_segments(state.variant).index(segment)
    position = wheel_tile_index(index, state.round)
    ring = list(state.wheel)
    other = ring.index(tile)
    ring[position], ring[other] = ring[other], ring[position]
    return attrs.evolve(state, wheel=tuple(ring))


def refused(state: GameState, seat: int, action: object) -> RuleError:
    """Apply an action that must be refused; return the error (the state is untouched)."""
    try:
        apply(state, seat, action)  # type: ignore[arg-type]
    except RuleError as error:
        return error
    raise AssertionError(f"{action!r} was accepted")


def play(state: GameState, seat: int, *actions: object) -> tuple[GameState, list]:
    """Apply several actions of one seat; the final state and every event."""
    events: list = []
    for action in actions:
        state, new = apply(state, seat, action)  # type: ignore[arg-type]
        events += new
    return state, events


# Whole games ----------------------------------------------------------------------------------

#: Picks the action of ``seat`` in ``state`` (the signature of shared.bots' policies).
Chooser = Callable[[GameState, int, random.Random], Action]


def any_legal(state: GameState, seat: int, rng: random.Random) -> Action:
    """One of the legal actions, at random."""
    return rng.choice(legal_actions(state, seat))


def sometimes_tallest(chance: float) -> Chooser:
    """A chooser that, with probability ``chance``, builds the tallest tower the seat's team
    can (unless that tower already stands), and otherwise picks :func:`any_legal`: games
    that reach festivals, towers and performances, not only moves and trainings."""

    def choose(state: GameState, seat: int, rng: random.Random) -> Action:
        if rng.random() < chance:
            player = state.players[seat]
            tall = best_tower(player.team, player.skills, TallestGoal())
            if tall is not None and tall.levels != player.tower:
                return Build(tall.levels)
        return any_legal(state, seat, rng)

    return choose


@attrs.frozen
class Step:
    """One action of a game: the state it was chosen in, by whom, and what it led to."""

    before: GameState
    seat: int
    action: Action
    state: GameState
    events: list[Any]


def play_out(state: GameState, rng: random.Random, choose: Chooser = any_legal, *,
             limit: int = 5000) -> Iterator[Step]:
    """Play ``state`` to the end of its game, the seat on turn choosing each action with
    ``choose``; every action goes through the engine (which raises on an illegal one).

    Yields each step as it is played (stop iterating to stop early); a game not over after
    ``limit`` actions fails.
    """
    for _ in range(limit):
        if state.over:
            return
        seat = state.turn
        assert seat is not None
        action = choose(state, seat, rng)
        after, events = apply(state, seat, action)
        yield Step(state, seat, action, after, events)
        state = after
    raise AssertionError(f"the game did not finish in {limit} actions")


def random_game(seats: int = 3, *, variant: str = "normal", seed: int = 1,
                rng: random.Random | None = None, choose: Chooser = any_legal,
                limit: int = 5000) -> Iterator[Step]:
    """:func:`play_out` of a new seeded game; the choices are drawn from ``rng`` (by default
    one seeded with ``seed`` too, so that the whole game is reproducible)."""
    start = game(seats, seed=seed, variant=variant)
    return play_out(start, rng or random.Random(seed), choose, limit=limit)


def states(start: GameState, steps: Iterable[Step]) -> Iterator[GameState]:
    """``start`` and every state the steps led to."""
    yield start
    for step in steps:
        yield step.state


def final(steps: Iterable[Step]) -> GameState:
    """Play the steps through; the state they end in."""
    last = deque(steps, maxlen=1)
    assert last, "no action was played"
    return last[0].state
