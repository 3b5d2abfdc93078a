"""``castell-server``: run a Castell server from the command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from server.config import DEFAULT_PORT, ServerConfig


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="castell-server",
        description="Host Castell games: players connect with `castell ws://HOST:PORT`.",
    )
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 serves a LAN)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--log-level", default="info",
                   choices=["debug", "info", "warning", "error"], help="logging detail")
    p.add_argument("--bot-delay", type=float, default=0.6, metavar="SECONDS",
                   help="pause before each bot action (default 0.6)")
    p.add_argument("--max-connections", type=int, default=5000)
    p.add_argument("--max-per-address", type=int, default=512)
    p.add_argument("--max-rooms", type=int, default=2000)
    p.add_argument("--max-frame", type=int, default=64 * 1024, metavar="BYTES")
    p.add_argument("--rate", type=float, default=20.0, metavar="MSGS_PER_SECOND",
                   help="messages a connection may send per second (burst: twice that)")
    p.add_argument("--db", default=None, metavar="PATH",
                   help="where games are kept (default: castell.sqlite3 in your data "
                        "folder; ':memory:' keeps nothing)")
    return p


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
    return p


def _db_location(value: str | None) -> str:
    from server.store import default_db_path

    return str(default_db_path()) if value is None else value


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        host=args.host, port=args.port, bot_delay=args.bot_delay,
        max_connections=args.max_connections, max_per_address=args.max_per_address,
        max_rooms=args.max_rooms, max_frame=args.max_frame, rate=args.rate,
        burst=args.rate * 2,
    )


async def _serve(config: ServerConfig, db: str) -> None:
    from server.app import CastellServer
    from server.store import open_store
    from shared.errors import CastellError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = CastellServer(config, open_store(db))
    try:
        await server.start()
    except OSError as exc:
        raise CastellError(
            f"cannot listen on {config.host}:{config.port}: {exc.strerror or exc}"
        ) from exc
    # Announce the real port on stdout so scripts (and tests) can use --port 0.
    print(f"castell-server listening on ws://{config.host}:{server.port}", flush=True)
    await stop.wait()
    logging.getLogger("castell.server").info("shutting down")
    await server.close()


async def _export(args: argparse.Namespace) -> int:
    from server.export import export_game
    from server.store import open_store

    path = args.output or f"castell-{args.room}.json"
    async with open_store(_db_location(args.db)) as store:
        record = await store.load(args.room)
    if record is None:
        print(f"castell-server: there is no room {args.room!r} in that database",
              file=sys.stderr)
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
        args = build_parser().parse_args(argv)
        logging.basicConfig(
            level=getattr(logging, args.log_level.upper()),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        asyncio.run(_serve(config_from_args(args), _db_location(args.db)))
    except CastellError as exc:
        print(f"castell-server: {exc.message}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"castell-server: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
