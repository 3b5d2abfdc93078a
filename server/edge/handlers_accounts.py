"""An account's requests: ``my_games``, ``record`` and ``rematch`` (server.features.accounts,
server.ops.export, server.features.rematch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.core.record_pages import record_page
from server.edge.dispatch import reply
from server.features.moderation import refuse_closed
from server.ops.export import record_file
from shared import messages as m
from shared.errors import CastellError, RoomNotFound
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.features.rematch import Rematches
    from server.runtime.connection import Connection
    from server.runtime.lobby import Lobby
    from server.store.base import GameRecord, Store


class AccountHandlers:
    """A player's games: those of the account, a finished one's record, its rematch."""

    def __init__(self, lobby: Lobby, accounts: Accounts, rematches: Rematches) -> None:
        self.lobby = lobby
        self.accounts = accounts
        self.rematches = rematches

    async def my_games(self, conn: Connection, msg: m.MyGames) -> None:
        if conn.account is None:
            raise CastellError("my_games needs an account: say hello with a key",
                               code="not_signed_in")
        entries = await self.accounts.games(conn.account, msg.status, msg.limit)
        reply(conn, m.Games(re=msg.id, entries=entries))

    async def rematch(self, conn: Connection, msg: m.Rematch) -> None:
        await self.rematches.rematch(conn, msg)

    async def record(self, conn: Connection, msg: m.RecordRequest) -> None:
        """A finished game's record, from the store. A private room's only for an account
        that played it."""
        game = record_file(await finished_game(self.lobby.store, self.accounts, conn,
                                               msg.room))
        # a long game's record comes in pages, each in one frame (server.core.record_pages)
        reply(conn, record_page(msg.id, game, msg.from_ or 0))


async def finished_game(store: Store, accounts: Accounts, conn: Connection, room: str
                        ) -> GameRecord:
    """The stored game ``room`` as ``conn`` may read it (``record``, ``review``): a finished
    game, a private one only for an account that played it. Refused, in this order:
    ``room_not_found`` (no such game, or a private one of others), ``room_closed`` (a
    private room the host closed, said as ``join_room`` says it to a seat token),
    ``not_finished``."""
    record = await store.load(room)
    if record is not None and record.room.private and not (
            conn.account is not None and await accounts.holds_seat(room, conn.account)):
        refuse_closed(record)  # said, as join_room says it to a seat token
        record = None
    if record is None:
        raise RoomNotFound(f"there is no finished game {room!r} on this server")
    if record.room.status != RoomStatus.FINISHED:
        raise CastellError("that game is not over yet", code="not_finished")
    return record
