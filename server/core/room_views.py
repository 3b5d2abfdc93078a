"""What a room shows: its view (built by :func:`shared.view.build_view`, reusing the maps of
the view built before), the view shown to its members last (what a patch is taken against),
and its line in a room list. Reads the room through :class:`Source`; changes nothing of it."""

from __future__ import annotations

from typing import Any, Generic, Protocol

from server.core.room_effects import M, Push, Shown, shown_ids
from shared import messages as m
from shared.codec import encode_state
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, ViewParts, build_view


class Source(Protocol):
    """What a view is made of: the room as it is now."""

    id: str
    name: str
    size: int
    variant: str
    turn_seconds: int | None

    @property
    def version(self) -> int: ...

    @property
    def state(self) -> GameState | None: ...

    @property
    def status(self) -> RoomStatus: ...

    @property
    def taken(self) -> int: ...

    @property
    def rated(self) -> bool: ...

    def info(self) -> RoomInfo: ...


class RoomViews(Generic[M]):
    """The views of one room (see the module docstring)."""

    def __init__(self, room: Source) -> None:
        self.room = room
        #: The view shown to the members last (what a patch is taken against).
        self.shown: Shown | None = None
        #: The maps of the view built last, which the next view reuses where unchanged.
        self.parts = ViewParts()
        self._summary: tuple[tuple[int, int, RoomStatus], m.RoomSummary] | None = None

    def view(self) -> dict[str, Any]:
        return build_view(self.room.info(), self.room.state, self.parts)

    def current(self) -> bytes:
        """The current view with no events: what a member gets right after joining."""
        return encode_state(self.room.id, self.room.version, self.view(), ())

    def show(self, to: tuple[M, ...], events: Any) -> Push[M]:
        """Show the view as it is now to ``to``, as a change of the view shown before."""
        info, state, parts = self.room.info(), self.room.state, self.parts
        shown = Shown(next(shown_ids), self.room.version,
                      make=lambda: build_view(info, state, parts))
        push: Push[M] = Push(to, self.room.id, shown, tuple(events), self.shown)
        self.shown = shown
        return push

    def show_current(self, to: tuple[M, ...]) -> Push[M]:
        """The current view, whole and with no events, to ``to`` (a joiner; a member that
        asked for it again): the view shown to the others, when it is the current one."""
        view = self.view()
        shown = self.shown
        if shown is None or shown.version != self.room.version or shown.view != view:
            shown = self.shown = Shown(next(shown_ids), self.room.version, view)
        return Push(to, self.room.id, shown)

    def summary(self) -> m.RoomSummary:
        """The room as a room list shows it; made again only once the room has changed
        (every change takes a new version), so that a page of a long list costs a slice."""
        room = self.room
        key = (room.version, room.taken, room.status)
        cached = self._summary
        if cached is None or cached[0] != key:
            cached = self._summary = (key, m.RoomSummary(
                room=room.id, name=room.name, seats=room.size, taken=key[1],
                variant=room.variant, status=key[2], turn_seconds=room.turn_seconds,
                rated=room.rated))
        return cached[1]
