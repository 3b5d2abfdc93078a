"""What a room asks its driver to do: send bytes, push a view (whole or as a patch), close a
member, arm or cancel the room's timer, wake a bot. Pure data (and the encoding of a push,
done at most once however many members get it); :mod:`server.runtime.runner` performs them."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import attrs

from shared import packed
from shared.codec import encode_patch, encode_state, event_to_wire
from shared.patch import diff
from shared.state import GameState

#: A member of a room: whatever the driver uses for a connection (the room only compares it).
M = TypeVar("M", bound=Hashable)

#: The turn a timer belongs to: (round, seat whose turn it is).
TurnKey = tuple[int, int | None]

#: Ids of the views rooms show, unique in the server: a connection's id of the view it holds
#: says which view that is, whatever room it came from.
shown_ids = itertools.count(1)

#: The most changes a ``patch`` push carries; a bigger change of the view is sent whole.
MAX_CHANGES = 200


@attrs.frozen
class Send(Generic[M]):
    """Send ``data`` (one encoded message) to each of ``to``. A ``lossy`` one (chat) may be
    left out for a member that is slow to read, rather than close it."""

    to: tuple[M, ...]
    data: bytes
    lossy: bool = False


class Shown:
    """A view as the room showed it to its members: its id, version and the view itself.

    The view may be given as how to build it (``make``): it is then built the first time it
    is read, which is after the ``ok`` a change owes its actor has gone out (the effects of
    a change are performed in order, the reply first), so that the reply does not wait on
    the view. ``make`` must build it from what the room was at that version."""

    __slots__ = ("_make", "_view", "id", "version")

    def __init__(self, id: int, version: int, view: dict[str, Any] | None = None, *,
                 make: Callable[[], dict[str, Any]] | None = None) -> None:
        if (view is None) == (make is None):
            raise ValueError("a Shown takes a view or how to make it, not both")
        self.id = id
        self.version = version
        self._view = view
        self._make = make

    @property
    def view(self) -> dict[str, Any]:
        if self._view is None:
            assert self._make is not None
            self._view, self._make = self._make(), None
        return self._view

    def __repr__(self) -> str:
        return f"<Shown {self.id} v{self.version}>"


@attrs.define(eq=False)
class Push(Generic[M]):
    """Show the room's view (``shown``) to each of ``to``, with ``events``: a ``state`` push
    of the whole view, or, to a member that takes patches and holds the view shown before
    (``base``), a ``patch`` push of what changed since. Each is computed and encoded at most
    once however many members get it (:attr:`data`, :meth:`patch`): never per member."""

    to: tuple[M, ...]
    room: str
    shown: Shown
    events: tuple[Any, ...] = ()
    base: Shown | None = None
    _data: bytes | None = None
    _patch: bytes | None = None
    _packed: bytes | None = None
    _changes: list[Any] | None = None
    _patched: bool = False
    _wire: tuple[dict[str, Any], ...] | None = None

    @property
    def data(self) -> bytes:
        """The ``state`` push of the whole view."""
        if self._data is None:
            self._data = encode_state(self.room, self.shown.version, self.shown.view,
                                      self._wired())
        return self._data

    def patch(self) -> bytes | None:
        """The ``patch`` push against ``base``; None when there is no base, or the view
        changed too much for a patch to be worth it."""
        if self._patch is None and self._diffed() is not None:
            assert self.base is not None and self._changes is not None
            self._patch = encode_patch(self.room, self.base.version, self.shown.version,
                                       self._changes, self._wired())
        return self._patch

    def packed(self) -> bytes | None:
        """The same patch as a ``p`` push (:mod:`shared.packed`), for the members that take
        patches packed; None when :meth:`patch` is."""
        if self._packed is None and self._diffed() is not None:
            assert self.base is not None and self._changes is not None
            self._packed = packed.encode(self.base.version, self.shown.version,
                                         self._changes, self._wired())
        return self._packed

    def _wired(self) -> tuple[dict[str, Any], ...]:
        """The events as wire maps, made once for every form of the push (the encoders pass
        a wire map as it is)."""
        if self._wire is None:
            self._wire = tuple(event_to_wire(e) for e in self.events)
        return self._wire

    def _diffed(self) -> list[Any] | None:
        """The changes from ``base`` (computed once); None when there is no base or too many
        changes for a patch to be worth it."""
        if not self._patched:
            self._patched = True
            base = self.base
            if base is not None:
                changes = diff(base.view, self.shown.view)
                if len(changes) <= MAX_CHANGES:
                    self._changes = changes
        return self._changes


@attrs.frozen
class Close(Generic[M]):
    """Close a member's connection; it is no longer in the room."""

    member: M
    code: int
    reason: str


@attrs.frozen
class ArmTimer:
    """(Re)arm the room's one timer: after ``delay`` seconds, call
    :meth:`server.core.room.Room.timer_fired` with ``key``. Replaces the timer armed before."""

    key: TurnKey
    delay: float


@attrs.frozen
class CancelTimer:
    """Disarm the room's timer."""


@attrs.frozen
class WakeBot:
    """After ``delay`` seconds, let the bot to play choose (see
    :meth:`server.core.room.Room.bot_turn`)."""

    delay: float


Effect = Send[M] | Push[M] | Close[M] | ArmTimer | CancelTimer | WakeBot


@attrs.frozen
class BotTurn:
    """What a bot needs to choose its action: the game, its seat, its level, its dice."""

    seat: int
    level: str
    state: GameState
    rng: random.Random
