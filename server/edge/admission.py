"""Admission: which connections the server lets in, before the WebSocket upgrade.

:class:`Admission` refuses over plain HTTP what it would only close afterwards (not a Castell
client, the server full, too many connections from one address), answers ``/health``, and
counts every admitted connection against its address from its handshake until its socket
closes, however it closes. An answer over plain HTTP (``/health``, ``/ready``,
``/metrics``: probes that come every few seconds) writes nothing to the log above DEBUG.
The limits are :class:`~server.config.ServerConfig` fields,
explained in ``docs/security.md``.
"""

from __future__ import annotations

import logging
import socket
from collections import Counter
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.config import ServerConfig
from server.features.moderation import Moderation, until
from server.ops.metrics import CONTENT_TYPE_LATEST, Metrics
from shared.messages import SUBPROTOCOL

log = logging.getLogger("castell.server")


def offered_subprotocols(headers: Headers) -> list[str]:
    return [
        token.strip()
        for value in headers.get_all("Sec-WebSocket-Protocol")
        for token in value.split(",")
    ]


def forwarded_for(headers: Headers) -> str | None:
    """The address a reverse proxy says the client has: the last X-Forwarded-For entry (the
    one the proxy added; earlier ones are whatever the client claimed)."""
    entries = [part.strip() for value in headers.get_all("X-Forwarded-For")
               for part in value.split(",")]
    entries = [e for e in entries if e]
    return entries[-1][:64] if entries else None


def bound_send_buffer(connection: ServerConnection, size: int | None) -> None:
    """Set the kernel's send buffer of one connection (SO_SNDBUF; None: leave the system's)."""
    sock = connection.transport.get_extra_info("socket")
    if size is None or sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    except OSError:  # some platforms refuse; their default stays
        log.debug("could not set SO_SNDBUF", exc_info=True)


class _Quiet(logging.LoggerAdapter[logging.Logger]):
    """A connection's logger that logs its INFO lines at DEBUG: what websockets says of an
    HTTP probe (its answer sent, its connection closed) is not an event for the log."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        super().log(logging.DEBUG if level == logging.INFO else level, msg, *args, **kwargs)


def quiet(connection: ServerConnection) -> ServerConnection:
    """Keep what websockets logs of ``connection`` (a probe over plain HTTP) at DEBUG."""
    logger = _Quiet(connection.protocol.logger, {})  # type: ignore[arg-type]
    connection.protocol.logger = connection.logger = logger
    return connection


class Admission:
    """The connection caps of one server (see the module docstring)."""

    def __init__(self, config: ServerConfig, *, moderation: Moderation,
                 metrics: Metrics | None = None) -> None:
        """``moderation``: the bans checked at the handshake; ``metrics``: served at
        ``/metrics`` (None: not on this port)."""
        self.config = config
        #: Every admitted connection, from process_request until its socket closes, with
        #: the address it counts against: what the connection caps count.
        self.admitted: dict[ServerConnection, str] = {}
        self.per_address: Counter[str] = Counter()
        #: Whether the server takes new players (``/ready``): not while it starts or drains.
        self.ready = False
        self.metrics = metrics
        self.moderation = moderation

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """websockets' hook: refuse, or admit and count, one connection."""
        if request.path == "/health":
            return quiet(connection).respond(HTTPStatus.OK, "ok\n")
        if request.path == "/ready":
            return quiet(connection).respond(HTTPStatus.OK, "ready\n") if self.ready else \
                connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "not ready\n")
        if request.path == "/metrics" and self.metrics is not None:
            response = quiet(connection).respond(HTTPStatus.OK, self.metrics.scrape().decode())
            del response.headers["Content-Type"]  # (respond's text/plain: one type only)
            response.headers["Content-Type"] = CONTENT_TYPE_LATEST
            return response
        if SUBPROTOCOL not in offered_subprotocols(request.headers):
            return connection.respond(
                HTTPStatus.BAD_REQUEST,
                f"This is a Castell server: connect over WebSocket offering the subprotocol "
                f"{SUBPROTOCOL}.\n",
            )
        address = self.address(connection, request)
        ban = self.moderation.address_ban(address)
        if ban is not None:
            return connection.respond(HTTPStatus.FORBIDDEN,
                                      f"Your address is barred from this Castell server"
                                      f"{until(ban)}.\n")
        if len(self.admitted) >= self.config.max_connections:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                      "This Castell server is full; try again later.\n")
        if self.per_address[address] >= self.config.max_per_address:
            return connection.respond(HTTPStatus.TOO_MANY_REQUESTS,
                                      "Too many connections from your address.\n")
        self.admitted[connection] = address
        self.per_address[address] += 1
        connection.connection_lost_waiter.add_done_callback(
            lambda _: self._release(connection))
        bound_send_buffer(connection, self.config.socket_send_buffer)
        return None

    def _release(self, connection: ServerConnection) -> None:
        address = self.admitted.pop(connection, None)
        if address is None:
            return
        self.per_address[address] -= 1
        if self.per_address[address] <= 0:
            del self.per_address[address]

    def address(self, ws: ServerConnection, request: Request | None) -> str:
        """The address a connection counts against: its peer's, or with ``trust_proxy`` the
        one the reverse proxy in front of us forwarded."""
        if ws in self.admitted:
            return self.admitted[ws]
        if self.config.trust_proxy and request is not None:
            forwarded = forwarded_for(request.headers)
            if forwarded is not None:
                return forwarded
        peer = ws.remote_address
        return str(peer[0]) if peer else "?"
