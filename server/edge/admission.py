"""Admission: which connections the server lets in, before the WebSocket upgrade.

:class:`Admission` refuses over plain HTTP what it would only close afterwards (not a Castell
client, the server full, too many connections from one address), answers ``/health``, and
counts every admitted connection against its address from its handshake until its socket
closes, however it closes. A plain GET that asks for no WebSocket upgrade is a browser's: it
is given its web page (:mod:`server.web`, unless ``--web off``), never admitted nor counted.
An answer over plain HTTP (``/health``, ``/ready``, ``/metrics``: probes that come every few
seconds; and the web pages) writes nothing to the log above DEBUG.
The limits are :class:`~server.config.ServerConfig` fields,
explained in ``docs/security.md``.
"""

from __future__ import annotations

import email.utils
import logging
import socket
from collections import Counter
from collections.abc import Awaitable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.config import ServerConfig
from server.features.moderation import Moderation, until
from server.ops.metrics import CONTENT_TYPE_LATEST, Metrics
from shared.messages import SUBPROTOCOL

if TYPE_CHECKING:
    from server.web.answers import Page
    from server.web.router import Web

log = logging.getLogger("castell.server")


def offered_subprotocols(headers: Headers) -> list[str]:
    return [
        token.strip()
        for value in headers.get_all("Sec-WebSocket-Protocol")
        for token in value.split(",")
    ]


def wants_upgrade(headers: Headers) -> bool:
    """Whether a request asks for the WebSocket upgrade (a browser's page does not)."""
    return any(token.strip().lower() == "websocket"
               for value in headers.get_all("Upgrade") for token in value.split(","))


def http_response(page: Page, *, body: bool = True) -> Response:
    """A web page (:class:`server.web.answers.Page`) as the HTTP response websockets sends
    (and then closes the connection: one page per connection); without its ``body`` for a
    HEAD request (its length said all the same)."""
    headers = Headers([("Date", email.utils.formatdate(usegmt=True)), ("Connection", "close"),
                       ("Content-Length", str(len(page.body))), *page.all_headers()])
    return Response(page.status, HTTPStatus(page.status).phrase, headers,
                    page.body if body else b"")


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
                 metrics: Metrics | None = None, web: Web | None = None) -> None:
        """``moderation``: the bans checked at the handshake; ``metrics``: served at
        ``/metrics`` (None: not on this port); ``web``: the web pages a browser is given
        (None: none, ``--web off``)."""
        self.config = config
        #: Every admitted connection, from process_request until its socket closes, with
        #: the address it counts against: what the connection caps count.
        self.admitted: dict[ServerConnection, str] = {}
        self.per_address: Counter[str] = Counter()
        #: Whether the server takes new players (``/ready``): not while it starts or drains.
        self.ready = False
        self.metrics = metrics
        self.moderation = moderation
        self.web = web

    def process_request(self, connection: ServerConnection, request: Request,
                        ) -> Response | Awaitable[Response] | None:
        """websockets' hook: refuse, or admit and count, one connection; a browser's
        request (no upgrade asked) is answered its web page (a coroutine websockets
        awaits)."""
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
        if self.web is not None and not wants_upgrade(request.headers):
            return self._page(self.web, connection, request)
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

    async def _page(self, web: Web, connection: ServerConnection, request: Request,
                    ) -> Response:
        """A browser's page, for its address (a barred one gets 403, as at the upgrade)."""
        address = self.address(connection, request)
        if self.moderation.address_ban(address) is not None:
            return quiet(connection).respond(HTTPStatus.FORBIDDEN,
                                             "Your address is barred from this server.\n")
        method = getattr(request, "method", "GET")
        if method not in ("GET", "HEAD"):  # the pages are read, never posted to
            response = quiet(connection).respond(HTTPStatus.METHOD_NOT_ALLOWED,
                                                 "Pages here are only read (GET).\n")
            response.headers["Allow"] = "GET, HEAD"
            return response
        headers = request.headers
        proto = headers.get("X-Forwarded-Proto") if self.config.trust_proxy else None
        page = await web.answer(request.path, address, headers.get("Host"), proto)
        quiet(connection)
        return http_response(page, body=method == "GET")

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
