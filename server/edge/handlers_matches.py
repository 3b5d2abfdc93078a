"""Quick match's requests: ``quick_match`` and ``cancel_match`` (server.features.matchmaking)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import reply
from shared import messages as m

if TYPE_CHECKING:
    from server.features.matchmaking import Matchmaker
    from server.features.ratings import Ratings
    from server.runtime.connection import Connection


class MatchHandlers:
    """A connection's place in the quick-match queue."""

    def __init__(self, matchmaker: Matchmaker, ratings: Ratings) -> None:
        self.matchmaker = matchmaker
        self.ratings = ratings

    async def quick_match(self, conn: Connection, msg: m.QuickMatch) -> None:
        await self.matchmaker.enqueue(conn, msg)
        reply(conn, m.Ok(re=msg.id))

    async def cancel_match(self, conn: Connection, msg: m.CancelMatch) -> None:
        await self.matchmaker.cancel(conn)
        reply(conn, m.Ok(re=msg.id))
