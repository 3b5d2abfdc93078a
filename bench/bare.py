"""The baseline server: bare websockets, echo and broadcast, with Castell's socket settings.

    python -m bench.bare [--host H] [--port P] [--loop asyncio|uvloop]

It is what a Castell server would cost if it did no work of its own. Its first frame from a
client names a room (``{"type": "join", "room": ...}``: echoed back, then the room's current
push follows, as Castell's does after ``joined``); every later frame is echoed to its sender
(the *round trip*) and then a ``state`` push is sent to each member of the sender's room (the
*broadcast*): the same pre-encoded mid-game view as MessagePack
(:func:`bench.common.sample_game`, about the size of a real one), with a version counted per
room spliced into the header, so nothing is encoded per change.

It listens with the very settings ``CastellServer`` uses (``server.app.connection_options``:
frame limit, no compression, ping interval, timeouts, the write limit; the same kernel send
buffer, subprotocol and default event loop) and sends as ``server.runtime.connection`` does: a
non-blocking write per member, closing a member whose write buffer passes the same limit. It
announces ``... listening on ws://HOST:PORT`` on stdout like ``castell-server``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

import msgpack
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.http11 import Request

from bench.common import room_info, sample_game
from server.app import connection_options
from server.config import SUBPROTOCOL, ServerConfig
from server.edge.admission import bound_send_buffer
from server.runtime.loop import LOOPS, run
from shared.codec import event_to_wire
from shared.view import build_view


class BareRoom:
    """Members and a version; the push is spliced from pre-encoded parts."""

    def __init__(self, room: str, view: bytes, events: bytes) -> None:
        self.members: set[ServerConnection] = set()
        self.version = 0
        # A state push is a 5-key map: type, room, version, view, events (as shared.codec).
        self._head = b"\x85" + b"".join(map(msgpack.packb, ("type", "state", "room", room,
                                                              "version")))
        self._tail = msgpack.packb("view") + view + msgpack.packb("events") + events

    def push(self, *, bump: bool = True) -> bytes:
        self.version += bump
        return self._head + msgpack.packb(self.version) + self._tail


class BareServer:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        state, events = sample_game(4)
        self.view = msgpack.packb(build_view(room_info(state), state))
        self.events = msgpack.packb([event_to_wire(e) for e in events])
        self.rooms: dict[str, BareRoom] = {}

    def process_request(self, connection: ServerConnection, request: Request) -> None:
        # As CastellServer does before each upgrade: the same kernel send buffer.
        bound_send_buffer(connection, self.config.socket_send_buffer)

    def send(self, ws: ServerConnection, data: bytes) -> None:
        broadcast([ws], data)
        transport = ws.transport
        if transport is not None and \
                transport.get_write_buffer_size() > self.config.write_buffer_limit:
            asyncio.get_running_loop().create_task(ws.close(1008, "too slow"))

    async def handler(self, ws: ServerConnection) -> None:
        room: BareRoom | None = None
        try:
            async for data in ws:
                if room is None:
                    name = str(msgpack.unpackb(data)["room"])
                    room = self.rooms.get(name) or self.rooms.setdefault(
                        name, BareRoom(name, self.view, self.events))
                    room.members.add(ws)
                    self.send(ws, data)
                    self.send(ws, room.push(bump=False))  # as Castell's push after `joined`
                    continue
                self.send(ws, data)
                push = room.push()
                for member in room.members:
                    self.send(member, push)
        finally:
            if room is not None:
                room.members.discard(ws)


async def until_stopped(host: str, sockets: Iterable[socket.socket]) -> None:
    """Say where a bare baseline listens (``... listening on ws://HOST:PORT``, as
    ``castell-server`` does), then wait for SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    port = next(iter(sockets)).getsockname()[1]
    print(f"bare server listening on ws://{host}:{port}", flush=True)
    await stop.wait()


async def serve_bare(host: str, port: int) -> None:
    cfg = ServerConfig(host=host, port=port)
    bare = BareServer(cfg)
    async with serve(bare.handler, cfg.host, cfg.port,
                     subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                     process_request=bare.process_request,
                     **connection_options(cfg)) as server:
        await until_stopped(cfg.host, server.sockets)


def command(argv: list[str] | None, module: str, doc: str,
            serve: Callable[[str, int], Coroutine[Any, Any, None]]) -> None:
    """A bare baseline's command line (``python -m MODULE --host --port --loop``): ``serve``
    on the host, port and event loop it names, until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}",
                                     description=doc.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", choices=LOOPS, default="asyncio",
                        help="the event loop, as castell-server's --loop")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        run(serve(args.host, args.port), args.loop)


def main(argv: list[str] | None = None) -> None:
    command(argv, "bench.bare", __doc__ or "", serve_bare)


if __name__ == "__main__":
    main()
