"""Where each signed-in account is, for those who follow it (``friends``): in the lobby,
playing or watching in a room, or offline.

An account's presence here is read from its connections on this server (the best of them:
playing, then watching, then the lobby; :func:`presence_of`). A lone server reads nothing
else, so what it says is never stale. A node of a cluster also writes the presence of
the accounts connected to it into Redis, a hash per account (``presence:ACCOUNT``, one
field per node, each value stamped with when it was written) that expires
:data:`TTL_MS` after its last write: each node rewrites its accounts every
:data:`EVERY` seconds and at once when an account comes or goes. A node reading another's
account sees it as it was at most :data:`EVERY` seconds ago; a field older than the TTL (a
node that died) is not believed. An account that hides its presence is never written, and
is shown as ``hidden``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from server.edge.states import ConnState

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode
    from server.features.accounts import Accounts
    from server.runtime.connection import Connection

log = logging.getLogger("castell.presence")

#: Seconds between two writes of this node's accounts into Redis.
EVERY = 1.0
#: How long a node's word on an account's presence lasts in Redis (ms).
TTL_MS = 5000

#: A presence: its state (``lobby``, ``playing``, ``watching``), and the room and its name
#: (None: in no room, or a private one).
Where = tuple[str, str | None, str | None]

_RANK = {"playing": 3, "watching": 2, "lobby": 1}


def where_of(conn: Connection) -> Where:
    """Where one connection is."""
    runner = conn.room
    if runner is None or conn.state not in (ConnState.SEATED, ConnState.WATCHING):
        return ("lobby", None, None)
    state = "playing" if conn.state is ConnState.SEATED else "watching"
    if runner.room.private:
        return (state, None, None)
    return (state, runner.id, runner.room.name)


def best(places: Iterable[Where]) -> Where | None:
    """The presence shown for an account at several places: playing before watching before
    the lobby (None: nowhere)."""
    return max(places, key=lambda w: _RANK[w[0]], default=None)


def presence_of(conns: Iterable[Connection]) -> Where | None:
    """An account's presence from its connections (None: none)."""
    return best(where_of(c) for c in conns if not c.closing)


class Presence:
    """The presence of accounts (see the module docstring); ``node``: this server as a node
    of its cluster (None: a lone server)."""

    def __init__(self, accounts: Accounts, node: ClusterNode | None = None,
                 clock: Any = time.time) -> None:
        self.accounts = accounts
        self.node = node
        self.clock = clock
        #: Accounts with connections here that hide their presence.
        self.hidden: set[str] = set()
        self._loop: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def key(self, account: str) -> str:
        assert self.node is not None
        return f"{self.node.keys.prefix}presence:{account}"

    async def start(self) -> None:
        """On a cluster node: write this node's accounts every :data:`EVERY` seconds."""
        if self.node is not None:
            self._loop = asyncio.create_task(self._writing())

    async def close(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(BaseException):
                await self._loop
        for task in list(self._tasks):
            task.cancel()

    def here(self, account: str) -> Where | None:
        """``account``'s presence on this server (None: no connection here)."""
        return presence_of(self.accounts.connections.get(account, ()))

    async def of(self, accounts: list[str]) -> dict[str, Where]:
        """The presence of each of ``accounts`` that is somewhere (hidden ones included:
        their caller shows them as hidden)."""
        out: dict[str, Where] = {}
        for account in accounts:
            found = self.here(account)
            if found is not None:
                out[account] = found
        if self.node is None or self.node.redis is None or not accounts:
            return out
        try:
            async with self.node.redis.pipeline(transaction=False) as pipe:
                for account in accounts:
                    pipe.hgetall(self.key(account))
                answers = await pipe.execute()
        except Exception as exc:
            log.warning("presence could not be read from Redis: %s", exc)
            return out
        now = self.clock()
        for account, fields in zip(accounts, answers, strict=True):
            places = [out[account]] if account in out else []
            for node, raw in (fields or {}).items():
                if node == self.node.node_id:
                    continue
                try:
                    data = json.loads(raw)
                    if now - float(data["at"]) <= TTL_MS / 1000:
                        places.append((str(data["state"]), data.get("room"),
                                       data.get("name")))
                except Exception:
                    continue
            found = best(places)
            if found is not None:
                out[account] = found
        return out

    # -- a cluster node's writes ---------------------------------------------------------------

    def changed(self, account: str) -> None:
        """``account`` came, went or hid here: its word in Redis is written at once."""
        if self.node is None:
            return
        task = asyncio.get_running_loop().create_task(self._write([account]))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _writing(self) -> None:
        while True:
            await asyncio.sleep(EVERY)
            try:
                await self._write(list(self.accounts.connections))
            except Exception as exc:
                log.warning("presence could not be written to Redis: %s", exc)

    async def _write(self, accounts: list[str]) -> None:
        node = self.node
        if node is None or node.redis is None or not accounts:
            return
        now = self.clock()
        async with node.redis.pipeline(transaction=False) as pipe:
            for account in accounts:
                found = self.here(account)
                if found is None or account in self.hidden:
                    pipe.hdel(self.key(account), node.node_id)
                    continue
                state, room, name = found
                pipe.hset(self.key(account), node.node_id, json.dumps(
                    {"state": state, "room": room, "name": name, "at": now}))
                pipe.pexpire(self.key(account), TTL_MS)
            await pipe.execute()
