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
    return p


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        host=args.host, port=args.port, bot_delay=args.bot_delay,
        max_connections=args.max_connections, max_per_address=args.max_per_address,
        max_rooms=args.max_rooms, max_frame=args.max_frame, rate=args.rate,
        burst=args.rate * 2,
    )


async def _serve(config: ServerConfig) -> None:
    from server.app import CastellServer

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = CastellServer(config)
    await server.start()
    # Announce the real port on stdout so scripts (and tests) can use --port 0.
    print(f"castell-server listening on ws://{config.host}:{server.port}", flush=True)
    await stop.wait()
    logging.getLogger("castell.server").info("shutting down")
    await server.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        asyncio.run(_serve(config_from_args(args)))
    except OSError as exc:
        print(f"castell-server: cannot listen on {args.host}:{args.port}: {exc.strerror}",
              file=sys.stderr)
        return 1
    return 0
