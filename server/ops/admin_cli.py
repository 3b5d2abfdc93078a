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
    command("announce", help="a notice to every connection (in a room or in the lobby), "
            "kept in the inboxes of accounts seen within 30 days"
            ).add_argument("text")
    tournament = command("tournament", help="steer a Swiss tournament: cancel ID calls it "
                                            "off (no more rounds, its players told)")
    tournament.add_argument("action", choices=["cancel"])
    tournament.add_argument("tournament", metavar="ID")
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
    if c == "tournament":
        return {"action": args.action, "tournament": args.tournament}
    return {}


def _seconds(duration: str | None) -> float | None:
    return None if duration is None else parse_duration(duration)


def _seconds_text(seconds: float) -> str:
    """A time in words: ``12 s``, ``5 min``, ``3 h 2 min``."""
    whole = int(seconds)
    if whole < 60:
        return f"{seconds:g} s"
    if whole < 3600:
        return f"{whole // 60} min"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def _text(value: Any) -> str:
    """One value of an answer for people: a list as its items, yes/no, ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value) or "none"
    if isinstance(value, dict):
        return " · ".join(f"{k} {_text(v)}" for k, v in value.items())
    return str(value)


def _seat_text(seat: dict[str, Any] | None, index: int) -> str:
    """A seat of ``show``: ``0  Anna (connected)``, ``1  Pau (bot normal)``, ``2  free``."""
    if seat is None:
        return f"  {index}  free"
    how = f"bot {seat['bot']}" if seat.get("bot") else \
        "connected" if seat.get("connected") else "not connected"
    return f"  {seat.get('seat', index)}  {seat.get('name')} ({how})"


def _room_line(row: dict[str, Any]) -> str:
    """A room of ``rooms``: ``r1a2b3c4d  'Friday night'  playing · Anna, Pau · 1 connected
    · idle 12 s``."""
    return (f"{row.get('room')}  {row.get('name')!r}  {row.get('status')} · "
            f"{_text(row.get('players')) if row.get('players') else 'no players'} · "
            f"{row.get('connected')} connected · idle {_seconds_text(row.get('idle', 0))}")


def lines_of(command: str, result: Any) -> list[str]:
    """The console's answer to ``command`` as lines for people (``--json`` gives it raw):
    no list or map printed as Python writes them."""
    if isinstance(result, str):
        return [result]
    if isinstance(result, list):
        if not result:
            return ["none"]
        if command == "rooms":
            return [_room_line(row) for row in result]
        return [" · ".join(f"{k}: {_text(v)}" for k, v in row.items()) for row in result]
    out = []
    for key, value in result.items():
        if key == "seats" and isinstance(value, list):
            out.append("seats:")
            out.extend(_seat_text(seat, i) for i, seat in enumerate(value))
        elif key == "turn" and isinstance(value, int):
            out.append(f"turn: seat {value}")
        elif key == "idle" and isinstance(value, int | float):
            out.append(f"idle: {_seconds_text(value)}")
        else:
            out.append(f"{key}: {_text(value)}")
    return out


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
        print("\n".join(lines_of(args.command, reply["result"])))
    return 0
