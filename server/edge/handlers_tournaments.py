"""Swiss tournaments' requests: ``tournament_create``, ``tournaments``, ``tournament``,
``tournament_join``, ``tournament_leave`` and ``tournament_start``
(server.features.tournaments). Each answers with the tournament as it stands (``tournaments``:
the list); what needs an account is refused to a guest with ``not_signed_in``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import reply
from shared import messages as m

if TYPE_CHECKING:
    from server.features.tournaments import Tournaments
    from server.runtime.connection import Connection


class TournamentHandlers:
    """A connection's requests about tournaments."""

    def __init__(self, tournaments: Tournaments) -> None:
        self.tournaments = tournaments

    async def create(self, conn: Connection, msg: m.TournamentCreate) -> None:
        t = self.tournaments
        starts_at = None if msg.starts_in is None else t.clock() + msg.starts_in
        made = await t.create(conn.account, msg.name, msg.rounds, msg.seats, msg.turn_seconds,
                              msg.rated, starts_at, creator_name=conn.name)
        reply(conn, made.reply(msg.id))

    async def listed(self, conn: Connection, msg: m.TournamentsRequest) -> None:
        entries = [t.entry() for t in await self.tournaments.listed()]
        reply(conn, m.TournamentsReply(re=msg.id, entries=entries))

    async def one(self, conn: Connection, msg: m.TournamentRequest) -> None:
        reply(conn, (await self.tournaments.get(msg.tournament)).reply(msg.id))

    async def join(self, conn: Connection, msg: m.TournamentJoin) -> None:
        t = await self.tournaments.join(conn.account, conn.name or "", msg.tournament)
        reply(conn, t.reply(msg.id))

    async def leave(self, conn: Connection, msg: m.TournamentLeave) -> None:
        t = await self.tournaments.leave(conn.account, msg.tournament)
        reply(conn, t.reply(msg.id))

    async def start(self, conn: Connection, msg: m.TournamentStart) -> None:
        t = await self.tournaments.begin(conn.account, msg.tournament)
        reply(conn, t.reply(msg.id))
