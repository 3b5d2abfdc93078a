"""``castell-server admin COMMAND``: the host's commands, sent to the running server's
console (:mod:`server.ops.admin`) and its answer printed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from server.ops.admin import ask, parse_duration, socket_beside


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="castell-server admin",
                                description="Steer the running server (docs/operations.md).")
    p.add_argument("--db", default=None, metavar="PATH",
                   help="the server's database: its console is beside it")
    p.add_argument("--socket", default=None, metavar="PATH",
                   help="the console's socket (the server's --admin-socket)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    # The same options after the command too (`admin rooms --db PATH`), as a host types them.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH",
                        help="the server's database: its console is beside it")
    common.add_argument("--socket", default=argparse.SUPPRESS, metavar="PATH",
                        help="the console's socket (the server's --admin-socket)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the answer as JSON")
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[common])
    command("rooms", help="every room: status, players, idle time")
    command("show", help="one room").add_argument("room")
    close = command("close", help="close a room for good, its players told why")
    close.add_argument("room")
    close.add_argument("--reason", default="closed by the host")
    kick = command("kick", help="put a seat's player out of the room, and keep them out")
    kick.add_argument("room")
    kick.add_argument("seat", type=int)
    kick.add_argument("--for", dest="duration", default=None, metavar="DURATION",
                      help="how long (30m, 12h, 7d; default: until unkick)")
    kick.add_argument("--reason", default="removed by the host")
    unkick = command("unkick", help="let a kicked player back into the room")
    unkick.add_argument("room")
    unkick.add_argument("name")
    command("kicks", help="every kick")
    mute = command("mute", help="refuse a name's chat lines, on every node")
    mute.add_argument("name")
    mute.add_argument("--for", dest="duration", default=None, metavar="DURATION",
                      help="how long (30m, 12h, 7d; default: until unmute)")
    mute.add_argument("--reason", default="muted by the host")
    command("unmute", help="lift a mute").add_argument("name")
    command("mutes", help="every mute")
    ban = command("ban", help="bar a name or an address (or network)")
    ban.add_argument("target", metavar="NAME|ADDRESS")
    ban.add_argument("--for", dest="duration", default=None, metavar="DURATION",
                     help="how long (30m, 12h, 7d; default: for good)")
    ban.add_argument("--reason", default="banned by the host")
    command("unban", help="lift a ban").add_argument("target", metavar="NAME|ADDRESS")
    command("bans", help="every ban")
    command("drain", help="no new rooms; finish or hand over the rooms, then stop")
    command("announce", help="a notice to every connection (in a room or in the lobby)"
            ).add_argument("text")
    return p


def _request(args: argparse.Namespace) -> dict[str, Any]:
    c = args.command
    if c == "show":
        return {"room": args.room}
    if c == "close":
        return {"room": args.room, "reason": args.reason}
    if c == "kick":
        return {"room": args.room, "seat": args.seat, "seconds": _seconds(args.duration),
                "reason": args.reason}
    if c == "unkick":
        return {"room": args.room, "name": args.name}
    if c == "mute":
        return {"name": args.name, "seconds": _seconds(args.duration), "reason": args.reason}
    if c == "unmute":
        return {"name": args.name}
    if c == "ban":
        return {"target": args.target, "seconds": _seconds(args.duration),
                "reason": args.reason}
    if c == "unban":
        return {"target": args.target}
    if c == "announce":
        return {"text": args.text}
    return {}


def _seconds(duration: str | None) -> float | None:
    return None if duration is None else parse_duration(duration)


def _print(result: Any) -> None:
    if isinstance(result, str):
        print(result)
    elif isinstance(result, list):
        if not result:
            print("none")
        for row in result:
            print("  ".join(f"{k}={v}" for k, v in row.items()))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


def main(argv: Sequence[str]) -> int:
    from server.store import default_db_path

    args = build_parser().parse_args(argv)
    path = args.socket or socket_beside(args.db or str(default_db_path()))
    if path is None:
        print("castell-server admin: give --socket PATH (the server's --admin-socket)",
              file=sys.stderr)
        return 2
    try:
        reply = ask(path, args.command, **_request(args))
    except ValueError as exc:
        print(f"castell-server admin: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"castell-server admin: no server answers at {path} ({exc.strerror or exc})",
              file=sys.stderr)
        return 1
    if not reply.get("ok"):
        print(f"castell-server admin: {reply.get('error')}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(reply["result"]))
    else:
        _print(reply["result"])
    return 0
