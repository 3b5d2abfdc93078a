"""Rematches: a finished room's players offered their seats again, in one new room.

:class:`Rematches` owns the ``rematch`` request and the taking of a seat a rematch offers
(docs/protocol.md, ``rematch`` and ``invite``):

* **One rematch per finished room.** The first player who asks makes it; whoever asks next
  (or at the same moment: the requests about one finished room wait for each other) joins
  it. With a store, the link from the finished room to its rematch is stored
  (:meth:`~server.store.base.Store.link_rematch`: the first link stored wins), so after a
  restart, or on another node of a cluster, the same rematch is found. The link goes with
  the rematch's room: a rematch nobody waits in any more is made anew when asked again.
* **The offers.** Each seat a person held in the finished game is offered to that person's
  name in the new room, and the bots sit in theirs again. The offers are stored with the room
  (``RoomRecord.offers``): they hold across restarts and moves as the room does. A private
  rematch is found by its id by whoever it offers a seat to (:meth:`Rematches.offered`).
* **The invites.** Each other player of the finished room hears ``invite``: a signed-in
  player on every connection of the account, on every node (as ``your_turn`` goes); a guest
  on the connection sitting in the finished room. An account that blocks the asker is not
  invited (:mod:`server.features.social`); an account invited finds the invite in its inbox
  too (:mod:`server.features.inbox`).
* **Limits.** Making a rematch makes a room: it is refused while the server drains, and counts
  against the rooms a connection and an address may create, as ``create_room`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from server.core.names import name_key
from server.runtime.connection import Connection
from server.runtime.runner import RoomRunner
from shared import messages as m
from shared.codec import encode
from shared.errors import CastellError, RoomNotFound
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.edge.requests import Requests

log = logging.getLogger("castell.server")


class Rematches:
    """The rematches of one server's finished rooms. See the module docstring."""

    def __init__(self, requests: Requests) -> None:
        self.requests = requests
        self.lobby = requests.lobby
        #: The rematch made of each finished room this server holds (by the finished room's
        #: id), as the store links them.
        self.made: dict[str, RoomRunner] = {}
        #: One lock per finished room being asked for its rematch, and how many wait on it.
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self.lobby.subscribe(on_remove=self._removed)

    def _removed(self, runner: RoomRunner) -> None:
        self.made.pop(runner.id, None)

    @contextlib.asynccontextmanager
    async def _turn(self, room_id: str) -> AsyncIterator[None]:
        """The requests about one finished room's rematch, one at a time."""
        lock, users = self._locks.get(room_id, (asyncio.Lock(), 0))
        self._locks[room_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[room_id]
            if users == 1:
                del self._locks[room_id]
            else:
                self._locks[room_id] = (lock, users - 1)

    # -- the requests ------------------------------------------------------------------------

    async def rematch(self, conn: Connection, msg: m.Rematch) -> None:
        """``rematch`` from the seat of a finished room: the rematch made now (the others
        invited), or the one made before; the asker moves to their offered seat in it."""
        old = self._finished_room_of(conn)
        mine = old.room.seat_of(conn)
        async with self._turn(old.id):
            made = await self.existing(old)
            if made is not None:
                await self._move(conn, old, made, msg.id)
                return
            made, fresh = await self._make(conn, old)
            await self._move(conn, old, made, msg.id)
            if not fresh:
                return
            # Invited before the next request about this room is served: a player who asked
            # at the same moment hears of the room, then joins it.
            await self._invite(conn, mine, old, made)

    async def join_from_finished(self, conn: Connection, msg: m.JoinRoom) -> None:
        """``join_room`` from the seat of a finished room, naming that room's rematch (by id
        or code): the offered seat, as ``rematch`` gives it. Any other room is refused
        (``already_in_room``), as ever from a seat."""
        old = conn.room
        if (old is not None and old.room.status == RoomStatus.FINISHED and msg.token is None
                and msg.as_ != "spectator"):
            async with self._turn(old.id):
                made = await self.existing(old)
                if made is not None and msg.room.upper() in (made.id.upper(),
                                                             made.room.code):
                    await self._move(conn, old, made, msg.id)
                    return
        raise CastellError("you are already in a room: leave it first", code="already_in_room")

    async def offered(self, key: str, conn: Connection) -> bool:
        """Whether room ``key`` (an id) offers a seat to ``conn``'s name: then its id finds
        it even though it is private. Asked of the store when the room is not here."""
        name = conn.name
        if name is None:
            return False
        runner = self.lobby.rooms.get(key)
        if runner is not None:
            return runner.room.offered_to(name)
        record = await self.lobby.store.load(key)
        if record is None or record.room.status != RoomStatus.WAITING:
            return False
        return name_key(name) in {wanted for _, wanted in record.room.offers}

    # -- the parts ---------------------------------------------------------------------------

    def _finished_room_of(self, conn: Connection) -> RoomRunner:
        old = conn.room
        assert old is not None, "the protocol state says the connection is seated"
        if old.room.status != RoomStatus.FINISHED:
            raise CastellError("the game is not over yet: a rematch comes after it",
                               code="not_finished")
        return old

    async def existing(self, old: RoomRunner) -> RoomRunner | None:
        """The rematch made of ``old`` that is still to be had: here, or else as the store
        links it (loaded, or found on another node: ``moved``)."""
        made = self.made.get(old.id)
        if made is not None and self.lobby.rooms.get(made.id) is made:
            return made
        linked = await self.lobby.store.rematch_of(old.id)
        if linked is None:
            return None
        try:
            made = await self.requests.find_room(linked, by_id_private=True)
        except RoomNotFound:
            return None
        self.made[old.id] = made
        return made

    async def _make(self, conn: Connection, old: RoomRunner) -> tuple[RoomRunner, bool]:
        """A new room with ``old``'s settings, its seats offered, linked as its rematch; and
        whether it is new (False: another server's link was stored first, and is used)."""
        room = old.room
        offers = {s.index: s.name for s in room.seats if s is not None and s.bot is None}
        made = await self.requests.new_room(conn, room.name, room.size, room.variant,
                                            room.turn_seconds, room.private,
                                            rated=room.rated, offers=offers)
        linked = await self.lobby.store.link_rematch(old.id, made.id)
        if linked != made.id:
            # Another server linked one first (it held the finished room before this one):
            # ours goes, theirs is the rematch.
            self.lobby.remove(made, forget=True)
            found = await self.existing(old)
            if found is None:
                raise CastellError("the rematch could not be set up: ask again",
                                   code="internal_error")
            return found, False
        self.made[old.id] = made
        await made.seat_bots({s.index: s.bot for s in room.seats
                              if s is not None and s.bot is not None})
        log.info("room %s: a rematch of room %s", made.id, room.id)
        return made, True

    async def _move(self, conn: Connection, old: RoomRunner, made: RoomRunner,
                    re: int) -> None:
        """``conn`` leaves the finished room for its offered seat of ``made``."""
        conn.leave_room()
        await old.leave(conn, dropped=False)
        await made.join(conn, conn.name or "?", re, account=conn.account)
        conn.enter(made, seated=True)

    async def _invite(self, conn: Connection, mine: int | None, old: RoomRunner,
                      made: RoomRunner) -> None:
        """Each player of the finished room but the asker (seat ``mine``) hears ``invite``
        (see the module docstring); one that cannot be told is logged, not the asker's
        failure."""
        push = m.InvitePush(room=made.id, from_=conn.name or "?", name=old.room.name)
        data = encode(push)
        accounts = self.requests.accounts
        asker = conn.account
        for seat in old.room.seats:
            if seat is None or seat.bot is not None or seat.index == mine:
                continue
            try:
                account = await accounts.account_of(old, seat.index)
            except Exception as exc:
                log.warning("room %s: seat %d's account is unknown (%s); invited here only",
                            old.id, seat.index, exc)
                account = None
            if account is not None and account != asker:
                if await self._blocked(account, asker):
                    continue  # it blocks the asker (server.features.social): not invited
                await accounts.deliver(account, push)
                await self._keep(account, push, conn.name or "?")
            elif seat.member is not None and seat.member is not conn:
                seat.member.send_bytes(data)

    async def _blocked(self, account: str, asker: str | None) -> bool:
        try:
            return await self.requests.social.blocks(account, asker)
        except Exception as exc:
            log.warning("whether %s blocks %s is unknown (%s): invited", account, asker, exc)
            return False

    async def _keep(self, account: str, push: m.InvitePush, asker: str) -> None:
        """The invite is kept in the invitee's inbox too (quietly: the push told it)."""
        try:
            await self.requests.inbox.notify(
                account, "invite", f"{asker} invites you to a rematch of {push.name}",
                room=push.room, from_=asker, push=False)
        except Exception as exc:
            log.warning("the invite could not be kept in %s's inbox: %s", account, exc)
