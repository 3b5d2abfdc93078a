"""``castell-server``: run a Castell server from the command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import ssl
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from server.config import DEFAULT_PORT, ServerConfig
from server.runtime.loop import LOOPS
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.cluster.node import ClusterConfig


def _none_if_zero(value: str) -> float | None:
    seconds = float(value)
    return None if seconds <= 0 else seconds


def build_parser() -> argparse.ArgumentParser:
    d = ServerConfig()
    p = argparse.ArgumentParser(
        prog="castell-server",
        description="Host Castell games: players connect with `castell ws://HOST:PORT`.",
        epilog="Every limit is explained in docs/security.md.",
    )
    p.add_argument("--host", default=d.host,
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 serves a LAN)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--log-level", default="info",
                   choices=["debug", "info", "warning", "error"], help="logging detail")
    p.add_argument("--log-format", default="text", choices=["text", "json"],
                   help="log lines as text, or as one JSON object each (docs/operations.md)")
    p.add_argument("--bot-delay", type=float, default=d.bot_delay, metavar="SECONDS",
                   help=f"pause before each bot action (default {d.bot_delay})")
    p.add_argument("--bot-workers", type=int, default=d.bot_workers, metavar="N",
                   help="processes bots think in, off the server's event loop (default: "
                        f"one per core, at most 4: {d.bot_workers} here; 0 thinks in a "
                        "thread)")
    p.add_argument("--bot-think", type=float, default=d.bot_think, metavar="SECONDS",
                   help=f"how long a hard bot may think once a turn (default {d.bot_think})")
    p.add_argument("--review-samples", type=int, default=d.review_samples, metavar="N",
                   help="bag orders a game's review plays each line out in (default "
                        f"{d.review_samples}, as the hard bot; docs/review.md)")
    p.add_argument("--review-candidates", type=int, default=d.review_candidates, metavar="N",
                   help="candidate lines a game's review weighs each turn (default "
                        f"{d.review_candidates}, as the hard bot)")
    p.add_argument("--db", default=None, metavar="PATH_OR_URL",
                   help="where games are kept (default: castell.sqlite3 in your data "
                        "folder; ':memory:' keeps nothing; postgresql://HOST/DATABASE for a "
                        "database several nodes share, see docs/deploy.md)")
    p.add_argument("--group-commit", choices=("on", "off"), default="on",
                   help="commit the writes that arrive during a commit together, one "
                        "fsync for many rooms, each acknowledged once its batch is stored "
                        "(default on; off: one transaction per write)")
    p.add_argument("--store-probe-every", type=float, default=d.store_probe_every,
                   metavar="SECONDS",
                   help="while a room waits to try a write the store refused again, probe "
                        "the store this often: the first probe it takes lets every waiting "
                        f"room go on (default {d.store_probe_every})")
    p.add_argument("--loop", choices=LOOPS, default="asyncio",
                   help="the event loop: asyncio's own (the default) or uvloop, when "
                        "installed (pip install uvloop; measured no faster for this server, "
                        "see BENCHMARKS.md)")

    ops = p.add_argument_group("the host's tools (docs/operations.md)")
    ops.add_argument("--no-metrics", action="store_true",
                     help="serve no /metrics (the Prometheus metrics)")
    ops.add_argument("--metrics-listen", default=None, metavar="HOST:PORT",
                     help="serve /metrics there instead of on the game's port")
    ops.add_argument("--web", choices=("on", "off"), default="on",
                     help="serve the web pages (the lobby, games in play, replays, players, "
                          "tournaments) to browsers on the game's port (default on)")
    ops.add_argument("--web-name", default=d.web_name, metavar="NAME",
                     help=f"the server's name on its web pages (default {d.web_name})")
    ops.add_argument("--web-join", default=None, metavar="URL",
                     help="the address the web pages tell players to join, such as "
                          "wss://castell.example.org behind a proxy (default: the address "
                          "the browser used)")
    ops.add_argument("--web-refresh", type=int, default=d.web_refresh, metavar="SECONDS",
                     help="how often the page of a game in play reloads itself (default "
                          f"{d.web_refresh})")
    ops.add_argument("--moderation-refresh", type=float, default=d.moderation_refresh,
                     metavar="SECONDS",
                     help="on a cluster node, how often the bans, mutes and kicks other nodes "
                          f"stored are read (default {d.moderation_refresh})")
    ops.add_argument("--admin-socket", default=None, metavar="PATH",
                     help="the admin console's Unix socket (default: beside the database "
                          "file, DB.admin; 'off': no console)")

    tls = p.add_argument_group("TLS (serve wss://)")
    tls.add_argument("--certfile", default=None, metavar="PEM",
                     help="certificate chain (with the key, unless --keyfile)")
    tls.add_argument("--keyfile", default=None, metavar="PEM", help="private key")

    lim = p.add_argument_group("limits")

    def limit(flag: str, kind: Callable[[str], object], default: object, metavar: str,
              text: str) -> None:
        lim.add_argument(flag, type=kind, default=default, metavar=metavar,
                         help=f"{text} (default {default})")

    limit("--max-frame", int, d.max_frame, "BYTES", "largest frame; bigger closes with 1009")
    limit("--max-string", int, d.max_string, "BYTES", "longest string in a frame")
    limit("--max-list", int, d.max_list, "ITEMS", "longest array in a frame")
    limit("--max-map", int, d.max_map, "PAIRS", "largest map in a frame")
    limit("--max-depth", int, d.max_depth, "LEVELS", "deepest nesting in a frame")
    limit("--rate", float, d.rate, "MSGS_PER_SECOND", "messages a connection may send per "
          "second")
    lim.add_argument("--burst", type=float, default=None, metavar="MSGS",
                     help="messages allowed in one burst (default: twice --rate)")
    limit("--max-strikes", int, d.max_strikes, "N",
          "rate_limited refusals before the connection is closed (1008)")
    limit("--write-buffer-limit", int, d.write_buffer_limit, "BYTES",
          "unread bytes a client may leave waiting before it is closed as too slow")
    limit("--socket-send-buffer", int, d.socket_send_buffer, "BYTES",
          "kernel send buffer of each connection (0: the system's default)")
    limit("--address-rate", float, d.address_rate, "REQUESTS_PER_SECOND",
          "room requests (list, create, join, leave) one address may send per second, over "
          "all its connections")
    limit("--address-burst", float, d.address_burst, "REQUESTS",
          "room requests one address may send in one burst")
    limit("--web-rate", float, d.web_rate, "PAGES_PER_SECOND",
          "web pages one address may fetch per second (more: 429)")
    limit("--web-burst", float, d.web_burst, "PAGES", "web pages one address may fetch in "
          "one burst")
    limit("--max-connections", int, d.max_connections, "N", "open connections (more: 503)")
    limit("--max-per-address", int, d.max_per_address, "N",
          "open connections from one address (more: 429)")
    limit("--open-timeout", _none_if_zero, d.open_timeout, "SECONDS",
          "to finish the TLS and WebSocket handshakes (0: no limit)")
    limit("--hello-timeout", float, d.hello_timeout, "SECONDS", "to say hello")
    limit("--idle-timeout", _none_if_zero, d.idle_timeout, "SECONDS",
          "with no message and nothing happening before a connection is closed (0: never)")
    limit("--close-timeout", float, d.close_timeout, "SECONDS",
          "a closing handshake may take before the socket is dropped")
    limit("--max-rooms", int, d.max_rooms, "N", "rooms on the server")
    limit("--rooms-per-connection", int, d.rooms_per_connection, "N",
          "rooms one connection may create")
    limit("--rooms-per-address", int, d.rooms_per_address, "N",
          "rooms from one address that may exist at once")
    limit("--max-listed", int, d.max_listed, "N", "rooms in one list_rooms reply")
    limit("--resume-attempts", int, d.resume_attempts, "N",
          "wrong seat tokens a connection may try per window")
    limit("--resume-attempts-per-address", int, d.resume_attempts_per_address, "N",
          "wrong seat tokens one address may try per window")
    limit("--resume-window", float, d.resume_window, "SECONDS",
          "the window those attempts are counted in")
    limit("--code-attempts-per-address", int, d.code_attempts_per_address, "N",
          "joins by a code no room has that one address may try per window")
    limit("--code-attempts-per-network", int, d.code_attempts_per_network, "N",
          "joins by a code no room has that one network (/24, /64) may try per window")
    limit("--accounts-per-address", int, d.accounts_per_address, "N",
          "new accounts one address may register per hour")
    limit("--accounts-per-network", int, d.accounts_per_network, "N",
          "new accounts one network (/24, /64) may register per hour")
    limit("--account-release-days", _none_if_zero, d.account_release_days, "DAYS",
          "an account that never finished a game and has not signed in for this long gives "
          "up its name to a new account (0: never)")
    limit("--max-spectators", int, d.max_spectators, "N", "spectators of one room")
    limit("--reviews-per-address", int, d.reviews_per_address, "N",
          "game reviews being computed at once for one address")
    limit("--room-chat-rate", float, d.room_chat_rate, "LINES_PER_SECOND",
          "chat lines one room carries per second, all its members together")
    limit("--room-unload-after", _none_if_zero, d.room_unload_after, "SECONDS",
          "an unfinished game nobody is in leaves memory (not the database) after this; "
          "it comes back when a player does (0: never)")
    limit("--room-unattended-after", _none_if_zero, d.room_unattended_after, "SECONDS",
          "a started game with nobody in it leaves memory (not the database) after this, "
          "even while its bots play; it comes back when a player does (0: never)")
    lim.add_argument("--trust-proxy", action="store_true",
                     help="behind a reverse proxy only: count connections by the last "
                          "X-Forwarded-For address, not the proxy's")

    from server.cluster.node import DEFAULT_LEASE_MS, DEFAULT_PREFIX

    node = p.add_argument_group("cluster (several nodes serving one lobby, docs/deploy.md)")
    node.add_argument("--redis", default=None, metavar="URL",
                      help="make this server a node of a cluster: Redis at URL (such as "
                           "redis://10.0.0.2:6379/0) keeps which node serves which room; "
                           "needs --db postgresql://…, shared by every node")
    node.add_argument("--advertise", default=None, metavar="URL",
                      help="the address players and the other nodes reach this node at "
                           "(default: ws://HOST:PORT as it listens; needed with --host "
                           "0.0.0.0)")
    node.add_argument("--redis-prefix", default=DEFAULT_PREFIX, metavar="PREFIX",
                      help="start of every Redis key of this cluster, so that several can "
                           f"share one Redis (default {DEFAULT_PREFIX})")
    node.add_argument("--lease-ms", type=int, default=DEFAULT_LEASE_MS, metavar="MS",
                      help="how long a room stays with a node that stopped answering before "
                           f"another node takes it over (default {DEFAULT_LEASE_MS})")

    rated = p.add_argument_group("ratings and quick match (docs/protocol.md)")
    for flag, kind, default, metavar, text in (
        ("--leaderboard-min-games", int, d.leaderboard_min_games, "N",
         "rated games an account plays before the leaderboard lists it"),
        ("--rated-turn-seconds", int, d.rated_turn_seconds, "SECONDS",
         "the turn timer of a rated room created without one"),
        ("--match-interval", float, d.match_interval, "SECONDS",
         "between two rounds of the quick-match matcher"),
        ("--match-window", int, d.match_window, "POINTS",
         "how far apart two ratings may be at first in a rated quick match"),
        ("--match-widen", float, d.match_widen, "POINTS",
         "how much wider that window grows every second of waiting"),
        ("--match-window-max", int, d.match_window_max, "POINTS", "the widest it grows"),
        ("--match-reserve", float, d.match_reserve, "SECONDS",
         "how long a quick match holds its seats: a room whose players have not all taken "
         "them by then is called off"),
        ("--challenge-expiry", float, d.challenge_expiry, "SECONDS",
         "how long a challenge waits for its answer (a correspondence game's: a day)"),
        ("--challenges-per-hour", int, d.challenges_per_hour, "N",
         "how many challenges one account may make in an hour"),
    ):
        rated.add_argument(flag, type=kind, default=default, metavar=metavar,
                           help=f"{text} (default {default})")
    rated.add_argument("--rated-one-network", action="store_true",
                       help="let accounts connected from one network (a /24, a /64) meet "
                            "in rated play: for a server on a LAN")
    tour = p.add_argument_group("Swiss tournaments (docs/protocol.md)")
    tour.add_argument("--organisers", type=_names, default=None, metavar="NAME,...",
                      help="only these accounts create tournaments (default: any account)")
    tour.add_argument("--tournament-interval", type=float, default=d.tournament_interval,
                      metavar="SECONDS",
                      help="between two moves of the tournament director (default "
                           f"{d.tournament_interval})")
    return p


def _names(value: str) -> tuple[str, ...]:
    """``--organisers``: names separated by commas, none empty."""
    names = tuple(n.strip() for n in value.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError("give names separated by commas, such as Anna,Biel")
    return names


def build_export_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="castell-server export",
        description="Write one game's record (settings, seed, actions, result) to a file "
                    "that `castell replay FILE` steps through.",
    )
    p.add_argument("room", help="the room id (see the server's log, or `castell` lobby)")
    p.add_argument("--db", default=None, metavar="PATH", help="the server's database")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="where to write (default: castell-ROOM.json)")
    p.add_argument("--unfinished", action="store_true",
                   help="export a game still being played too (its record holds the seed, "
                        "which gives away the bag's order: keep it from the players)")
    return p


def _db_location(value: str | None) -> str:
    from server.store import default_db_path

    return str(default_db_path()) if value is None else value


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        host=args.host, port=args.port, bot_delay=args.bot_delay,
        bot_workers=max(0, args.bot_workers), bot_think=max(0.05, args.bot_think),
        certfile=args.certfile, keyfile=args.keyfile,
        max_frame=args.max_frame, max_string=args.max_string, max_list=args.max_list,
        max_map=args.max_map, max_depth=args.max_depth,
        rate=args.rate, burst=args.rate * 2 if args.burst is None else args.burst,
        max_strikes=args.max_strikes, write_buffer_limit=args.write_buffer_limit,
        socket_send_buffer=args.socket_send_buffer or None,
        max_connections=args.max_connections, max_per_address=args.max_per_address,
        open_timeout=args.open_timeout, hello_timeout=args.hello_timeout,
        idle_timeout=args.idle_timeout, close_timeout=args.close_timeout,
        max_rooms=args.max_rooms, rooms_per_connection=args.rooms_per_connection,
        rooms_per_address=args.rooms_per_address, max_listed=args.max_listed,
        resume_attempts=args.resume_attempts,
        resume_attempts_per_address=args.resume_attempts_per_address,
        resume_window=args.resume_window, trust_proxy=args.trust_proxy,
        room_unload_after=args.room_unload_after,
        room_unattended_after=args.room_unattended_after,
        address_rate=args.address_rate, address_burst=args.address_burst,
        code_attempts_per_address=args.code_attempts_per_address,
        code_attempts_per_network=args.code_attempts_per_network,
        accounts_per_address=args.accounts_per_address,
        accounts_per_network=args.accounts_per_network,
        account_release_days=args.account_release_days,
        max_spectators=args.max_spectators, room_chat_rate=args.room_chat_rate,
        no_metrics=args.no_metrics, metrics_listen=args.metrics_listen,
        admin_socket=args.admin_socket,
        web=args.web == "on", web_name=args.web_name[:60] or ServerConfig().web_name,
        web_join=args.web_join, web_refresh=max(1, args.web_refresh),
        web_rate=args.web_rate, web_burst=max(1.0, args.web_burst),
        moderation_refresh=max(0.05, args.moderation_refresh),
        leaderboard_min_games=args.leaderboard_min_games,
        rated_turn_seconds=args.rated_turn_seconds, match_interval=args.match_interval,
        match_window=args.match_window, match_widen=args.match_widen,
        match_window_max=args.match_window_max, match_reserve=args.match_reserve,
        challenge_expiry=args.challenge_expiry, challenges_per_hour=args.challenges_per_hour,
        rated_one_network=args.rated_one_network,
        store_probe_every=max(0.01, args.store_probe_every),
        review_samples=max(1, args.review_samples),
        review_candidates=max(1, args.review_candidates),
        reviews_per_address=max(1, args.reviews_per_address),
        organisers=args.organisers,
        tournament_interval=max(0.05, args.tournament_interval),
    )


def with_admin_socket(config: ServerConfig, db: str) -> ServerConfig:
    """The config with its console's socket: beside the database file unless told
    (``off``: none)."""
    import attrs

    from server.ops.admin import socket_beside

    if config.admin_socket == "off":
        return attrs.evolve(config, admin_socket=None)
    return attrs.evolve(config, admin_socket=config.admin_socket or socket_beside(db))


def cluster_from_args(args: argparse.Namespace) -> ClusterConfig | None:
    """The node's cluster settings, or None for a lone server (no --redis)."""
    from server.cluster.node import MIN_LEASE_MS, ClusterConfig
    from shared.errors import CastellError

    if args.redis is None:
        return None
    db = args.db or ""
    if not db.lower().startswith(("postgresql://", "postgres://")):
        raise CastellError("--redis makes this server a node of a cluster, and every node "
                           "must use the same database: give --db postgresql://HOST/DATABASE")
    if args.lease_ms < MIN_LEASE_MS:
        raise CastellError(f"--lease-ms must be at least {MIN_LEASE_MS}")
    return ClusterConfig(args.redis, advertise=args.advertise, prefix=args.redis_prefix,
                         lease_ms=args.lease_ms)


