"""The server: accepts websockets, speaks the protocol, and routes requests to the lobby and rooms.

This layer owns each connection's life — the handshake checks, the hello, limits, the
message loop, cleanup in ``finally`` — and turns every refusal into an ``error`` reply to
the sender only. What a request means for a room is ``server.room``'s business; what an
action means for the game is ``shared.engine``'s. Every limit it enforces is a
:class:`~server.config.ServerConfig` field, explained in ``docs/security.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from server.config import SUBPROTOCOL, ServerConfig
from server.connection import Connection
from server.limits import TokenBucket, recent
from server.lobby import Lobby
from server.room import Room, RoomError
from server.store.base import Store
from server.tls import server_ssl_context
from shared import messages as m
from shared.codec import decode_request, encode
from shared.errors import CastellError, ProtocolError
from shared.logs import frame_safe_logger

if TYPE_CHECKING:
    from server.cluster import ClusterConfig, ClusterNode

log = logging.getLogger("castell.server")

SERVER_VERSION = "castell-server 0.1.0"

Handler = Callable[[Connection, Any], Awaitable[None]]


def _offered_subprotocols(headers: Headers) -> list[str]:
    return [
        token.strip()
        for value in headers.get_all("Sec-WebSocket-Protocol")
        for token in value.split(",")
    ]


def _forwarded_for(headers: Headers) -> str | None:
    """The address a reverse proxy says the client has: the last X-Forwarded-For entry (the
    one the proxy added; earlier ones are whatever the client claimed)."""
    entries = [part.strip() for value in headers.get_all("X-Forwarded-For")
               for part in value.split(",")]
    entries = [e for e in entries if e]
    return entries[-1][:64] if entries else None


def connection_options(cfg: ServerConfig) -> dict[str, Any]:
    """The websockets settings of every connection (bench/bare.py listens with them too, so
    that its baseline is measured under the very same settings)."""
    return {
        "max_size": cfg.max_frame,
        "compression": "deflate" if cfg.compression else None,
        "ping_interval": cfg.ping_interval,
        "server_header": None,
        # Bounds the TLS handshake (websockets passes it on) and the WebSocket handshake.
        "open_timeout": cfg.open_timeout,
        "close_timeout": cfg.close_timeout,
        # websockets' own flow control pauses at the same mark that closes a slow client.
        "write_limit": cfg.write_buffer_limit,
    }


def bound_send_buffer(connection: ServerConnection, size: int | None) -> None:
    """Set the kernel's send buffer of one connection (SO_SNDBUF; None: leave the system's)."""
    sock = connection.transport.get_extra_info("socket")
    if size is None or sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    except OSError:  # some platforms refuse; their default stays
        log.debug("could not set SO_SNDBUF", exc_info=True)


class CastellServer:
    """One Castell server process: a lobby of rooms behind one listening socket.

    With a ``cluster`` (and a store every node shares) it is one node of several that serve
    one lobby together (``server.cluster``).
    """

    def __init__(self, config: ServerConfig | None = None, store: Store | None = None,
                 *, cluster: ClusterConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.store = store
        if cluster is not None and store is None:
            raise ValueError("a cluster node needs the store the cluster shares")
        self.cluster_config = cluster
        #: This server as a node of its cluster, once started (None on a lone server).
        self.cluster: ClusterNode | None = None
        self.lobby = Lobby(store=store, max_rooms=self.config.max_rooms,
                           bot_delay=self.config.bot_delay,
                           room_linger=self.config.room_linger,
                           unload_after=self.config.room_unload_after,
                           turn_time_scale=self.config.turn_time_scale)
        self.limits = self.config.frame_limits
        #: Connections whose handler runs (handshake done).
        self.connections: set[Connection] = set()
        #: Every admitted connection, from process_request until its socket closes, with
        #: the address it counts against: what the connection caps count.
        self.admitted: dict[ServerConnection, str] = {}
        self.per_address: Counter[str] = Counter()
        #: Recent failed seat-token attempts, by address (see _check_resume_rate).
        self.failed_resumes: dict[str, list[float]] = {}
        self._server: Server | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._handlers: dict[type, Handler] = {
            m.Hello: self.on_hello,
            m.ListRooms: self.on_list_rooms,
            m.CreateRoom: self.on_create_room,
            m.JoinRoom: self.on_join_room,
            m.LeaveRoom: self.on_leave_room,
            m.AddBot: self.on_add_bot,
            m.StartGame: self.on_start_game,
            m.Chat: self.on_chat,
            m.ActionRequest: self.on_action,
        }

    # -- life cycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        """Open the store, restore its unfinished games, then listen. A cluster node
        restores nothing itself: once listening, it joins its cluster and takes over the
        rooms that no node serves."""
        cfg = self.config
        if self.store is not None:
            await self.store.open()
            if self.cluster_config is None:
                restored = await self.lobby.restore()
                if restored:
                    log.info("restored %d unfinished room(s)", restored)
        self._server = await serve(
            self.handler, cfg.host, cfg.port,
            subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
            process_request=self.process_request,
            ssl=server_ssl_context(cfg),
            # Frames carry seat tokens: never log their contents, even at DEBUG.
            logger=frame_safe_logger("castell.ws"),
            **connection_options(cfg),
        )
        self._sweeper = asyncio.create_task(self._sweep())
        log.info("listening on %s://%s:%d", cfg.scheme, cfg.host, self.port)
        if self.cluster_config is not None:
            await self._join_cluster(self.cluster_config)

    async def _join_cluster(self, config: ClusterConfig) -> None:
        from server.cluster import ClusterNode

        assert self.store is not None
        if config.advertise is None and self.config.host in ("0.0.0.0", "::", ""):
            await self.close()
            raise CastellError("a cluster node listening on every address must say where it "
                               "is reached: give --advertise ws://HOST:PORT")
        node = ClusterNode(config, self.lobby, self.store)
        try:
            await node.start(f"{self.config.scheme}://{self.config.host}:{self.port}")
        except BaseException:
            await self.close()
            raise
        self.cluster = node

    async def close(self) -> None:
        """Stop accepting, close every connection with 1001, stop every room."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close(close_connections=True)
            await self._server.wait_closed()
        for room in list(self.lobby.rooms.values()):
            room.close()
        if self.cluster is not None:
            await self.cluster.close()
        if self.store is not None:
            await self.store.close()
        log.info("server stopped")

    async def __aenter__(self) -> CastellServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _sweep(self) -> None:
        """Once a second: forget finished rooms nobody watches, and old failed resumes.

        (Each connection keeps its own hello and idle deadlines: see :meth:`_frames`.)
        A failure here is logged and the sweeping goes on: a sweeper that died would let
        the lobby grow without bound.
        """
        while True:
            await asyncio.sleep(1.0)
            try:
                self.lobby.sweep()
                now = time.monotonic()
                for address, stamps in list(self.failed_resumes.items()):
                    kept = recent(stamps, now, self.config.resume_window)
                    if kept:
                        self.failed_resumes[address] = kept
                    else:
                        del self.failed_resumes[address]
            except Exception:
                log.exception("the sweeper failed; it goes on")

    # -- handshake -------------------------------------------------------------------------

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse, before the upgrade, what we would only close afterwards.

        A connection that passes is counted from here — while its handshake finishes, not
        only once its handler runs — until its socket closes, however it closes.
        """
        if request.path == "/health":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if SUBPROTOCOL not in _offered_subprotocols(request.headers):
            return connection.respond(
                HTTPStatus.BAD_REQUEST,
                f"This is a Castell server: connect over WebSocket offering the subprotocol "
                f"{SUBPROTOCOL}.\n",
            )
        address = self._address(connection, request)
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
        self._bound_kernel_buffer(connection)
        return None

    def _bound_kernel_buffer(self, connection: ServerConnection) -> None:
        bound_send_buffer(connection, self.config.socket_send_buffer)

    def _release(self, connection: ServerConnection) -> None:
        address = self.admitted.pop(connection, None)
        if address is None:
            return
        self.per_address[address] -= 1
        if self.per_address[address] <= 0:
            del self.per_address[address]

    def _address(self, ws: ServerConnection, request: Request | None) -> str:
        """The address a connection counts against: its peer's, or with ``trust_proxy`` the
        one the reverse proxy in front of us forwarded."""
        if self.config.trust_proxy and request is not None:
            forwarded = _forwarded_for(request.headers)
            if forwarded is not None:
                return forwarded
        peer = ws.remote_address
        return str(peer[0]) if peer else "?"

    # -- one connection --------------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        cfg = self.config
        address = self.admitted.get(ws) or self._address(ws, ws.request)
        now = time.monotonic()
        conn = Connection(ws, address, TokenBucket(cfg.rate, cfg.burst, stamp=now),
                          cfg.write_buffer_limit, close_timeout=cfg.close_timeout)
        conn.opened = conn.last_seen = now
        self.connections.add(conn)
        log.info("%s connected from %s", conn.id, address)
        try:
            async for data in self._frames(conn):
                await self.handle(conn, data)
        except Exception:  # the connection failed under us; nothing else is affected
            log.exception("%s: connection error", conn.id)
        finally:
            self.connections.discard(conn)
            room = conn.room
            if room is not None:
                conn.room = None
                async with room.lock:
                    await room.leave(conn, dropped=True)
            await conn.wait_closed()
            log.info("%s (%s) disconnected: %s", conn.id, conn.name or "no name",
                     ws.close_code)

    async def _frames(self, conn: Connection) -> AsyncIterator[bytes | str]:
        """The frames a connection sends, until it closes or runs out of time: it has
        ``hello_timeout`` from its opening to say hello, then is closed once idle (no frame
        from it and nothing pushed to it) for ``idle_timeout``."""
        cfg = self.config
        while not conn.closing:
            if conn.name is None:
                deadline: float | None = conn.opened + cfg.hello_timeout
            elif cfg.idle_timeout is not None:
                deadline = max(conn.last_seen, conn.last_sent) + cfg.idle_timeout
            else:
                deadline = None
            try:
                # recv() may be cancelled safely: no frame is lost (websockets' promise).
                async with asyncio.timeout(None if deadline is None
                                           else max(0.0, deadline - time.monotonic())):
                    data = await conn.ws.recv()
            except ConnectionClosed:
                return
            except TimeoutError:
                if conn.name is None:
                    conn.close(1008, "no hello: say hello first")
                elif (cfg.idle_timeout is not None and time.monotonic() - max(
                        conn.last_seen, conn.last_sent) >= cfg.idle_timeout):
                    conn.close(1000, "idle for too long")
                continue  # otherwise something was pushed meanwhile: wait on
            conn.last_seen = time.monotonic()
            yield data

    def _spend(self, conn: Connection) -> None:
        """Take one message from the connection's bucket, or refuse it (``rate_limited``);
        too many refusals close the connection (1008)."""
        if conn.bucket.take(time.monotonic()):
            return
        conn.strikes += 1
        if conn.strikes > self.config.max_strikes:
            log.warning("%r: closed for sending too many messages", conn)
            conn.close(1008, "too many messages")
        raise CastellError("slow down: too many messages", code="rate_limited")

    async def handle(self, conn: Connection, data: bytes | str) -> None:
        """Answer one frame with exactly one reply (docs/protocol.md, "Envelope").

        Every frame costs a token of the bucket, a malformed one too: garbage is no cheaper
        to send than a valid message, so it is no way around the rate limit.
        """
        re: int | None = None
        try:
            problem: ProtocolError | None = None
            try:
                if isinstance(data, str):
                    raise ProtocolError("text frames are not understood: send binary "
                                        "MessagePack frames")
                msg = decode_request(data, limits=self.limits)
            except ProtocolError as exc:
                problem, re = exc, exc.re
            else:
                re = msg.id
            self._spend(conn)
            if problem is not None:
                raise problem
            if conn.name is None and not isinstance(msg, m.Hello):
                raise CastellError("say hello first", code="hello_first")
            await self._handlers[type(msg)](conn, msg)
        except CastellError as exc:
            conn.send_bytes(encode(m.Error.from_exception(re, exc)))
        except Exception:
            log.exception("%s: failed to handle a message", conn.id)
            conn.send_bytes(encode(m.Error(re=re, code="internal_error",
                                           message="the server failed to handle that message",
                                           rule=None)))

    def reply(self, conn: Connection, msg: Any) -> None:
        conn.send_bytes(encode(msg))

    # -- requests --------------------------------------------------------------------------

    def _room_of(self, conn: Connection) -> Room:
        if conn.room is None:
            raise CastellError("you are not in a room", code="not_in_room")
        return conn.room

    async def on_hello(self, conn: Connection, msg: m.Hello) -> None:
        if conn.room is not None:
            raise CastellError("you cannot change your name while in a room",
                               code="already_in_room")
        conn.name = msg.name
        log.info("%s is %r", conn.id, msg.name)
        self.reply(conn, m.Welcome(re=msg.id, player=conn.id, server=SERVER_VERSION,
                                   protocol=m.PROTOCOL_VERSION))

    async def on_list_rooms(self, conn: Connection, msg: m.ListRooms) -> None:
        if self.cluster is not None:
            rooms, nodes = await self.cluster.list_rooms(self.config.max_listed)
            self.reply(conn, m.Rooms(re=msg.id, rooms=rooms, nodes=nodes))
            return
        # A reply must fit in a frame: at most max_listed rooms, those one can join first.
        order = {"waiting": 0, "playing": 1, "finished": 2}
        public = sorted(self.lobby.public(), key=lambda r: (order[r.status], -r.created_at))
        rooms = tuple(
            m.RoomSummary(room=r.id, name=r.name, seats=r.size, taken=r.taken,
                          variant=r.variant, status=r.status, turn_seconds=r.turn_seconds)
            for r in public[: self.config.max_listed]
        )
        self.reply(conn, m.Rooms(re=msg.id, rooms=rooms))

    async def on_create_room(self, conn: Connection, msg: m.CreateRoom) -> None:
        if conn.room is not None:
            raise CastellError("leave your room before creating another",
                               code="already_in_room")
        if conn.rooms_created >= self.config.rooms_per_connection:
            raise CastellError("you have created too many rooms", code="rate_limited")
        if sum(r.host_address == conn.address
               for r in self.lobby.rooms.values()) >= self.config.rooms_per_address:
            raise CastellError("your address has too many rooms open", code="rate_limited")
        create = self.cluster.create if self.cluster is not None else self.lobby.create
        room = await create(msg.name, msg.seats, msg.variant, msg.turn_seconds, msg.private)
        room.host_address = conn.address
        conn.rooms_created += 1
        async with room.lock:
            seat, token = await room.take_seat(conn, conn.name or "?")
            conn.room = room
            self.reply(conn, m.Joined(re=msg.id, room=room.id, seat=seat, token=token,
                                      code=room.code))
            room.push_current(conn)

    async def on_join_room(self, conn: Connection, msg: m.JoinRoom) -> None:
        if conn.room is not None:
            raise CastellError("you are already in a room: leave it first",
                               code="already_in_room")
        if msg.token is not None:
            self._check_resume_rate(conn)
        try:
            room = await self._find_room(msg.room, by_id_private=msg.token is not None)
        except CastellError as exc:
            if msg.token is not None and exc.code != "moved":
                self._resume_failed(conn)  # probing for rooms with tokens costs the same
            raise
        async with room.lock:
            token: str | None = None
            if msg.token is not None:
                try:
                    seat: int | None = await room.resume(conn, msg.token)
                except RoomError:
                    self._resume_failed(conn)
                    raise
                log.info("%s took back seat %s of room %s", conn.id, seat, room.id)
            elif msg.as_ == "spectator":
                room.add_spectator(conn)
                seat = None
            else:
                seat, token = await room.take_seat(conn, conn.name or "?")
            conn.room = room
            code = room.code if room.creator is conn else None
            self.reply(conn, m.Joined(re=msg.id, room=room.id, seat=seat, token=token,
                                      code=code))
            room.push_current(conn)

    async def _find_room(self, key: str, *, by_id_private: bool) -> Room:
        """The room ``key`` names: in this server's lobby, or else on a cluster node
        (:class:`~shared.errors.RoomMoved` says which) or taken over by this one."""
        if self.cluster is None:
            return await self.lobby.find_or_load(key, by_id_private=by_id_private)
        try:
            return self.lobby.find(key, by_id_private=by_id_private)
        except CastellError as exc:
            if exc.code != "room_not_found":
                raise
        return await self.cluster.locate(key, by_id_private=by_id_private)

    def _check_resume_rate(self, conn: Connection) -> None:
        """Refuse a seat-token attempt once this connection, or its address, has failed
        too often lately: tokens cannot be guessed at any useful speed."""
        cfg = self.config
        now = time.monotonic()
        conn.failed_resumes = recent(conn.failed_resumes, now, cfg.resume_window)
        by_address = recent(self.failed_resumes.get(conn.address, []), now, cfg.resume_window)
        self.failed_resumes[conn.address] = by_address
        if (len(conn.failed_resumes) >= cfg.resume_attempts
                or len(by_address) >= cfg.resume_attempts_per_address):
            raise CastellError("too many wrong seat tokens: wait a minute",
                               code="rate_limited")

    def _resume_failed(self, conn: Connection) -> None:
        now = time.monotonic()
        conn.failed_resumes.append(now)
        self.failed_resumes.setdefault(conn.address, []).append(now)

    async def on_leave_room(self, conn: Connection, msg: m.LeaveRoom) -> None:
        room = self._room_of(conn)
        conn.room = None
        async with room.lock:
            await room.leave(conn, dropped=False)
        self.reply(conn, m.Ok(re=msg.id))

    def _seat_of(self, conn: Connection, room: Room) -> int:
        seat = room.seat_of(conn)
        if seat is None:
            raise CastellError("spectators cannot do that: only players can",
                               code="not_a_player")
        return seat

    async def on_add_bot(self, conn: Connection, msg: m.AddBot) -> None:
        room = self._room_of(conn)
        self._seat_of(conn, room)
        async with room.lock:
            await room.add_bot(msg.level)
        self.reply(conn, m.Ok(re=msg.id))

    async def on_start_game(self, conn: Connection, msg: m.StartGame) -> None:
        room = self._room_of(conn)
        self._seat_of(conn, room)
        await room.start(conn)
        self.reply(conn, m.Ok(re=msg.id))

    async def on_chat(self, conn: Connection, msg: m.Chat) -> None:
        room = self._room_of(conn)
        seat = room.seat_of(conn)
        # A player speaks under the seat's name, as the view shows it, whatever name the
        # connection that took the seat back said hello with.
        name = room.seat_name(seat) if seat is not None else conn.name or "?"
        data = encode(m.ChatPush(room=room.id, seat=seat, name=name, text=msg.text))
        self.reply(conn, m.Ok(re=msg.id))
        for member in room.members():
            member.send_bytes(data)

    async def on_action(self, conn: Connection, msg: m.ActionRequest) -> None:
        room = self._room_of(conn)
        seat = self._seat_of(conn, room)

        def ack(version: int) -> None:
            self.reply(conn, m.Ok(re=msg.id, version=version))

        await room.act(seat, msg.action, ack=ack)


async def run(config: ServerConfig, *, stop: asyncio.Event | None = None) -> None:
    """Run a server until ``stop`` is set (or forever)."""
    server = CastellServer(config)
    await server.start()
    try:
        await (stop.wait() if stop is not None else asyncio.Future())
    finally:
        with contextlib.suppress(Exception):
            await server.close()
