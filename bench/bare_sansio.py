"""The bare baseline on websockets' sans-I/O layer: what the transport alone would cost.

    python -m bench.bare_sansio [--host H] [--port P] [--loop asyncio|uvloop]

The same echo and broadcast as :mod:`bench.bare` (the same rooms, pre-encoded pushes, frame
limit, kernel send buffer, subprotocol and write limit), but each connection is an
``asyncio.Protocol`` that feeds the bytes it reads to websockets' ``ServerProtocol`` (the
sans-I/O state machine that websockets' own asyncio connection wraps) and writes what it
gives back: no task, future or queue per frame. ``python -m bench server --bare sansio`` runs
it in place of :mod:`bench.bare`, to measure how much of a server's CPU per action a
connection layer of that kind would save (BENCHMARKS.md, "The transport alone").

It is a baseline, not a server: no ping timer, no handshake timeout, no TLS.
"""

from __future__ import annotations

import asyncio
import socket

import msgpack
from websockets.frames import Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.typing import Subprotocol

from bench.bare import BareRoom, BareServer, command, until_stopped
from server.config import SUBPROTOCOL, ServerConfig


class Connection(asyncio.Protocol):
    """One client: bytes in to the sans-I/O protocol, its events handled, its bytes out."""

    def __init__(self, server: SansIOServer) -> None:
        self.server = server
        self.ws = ServerProtocol(subprotocols=[Subprotocol(SUBPROTOCOL)],
                                 max_size=server.config.max_frame)
        self.room: BareRoom | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:  # as server.edge.admission.bound_send_buffer does
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                            self.server.config.socket_send_buffer)

    def data_received(self, data: bytes) -> None:
        ws = self.ws
        ws.receive_data(data)
        for event in ws.events_received():
            if isinstance(event, Request):
                ws.send_response(ws.accept(event))
            elif event.opcode is Opcode.BINARY:
                self.server.message(self, event.data)
        self.flush()

    def eof_received(self) -> bool | None:
        self.ws.receive_eof()
        self.flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.room is not None:
            self.room.members.discard(self)  # type: ignore[arg-type]

    def flush(self) -> None:
        """Write what the protocol has to send; an empty chunk means: close the socket."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        for chunk in self.ws.data_to_send():
            if chunk:
                transport.write(chunk)
            else:
                transport.close()
                return
        if transport.get_write_buffer_size() > self.server.config.write_buffer_limit:
            self.ws.send_close(1008, "too slow")
            self.flush()

    def send(self, data: bytes) -> None:
        if self.ws.state is State.OPEN:
            self.ws.send_binary(data)
            self.flush()


class SansIOServer(BareServer):
    """The rooms and what a frame does: as :class:`bench.bare.BareServer`, whose rooms and
    pre-encoded pushes it keeps."""

    def message(self, conn: Connection, data: bytes) -> None:
        room = conn.room
        if room is None:
            name = str(msgpack.unpackb(data)["room"])
            room = self.rooms.get(name) or self.rooms.setdefault(
                name, BareRoom(name, self.view, self.events))
            room.members.add(conn)  # type: ignore[arg-type]
            conn.room = room
            conn.send(data)
            conn.send(room.push(bump=False))  # as Castell's push after `joined`
            return
        conn.send(data)
        push = room.push()
        for member in list(room.members):
            member.send(push)  # type: ignore[attr-defined]


async def serve_sansio(host: str, port: int) -> None:
    cfg = ServerConfig(host=host, port=port)
    server = SansIOServer(cfg)
    listener = await asyncio.get_running_loop().create_server(lambda: Connection(server),
                                                              cfg.host, cfg.port)
    try:
        await until_stopped(cfg.host, listener.sockets)
    finally:
        listener.close()


def main(argv: list[str] | None = None) -> None:
    command(argv, "bench.bare_sansio", __doc__ or "", serve_sansio)


if __name__ == "__main__":
    main()
