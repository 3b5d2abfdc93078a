"""A room's writes as the store takes them: each write carried out, what a committed change is
counted as, and the doubt a lost answer leaves.

:func:`perform` carries out one of a change's writes (:class:`server.core.room.Write`).
:class:`Doubt` is what a runner knows after a write whose answer was lost (the connection cut
after ``COMMIT``): :meth:`Doubt.read_back` asks the store whether it holds the change's
version all the same; when even that cannot be told (the read fails, or the runner is
cancelled while it waits), the version stays in doubt until :meth:`Doubt.settle` reads what
the store holds, before the room's next change. :class:`StoreUnavailable` is what a request
whose change the store refused is answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgpack

from server.core.room import (
    AppendAction,
    AppendChat,
    Change,
    ClaimSeat,
    Finish,
    PutSeat,
    RemoveSeat,
    Room,
    UpdateRoom,
    Write,
)
from server.core.room_change import Played
from server.features.ratings import finish_rated
from server.store.base import GameRecord
from shared import events as ev
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.ops.metrics import Metrics
    from server.store.base import Store


class StoreUnavailable(CastellError):
    """Raised to a request whose change the store refused: nothing was changed."""

    code = "internal_error"


async def perform(store: Store, write: Write) -> Any:
    """Carry out one of a change's store writes (a rated game's end returns its rated
    games, :func:`server.features.ratings.finish_rated`)."""
    match write:
        case AppendAction(record, expect, progress):
            await store.append_action(record, expect_version=expect, progress=progress)
        case UpdateRoom(room, version, expect, status, started_at, progress):
            await store.update_room(room, version=version, expect_version=expect,
                                    status=status, started_at=started_at, progress=progress)
        case PutSeat(record, version, expect):
            await store.put_seat(record, version=version, expect_version=expect)
        case RemoveSeat(room, seat, version, expect):
            await store.remove_seat(room, seat, version=version, expect_version=expect)
        case Finish(room, result, finished_at, expect, rated):
            if rated:
                return await finish_rated(store, write)
            await store.finish(room, result, finished_at, expect_version=expect)
        case AppendChat(record, expect):
            await store.append_chat(record, expect_version=expect)
        case ClaimSeat(room, seat, account, expect):
            await store.claim_seat(room, seat, account, expect_version=expect)
    return None


def count_change(metrics: Metrics, change: Change, events: list[object]) -> None:
    """Count what a committed change did: the actions it stored (by kind), a game it
    started or ended."""
    for write in change.writes:
        if isinstance(write, AppendAction):
            outcome = change.outcome
            if isinstance(outcome, Played):  # the action itself says its kind
                kind: object = outcome.action.KIND
            else:
                fields = msgpack.unpackb(write.record.action, raw=False)
                kind = fields.get("kind") if isinstance(fields, dict) else None
            metrics.stored[str(kind)] += 1
    for event in events:
        if isinstance(event, ev.GameStarted):
            metrics.games_started.inc()
        elif isinstance(event, ev.GameEnded):
            metrics.games_finished.inc()


class Doubt:
    """A version the store may or may not hold (None: none in doubt). See the module
    docstring."""

    def __init__(self) -> None:
        self.version: int | None = None

    async def read_back(self, store: Store, room: Room[Any], change: Change) -> bool:
        """After a failed write of ``change``: whether the store holds its version all the
        same. When that cannot be read, or the caller is cancelled while it is being read,
        the version is in doubt."""
        if not room.stores_version(change):
            return False
        try:
            stored = await store.stored_version(room.id)
        except Exception:
            self.version = change.version
            return False
        except BaseException:  # cancelled while reading: nobody knows what the store holds
            self.version = change.version
            raise
        return stored == change.version

    async def settle(self, store: Store, room: Room[Any]) -> GameRecord | None:
        """Before the room's next change, when a version is in doubt: what the store holds.
        Returns the stored room to reload when it holds the version in doubt (the room
        goes on from there); None when the room may go on as it is. Raises the store's
        error while it cannot say (the version stays in doubt)."""
        if self.version is None:
            return None
        stored = await store.stored_version(room.id)
        record = await store.load(room.id) if stored == self.version \
            and stored != room.version else None
        self.version = None
        if stored == room.version:
            room.stored_version = stored
        return record
