"""The ratings' requests: ``leaderboard`` and ``profile`` (server.features.ratings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import reply
from shared import messages as m
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.features.ratings import Ratings
    from server.runtime.connection import Connection


class RatingHandlers:
    """The leaderboard, and an account's profile."""

    def __init__(self, ratings: Ratings, accounts: Accounts) -> None:
        self.ratings = ratings
        self.accounts = accounts

    async def leaderboard(self, conn: Connection, msg: m.Leaderboard) -> None:
        if msg.around_me and conn.account is None:
            raise CastellError("around_me needs an account: say hello with a key",
                               code="not_signed_in")
        entries = await self.ratings.leaderboard(msg.limit,
                                                 conn.account if msg.around_me else None)
        reply(conn, m.LeaderboardReply(re=msg.id, entries=entries))

    async def profile(self, conn: Connection, msg: m.ProfileRequest) -> None:
        account = await self.accounts.owner(msg.name)
        if account is None:
            raise CastellError(f"no account of this server is called {msg.name!r}",
                               code="not_found")
        reply(conn, await self.ratings.profile(msg.id, account.account, account.name,
                                               last=10))
