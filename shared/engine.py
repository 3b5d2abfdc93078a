"""The rules engine's public face: set up a game, apply an action, list the legal actions.

:func:`apply` is a reducer in the manner of boardgame.io: it checks, in order, that the game
is not over (:class:`~shared.errors.GameOver`), that it is ``seat``'s turn
(:class:`~shared.errors.NotYourTurn`), then the action's own rules (a
:class:`~shared.errors.RuleError` with a stable ``code``), and returns the new state with the
events that happened. It raises nothing else for any action object of a known type, whatever
its field values. The turn timer of a room is just ``apply(state, seat, EndTurn())``.

The rules themselves live in modules named for what they own: :mod:`shared.setup` (§3),
:mod:`shared.turn` (§4, §6, §7), :mod:`shared.rounds` (§8), :mod:`shared.festival` (§5),
:mod:`shared.scoring` (§9) and :mod:`shared.legal` (listing legal actions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    action_fields,
)
from shared.errors import GameOver, NotYourTurn, RuleError
from shared.events import ActionTaken, Event
from shared.legal import legal_actions
from shared.rounds import end_turn
from shared.setup import new_game
from shared.state import GameState

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
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise RuleError(f"{action!r} is not an action", code="unknown_action")
    new, events = handler(state, seat, action)
    return new, [ActionTaken(seat=seat, action=action_fields(action)), *events]
