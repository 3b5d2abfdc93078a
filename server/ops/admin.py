"""The host's admin console: ``castell-server admin COMMAND`` talks to the running server.

The server listens on a Unix socket beside its database (``castell.sqlite3.admin``, or
``--admin-socket PATH``), readable and writable only by the user it runs as: whoever may
open the socket may run the server already. One request per connection: a JSON line
``{"command": ..., ...}``, answered by one JSON line ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": "..."}``. Every command is audited in the log (logger
``castell.admin``), with the user id of who sent it. docs/operations.md lists the commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from server.core.room import Finish
from server.features.moderation import CLOSED, closed_reason, ending, live, removed, until
from server.runtime.connection import ConnState
from server.runtime.runner import perform
from shared import messages as m
from shared.codec import encode
from shared.errors import CastellError
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.app import CastellServer
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.admin")

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class AdminError(Exception):
    """A command that cannot be done, said to the host."""


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``30s``, ``15m``, ``12h``, ``7d``."""
    found = _DURATION.match(text.strip())
    if found is None:
        raise ValueError(f"not a duration: {text!r} (say 30m, 12h, 7d)")
    return float(found.group(1)) * _UNIT[found.group(2)]


def socket_beside(db: str) -> str | None:
    """The admin socket of a server whose database is ``db``: beside its file (None for a
    database that is no file: give ``--admin-socket``)."""
    if db == ":memory:" or db.lower().startswith(("postgresql://", "postgres://")):
        return None
    return f"{db}.admin"


def _peer_uid(writer: asyncio.StreamWriter) -> int | None:
    sock = writer.get_extra_info("socket")
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return None
    return int(struct.unpack("3i", creds)[1])


