"""Clients that sign in: clients opened, said hello (with an account key, as the client
makes them, :func:`client.local.keys.new_key`, or as guests) and closed afterwards, for the tests
of accounts and ratings."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from client.net.net import GameClient

#: ``connect(name, key=None, where=None)``: a client said hello to the server at ``where``
#: (the test's own server unless told), signed in with ``key`` when given.
Connect = Callable[..., Awaitable[GameClient]]


@contextlib.asynccontextmanager
async def clients(url: str) -> AsyncIterator[Connect]:
    """A ``connect`` to ``url``; every client it opened is closed at the end."""
    opened: list[GameClient] = []

    async def make(name: str, key: str | None = None, where: str | None = None) -> GameClient:
        client = await GameClient.connect(where or url)
        opened.append(client)
        await client.hello(name, key)
        return client

    yield make
    for client in opened:
        await client.close()
