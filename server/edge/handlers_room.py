"""A room's requests: ``leave_room``, ``add_bot``, ``start_game``, ``chat``, ``resync``,
``history``.

:class:`RoomHandlers` answers what a member of a room asks of it (its protocol state says it
is in one: :func:`server.edge.dispatch.room_of`); the room's runner does the rest. It owns the
chat pace of each room, all its members together, and the ``history`` reply that fits in one
frame (:func:`history_reply`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from server.core.history import Entry
from server.core.limits import Buckets
from server.edge.dispatch import reply, room_of
from shared import messages as m
from shared.codec import MAX_FRAME, encode
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.features.moderation import Moderation
    from server.runtime.connection import Connection


class RoomHandlers:
    """The requests a member asks of its room."""

    def __init__(self, config: ServerConfig, moderation: Moderation) -> None:
        self.moderation = moderation
        #: The chat lines of each room, all its members together.
        self.chat_by_room = Buckets(config.room_chat_rate, 2 * config.room_chat_rate)

    def sweep(self, now: float) -> None:
        """Forget the rooms' chat buckets that are full again."""
        self.chat_by_room.sweep(now)

    async def leave_room(self, conn: Connection, msg: m.LeaveRoom) -> None:
        runner = room_of(conn)
        conn.leave_room()
        await runner.leave(conn, dropped=False)
        reply(conn, m.Ok(re=msg.id))

    async def add_bot(self, conn: Connection, msg: m.AddBot) -> None:
        await room_of(conn).add_bot(conn, msg.level, msg.id)

    async def start_game(self, conn: Connection, msg: m.StartGame) -> None:
        await room_of(conn).start(conn, msg.id)

    async def chat(self, conn: Connection, msg: m.Chat) -> None:
        runner = room_of(conn)
        self.moderation.check_chat(conn, runner)
        if not self.chat_by_room.take(runner.id, time.monotonic()):
            raise CastellError("slow down: this room is chatting too fast",
                               code="rate_limited")
        await runner.chat(conn, conn.name or "?", msg.text, msg.id)

    async def resync(self, conn: Connection, msg: m.Resync) -> None:
        await room_of(conn).resync(conn, msg.id)

    async def history(self, conn: Connection, msg: m.HistoryRequest) -> None:
        entries = await room_of(conn).history(msg.before, msg.limit)
        reply(conn, history_reply(msg.id, entries))


def history_reply(re: int, entries: list[Entry], *, frame: int = MAX_FRAME) -> m.History:
    """The ``history`` reply holding the latest of ``entries`` that fit in one frame (all
    of them, unless they would not): the client asks for the ones before with ``before``."""
    keep = len(entries)
    while True:
        reply = m.History(re=re, entries=[m.HistoryEntry(e.version, tuple(e.events))
                                          for e in entries[len(entries) - keep:]])
        size = len(encode(reply))
        if size <= frame or keep == 0:
            return reply
        keep = min(keep - 1, keep * frame // size)