class AdminConsole:
    """The console of one running server (see the module docstring)."""

    def __init__(self, server: CastellServer, path: str) -> None:
        self.server = server
        self.path = path
        self._listener: asyncio.Server | None = None

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by a server that was killed
        old = os.umask(0o177)
        try:
            self._listener = await asyncio.start_unix_server(self._serve, self.path)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        log.info("admin console on %s", self.path)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self._listener = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            try:
                request = json.loads(line)
                command = str(request.pop("command"))
            except (ValueError, KeyError, AttributeError):
                reply: dict[str, Any] = {"ok": False, "error": "not a console request"}
            else:
                log.info("admin %s %s (by uid %s)", command,
                         json.dumps(request, ensure_ascii=False), _peer_uid(writer))
                try:
                    reply = {"ok": True, "result": await self.run(command, request)}
                except AdminError as exc:
                    reply = {"ok": False, "error": str(exc)}
                except Exception as exc:
                    log.exception("admin %s failed", command)
                    reply = {"ok": False, "error": f"the command failed: {exc}"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        except Exception:
            log.debug("an admin connection failed", exc_info=True)
        finally:
            writer.close()

    # -- the commands --------------------------------------------------------------------------

    async def run(self, command: str, args: dict[str, Any]) -> Any:
        handler = getattr(self, f"cmd_{command}", None)
        if handler is None:
            raise AdminError(f"no such command: {command}")
        return await handler(**args)

    def _room(self, room: str) -> RoomRunner:
        runner = self.server.lobby.rooms.get(room)
        if runner is None:
            raise AdminError(f"no room {room} is served here")
        return runner

    async def cmd_rooms(self) -> list[dict[str, Any]]:
        now = time.time()
        return [{"room": r.id, "name": r.room.name, "status": str(r.room.status),
                 "players": [s.name for s in r.room.seats if s is not None],
                 "connected": len(r.room.members()),
                 "idle": round(max(0.0, now - r.room.changed_at), 1)}
                for r in self.server.lobby.rooms.values()]

    async def cmd_show(self, room: str) -> dict[str, Any]:
        r = self._room(room)
        state = r.room.state
        return {"room": r.id, "name": r.room.name, "status": str(r.room.status),
                "variant": r.room.variant, "private": r.room.private,
                "version": r.room.version,
                "turn": None if state is None else state.turn,
                "seats": [None if s is None else {"seat": s.index, "name": s.name,
                                                  "bot": s.bot, "connected": s.connected}
                          for s in r.room.seats],
                "spectators": sorted(r.room.spectators.values()),
                "idle": round(max(0.0, time.time() - r.room.changed_at), 1)}

    async def cmd_close(self, room: str, reason: str = "closed by the host") -> str:
        """Store the game as closed (:data:`server.features.moderation.CLOSED`), then put
        its members back in the lobby with the host's reason, and let it go: it is never
        served again. A room closed already says so, with the reason it was closed for."""
        lobby = self.server.lobby
        if room not in lobby.rooms:
            record = await lobby.store.load(room)
            was = closed_reason(record.result) if record is not None else None
            if was is not None:
                return f"room {room} is already closed ({was})"
        r = self._room(room)
        async with r.lock:
            if r.room.status != RoomStatus.FINISHED:
                await perform(lobby.store, Finish(r.id, {CLOSED: reason}, time.time(),
                                                  expect_version=r.room.fence))
            notice = encode(m.NoticePush(room=r.id, text=f"the host closed this room: "
                                                          f"{reason}"[:200]))
            push = removed(r.id, "closed", reason, None)
            for member in r.room.members():
                member.send_bytes(notice)
                member.send_bytes(push)
                member.leave_room()
            r.room.evict(1000, reason)  # its members are let go of (they stay connected)
            r.close()
        if r.room.code is not None:
            lobby.closed_codes[r.room.code] = reason
        if lobby.rooms.get(r.id) is r:
            lobby.remove(r)
        if self.server.metrics is not None:
            self.server.metrics.rooms_closed.inc()
        return f"room {room} closed"

    async def cmd_kick(self, room: str, seat: int, seconds: float | None = None,
                       reason: str = "removed by the host") -> str:
        """Keep the player of a seat out of the room (for ``seconds``, or for good, until
        ``unkick``); whoever plays it now is put back in the lobby, told why. Before the
        start the seat is freed; after it, the game goes on without them."""
        r = self._room(room)
        if not 0 <= seat < r.room.size or r.room.seats[seat] is None:
            raise AdminError(f"room {room} has no seat {seat} taken")
        taken = r.room.seats[seat]
        assert taken is not None
        if taken.bot is not None:
            raise AdminError(f"seat {seat} of room {room} is a bot's")
        kick = await self.server.moderation.kick(r.id, seat, taken.name, taken.account,
                                                 seconds=seconds, reason=reason)
        member = taken.member
        if member is not None:
            member.send_bytes(removed(r.id, "kicked", reason, kick.until))
            member.leave_room()
            await r.leave(member, dropped=False)
        if r.room.status == RoomStatus.PLAYING:
            # The game goes on without them: their turns end at once, the others told why.
            _tell_room(r, f"the host removed {taken.name} from this room"
                          f"{ending(kick.until)}: their turns end at once until they may "
                          f"come back")
            await r.away_changed()
        return f"{taken.name} (seat {seat}) kept out of room {room}{ending(kick.until)}"

    async def cmd_unkick(self, room: str, name: str) -> str:
        if not await self.server.moderation.unkick(room, name):
            raise AdminError(f"{name} is not kept out of room {room}")
        r = self.server.lobby.rooms.get(room)
        if r is not None and r.room.status == RoomStatus.PLAYING:
            _tell_room(r, f"the host let {name} back into this room: their turns are "
                          f"theirs again")
        return f"{name} may come back to room {room}"

    async def cmd_kicks(self) -> list[dict[str, Any]]:
        moderation = self.server.moderation
        await moderation.load()
        return [{"room": k.room, "name": k.name or k.value, "seat": k.seat,
                 "until": ending(k.until).removeprefix(" until ") or "for good",
                 "reason": k.reason}
                for k in moderation.kicks.values() if live(k.until)]

    async def cmd_mute(self, name: str, seconds: float | None = None,
                       reason: str = "muted by the host") -> str:
        mute = await self.server.moderation.mute(name, seconds=seconds, reason=reason)
        return f"{name} muted{ending(mute.until) or ' for good'}"

    async def cmd_unmute(self, name: str) -> str:
        if not await self.server.moderation.unmute(name):
            raise AdminError(f"{name} is not muted")
        return f"{name} unmuted"

    async def cmd_mutes(self) -> list[dict[str, Any]]:
        moderation = self.server.moderation
        await moderation.load()
        return [{"name": u.name or u.value,
                 "until": ending(u.until).removeprefix(" until ") or "for good",
                 "reason": u.reason}
                for u in moderation.mutes.values() if live(u.until)]

    async def cmd_ban(self, target: str, seconds: float | None = None,
                      reason: str = "banned by the host") -> str:
        ban = await self.server.moderation.ban(target, seconds=seconds, reason=reason)
        # Whoever is connected under it goes now, told why.
        moderation = self.server.moderation
        for conn in list(self.server.connections):
            if (ban.kind == "address" and moderation.address_ban(conn.address) is ban) or \
                    (ban.kind == "name" and conn.name is not None
                     and moderation.name_ban(conn.name) is ban):
                conn.send_bytes(removed(conn.room.id if conn.room is not None else None,
                                        "banned", reason, ban.until))
                conn.close(1008, f"barred by the host: {reason}"[:120])
        return f"{ban.kind} {target} banned{until(ban) or ' for good'}"

    async def cmd_unban(self, target: str) -> str:
        if not await self.server.moderation.unban(target):
            raise AdminError(f"{target} is not banned")
        return f"{target} unbanned"

    async def cmd_bans(self) -> list[dict[str, Any]]:
        await self.server.moderation.load()
        return [{"kind": b.kind, "value": b.name or b.value,
                 "until": until(b).removeprefix(" until ") or "for good", "reason": b.reason}
                for b in self.server.moderation.bans.values()]

    async def cmd_announce(self, text: str) -> str:
        """The host's word to every connection that said hello: in a room, as a notice of
        that room (shown among its chat); in the lobby, as a notice of the server. It is
        kept in the inbox of every account seen lately too (server.features.inbox), for
        those away to read when they come."""
        sent = 0
        for conn in list(self.server.connections):
            if conn.state in (ConnState.SEATED, ConnState.WATCHING) and conn.room is not None:
                conn.send_bytes(encode(m.NoticePush(room=conn.room.id, text=text)))
            elif conn.state == ConnState.LOBBY:
                conn.send_bytes(encode(m.NoticePush(room=None, text=text)))
            else:
                continue
            sent += 1
        kept = await self.server.inbox.announce(text)
        return f"told {sent} connection(s); kept in {kept} inbox(es)"

    async def cmd_drain(self) -> str:
        return self.server.drain()

    async def cmd_tournament(self, action: str, tournament: str) -> str:
        """``tournament cancel ID``: call a tournament off (no more rounds; its players
        get ``tournament_ended`` with ``cancelled``; the games being played go on)."""
        if action != "cancel":
            raise AdminError(f"no such tournament command: {action}")
        try:
            t = await self.server.tournaments.cancel(tournament)
        except CastellError as exc:
            raise AdminError(str(exc)) from None
        return f"tournament {t.id} ({t.name}) cancelled; {len(t.players)} player(s) told"


def _tell_room(runner: RoomRunner, text: str) -> None:
    """The host's word to the members of a room, as a notice of that room."""
    notice = encode(m.NoticePush(room=runner.id, text=text[:200]))
    for member in runner.room.members():
        member.send_bytes(notice)


def ask(path: str, command: str, **args: Any) -> dict[str, Any]:
    """Send one command to the console at ``path``; its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(path)
        sock.sendall(json.dumps({"command": command, **args}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply
