"""The ``review`` request: a finished game's review (server.features.reviews,
docs/review.md), with ``review_progress`` pushes to the asker while it is computed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.core.review_pages import review_page
from server.edge.dispatch import reply
from server.edge.handlers_accounts import finished_game
from server.ops.export import record_file
from shared import messages as m
from shared.errors import CastellError
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.features.reviews import Reviews
    from server.runtime.connection import Connection
    from server.store.base import Store


class ReviewHandlers:
    """A finished game's review: the game as ``record`` gives it, reviewed once."""

    def __init__(self, store: Store, accounts: Accounts, reviews: Reviews) -> None:
        self.store = store
        self.accounts = accounts
        self.reviews = reviews

    async def review(self, conn: Connection, msg: m.ReviewRequest) -> None:
        """The review of a game ``conn`` may read (as ``record``), from the store or
        computed now; from a room, only once its game is over: no help during a game."""
        if conn.room is not None and conn.room.room.status != RoomStatus.FINISHED:
            raise CastellError("no review during a game: once this room's game is over, or "
                               "from the lobby", code="not_finished")
        game = record_file(await finished_game(self.store, self.accounts, conn, msg.room))
        room = msg.room

        def told(done: int, total: int) -> None:
            reply(conn, m.ReviewProgressPush(room=room, done=done, total=total))

        data = await self.reviews.review(game, share=conn.address, progress=told)
        # a review larger than a frame comes in pages (server.core.review_pages)
        reply(conn, review_page(msg.id, data, msg.from_ or 0))
