"""Helpers for the rules tests: seeded games, and precise changes to a state via attrs.evolve."""

from __future__ import annotations

from typing import Any

import attrs

from shared.board import REGION_INDEX, wheel_segments, wheel_tile_index
from shared.engine import apply, new_game
from shared.errors import RuleError
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
