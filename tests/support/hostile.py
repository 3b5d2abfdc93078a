"""What the hardening tests need: raw websockets, stalled readers, a game played beside.

Everything here talks to a real server on 127.0.0.1 over real sockets; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import threading
from collections.abc import Coroutine
from typing import Any

import attrs
import msgpack
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from client.net.net import GameClient
from shared import codec
from shared import messages as m
from shared.errors import ProtocolError
from tests.support.wire import play_legal

SUBPROTOCOL = m.SUBPROTOCOL
#: Every push a server sends unasked (a reply has a `re`, a push has none): read off the
#: registry, so that a push added to the protocol is never taken for a reply here.
PUSHES = tuple(cls for cls in m.SERVER_TYPES.values() if "re" not in attrs.fields_dict(cls))


async def raw(url: str, **kwargs: Any) -> ClientConnection:
    """A websocket speaking castell.v1 with no client logic: frames in, frames out."""
    kwargs.setdefault("ping_interval", None)
    return await ws_connect(url, subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                            compression=None, max_size=None, **kwargs)


def frame(msg: Any) -> bytes:
    return codec.encode(msg)


def packed(value: object) -> bytes:
    """Any value as MessagePack, whether the protocol allows it or not: what a hostile peer
    can put in a frame."""
    return msgpack.packb(value, use_bin_type=True)


async def next_reply(ws: ClientConnection, timeout: float = 5.0) -> Any:
    """The next frame that is not a push, decoded as a client must be able to decode it."""
    async with asyncio.timeout(timeout):
        while True:
            msg = codec.decode_server(await ws.recv())
            if not isinstance(msg, PUSHES):
                return msg


async def ask(ws: ClientConnection, msg: Any, timeout: float = 5.0) -> Any:
    await ws.send(frame(msg))
    return await next_reply(ws, timeout)


def readable_id(data: bytes | str, limits: codec.FrameLimits = codec.DEFAULT_LIMITS) -> int | None:
    """The ``re`` the protocol promises for a frame: its ``id`` when the frame is a map with a
    string ``type`` and a valid ``id`` (docs/protocol.md, "Envelope"), else None."""
    if isinstance(data, str):
        return None
    try:
        value = codec.unpack(data, limits=limits)
    except ProtocolError:
        return None
    if type(value) is not dict or type(value.get("type")) is not str:
        return None
    msg_id = value.get("id")
    if type(msg_id) is int and 0 <= msg_id < 2**31:
        return msg_id
    return None


async def wait_closed(ws: ClientConnection, timeout: float = 5.0) -> None:
    """Read (and drop) frames until the server closes ``ws``."""
    async with asyncio.timeout(timeout):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed:
            return


async def stalled(url: str, port: int, name: str, room: str, *, as_: str = "spectator",
                  rcvbuf: int = 4096) -> ClientConnection:
    """A spectator (or player) of ``room`` that then never reads again.

    Its socket's receive buffer is made small before connecting (so the TCP window stays
    small) and its transport stops reading, so everything the server sends piles up: first
    in the kernel's buffers, then in the server's own write buffer.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    ws = await raw(url, sock=sock)
    await ask(ws, m.Hello(id=1, name=name))
    joined = await ask(ws, m.JoinRoom(id=2, room=room, as_=as_))
    assert isinstance(joined, m.Joined), joined
    ws.transport.pause_reading()
    return ws


class LoopThread:
    """An event loop in a thread, so that synchronous hypothesis tests can drive it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 30.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        async def _cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(_cancel_all())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class Table:
    """Two players with a game under way, playing random legal actions turn after turn:
    the game that must go on, unharmed, beside whatever the tests throw at the server."""

    def __init__(self, clients: list[GameClient], room: str, seed: int = 5) -> None:
        self.clients = clients
        self.room = room
        self.rng = random.Random(seed)
        self.played = 0
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, url: str) -> Table:
        a = await GameClient.connect(url)
        b = await GameClient.connect(url)
        await a.hello("Anna")
        await b.hello("Bernat")
        joined = await a.request(m.CreateRoom, name="beside", seats=2)
        await b.request(m.JoinRoom, room=joined.room)
        await a.request(m.StartGame)
        for c in (a, b):
            await c.wait_state(lambda p: p.view["status"] == "playing")
        return cls([a, b], joined.room)

    @property
    def view(self) -> dict[str, Any]:
        state = self.clients[0].state
        assert state is not None
        return state.view

    async def play(self, actions: int) -> None:
        """Play ``actions`` legal actions (or to the end of the game); every one must be
        acknowledged and seen by both players."""
        # end turns often enough that both seats play
        self.played += await play_legal(self.clients, self.rng, actions=actions, end_bias=0.3)

    def start(self, actions: int = 10_000, pause: float = 0.01) -> None:
        """Keep playing in the background until :meth:`stop`, an action every ``pause``
        seconds or so: the pace of a game under way (not a flood of its own, crowding the
        loop it shares with the server and whatever a test throws at it)."""
        async def loop() -> None:
            for _ in range(actions):
                await self.play(1)
                await asyncio.sleep(pause)  # pacing: the game's rate of play

        self._task = asyncio.get_running_loop().create_task(loop())

    async def stop(self) -> None:
        """Stop playing; raises whatever went wrong with the game meanwhile."""
        assert self._task is not None
        if self._task.done():
            self._task.result()
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def close(self) -> None:
        for c in self.clients:
            await c.close()
