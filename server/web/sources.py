"""Where the web pages read what they show: the parts that own it, given in ``server/app.py``.

:class:`Sources` holds them: the rooms this server has in memory (the lobby), the room list
every server sharing the directory shows, the store, ratings, tournaments, accounts and
their presence. Pages only read: nothing here is asked to change anything, and nothing
loads a stored game into memory for a page (a crawler walking room ids must not fill the
lobby): a game not in memory is read from the store and replayed there, for the page alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from server.features.moderation import closed_reason
from server.ops.export import record_file
from server.store.base import GameRecord
from shared.record import GameRecordFile
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.features.accounts import Accounts
    from server.features.presence import Presence
    from server.features.ratings import Ratings
    from server.features.tournaments import Tournaments
    from server.runtime.directory import Directory
    from server.runtime.lobby import Lobby
    from server.store.base import Store


@attrs.frozen
class Sources:
    """The parts a page reads (see the module docstring); ``connected``: how many
    connections this server has open."""

    config: ServerConfig
    lobby: Lobby
    directory: Directory
    store: Store
    ratings: Ratings
    tournaments: Tournaments
    accounts: Accounts
    presence: Presence
    connected: Callable[[], int]


def shown(record: GameRecord | None) -> GameRecord | None:
    """A stored room as pages may show it: public and not closed by the host (None: not
    shown, whether it does not exist or is private — a page cannot tell them apart)."""
    if record is None or record.room.private or closed_reason(record.result) is not None:
        return None
    return record


def finished_game(record: GameRecord | None) -> GameRecordFile | None:
    """A stored room's record file when it is a finished game pages show: public, not
    closed, played to its end (a result with scores). None otherwise."""
    record = shown(record)
    if record is None or record.room.status != RoomStatus.FINISHED:
        return None
    if record.result is None or not record.result.get("scores"):
        return None  # called off, or closed unplayed: no game to show
    return record_file(record)
