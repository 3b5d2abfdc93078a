"""The server's life: it opens its store, listens, runs each connection, and stops.

:class:`CastellServer` puts the parts together (here and nowhere else: each part is given its
collaborators when it is made) and owns each connection's life: the hello and idle
deadlines, the message loop, the cleanup in ``finally``. Who may connect is
:mod:`server.edge.admission`'s business; what a request means, :mod:`server.edge.requests`'s; what
it
does to a room, :mod:`server.core.room`'s (driven by :mod:`server.runtime.runner`); what an action
means
for the game, :mod:`shared.engine`'s. Every limit is a :class:`~server.config.ServerConfig`
field, explained in ``docs/security.md``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from server.cluster.node import ClusterConfig, ClusterDirectory, ClusterNode, Leases
from server.config import ServerConfig
from server.core.limits import TokenBucket
from server.edge.admission import Admission
from server.edge.requests import Requests
from server.features.accounts import Accounts
from server.features.identity import Identity
from server.features.inbox import Inbox
from server.features.matchmaking import Matchmaker
from server.features.moderation import Moderation
from server.features.presence import Presence
from server.features.ratings import Ratings
from server.features.registrations import Registrations
from server.features.reviews import Reviews
from server.features.social import Social
from server.features.tournaments import Tournaments, told_and_kept
from server.ops.admin import AdminConsole
from server.ops.metrics import Metrics
from server.ops.tls import server_ssl_context
from server.runtime.collector import Collector
from server.runtime.connection import CastellWebSocket, Connection, ConnState
from server.runtime.directory import Directory, LocalDirectory
from server.runtime.lobby import Lobby
from server.runtime.thinking import Thinkers
from server.store import open_store
from server.store.base import Store
from server.store.sqlite import MEMORY
from server.web.router import Web
from server.web.sources import Sources
from shared.logs import frame_safe_logger
from shared.messages import SUBPROTOCOL
from shared.review import Budget
from shared.view import RoomStatus

log = logging.getLogger("castell.server")


class _NotListening(logging.Filter):
    """Leaves out websockets' own "server listening on" line: castell-server says where it
    listens once, with the addresses to give friends (server/ops/lan.py)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("server listening on")


_ws_logger = logging.getLogger("castell.ws")
_ws_logger.addFilter(_NotListening())
#: The logger websockets is given: no frame contents (shared/logs.py), no listening line.
_WS_LOG = frame_safe_logger("castell.ws")


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


