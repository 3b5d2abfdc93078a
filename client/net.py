"""The client side of the wire: one websocket to a server, requests matched to replies.

``GameClient`` sends requests with fresh ids, resolves each one when the reply with that
``re`` arrives (raising :class:`ServerError` for an ``error``), and queues pushes
(``state``, ``chat``) in arrival order while keeping the latest ``state``. The terminal
client, the bots' load generator and the tests all speak through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import ssl
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from shared import messages as m
from shared.actions import Action
from shared.codec import decode, encode
from shared.errors import CastellError

SUBPROTOCOL = "castell.v1"


class ServerError(CastellError):
    """Raised when the server answers a request with an ``error``."""

    def __init__(self, error: m.Error) -> None:
        super().__init__(error.message, code=error.code)
        self.rule = error.rule
        self.error = error


class GameClient:
    """A connection to a Castell server. Use :meth:`connect`."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.pushes: asyncio.Queue[Any] = asyncio.Queue()
        self.state: m.StatePush | None = None
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, url: str, *, ssl_context: ssl.SSLContext | None = None,
                      open_timeout: float = 10.0, **kwargs: Any) -> GameClient:
        ws = await connect(url, subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                           ssl=ssl_context, open_timeout=open_timeout,
                           compression=None, max_size=4 * 1024 * 1024, **kwargs)
        return cls(ws)

    async def close(self) -> None:
        await self.ws.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def __aenter__(self) -> GameClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests --------------------------------------------------------------------------

    async def request(self, cls: type, /, **fields: Any) -> Any:
        """Send ``cls(id=<fresh>, **fields)`` and return its reply (or raise ServerError)."""
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self.ws.send(encode(cls(id=msg_id, **fields)))
            reply = await future
        finally:
            self._pending.pop(msg_id, None)
        if isinstance(reply, m.Error):
            raise ServerError(reply)
        return reply

    async def hello(self, name: str) -> m.Welcome:
        return await self.request(m.Hello, name=name)

    async def act(self, action: Action) -> int:
        """Send an action; returns the room's version after it."""
        reply = await self.request(m.ActionRequest, action=action)
        return reply.version

    # -- pushes ----------------------------------------------------------------------------

    async def next_push(self, timeout: float = 10.0) -> Any:
        return await asyncio.wait_for(self.pushes.get(), timeout)

    async def wait_state(self, predicate: Any = None, timeout: float = 10.0) -> m.StatePush:
        """The next ``state`` push (satisfying ``predicate``, if given), skipping others."""
        async with asyncio.timeout(timeout):
            while True:
                push = await self.pushes.get()
                if isinstance(push, m.StatePush) and (predicate is None or predicate(push)):
                    return push

    def drain(self) -> list[Any]:
        """Every push queued so far, without waiting."""
        out = []
        while not self.pushes.empty():
            out.append(self.pushes.get_nowait())
        return out

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                if isinstance(data, str):
                    continue
                msg = decode(data)
                re = getattr(msg, "re", None)
                if re is not None and re in self._pending:
                    self._pending[re].set_result(msg)
                    continue
                if isinstance(msg, m.StatePush) and (
                    self.state is None or msg.version >= self.state.version
                ):
                    self.state = msg
                self.pushes.put_nowait(msg)
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))
