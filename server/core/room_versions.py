"""A room's versions: the one it is at, the one it stored last (what a fenced write must
find), the one change in flight, and the store's failures in a row (the backoff of retries).
It knows nothing of seats or games: it keeps the rules of propose → commit / abort."""

from __future__ import annotations

from typing import Any

from server.core.room_change import Change
from server.core.room_writes import UpdateRoom, Write

#: Seconds before the first retry of a change the store refused; doubled each time after.
RETRY_FIRST = 0.5
RETRY_MAX = 30.0


class RoomVersions:
    """The version bookkeeping of one room (see the module docstring)."""

    def __init__(self, room_id: str, *, now: float, fenced: bool = False) -> None:
        self.room_id = room_id
        self.version = 0
        #: Whether every write expects the version this room stored last (a cluster node
        #: holds its rooms so): a node that lost the room can then no longer write to it.
        self.fenced = fenced
        self.stored_version = 0
        self.pending: Change[Any] | None = None
        #: Store failures in a row (the backoff of retries); 0 once a change is stored.
        self.failures = 0
        #: When the room last changed; an unwatched room idle long enough is unloaded from
        #: memory and comes back from the store on demand.
        self.changed_at = now
        #: The version and events of the change committed last (what a history adds).
        self.committed: tuple[int, list[Any]] = (0, [])

    @property
    def busy(self) -> bool:
        """Whether a change is in flight (proposed, not yet committed or aborted)."""
        return self.pending is not None

    @property
    def fence(self) -> int | None:
        """The stored version a write must find (None: any), see :attr:`fenced`."""
        return self.stored_version if self.fenced else None

    @property
    def next(self) -> int:
        """The version the next change takes."""
        if self.pending is not None:
            raise RuntimeError(f"room {self.room_id}: a change is already in flight")
        return self.version + 1

    def version_write(self, version: int, *, over: bool) -> list[Write]:
        """A presence change bumps the version too: store it, seats filling before the start
        too, so that a room restored after a crash never goes back to a version its players
        already saw (and a fenced room's next write can expect it); not once the game is
        ``over``."""
        return [] if over else [UpdateRoom(self.room_id, version, self.fence)]

    def propose(self, change: Change[Any]) -> Change[Any]:
        """Keep ``change`` until the driver commits or aborts it."""
        if change.version != self.next:
            raise RuntimeError(f"room {self.room_id}: change of version {change.version} "
                               f"proposed at version {self.version}")
        self.pending = change
        return change

    def take(self, change: Change[Any]) -> None:
        """Drop ``change`` from flight (refused unless it is the one in flight)."""
        if self.pending is None or self.pending is not change:
            raise RuntimeError(f"room {self.room_id}: that change is not the one in flight")
        self.pending = None

    def committed_now(self, change: Change[Any], *, now: float, stored: bool) -> bool:
        """``change`` (in flight) is committed; whether it ends a run of store failures."""
        self.take(change)
        self.version = change.version
        self.changed_at = now
        if not stored:
            return False
        back = self.failures > 0
        self.failures = 0
        if change.stores_version:
            self.stored_version = change.version
        return back

    def refused(self, change: Change[Any]) -> bool:
        """The store refused ``change`` (in flight); whether it is the first in a row."""
        self.take(change)
        self.failures += 1
        return self.failures == 1

    def stores_version(self, change: Change[Any]) -> bool:
        """Whether storing ``change`` (in flight) stores its version."""
        return self.pending is change and change.stores_version

    @property
    def retry_delay(self) -> float:
        """How long to wait before trying again what the store refused (doubling)."""
        return min(RETRY_MAX, RETRY_FIRST * 2 ** max(0, self.failures - 1))
