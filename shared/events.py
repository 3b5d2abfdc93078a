"""Events: what happened, as the engine reports it alongside each new state.

Each event class has a ``KIND`` used on the wire (``docs/protocol.md``, "Pushes"). The
engine emits the game events; the server adds room events (``joined``, ``connected``,
``timeout``, ...) of its own.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs


@attrs.frozen
class ActionTaken:
    KIND: ClassVar[str] = "action"
    seat: int
    action: dict[str, Any]  # the action's wire fields (shared.actions.action_fields)


@attrs.frozen
class TurnStarted:
    KIND: ClassVar[str] = "turn"
    seat: int


@attrs.frozen
class RoundStarted:
    KIND: ClassVar[str] = "round"
    round: int
    first: int


@attrs.frozen
class Refilled:
    """Regions refilled from the bag after rounds 2/4/6/8 (§8.2): sizes drawn per region."""

    KIND: ClassVar[str] = "refill"
    drawn: dict[str, list[int]]


@attrs.frozen
class Trained:
    """A skill tile was used (§4): the skill raised, or ``special``."""

    KIND: ClassVar[str] = "trained"
    seat: int
    tile: str


@attrs.frozen
class Performed:
    """A local performance was completed (§6)."""

    KIND: ClassVar[str] = "performed"
    seat: int
    tile: str
    region: str
    tokens: int  # special action tokens taken from the row


@attrs.frozen
class FestivalResult:
    seat: int
    score: int
    prize: str | None
    size_token: bool


@attrs.frozen
class FestivalResolved:
    KIND: ClassVar[str] = "festival"
    round: int
    region: str
    town: str
    size: int
    results: tuple[FestivalResult, ...]


@attrs.frozen
class GameEnded:
    KIND: ClassVar[str] = "game_over"
    scores: tuple[Any, ...]  # shared.state.Score
    winners: tuple[int, ...]


Event = (
    ActionTaken | TurnStarted | RoundStarted | Refilled | Trained | Performed
    | FestivalResolved | GameEnded
)
