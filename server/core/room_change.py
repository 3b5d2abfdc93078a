"""A change a room proposed, as data: the version it takes, the writes that make it durable,
and its outcome — what committing it does to the room — plus what to do if the store refuses
it. Nothing here is a closure: a change can be read, compared and replayed by value, and the
room applies an outcome by what it is (:meth:`server.core.room.Room.commit`)."""

from __future__ import annotations

from typing import Any, Generic

import attrs

from server.core.room_effects import M, TurnKey
from server.core.room_seats import Seat
from server.core.room_writes import Write, stores_version
from shared.actions import Recorded
from shared.state import GameState


@attrs.frozen
class Ack(Generic[M]):
    """The ``ok`` a change owes ``member`` (its request ``re``), sent before the push; with
    the room's new version when ``versioned``."""

    member: M
    re: int
    versioned: bool = False


@attrs.frozen
class Welcome(Generic[M]):
    """The ``joined`` a change owes ``member`` (``token``: its new seat's secret, None when it
    came back with one), then its first view; the push of the change is not sent to it."""

    member: M
    re: int
    token: str | None


@attrs.frozen(eq=False)
class Seated(Generic[M]):
    """Someone sits in ``seat``; a person's displayed rating and whether it is provisional
    come with it in a rated room."""

    seat: Seat[M]
    account: str | None = None
    rating: int | None = None
    provisional: bool | None = None
    ack: Ack[M] | None = None
    welcome: Welcome[M] | None = None


@attrs.frozen
class Freed:
    """Seat ``index`` is free again (its player left before the start)."""

    index: int


@attrs.frozen
class Back(Generic[M]):
    """The player of seat ``index`` is back, as ``welcome.member``; an older connection of
    theirs is closed."""

    index: int
    welcome: Welcome[M]


@attrs.frozen
class Gone:
    """The player of seat ``index`` left during the game (or ``dropped``: lost the line)."""

    index: int
    dropped: bool


@attrs.frozen(eq=False)
class Started(Generic[M]):
    """The game starts as ``state`` (``said`` in the log)."""

    state: GameState
    said: str
    ack: Ack[M] | None = None


@attrs.frozen(eq=False)
class Played(Generic[M]):
    """Seat ``seat`` played ``action`` (or resigned): the game is now ``state``, which
    ``events`` tell; ``unrated`` says why a rated game's end is not rated (None: it is, or not
    the end)."""

    seat: int
    action: Recorded
    state: GameState
    events: tuple[Any, ...]
    unrated: str | None = None
    ack: Ack[M] | None = None


@attrs.frozen
class Adopted:
    """This node holds the room now: every write of it is fenced from then on."""


Outcome = Seated[M] | Freed | Back[M] | Gone | Started[M] | Played[M] | Adopted


@attrs.frozen
class RetryTimer:
    """When the store refused the change: fire the turn timer of ``key`` again later."""

    key: TurnKey


@attrs.frozen
class RetryBot:
    """When the store refused the change: wake the bot again later."""


Retry = RetryTimer | RetryBot


@attrs.frozen(eq=False)
class Change(Generic[M]):
    """A change the room proposed: durable once ``writes`` are stored, in order; committing it
    makes ``outcome`` so.

    ``version`` is the room's version after it; ``forced`` changes (a member who is gone)
    are committed even when their writes fail: they only record what already happened;
    ``retry`` says what tries again when the store refused it (None: nothing, a request is
    simply not done).
    """

    version: int
    writes: tuple[Write, ...]
    outcome: Outcome[M]
    forced: bool = False
    retry: Retry | None = None

    @property
    def stores_version(self) -> bool:
        """Whether storing it stores its version (what a read-back can check)."""
        return stores_version(self.writes)
