"""The rules engine's public face: set up a game, apply an action, list the legal actions.

:func:`apply` is a reducer in the manner of boardgame.io: it checks, in order, that the game
is not over (:class:`~shared.errors.GameOver`), that it is ``seat``'s turn
(:class:`~shared.errors.NotYourTurn`), then the action's own rules (a
:class:`~shared.errors.RuleError` with a stable ``code``), and returns the new state with the
events that happened. It raises nothing else for any action object of a known type, whatever
its field values. The turn timer of a room is just ``apply(state, seat, EndTurn())``.

Undo: every state keeps the turn's steps (:attr:`~shared.state.GameState.undo`), so
``apply(state, seat, Undo())`` returns, exactly, the state before the seat's last action of
the turn, with an :class:`~shared.events.Undone` event; repeated, it goes back to the turn's
start. Nothing within a turn is hidden (the bag is drawn only when a round ends), so any
action of the turn may be taken back; an ended turn may not (``end_turn`` clears the steps),
and a seat that has done nothing this turn is refused ``nothing_to_undo``.

The rules themselves live in modules named for what they own: :mod:`shared.setup` (§3),
:mod:`shared.turn` (§4, §6, §7), :mod:`shared.rounds` (§8), :mod:`shared.festival` (§5),
:mod:`shared.scoring` (§9) and :mod:`shared.legal` (listing legal actions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from shared import turn
from shared.actions import (
    Action,
    Build,
    Dismantle,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
    Undo,
    action_fields,
)
from shared.errors import GameOver, NotYourTurn, RuleError
from shared.events import ActionTaken, Event, Undone
from shared.legal import legal_actions
from shared.rounds import end_turn
from shared.setup import new_game
from shared.state import GameState, TurnStep

__all__ = ["apply", "legal_actions", "new_game"]

_HANDLERS: dict[type, Callable[[GameState, int, Any], turn.Result]] = {
    Move: turn.move,
    Recruit: turn.recruit,
    Train: turn.train,
    Special: turn.special,
    Build: turn.build,
    Dismantle: turn.dismantle,
    EndTurn: lambda state, seat, action: end_turn(state),
}


def apply(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """Apply ``seat``'s ``action`` to ``state``: the new state and what happened."""
    if state.over:
        raise GameOver("the game is over")
    if seat != state.turn:
        assert state.turn is not None
        raise NotYourTurn(f"it is {state.players[state.turn].name}'s turn, not yours")
    if isinstance(action, Undo):
        return _undo(state, seat)
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise RuleError(f"{action!r} is not an action", code="unknown_action")
    new, events = handler(state, seat, action)
    # an ended turn cannot be taken back: the next one starts with no steps
    step = None if isinstance(action, EndTurn) else TurnStep(state, action)
    new = attrs.evolve(new, undo=step)
    return new, [ActionTaken(seat=seat, action=action_fields(action)), *events]


def _undo(state: GameState, seat: int) -> tuple[GameState, list[Event]]:
    """The state before ``seat``'s last action of this turn, and the ``undone`` event."""
    step = state.undo
    if step is None:
        raise RuleError("you have nothing to take back this turn", code="nothing_to_undo")
    return step.before, [Undone(seat=seat, action=action_fields(step.action))]