class CastellServer:
    """One Castell server process: a lobby of rooms behind one listening socket.

    With a ``cluster`` (and a store every node shares) it is one node of several that serve
    one lobby together (``server.cluster.node``).
    """

    def __init__(self, config: ServerConfig | None = None, store: Store | None = None,
                 *, cluster: ClusterConfig | None = None,
                 collector: Collector | None = None) -> None:
        """``store``: where the games are kept (none given: a SQLite database in memory,
        for as long as the server runs); ``cluster``: the cluster this server is a node of
        (its nodes share ``store``); ``collector``: the process's collector policy, when
        this server owns the process (castell-server), for the metrics to read."""
        if cluster and not store:
            raise ValueError("a cluster node needs the store the cluster shares")
        cfg = self.config = config or ServerConfig()
        self.store: Store = store or open_store(MEMORY)
        self.cluster_config = cluster
        self.collector = collector
        # The host's tools (docs/operations.md): metrics, bans and mutes, the console.
        self.metrics: Metrics | None = None if cfg.no_metrics else Metrics(self._sample)
        self.thinkers = Thinkers(cfg.bot_workers, waited=self.metrics.bot_waited
                                 if self.metrics is not None else None)
        self.moderation = Moderation(self.store)
        leases = Leases(cluster) if cluster else None
        self.lobby = Lobby(store=self.store, max_rooms=cfg.max_rooms,
                           bot_delay=cfg.bot_delay,
                           thinkers=self.thinkers, bot_think=cfg.bot_think,
                           room_linger=cfg.room_linger,
                           unload_after=cfg.room_unload_after,
                           # A cluster keeps every unfinished game served by some node: one
                           # unloaded there would only be adopted again.
                           unattended_after=None if leases else cfg.room_unattended_after,
                           turn_time_scale=cfg.turn_time_scale,
                           store_probe_every=cfg.store_probe_every,
                           guard=leases.holds if leases else None, metrics=self.metrics,
                           away=self.moderation.away)
        #: This server as a node of its cluster (None on a lone server).
        self.cluster = ClusterNode(cluster, self.lobby, self.store, leases) \
            if cluster and leases else None
        #: Where rooms are made, found and listed: the lobby alone, or the cluster's.
        self.directory: Directory = ClusterDirectory(self.cluster) if self.cluster \
            else LocalDirectory(self.lobby)
        self.accounts = Accounts(self.store, self.lobby, registrations=Registrations(
            cfg.accounts_per_address, cfg.accounts_per_network, cfg.account_release_days),
            relay=self.cluster.relay_push if self.cluster else None)
        self.ratings = Ratings(self.store, min_games=cfg.leaderboard_min_games)
        #: The inboxes (server.features.inbox: ``notify`` is what other features call),
        #: presence, follows and blocks (server.features.presence, server.features.social).
        self.inbox: Inbox = self.accounts.inbox
        self.presence = Presence(self.accounts, self.cluster)
        self.social = Social(self.store, self.accounts, self.presence, self.inbox)
        self.matchmaker = Matchmaker(cfg, self.lobby, self.ratings, self.directory)
        #: Who this server is, read from its store at the start (server.features.identity).
        self.identity = Identity(self.store)
        #: Finished games' reviews, computed in the bot workers and kept in the store.
        self.reviews = Reviews(self.store, self.thinkers,
                               Budget(cfg.review_samples, cfg.review_candidates),
                               per_address=cfg.reviews_per_address, metrics=self.metrics)
        #: Swiss tournaments and their director (server.features.tournaments); in a
        #: cluster, one node directs at a time, under a lease in Redis.
        self.tournaments = Tournaments(
            self.store, self.directory, told_and_kept(self.accounts.deliver, self.inbox),
            organisers=None if cfg.organisers is None
            else frozenset(n.casefold() for n in cfg.organisers),
            interval=cfg.tournament_interval,
            redis=(lambda: self.cluster.redis if self.cluster else None)
            if self.cluster else None,
            lease_key=f"{cluster.prefix}tournaments:director" if cluster else "",
            node_id=self.cluster.node_id if self.cluster else "",
            lease_ms=cluster.lease_ms if cluster else 5000)
        #: The web pages a browser is given on the game's port (server.web; None: --web off).
        self.web: Web | None = Web(cfg, Sources(
            cfg, self.lobby, self.directory, self.store, self.ratings, self.tournaments,
            self.accounts, self.presence, connected=lambda: len(self.connections)),
            metrics=self.metrics) if cfg.web else None
        self.admission = Admission(cfg, moderation=self.moderation,
                                   metrics=self.metrics if cfg.metrics_listen is None
                                   else None, web=self.web)
        self.requests = Requests(cfg, self.lobby, self.directory, accounts=self.accounts,
                                 tournaments=self.tournaments,
                                 ratings=self.ratings, matchmaker=self.matchmaker,
                                 identity=self.identity, moderation=self.moderation,
                                 reviews=self.reviews, social=self.social,
                                 inbox=self.inbox, metrics=self.metrics)
        self.admin: AdminConsole | None = None
        self._metrics_http: Any = None
        #: Set when the server drained (admin drain) and should now stop.
        self.drained = asyncio.Event()
        self._draining: asyncio.Task[None] | None = None
        #: Connections whose handler runs (handshake done).
        self.connections: set[Connection] = set()
        self._server: Server | None = None
        #: The event loop the server runs on (set at start).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.Task[None] | None = None
        #: A cluster node's reading of the bans, mutes and kicks other nodes stored.
        self._rereader: asyncio.Task[None] | None = None

    # -- life cycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        """Open the store, restore its unfinished games, then listen. A cluster node
        restores nothing itself: once listening, it joins its cluster and takes over the
        rooms that no node serves."""
        cfg = self.config
        self._loop = asyncio.get_running_loop()
        await self.store.open()
        await self.identity.load()
        await self.moderation.load()  # the kicks, before the rooms they end turns of
        if not self.directory.shared:
            restored = await self.lobby.restore()
            if restored:
                log.info("restored %d unfinished room(s) into memory", restored)
        self._server = await serve(
            self.handler, cfg.host, cfg.port,
            subprotocols=[Subprotocol(SUBPROTOCOL)],
            process_request=self.admission.process_request,
            create_connection=CastellWebSocket,
            ssl=server_ssl_context(cfg),
            # Frames carry seat tokens: never log their contents, even at DEBUG.
            logger=_WS_LOG,
            **connection_options(cfg),
        )
        self._sweeper = asyncio.create_task(self._sweep())
        if self.directory.shared:  # other nodes' bans, mutes and kicks
            self._rereader = asyncio.create_task(self._reread_moderation())
        # Where it listens is said once, by castell-server (with the addresses for friends).
        try:
            await self.directory.start(f"{cfg.scheme}://{cfg.host}:{self.port}", self.accounts)
        except BaseException:
            await self.close()
            raise
        await self.matchmaker.start()
        await self.tournaments.start()
        await self.presence.start()
        await self.requests.challenges.start()
        await self._start_tools()

    async def _start_tools(self) -> None:
        """The host's tools: the stored bans, the metrics' own address, the console; then
        the server is ready for players (``/ready``)."""
        await self.moderation.load()
        if self.metrics is not None and self.config.metrics_listen is not None:
            from prometheus_client import start_http_server

            host, _, port = self.config.metrics_listen.rpartition(":")
            self._metrics_http, _ = start_http_server(int(port), host or "127.0.0.1",
                                                      registry=self.metrics.registry)
        if self.config.admin_socket is not None:
            self.admin = AdminConsole(self, self.config.admin_socket)
            await self.admin.start()
        self.admission.ready = True

    def _sample(self) -> dict[str, Any]:
        """What the metrics' gauges read at a scrape."""
        states = Counter(conn.state.value for conn in self.connections)
        rooms = Counter(str(r.room.status) for r in self.lobby.rooms.values())
        return {"connections": {s.value: states.get(s.value, 0) for s in ConnState},
                "rooms": {str(s): rooms.get(str(s), 0) for s in RoomStatus},
                "ready": self.admission.ready,
                "leases": self.directory.leases(),
                "deadlines": self.lobby.scheduler.pending(),
                "collector": None if self.collector is None else
                (self.collector.frozen, self.collector.thaws,
                 self.collector.last_thaw_seconds),
                # (a scrape may come on the metrics' own thread: --metrics-listen)
                "tasks": len(asyncio.all_tasks(self._loop)) if self._loop is not None else 0}

    def drain(self) -> str:
        """Stop taking players (``/ready`` false, no new rooms), finish or hand over this
        server's rooms, then set :attr:`drained` (castell-server then stops)."""
        self.admission.ready = False
        self.requests.draining = True
        if self._draining is None:
            self._draining = asyncio.create_task(self._drain())
        unfinished = sum(r.room.status != RoomStatus.FINISHED
                         for r in self.lobby.rooms.values())
        how = "handed over to the other nodes" if self.directory.shared \
            else "finished (or left by their players)"
        return f"draining: {unfinished} unfinished room(s) to be {how}"

    async def _drain(self) -> None:
        log.info("draining: no new rooms; the rooms here are %s",
                 "handed over" if self.directory.shared else "played out")
        if self.directory.shared:
            # Each room's members are sent to find it again (4002): another node takes it
            # over (its lease is given up at once, as a stopping node does).
            for runner in list(self.lobby.rooms.values()):
                await self.lobby.drop(runner)
        else:
            while any(r.room.status == RoomStatus.PLAYING
                      and any(s is not None and s.member is not None for s in r.room.seats)
                      for r in self.lobby.rooms.values()):
                await asyncio.sleep(0.5)
        log.info("drained: the server stops")
        self.drained.set()

    async def close(self) -> None:
        """Stop accepting, close every connection with 1001, stop every room. Every room
        stays in the store as it is (a waiting room and its seats too): its players take
        their seats back with their tokens once the server is started again."""
        self.lobby.stopping = True
        self.lobby.unloaded.close()
        self.admission.ready = False
        if self.admin is not None:
            await self.admin.close()
        if self._metrics_http is not None:
            self._metrics_http.shutdown()
            self._metrics_http.server_close()
        if self._draining is not None:
            self._draining.cancel()
        for task in (self._sweeper, self._rereader):
            if task is not None:
                task.cancel()
        if self._server is not None:
            self._server.close(close_connections=True)
            await self._server.wait_closed()
        for runner in list(self.lobby.rooms.values()):
            runner.close()
        await self.lobby.retries.close()
        await self.matchmaker.close()
        await self.reviews.close()
        await self.tournaments.close()
        await self.presence.close()
        await self.requests.challenges.close()
        await self.thinkers.close()  # no bot worker outlives the server
        await self.directory.close()
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
                self.lobby.residency.sweep()
                self.requests.sweep(time.monotonic())
            except Exception:
                log.exception("the sweeper failed; it goes on")

    async def _reread_moderation(self) -> None:
        """A cluster node's: every ``moderation_refresh`` seconds, the bans, mutes and kicks
        of the database its nodes share, what the other nodes stored included. A failure is
        logged and the reading goes on."""
        while True:
            await asyncio.sleep(self.config.moderation_refresh)
            try:
                await self.moderation.load()
            except Exception:
                log.exception("reading the stored bans, mutes and kicks failed; it goes on")

    # -- one connection --------------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        cfg = self.config
        address = self.admission.address(ws, ws.request)
        now = time.monotonic()
        conn = Connection(ws, address, TokenBucket(cfg.rate, cfg.burst, stamp=now),
                          cfg.write_buffer_limit, close_timeout=cfg.close_timeout,
                          metrics=self.metrics)
        conn.opened = conn.last_seen = now
        if isinstance(ws, CastellWebSocket):  # pings and pongs cost like messages
            ws.on_control = lambda: self.requests.dispatcher.charge(conn, control=True)
        self.connections.add(conn)
        log.info("%s connected from %s", conn.id, address)
        try:
            await self._frames(conn)
        except Exception:  # the connection failed under us; nothing else is affected
            log.exception("%s: connection error", conn.id)
        finally:
            conn.unwatch()
            if isinstance(ws, CastellWebSocket):  # its closure holds conn, which holds ws
                ws.on_control = None
            self.connections.discard(conn)
            account = conn.account
            self.accounts.detach(conn)
            if account is not None and not self.lobby.stopping:
                await self.social.signed_out(account)
            await self.matchmaker.dropped(conn)
            runner = conn.room
            if runner is not None:
                conn.leave_room()
                if not self.lobby.stopping:  # else the seat stays taken, for the restart
                    await runner.leave(conn, dropped=True)
            await conn.wait_closed()
            log.info("%s (%s) disconnected: %s", conn.id, conn.name or "no name",
                     ws.close_code)

    async def _frames(self, conn: Connection) -> None:
        """Answer the frames a connection sends, one at a time, until it closes or runs out
        of time: it has ``hello_timeout`` from its opening to say hello, then is closed once
        idle (no frame from it and nothing pushed to it) for ``idle_timeout``
        (:meth:`Connection.watch`). One loop, not an asynchronous generator: a frame costs
        one ``recv`` and its answer, nothing more."""
        conn.watch(self.config.hello_timeout, self.config.idle_timeout)
        recv, handle = conn.ws.recv, self.requests.dispatcher.handle
        timings = None if self.metrics is None else self.metrics.request_seconds
        try:
            while not conn.closing:
                try:
                    data = await recv()
                except ConnectionClosed:
                    return
                if conn.closing:  # closed while the frame came: nothing more is answered
                    return
                conn.last_seen = time.monotonic()
                started = time.perf_counter()
                await handle(conn, data)
                if timings is not None:
                    timings.observe(time.perf_counter() - started)
        finally:
            conn.unwatch()
