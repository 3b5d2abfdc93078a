"""Who this server is: its identity, the same at every address that reaches it.

A client keeps an account's key by the server it belongs to, not by the address typed to
reach it (``ws://192.0.2.2:8765``, ``ws://127.0.0.1:8765`` and a port forwarded elsewhere all
reach one server). The server says who it is in ``welcome.server_id`` and, before ``hello``, in
reply to ``identify`` (docs/protocol.md). The identity is a random id made at the first start
and kept in the store (``server_meta``), so it survives restarts, and every node of a cluster,
sharing one database, is the same server. (A server given no store keeps it in its store in
memory: a new one each run.)
"""

from __future__ import annotations

import secrets

from server.store.base import Store

#: The name of the identity in the store's ``server_meta``.
META_NAME = "server_id"


def new_server_id() -> str:
    """A fresh identity: ``srv-`` and 128 random bits."""
    return "srv-" + secrets.token_urlsafe(16)


async def server_id(store: Store) -> str:
    """The identity kept in ``store`` (made and kept now, the first time)."""
    return await store.server_meta(META_NAME, new_server_id())


class Identity:
    """This server's identity, as its store keeps it: None until :meth:`load` read it (the
    server does once its store is open, before it listens)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.id: str | None = None

    async def load(self) -> str:
        """Read the identity (made and kept now, the first time)."""
        self.id = await server_id(self.store)
        return self.id
