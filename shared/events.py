"""Events: what happened, as the engine reports it alongside each new state.

Each event class has a ``KIND`` used on the wire (``docs/protocol.md``, "Pushes"). The
engine emits the game events (:data:`Event`); the server emits the room events
(:data:`RoomEvent`: ``joined``, ``left``, ``connected``, ``disconnected``, ``started``,
``timeout``), defined here too so that both sides share one list of kinds.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from shared.wire import OMIT_NONE


@attrs.frozen
class ActionTaken:
    KIND: ClassVar[str] = "action"
    seat: int
    action: dict[str, Any]  # the action's wire fields (shared.actions.action_fields)


@attrs.frozen
class Undone:
    """``seat`` took back its last action of the turn (``action``: its wire fields, as in
    :class:`ActionTaken`); the state is again the one before that action."""

    KIND: ClassVar[str] = "undone"
    seat: int
    action: dict[str, Any]


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
    """A festival was held (§5). ``results`` lists only the participants, best rank first,
    tied players clockwise from the first player (the order prizes were handed out in)."""

    KIND: ClassVar[str] = "festival"
    round: int
    region: str
    town: str
    size: int
    results: tuple[FestivalResult, ...]


@attrs.frozen
class Resigned:
    """``seat`` resigned (docs/rules.md §10, "Resigning"): it can win no more and ranks below
    every player who did not; its turns are played for it from now on."""

    KIND: ClassVar[str] = "resigned"
    seat: int


@attrs.frozen
class GameEnded:
    KIND: ClassVar[str] = "game_over"
    scores: tuple[Any, ...]  # shared.state.Score
    winners: tuple[int, ...]


Event = (
    ActionTaken | Undone | TurnStarted | RoundStarted | Refilled | Trained | Performed
    | FestivalResolved | GameEnded | Resigned
)


# Room events: emitted by the server, not the engine ------------------------------------------


@attrs.frozen
class PlayerJoined:
    """Someone (a person or a bot) took seat ``seat``. Spectators come and go without an
    event: the view does not list them."""

    KIND: ClassVar[str] = "joined"
    seat: int
    name: str


@attrs.frozen
class PlayerLeft:
    """A seated player left the room (before the start, a dropped connection too): before
    the start the seat is free again; after it the seat stays theirs (§10)."""

    KIND: ClassVar[str] = "left"
    seat: int
    name: str


@attrs.frozen
class PlayerConnected:
    """A seated player's connection came back (the seat was taken back with its token)."""

    KIND: ClassVar[str] = "connected"
    seat: int
    name: str


@attrs.frozen
class PlayerDisconnected:
    """A seated player's connection dropped; the seat stays theirs (§10)."""

    KIND: ClassVar[str] = "disconnected"
    seat: int
    name: str


@attrs.frozen
class GameStarted:
    """The creator started the game; the view now holds the board."""

    KIND: ClassVar[str] = "started"


@attrs.frozen
class TurnTimedOut:
    """The server ended ``seat``'s turn for it: its turn timer ran out, or (``reason``) the
    turn was not its player's to play: ``removed``, the host removed (kicked) the player;
    ``resigned``, the player resigned and no bot plays the seat (§10). ``reason`` is left
    off the wire when None (the timer), as the history, which does not store why, says it."""

    KIND: ClassVar[str] = "timeout"
    seat: int
    reason: str | None = attrs.field(default=None, metadata={OMIT_NONE: True})


RoomEvent = (
    PlayerJoined | PlayerLeft | PlayerConnected | PlayerDisconnected | GameStarted
    | TurnTimedOut
)


@attrs.frozen
class ChatSaid:
    """A chat line, as a room's history keeps it (``history``; live, chat is a ``chat``
    push): ``seat`` None for a spectator."""

    KIND: ClassVar[str] = "chat"
    seat: int | None
    name: str
    text: str
