"""Friends, presence, blocks and the inbox: ``follow``, ``unfollow``, ``friends``,
``presence``, ``block``, ``unblock``, ``inbox`` (server.features.social,
server.features.inbox). Each needs an account (``not_signed_in`` for a guest)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import reply
from server.features.social import signed_in
from shared import messages as m

if TYPE_CHECKING:
    from server.features.inbox import Inbox
    from server.features.social import Social
    from server.runtime.connection import Connection


class SocialHandlers:
    """The requests of friends, blocks and the inbox."""

    def __init__(self, social: Social, inbox: Inbox) -> None:
        self.social = social
        self.inbox = inbox

    async def follow(self, conn: Connection, msg: m.Follow) -> None:
        await self.social.follow(conn, msg.name)
        reply(conn, m.Ok(re=msg.id))

    async def unfollow(self, conn: Connection, msg: m.Unfollow) -> None:
        await self.social.unfollow(conn, msg.name)
        reply(conn, m.Ok(re=msg.id))

    async def friends(self, conn: Connection, msg: m.FriendsRequest) -> None:
        reply(conn, await self.social.friends(conn, msg.id))

    async def presence(self, conn: Connection, msg: m.PresenceRequest) -> None:
        await self.social.set_visible(conn, msg.visible)
        reply(conn, m.Ok(re=msg.id))

    async def block(self, conn: Connection, msg: m.Block) -> None:
        await self.social.block(conn, msg.name)
        reply(conn, m.Ok(re=msg.id))

    async def unblock(self, conn: Connection, msg: m.Unblock) -> None:
        await self.social.unblock(conn, msg.name)
        reply(conn, m.Ok(re=msg.id))

    async def inbox_(self, conn: Connection, msg: m.InboxRequest) -> None:
        account = signed_in(conn, "the inbox")
        if msg.clear:
            cleared = await self.inbox.clear(account)
            reply(conn, m.InboxReply(re=msg.id, notes=(), cleared=cleared))
        else:
            reply(conn, m.InboxReply(re=msg.id, notes=tuple(await self.inbox.listing(account))))
