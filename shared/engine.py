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

Resigning (§10, "Resigning"): ``apply(state, seat, Resign())`` from any seat that has not
resigned yet, on its turn or not, marks the seat as resigned with a
:class:`~shared.events.Resigned` event. It takes nothing back and cannot be taken back: the
turn under way goes on — another seat's with its steps to undo still there (each state they
go back to resigned too), or the resigner's own, which whoever plays the seat now plays out
from where it is (what the resigner did in it is no longer taken back). The game ends at
once — final scoring, the winners among those who did not resign — when fewer than two
players have not resigned, or when the resignation says so (``ends``: the room saw that no
one is left to play but bots).

The rules themselves live in modules named for what they own: :mod:`shared.setup` (§3),
:mod:`shared.turn` (§4, §6, §7), :mod:`shared.rounds` (§8), :mod:`shared.festival` (§5),
:mod:`shared.scoring` (§9) and :mod:`shared.legal` (listing legal actions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared import turn
from shared.actions import (
    Build,
    Dismantle,
    EndTurn,
    Move,
    Recorded,
    Recruit,
    Resign,
    Special,
    Train,
    Undo,
    action_fields,
)
from shared.errors import GameOver, NotYourTurn, RuleError
from shared.events import ActionTaken, Event, GameEnded, Resigned, Undone
from shared.evolve import evolve
from shared.legal import legal_actions
from shared.rounds import end_turn
from shared.scoring import final_scores
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


def apply(state: GameState, seat: int, action: Recorded) -> tuple[GameState, list[Event]]:
    """Apply ``seat``'s ``action`` (or resignation) to ``state``: the new state and what
    happened."""
    if state.over:
        raise GameOver("the game is over")
    if isinstance(action, Resign):
        return _resign(state, seat, action)
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
    new = evolve(new, undo=step)
    return new, [ActionTaken(seat=seat, action=action_fields(action)), *events]


def _undo(state: GameState, seat: int) -> tuple[GameState, list[Event]]:
    """The state before ``seat``'s last action of this turn, and the ``undone`` event."""
    step = state.undo
    if step is None:
        raise RuleError("you have nothing to take back this turn", code="nothing_to_undo")
    return step.before, [Undone(seat=seat, action=action_fields(step.action))]


def _resign(state: GameState, seat: int, action: Resign) -> tuple[GameState, list[Event]]:
    """§10: ``seat`` resigns; the game ends when fewer than two players are left in it, or
    when ``action.ends`` says so."""
    if not 0 <= seat < state.seats:
        raise RuleError(f"there is no seat {seat} in this game", code="unknown_seat")
    if seat in state.resigned:
        raise RuleError("you have resigned this game already", code="already_resigned")
    resigned = (*state.resigned, seat)
    left = [p.seat for p in state.players if p.seat not in resigned]
    # The turn under way goes on: another seat's keeps its steps (each resigned as well);
    # the resigner's own is played out from here by whoever plays the seat now.
    steps = None if seat == state.turn else _resigned_steps(state.undo, resigned)
    new = evolve(state, resigned=resigned, undo=steps)
    events: list[Event] = [Resigned(seat=seat)]
    if action.ends or len(left) < 2:
        scores, winners = final_scores(new.players, resigned)
        new = evolve(new, turn=None, done=(), scores=scores, winners=winners, undo=None)
        events.append(GameEnded(scores=scores, winners=winners))
    return new, events


def _resigned_steps(step: TurnStep | None, resigned: tuple[int, ...]) -> TurnStep | None:
    """The turn's undo steps, each state before them with ``resigned`` as it is now."""
    if step is None:
        return None
    before = evolve(step.before, resigned=resigned,
                          undo=_resigned_steps(step.before.undo, resigned))
    return TurnStep(before, step.action)
