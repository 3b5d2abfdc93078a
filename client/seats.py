"""The seats this user holds, kept between runs so that a restarted ``castell`` can resume.

A seat token proves a seat (docs/protocol.md, ``join_room``): whoever has it plays that seat.
The file maps server URL → ``ROOM#SEAT`` → ``{room, seat, token, name, player}`` (``name`` is
the room's name, to ask "resume your game in 'Friday night' (seat 2)?"; ``player`` the name the
seat was taken under, so that friends who play from one account each find their own seat, and
never another's). Older files keyed by room alone, without ``player``, are still read. It lives
in the user's state folder, readable by the user alone (mode 0600, folder 0700), and is
replaced atomically so that a crash never leaves half a file. A token is forgotten when its
game ends or the server refuses it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import attrs

FILE_MODE = 0o600
DIR_MODE = 0o700


def default_state_dir() -> Path:
    """The user's state folder for Castell (XDG_STATE_HOME on Linux)."""
    from platformdirs import user_state_path

    return user_state_path("castell")


@attrs.frozen
class HeldSeat:
    """A seat this user holds in a room of one server."""

    url: str
    room: str
    token: str
    name: str  # the room's name
    seat: int
    player: str = ""  # who took it ("" in files written before names were kept)

    @property
    def key(self) -> str:
        return f"{self.room}#{self.seat}"


class SeatStore:
    """``seats.json`` in ``folder`` (default: the user's state folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_state_dir()
        self.path = self.folder / "seats.json"

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".seats-", suffix=".json")
        try:
            os.fchmod(fd, FILE_MODE)  # the token is a password: never readable by others
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, ensure_ascii=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def held(self, url: str, player: str | None = None) -> list[HeldSeat]:
        """The seats held on the server at ``url`` (by ``player``, when given: a seat taken
        under another name is someone else's), most recently remembered first."""
        out = []
        for key, entry in reversed(list((self._load().get(url) or {}).items())):
            try:
                room = str(entry.get("room", key))
                held = HeldSeat(url, room, str(entry["token"]), str(entry.get("name", room)),
                                int(entry["seat"]), str(entry.get("player", "")))
            except (AttributeError, KeyError, TypeError, ValueError):
                continue  # a damaged entry is skipped, not fatal
            if player is None or not held.player or held.player == player:
                out.append(held)
        return out

    def remember(self, seat: HeldSeat) -> None:
        data = self._load()
        rooms = data.setdefault(seat.url, {})
        rooms.pop(seat.room, None)  # an entry of an older file, keyed by room alone
        rooms.pop(seat.key, None)  # re-insert: the latest comes last
        rooms[seat.key] = {"room": seat.room, "seat": seat.seat, "token": seat.token,
                           "name": seat.name, "player": seat.player}
        self._save(data)

    def forget(self, url: str, room: str, seat: int | None = None) -> None:
        """Forget the seat ``seat`` of ``room`` (every seat of it, when None)."""
        data = self._load()
        rooms = data.get(url) or {}
        gone = [key for key, entry in rooms.items()
                if isinstance(entry, dict) and entry.get("room", key) == room
                and (seat is None or entry.get("seat") == seat)]
        if not gone:
            return
        for key in gone:
            del rooms[key]
        if not rooms:
            data.pop(url, None)
        self._save(data)
