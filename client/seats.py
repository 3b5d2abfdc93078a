"""The seats this user holds, kept between runs so that a restarted ``castell`` can resume.

A seat token proves a seat (docs/protocol.md, ``join_room``): whoever has it plays that seat.
The file maps server URL → room id → ``{token, name, seat}`` (``name`` is the room's name, to
ask "resume your game in 'Friday night' (seat 2)?"). It lives in the user's state folder,
readable by the user alone (mode 0600, folder 0700), and is replaced atomically so that a
crash never leaves half a file. A token is forgotten when its game ends or the server refuses
it.
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

    def held(self, url: str) -> list[HeldSeat]:
        """The seats held on the server at ``url``, most recently remembered first."""
        out = []
        for room, entry in reversed(list((self._load().get(url) or {}).items())):
            try:
                out.append(HeldSeat(url, room, str(entry["token"]), str(entry.get("name", room)),
                                    int(entry["seat"])))
            except (KeyError, TypeError, ValueError):
                continue  # a damaged entry is skipped, not fatal
        return out

    def remember(self, seat: HeldSeat) -> None:
        data = self._load()
        rooms = data.setdefault(seat.url, {})
        rooms.pop(seat.room, None)  # re-insert: the latest comes last
        rooms[seat.room] = {"token": seat.token, "name": seat.name, "seat": seat.seat}
        self._save(data)

    def forget(self, url: str, room: str) -> None:
        data = self._load()
        rooms = data.get(url) or {}
        if room not in rooms:
            return
        del rooms[room]
        if not rooms:
            data.pop(url, None)
        self._save(data)
