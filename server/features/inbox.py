"""Each account's inbox: notifications kept until read or cleared, shown as they come.

What another feature calls to tell an account something that must not be lost while it is
away (a correspondence game's turn, a host's announcement, someone following it; challenges
and tournaments too) is :meth:`Inbox.notify`: it stores the notification (schema 15,
:class:`~server.store.base.SocialStore`; only the newest :data:`KEEP` of an account are
kept) and pushes it at once, as a ``note``, to every connection of the account, on every
node of a cluster (:meth:`server.features.accounts.Accounts.deliver`). ``inbox`` lists them
(they are then read), ``inbox`` with ``clear`` deletes them; an account signing in with new
ones hears ``inbox_new`` right after its ``welcome`` (:meth:`Inbox.greet`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shared import messages as m
from shared.codec import encode
from shared.wire import printable

if TYPE_CHECKING:
    from server.features.accounts import Accounts
    from server.runtime.connection import Connection
    from server.store.base import Store
    from server.store.records import NoteRecord

log = logging.getLogger("castell.inbox")

#: Notifications kept for one account: a new one past it drops the oldest.
KEEP = 100
#: A host's announcement is kept in the inbox of every account seen within these days.
ANNOUNCE_DAYS = 30
#: A game whose turns last this long or longer (seconds) is played by correspondence: its
#: ``your_turn`` lands in the inbox too.
CORRESPONDENCE_SECONDS = 3600


def note_of(record: NoteRecord) -> m.Note:
    """A stored notification as the wire shows it."""
    data = record.data
    return m.Note(id=record.id, kind=record.kind, text=record.text, at=record.created_at,
                  new=not record.read, room=data.get("room"), from_=data.get("from"),
                  ref=data.get("ref"))


class Inbox:
    """The inboxes of a server's accounts (see the module docstring)."""

    def __init__(self, store: Store, accounts: Accounts,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.accounts = accounts
        self.clock = clock

    async def notify(self, account: str, kind: str, text: str, *, room: str | None = None,
                     from_: str | None = None, ref: str | None = None,
                     push: bool = True) -> m.Note:
        """Store a notification for ``account`` and (``push``) send it as a ``note`` push to
        each of its connections, wherever they are. ``kind`` is one of
        :data:`shared.messages.NOTE_KINDS`; ``text`` the sentence shown (1 to 300 printable
        characters); ``room``, ``from_`` (a player's name) and ``ref`` (a challenge's or a
        tournament's id) what it is about. Raises the store's error when it cannot be kept;
        a push that cannot reach another node is logged, not raised."""
        data: dict[str, Any] = {k: v for k, v in (("room", room), ("from", from_),
                                                  ("ref", ref)) if v is not None}
        text = "".join(c if printable(c) else " " for c in text).strip()[:300] or kind
        note = note_of(await self.store.add_note(account, kind, text, data,
                                                 self.clock(), KEEP))
        if push:
            await self.accounts.deliver(account, m.NotePush(note=note))
        return note

    async def announce(self, text: str) -> int:
        """A host's announcement, kept (quietly: the connections heard it as a ``notice``)
        in the inbox of every account seen within :data:`ANNOUNCE_DAYS`; how many."""
        accounts = await self.store.accounts_seen_since(self.clock() - ANNOUNCE_DAYS * 86400)
        for account in accounts:
            await self.notify(account, "announcement", text, push=False)
        return len(accounts)

    async def listing(self, account: str) -> list[m.Note]:
        """``account``'s newest notifications (newest first), as they were before this
        listing; all are read after it."""
        notes = [note_of(r) for r in await self.store.notes(account, m.INBOX_MAX)]
        if any(n.new for n in notes):
            await self.store.read_notes(account)
        return notes

    async def clear(self, account: str) -> int:
        """Delete every notification of ``account``; how many there were."""
        return await self.store.clear_notes(account)

    async def greet(self, conn: Connection) -> None:
        """Right after a signed-in ``welcome``: the account's new notifications, counted,
        and the newest few (an ``inbox_new`` push; nothing when there are none)."""
        account = conn.account
        if account is None:
            return
        fresh = [note_of(r) for r in await self.store.notes(account, KEEP) if not r.read]
        if fresh:
            conn.send_bytes(encode(m.InboxNewPush(count=len(fresh),
                                                   notes=tuple(fresh[:m.INBOX_NEW_SHOWN]))))

