"""Friends and blocks: who follows whom, who blocks whom, and who hides their presence.

Accounts only (a guest is refused with ``not_signed_in``). Following is one way, as on
lichess: ``follow NAME`` lets you see where NAME is (``friends``, with
:mod:`server.features.presence`); two accounts that follow each other are friends
(``mutual``). A followed account hears of it in its inbox. ``presence off`` hides your
presence from everyone (``hidden``, no last seen); it is stored, so it holds at every
sign-in and on every node.

Blocking (``block NAME``) keeps the blocked account away from you: its chat lines are not
delivered to your connections (each connection carries the set its account blocks,
:attr:`Connection.blocked`, read at sign-in and renewed on ``block``/``unblock``), quick match
never seats you together (:mod:`server.features.matchmaking`, either way), and challenges and
invites check :meth:`Social.blocks` before reaching you.

One account follows at most :data:`shared.messages.FOLLOWS_MAX` accounts and blocks at most
:data:`shared.messages.BLOCKS_MAX` (``rate_limited`` past them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from shared import messages as m
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.features.inbox import Inbox
    from server.features.presence import Presence
    from server.runtime.connection import Connection
    from server.store.base import Store
    from server.store.records import AccountRecord

log = logging.getLogger("castell.social")


def signed_in(conn: Connection, what: str) -> str:
    """The account of ``conn``; refused with ``not_signed_in`` for a guest."""
    if conn.account is None:
        raise CastellError(f"{what} needs an account: say hello with a key (not as a guest)",
                           code="not_signed_in")
    return conn.account


class Social:
    """Follows, blocks and hidden presence (see the module docstring)."""

    def __init__(self, store: Store, accounts: Accounts, presence: Presence, inbox: Inbox,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.accounts = accounts
        self.presence = presence
        self.inbox = inbox
        self.clock = clock

    # -- what other features ask -----------------------------------------------------------

    async def blocks(self, account: str | None, other: str | None) -> bool:
        """Whether account ``account`` blocks account ``other`` (a guest, None, blocks
        nobody and is blocked by nobody)."""
        if account is None or other is None or account == other:
            return False
        return await self.store.is_blocked(account, other)

    async def either_blocks(self, one: str | None, other: str | None) -> bool:
        """Whether either of two accounts blocks the other (quick match asks this)."""
        return await self.blocks(one, other) or await self.blocks(other, one)

    async def blocked_by(self, account: str) -> frozenset[str]:
        """The accounts ``account`` blocks."""
        return frozenset(a for a, _ in await self.store.blocked(account))

    # -- signing in and out --------------------------------------------------------------

    async def signed_in(self, conn: Connection) -> None:
        """After ``hello`` with a key: the connection learns whom its account blocks, and
        the account's presence is known (hidden or not) and written."""
        account = conn.account
        if account is None:
            return
        conn.blocked = await self.blocked_by(account)
        if await self.store.hidden(account):
            self.presence.hidden.add(account)
        else:
            self.presence.hidden.discard(account)
        self.presence.changed(account)

    async def signed_out(self, account: str) -> None:
        """A connection of ``account`` closed: when it was its last here, it is seen now
        (``last_seen``), and its presence here is gone."""
        if account in self.accounts.connections:
            self.presence.changed(account)
            return
        self.presence.hidden.discard(account)
        self.presence.changed(account)
        try:
            await self.store.touch_account(account, self.clock())
        except Exception as exc:
            log.warning("account %s: when it was last seen could not be stored: %s",
                        account, exc)

    # -- requests --------------------------------------------------------------------------

    async def _target(self, conn: Connection, name: str, what: str) -> tuple[str,
                                                                             AccountRecord]:
        me = signed_in(conn, what)
        target = await self.accounts.owner(name)
        if target is None:
            raise CastellError(f"no account of this server is called {name!r}",
                               code="not_found")
        if target.account == me:
            raise CastellError(f"you cannot {what.split()[0]} yourself", code="not_found")
        return me, target

    async def follow(self, conn: Connection, name: str) -> None:
        me, target = await self._target(conn, name, "follow")
        following = await self.store.following(me)
        if any(f.account == target.account for f in following):
            return
        if len(following) >= m.FOLLOWS_MAX:
            raise CastellError(f"you follow {m.FOLLOWS_MAX} accounts already: unfollow one "
                               "first", code="rate_limited")
        await self.store.follow(me, target.account, self.clock())
        if not await self.blocks(target.account, me):
            try:
                await self.inbox.notify(target.account, "follow",
                                        f"{conn.name} follows you", from_=conn.name)
            except Exception as exc:
                log.warning("account %s could not be told of a follow: %s",
                            target.account, exc)

    async def unfollow(self, conn: Connection, name: str) -> None:
        me, target = await self._target(conn, name, "unfollow")
        await self.store.unfollow(me, target.account)

    async def block(self, conn: Connection, name: str) -> None:
        me, target = await self._target(conn, name, "block")
        blocked = await self.blocked_by(me)
        if target.account not in blocked:
            if len(blocked) >= m.BLOCKS_MAX:
                raise CastellError(f"you block {m.BLOCKS_MAX} accounts already: unblock one "
                                   "first", code="rate_limited")
            await self.store.block(me, target.account, self.clock())
        self._renew(me, blocked | {target.account})

    async def unblock(self, conn: Connection, name: str) -> None:
        me, target = await self._target(conn, name, "unblock")
        await self.store.unblock(me, target.account)
        self._renew(me, await self.blocked_by(me))

    def _renew(self, account: str, blocked: frozenset[str]) -> None:
        for held in self.accounts.connections.get(account, ()):
            held.blocked = blocked

    async def set_visible(self, conn: Connection, visible: bool) -> None:
        me = signed_in(conn, "presence")
        await self.store.set_hidden(me, not visible)
        if visible:
            self.presence.hidden.discard(me)
        else:
            self.presence.hidden.add(me)
        self.presence.changed(me)

    async def friends(self, conn: Connection, re: int) -> m.FriendsReply:
        """The ``friends`` reply: each account followed, with its presence."""
        me = signed_in(conn, "friends")
        following = await self.store.following(me)
        shown = [f.account for f in following if not f.hidden]
        where = await self.presence.of(shown)
        friends = []
        for f in following:
            if f.hidden:
                friends.append(m.Friend(name=f.name, mutual=f.mutual, presence="hidden"))
                continue
            found = where.get(f.account)
            if found is None:
                friends.append(m.Friend(name=f.name, mutual=f.mutual, presence="offline",
                                        last_seen=f.last_seen or None))
            else:
                state, room, room_name = found
                friends.append(m.Friend(name=f.name, mutual=f.mutual, presence=state,
                                        room=room, room_name=room_name))
        blocked = tuple(n for _, n in await self.store.blocked(me))
        return m.FriendsReply(re=re, friends=tuple(friends), blocked=blocked,
                              visible=not await self.store.hidden(me))
