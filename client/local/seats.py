"""The seats this user holds, kept between runs so that a restarted ``castell`` can resume.

A seat token proves a seat (docs/protocol.md, ``join_room``): whoever has it plays that seat.
The file maps server address → ``ROOM#SEAT`` → ``{room, seat, token, name, player, private}``
(``name`` is the room's name, to ask "resume your game in 'Friday night' (seat 2)?"; ``player``
the name the seat was taken under, so that friends who play from one account each find their
own seat, and never another's; ``private`` whether the room is private, so that a public room
the server no longer knows is known to be gone). Older files keyed by room alone, without
``player`` or ``private``, are still read.

A server has many spellings: ``ws://localhost:18765``, ``localhost:18765``,
``127.0.0.1:18765`` and ``ws://127.0.0.1:18765/`` all reach the same one. Seats are stored
under the address in its normal form (:func:`server_key`), and looked up under every stored
address that names the same server (:func:`same_server`: same scheme, port and path, and a
host that resolves to an address in common; the loopback addresses and this machine's own
network addresses are one). It lives
in the user's state folder, readable by the user alone (mode 0600, folder 0700), and is
replaced atomically so that a crash never leaves half a file. A token is forgotten when its
game ends or the server refuses it.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from client.net.address import AddressError, server_url

FILE_MODE = 0o600
DIR_MODE = 0o700


def default_state_dir() -> Path:
    """The user's state folder for Castell (XDG_STATE_HOME on Linux)."""
    from platformdirs import user_state_path

    return user_state_path("castell")


LOOPBACK = "loopback"


def server_key(url: str) -> str:
    """``url`` in the form seats are stored under: a full ``ws(s)://host:port`` address, the
    host in lower case, no trailing slash. A key that is no server address (``castell play``
    keeps its seats under a name of its own, with a space in it) is kept as it is."""
    if any(ch.isspace() for ch in url):
        return url
    try:
        return server_url(url.lower() if "://" not in url else _lower_host(url))
    except (AddressError, ValueError):
        return url


def _lower_host(url: str) -> str:
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.lower()}{slash}{path}"


@functools.lru_cache(maxsize=64)
def _this_machine(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``address`` is one of this machine's own (a socket can be bound to it)."""
    if address.is_loopback:
        return True
    if address.is_multicast or address.is_unspecified:
        return False
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((str(address), 0))
    except OSError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _addresses(host: str) -> frozenset[str]:
    """The addresses ``host`` names (itself, when it cannot be resolved); every address of
    this machine (a loopback one, or one of its own network addresses) counts as one,
    :data:`LOOPBACK`."""
    name = host.strip("[]")
    try:
        found = {ipaddress.ip_address(name)}
    except ValueError:
        try:
            infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return frozenset({name})
        found = set()
        for info in infos:
            with contextlib.suppress(ValueError):
                found.add(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
        if not found:
            return frozenset({name})
    return frozenset(LOOPBACK if _this_machine(a) else str(a) for a in found)


def same_machine(a: str, b: str) -> bool:
    """Whether the server addresses ``a`` and ``b`` name the same machine (whatever their
    ports): a host that resolves to an address in common, this machine's own as one."""
    try:
        ha, hb = urlsplit(server_key(a)).hostname, urlsplit(server_key(b)).hostname
    except ValueError:
        return False
    if not ha or not hb:
        return False
    return ha == hb or bool(_addresses(ha) & _addresses(hb))


def same_server(a: str, b: str) -> bool:
    """Whether the addresses ``a`` and ``b`` reach the same server."""
    a, b = server_key(a), server_key(b)
    if a == b:
        return True
    try:
        pa, pb = urlsplit(a), urlsplit(b)
        if (pa.scheme, pa.port, pa.path) != (pb.scheme, pb.port, pb.path):
            return False
    except ValueError:
        return False
    if not pa.hostname or not pb.hostname or "://" not in a or "://" not in b:
        return False
    return bool(_addresses(pa.hostname) & _addresses(pb.hostname))


@attrs.frozen
class HeldSeat:
    """A seat this user holds in a room of one server."""

    url: str
    room: str
    token: str
    name: str  # the room's name
    seat: int
    player: str = ""  # who took it ("" in files written before names were kept)
    #: Whether the room is private (None: not known, in files written before it was kept).
    private: bool | None = None

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

    def _aliases(self, data: dict[str, Any], url: str) -> list[str]:
        """The stored addresses that name the server at ``url``: its own key first."""
        key = server_key(url)
        return [key] * (key in data) + [k for k in data if k != key and same_server(k, url)]

    def held(self, url: str, player: str | None = None) -> list[HeldSeat]:
        """The seats held on the server at ``url``, whichever spelling of its address they
        were stored under (by ``player``, when given: a seat taken under another name is
        someone else's), most recently remembered first."""
        data = self._load()
        out: list[HeldSeat] = []
        seen: set[tuple[str, int]] = set()
        for stored in self._aliases(data, url):
            rooms = data.get(stored)
            if not isinstance(rooms, dict):
                continue
            for key, entry in reversed(list(rooms.items())):
                try:
                    room = str(entry.get("room", key))
                    private = entry.get("private")
                    held = HeldSeat(stored, room, str(entry["token"]),
                                    str(entry.get("name", room)), int(entry["seat"]),
                                    str(entry.get("player", "")),
                                    private if isinstance(private, bool) else None)
                except (AttributeError, KeyError, TypeError, ValueError):
                    continue  # a damaged entry is skipped, not fatal
                if (held.room, held.seat) in seen:
                    continue
                if player is None or not held.player or held.player == player:
                    seen.add((held.room, held.seat))
                    out.append(held)
        return out

    def remember(self, seat: HeldSeat) -> None:
        data = self._load()
        key = server_key(seat.url)
        for stored in self._aliases(data, seat.url):  # one entry per seat, under the new key
            rooms = data.get(stored)
            if isinstance(rooms, dict):
                rooms.pop(seat.room, None)  # an entry of an older file, keyed by room alone
                rooms.pop(seat.key, None)  # re-insert: the latest comes last
                if not rooms and stored != key:
                    del data[stored]
        rooms = data.setdefault(key, {})
        rooms[seat.key] = {"room": seat.room, "seat": seat.seat, "token": seat.token,
                           "name": seat.name, "player": seat.player,
                           **({"private": seat.private} if seat.private is not None else {})}
        self._save(data)

    def forget(self, url: str, room: str, seat: int | None = None) -> None:
        """Forget the seat ``seat`` of ``room`` (every seat of it, when None) on the server at
        ``url``, under whichever spelling of its address it was stored."""
        data = self._load()
        changed = False
        for stored in self._aliases(data, url):
            rooms = data.get(stored)
            if not isinstance(rooms, dict):
                continue
            gone = [key for key, entry in rooms.items()
                    if isinstance(entry, dict) and entry.get("room", key) == room
                    and (seat is None or entry.get("seat") == seat)]
            for key in gone:
                del rooms[key]
                changed = True
            if not rooms:
                del data[stored]
                changed = True
        if changed:
            self._save(data)
