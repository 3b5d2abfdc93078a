"""A game's replay: its states rebuilt from its seats, its seed and its actions (its
resignations among them, where they happened: docs/rules.md §10).

A game is its seed plus its actions: setting the game up from the seed (:func:`shared.engine.
new_game`) and applying the actions in order gives back every state it went through. This is
the one place that does it, for whoever needs a state it did not play itself: the server's
room rebuilding a stored game, the list of an account's games (where an old game stands), and
``castell replay`` stepping through a record file (:mod:`shared.record`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from shared import engine
from shared.actions import Recorded
from shared.events import Event
from shared.state import GameState

if TYPE_CHECKING:
    from shared.record import GameRecordFile


def steps(seats: Sequence[str], variant: str, seed: int,
          actions: Iterable[tuple[int, Recorded]]) -> Iterator[tuple[GameState, list[Event]]]:
    """Every state of the game, one at a time: the setup (with no events), then the state
    after each action (seat, action) with the events it caused. Raises what the rules
    engine raises for an action they refuse."""
    state = engine.new_game(list(seats), variant, seed)
    yield state, []
    for seat, action in actions:
        state, events = engine.apply(state, seat, action)
        yield state, events


def final_state(seats: Sequence[str], variant: str, seed: int,
                actions: Iterable[tuple[int, Recorded]]) -> GameState:
    """The state the game stands at after its actions (the setup when there are none)."""
    last: GameState | None = None
    for state, _events in steps(seats, variant, seed, actions):
        last = state
    assert last is not None  # the setup is always yielded
    return last


def record_steps(record: GameRecordFile) -> list[tuple[GameState, list[Event]]]:
    """Every state of a recorded game (:func:`steps` of the record's seats, seed, actions)."""
    return list(steps(record.seats, record.variant, record.seed,
                      ((a.seat, a.action) for a in record.actions)))


def record_state(record: GameRecordFile) -> GameState:
    """The state a recorded game stands at (:func:`final_state` of the record)."""
    return final_state(record.seats, record.variant, record.seed,
                       ((a.seat, a.action) for a in record.actions))
