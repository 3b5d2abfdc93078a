"""The lobby's requests: ``hello``, ``identify``, ``list_rooms``, ``create_room``, ``join_room``.

:class:`LobbyHandlers` answers what a connection asks before it is in a room: its name (and
account), who this server is, the rooms there are, a room made or joined. The limits on
making and finding rooms, and on guessing keys, tokens and codes, are the shared part of
request handling (:class:`server.edge.requests.Requests`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from server.core.names import clean_name
from server.core.room import BadToken
from server.edge.dispatch import reply
from server.edge.states import ConnState
from server.features.ratings import check_may_sit
from shared import messages as m
from shared.errors import CastellError, ProtocolError, RoomMoved, RoomNotFound
from shared.messages import PROTOCOL_VERSION

if TYPE_CHECKING:
    from server.edge.requests import Requests
    from server.runtime.connection import Connection
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.server")

SERVER_VERSION = "castell-server 0.1.0"


class LobbyHandlers:
    """The lobby's requests, over the shared part of request handling (``requests``)."""

    def __init__(self, requests: Requests) -> None:
        self.requests = requests
        self.config = requests.config
        self.lobby = requests.lobby
        self.accounts = requests.accounts

    async def hello(self, conn: Connection, msg: m.Hello) -> None:
        requests = self.requests
        if msg.packed and not msg.patches:
            raise ProtocolError("packed patches need patches: say patches true too",
                                code="invalid_field", field="packed")
        name = clean_name(msg.name)  # trimmed; no invisible characters, no mixed scripts
        requests.moderation.check_name(name)
        if msg.key is not None:
            requests.check_key_rate(conn)
            account = await self.accounts.sign_in(msg.key, name, conn.address)
            if account is None:
                requests.key_failed(conn)
                raise CastellError(f"{name!r} is the name of an account of this server: "
                                   "choose another name (or sign in with that account's "
                                   "key)", code="name_taken")
            requests.moderation.check_name(account.name)
            self.accounts.attach(conn, account.account)
            name = account.name
        else:
            if await self.accounts.owner(name) is not None:
                raise CastellError(f"{name!r} is the name of an account of this server: "
                                   "choose another name", code="name_taken")
            self.accounts.detach(conn)
        conn.said_hello(name, msg.patches, packed=msg.packed)
        log.info("%s is %r%s", conn.id, name, " (signed in)" if conn.account else "")
        reply(conn, m.Welcome(re=msg.id, player=conn.id, server=SERVER_VERSION,
                              protocol=PROTOCOL_VERSION, account=conn.account is not None,
                              name=name, server_id=requests.server_id))
        if conn.account is not None:
            await requests.social.signed_in(conn)
            await requests.inbox.greet(conn)

    async def identify(self, conn: Connection, msg: m.Identify) -> None:
        server_id = self.requests.server_id
        if server_id is None:  # not started: never so for a connection that is served
            raise CastellError("this server is starting: try again", code="internal_error")
        reply(conn, m.Identity(re=msg.id, server_id=server_id))

    async def list_rooms(self, conn: Connection, msg: m.ListRooms) -> None:
        # A reply must fit in a frame: a page of at most max_listed rooms, in list order.
        rooms, nodes, more = await self.requests.directory.list_page(msg.after,
                                                                     self.config.max_listed)
        reply(conn, m.Rooms(re=msg.id, rooms=rooms, nodes=nodes, more=more))

    async def create_room(self, conn: Connection, msg: m.CreateRoom) -> None:
        turn_seconds = msg.turn_seconds
        if msg.rated:
            self.requests.check_rated(conn)
            turn_seconds = turn_seconds or self.config.rated_turn_seconds
        runner = await self.requests.new_room(conn, msg.name, msg.seats, msg.variant,
                                              turn_seconds, msg.private, rated=msg.rated)
        await runner.join(conn, conn.name or "?", msg.id, account=conn.account)
        conn.enter(runner, seated=True)

    async def join_room(self, conn: Connection, msg: m.JoinRoom) -> None:
        requests = self.requests
        if conn.state is ConnState.SEATED:
            await requests.rematches.join_from_finished(conn, msg)
            return
        runner = await self._find(conn, msg)
        requests.moderation.check_join(conn, runner, msg.token)
        if msg.token is not None:
            try:
                seat = await runner.resume(conn, msg.token, msg.id)
            except BadToken:
                requests.resume_failed(conn)
                raise
            log.info("%s took back seat %s of room %s", conn.id, seat, runner.id)
            conn.enter(runner, seated=True)
        elif msg.as_ == "spectator":
            await runner.watch(conn, msg.id, max_spectators=self.config.max_spectators)
            conn.enter(runner, seated=False)
        else:
            index = None if conn.account is None \
                else await self.accounts.seat_of(runner, conn.account)
            if index is not None:  # the account's own seat: taken back without the token
                await runner.reclaim(conn, index, msg.id)
                log.info("%s took back seat %s of room %s by its account", conn.id, index,
                         runner.id)
            else:
                if runner.room.rated and not self.config.rated_one_network:
                    check_may_sit(conn.address, [s.member.address for s in runner.room.seats
                                                 if s is not None and s.member is not None])
                await runner.join(conn, conn.name or "?", msg.id, account=conn.account)
            conn.enter(runner, seated=True)

    async def _find(self, conn: Connection, msg: m.JoinRoom) -> RoomRunner:
        """The room ``join_room`` names, within the limits on guessing tokens and codes."""
        requests = self.requests
        if msg.token is not None:
            requests.check_resume_rate(conn)
        else:
            requests.check_code_rate(conn)
        # A seat of the room belongs to the account: its id finds it, as a token's would.
        mine = (msg.token is None and conn.account is not None
                and await self.accounts.holds_seat(msg.room, conn.account))
        try:
            try:
                return await requests.find_room(msg.room, by_id_private=msg.token is not None
                                                or mine)
            except RoomNotFound:
                # A private rematch is found by its id by whoever it offers a seat to.
                if msg.token is not None or not await requests.rematches.offered(msg.room,
                                                                                  conn):
                    raise
                return await requests.find_room(msg.room, by_id_private=True)
        except RoomMoved:
            raise
        except CastellError as exc:
            if msg.token is not None:
                requests.resume_failed(conn)  # probing for rooms with tokens costs the same
            elif isinstance(exc, RoomNotFound):
                requests.code_failed(conn)
            raise