async def _serve(config: ServerConfig, db: str, cluster: ClusterConfig | None = None, *,
                 group_commit: bool = True) -> None:
    from server.app import CastellServer
    from server.ops.lan import listening_line
    from server.ops.tls import server_ssl_context
    from server.runtime.collector import Collector
    from server.runtime.loop import loop_name
    from server.store import open_store
    from shared.errors import CastellError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:  # a certificate that cannot be used is said as such, before anything starts
        server_ssl_context(config)
    except (OSError, ssl.SSLError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CastellError(f"cannot use the certificate or key: {reason}") from exc
    # The nodes of a cluster share their database; a lone server keeps it to itself.
    store = open_store(db, shared=True, group_commit=group_commit) if cluster \
        else open_store(db, group_commit=group_commit)
    collector = Collector(loop.call_soon_threadsafe)
    server = CastellServer(config, store, cluster=cluster, collector=collector)
    try:
        await server.start()
    except OSError as exc:
        raise CastellError(
            f"cannot listen on {config.host}:{config.port}: {exc.strerror or exc}"
        ) from exc
    # Announce the real port on stdout so scripts (and tests) can use --port 0, once, with
    # the addresses to give friends.
    print(listening_line(config.scheme, config.host, server.port), flush=True)
    logging.getLogger("castell.server").info("running on the %s event loop", loop_name())
    collector.start()
    try:
        stopping = asyncio.create_task(stop.wait())
        drained = asyncio.create_task(server.drained.wait())
        await asyncio.wait({stopping, drained}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        drained.cancel()
    finally:  # however this ends: no freeze is asked of a loop that is going
        collector.stop()
    logging.getLogger("castell.server").info("shutting down")
    await server.close()


async def _export(args: argparse.Namespace) -> int:
    from server.ops.export import export_game
    from server.store import open_store

    path = args.output or f"castell-{args.room}.json"
    where = _db_location(args.db)
    # Only reading: a running server may keep writing its file (or schema) meanwhile.
    postgres = where.startswith(("postgresql://", "postgres://"))
    async with open_store(where, **({"shared": True} if postgres else {"read_only": True})) \
            as store:
        record = await store.load(args.room)
    if record is None:
        print(f"castell-server: there is no room {args.room!r} in that database",
              file=sys.stderr)
        return 1
    if record.room.status != RoomStatus.FINISHED and not args.unfinished:
        print(f"castell-server: the game in room {args.room!r} is not over; its record would "
              "give away the bag's order to whoever reads it. Add --unfinished to export it "
              "anyway.", file=sys.stderr)
        return 1
    export_game(record, path)
    print(f"wrote {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from shared.errors import CastellError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["export"]:
            return asyncio.run(_export(build_export_parser().parse_args(argv[1:])))
        if argv[:1] == ["admin"]:
            from server.ops.admin_cli import main as admin_main

            return admin_main(argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.keyfile is not None and args.certfile is None:
            parser.error("--keyfile needs --certfile (the certificate it belongs to)")
        from server.ops.logs import configure

        configure(args.log_level, args.log_format)
        db = _db_location(args.db)
        from server.runtime.loop import run

        run(_serve(with_admin_socket(config_from_args(args), db), db, cluster_from_args(args),
                   group_commit=args.group_commit == "on"), args.loop)
    except CastellError as exc:
        print(f"castell-server: {exc.message}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"castell-server: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
