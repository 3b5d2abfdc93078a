"""A TCP proxy on 127.0.0.1 that can cut a connection at a chosen moment: a real network fault.

``cut_after_commit()`` arms it: the next connection that sends a ``COMMIT`` (PostgreSQL's
simple query, as asyncpg ends a transaction) has the database's answer swallowed and is then
cut, so the database has committed while its client never hears so — the lost answer that a
server must survive. With ``blackout`` every other connection is cut with it and new ones are
refused until :meth:`CuttingProxy.end_blackout`: the database is out of reach, so not even a
read can tell the server what was stored. ``hide_closes()`` makes a connection that the
database ends look alive to its client (the end never reaches it, as when a network loses
it): a client learns of it only by what it sends next. Every other byte passes both ways
untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

#: PostgreSQL's Terminate message: a client closing its connection says so.
_TERMINATE = b"X\x00\x00\x00\x04"


class CuttingProxy:
    """Forwards 127.0.0.1:``port`` to ``upstream``; see the module docstring."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.cuts = 0
        self._armed = False
        self._blackout = False
        self._dark = False
        self._hide_closes = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def cut_after_commit(self, *, blackout: bool = False) -> None:
        self._armed = True
        self._blackout = blackout

    def hide_closes(self) -> None:
        """From now on, a connection the database ends stays open, silent, to its client."""
        self._hide_closes = True

    def blackout(self) -> None:
        """Cut every connection now and refuse new ones, until :meth:`end_blackout`."""
        self._go_dark()

    def end_blackout(self) -> None:
        self._dark = False

    def _go_dark(self) -> None:
        self._dark = True
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        if self._dark:
            writer.transport.abort()
            self._tasks.discard(task)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))
        cut = asyncio.Event()
        last = b""  # what the client sent last: PostgreSQL's Terminate when it closes

        async def downstream() -> None:  # database → client
            while data := await up_reader.read(65536):
                if cut.is_set():  # the answer to COMMIT: swallowed, then the cut
                    self.cuts += 1
                    if self._blackout:
                        self._go_dark()
                    break
                writer.write(data)
                await writer.drain()

        async def upstream() -> None:  # client → database
            nonlocal last
            while data := await reader.read(65536):
                last = data
                if self._armed and b"COMMIT" in data:
                    self._armed = False
                    cut.set()
                up_writer.write(data)
                await up_writer.drain()

        try:
            pumps = [asyncio.create_task(downstream()), asyncio.create_task(upstream())]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            if (self._hide_closes and pumps[0].done() and not cut.is_set()
                    and not last.endswith(_TERMINATE)):
                pumps[1].cancel()  # the client hears of the end only when it next speaks
                with contextlib.suppress(asyncio.CancelledError):
                    await pumps[1]
                await reader.read(65536)
            for pump in pumps:
                pump.cancel()
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                with contextlib.suppress(Exception):
                    w.transport.abort()
            self._tasks.discard(task)


@contextlib.asynccontextmanager
async def cutting_proxy(host: str, port: int) -> AsyncIterator[CuttingProxy]:
    async with CuttingProxy(host, port) as proxy:
        yield proxy


def through(url: str, port: int) -> str:
    """``url`` with its host and port replaced by the proxy's (and no TLS to read through)."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    sep = "&" if parts.query else ""
    return parts._replace(netloc=f"{user}127.0.0.1:{port}",
                          query=f"{parts.query}{sep}sslmode=disable").geturl()
