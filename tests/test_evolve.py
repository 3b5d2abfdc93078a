"""shared/evolve.py: the engine's evolve makes exactly what attrs.evolve makes, converters and
all, and refuses what it refuses."""

from __future__ import annotations

import random

import attrs
import pytest

from shared.engine import apply, legal_actions
from shared.evolve import evolve
from shared.setup import new_game
from shared.state import GameState, Player, Skills


def states(seed: int, seats: int = 3) -> list[GameState]:
    """The states of a seeded random game, start to end."""
    rng = random.Random(seed)
    state = new_game([f"P{i}" for i in range(seats)], seed=seed)
    out = [state]
    while not state.over:
        assert state.turn is not None
        state, _ = apply(state, state.turn, rng.choice(legal_actions(state, state.turn)))
        out.append(state)
    return out


@pytest.mark.parametrize("seed", [3, 4])
def test_every_field_of_every_state_changed_as_attrs_changes_it(seed):
    for state in states(seed)[::7]:
        for field in attrs.fields(GameState):
            value = getattr(state, field.name)
            ours, theirs = evolve(state, **{field.name: value}), attrs.evolve(state, **{
                field.name: value})
            assert ours == theirs and ours.undo is theirs.undo
        for player in state.players:
            changed = {"team": (1, 9, 5), "tokens": player.tokens + 1, "region": "bcn"}
            ours_p, theirs_p = evolve(player, **changed), attrs.evolve(player, **changed)
            assert ours_p == theirs_p and ours_p.team == (9, 5, 1)  # the converter ran


def test_nothing_changed_is_an_equal_copy_and_an_unknown_name_is_refused():
    skills = Skills()
    assert evolve(skills) == skills and evolve(skills, width=2).width == 2
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        evolve(skills, colour=1)
    with pytest.raises(TypeError):
        attrs.evolve(skills, colour=1)
    player = Player(0, "Anna")
    with pytest.raises(TypeError, match="'wings'"):
        evolve(player, wings=2)
