"""The host's moderation: bans (by name or address, stored) and mutes (in memory).

A ban by name bars a guest who types that name and an account whose name it is (names
compare as :func:`server.names.name_key` says); a ban by address bars an address, or a
network (``10.1.2.0/24``), at the handshake. Bans are stored (schema 6), so they outlive a
restart, and every node of a cluster reads them again every :data:`REFRESH` seconds from the
database they share. A mute keeps a name's chat lines from being said (``muted``) on this
node until it is lifted or the node restarts.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import TYPE_CHECKING

from server.names import name_key
from server.store.base import BanRecord, Store
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.connection import Connection
    from server.runner import RoomRunner

log = logging.getLogger("castell.moderation")

#: Seconds between two reads of the stored bans (what other nodes banned meanwhile).
REFRESH = 2.0


def ban_target(target: str) -> tuple[str, str]:
    """``(kind, value)`` of a ban's target: an address or network, else a name."""
    try:
        ipaddress.ip_network(target, strict=False)
    except ValueError:
        return "name", name_key(target)
    return "address", target


class Moderation:
    """The bans and mutes of one server (see the module docstring)."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self.bans: dict[tuple[str, str], BanRecord] = {}
        self.muted: set[str] = set()

    async def load(self) -> None:
        """Read the stored bans (again)."""
        if self.store is not None:
            self.bans = {(b.kind, b.value): b for b in await self.store.list_bans()}

    async def ban(self, target: str, *, seconds: float | None, reason: str) -> BanRecord:
        kind, value = ban_target(target)
        now = time.time()
        ban = BanRecord(kind, value, None if seconds is None else now + seconds, reason, now)
        if self.store is not None:
            await self.store.put_ban(ban)
        self.bans[(kind, value)] = ban
        return ban

    async def unban(self, target: str) -> bool:
        kind, value = ban_target(target)
        stored = await self.store.delete_ban(kind, value) if self.store is not None else False
        return self.bans.pop((kind, value), None) is not None or stored

    def _live(self, ban: BanRecord | None) -> BanRecord | None:
        return ban if ban is not None and (ban.until is None or ban.until > time.time()) \
            else None

    def name_ban(self, name: str) -> BanRecord | None:
        return self._live(self.bans.get(("name", name_key(name))))

    def address_ban(self, address: str) -> BanRecord | None:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return self._live(self.bans.get(("address", address)))
        for (kind, value), ban in self.bans.items():
            if kind == "address" and self._live(ban) is not None \
                    and ip in ipaddress.ip_network(value, strict=False):
                return ban
        return None

    def check_name(self, name: str) -> None:
        """Refuse a hello under a banned name (``banned``)."""
        ban = self.name_ban(name)
        if ban is not None:
            raise CastellError(f"{name!r} is barred from this server{until(ban)}",
                               code="banned")

    def check_chat(self, conn: Connection, runner: RoomRunner) -> None:
        """Refuse a chat line from a muted name (``muted``)."""
        names = {conn.name or ""}
        seat = runner.room.seat_of(conn)
        if seat is not None:
            taken = runner.room.seats[seat]
            if taken is not None:
                names.add(taken.name)
        if any(name_key(n) in self.muted for n in names):
            raise CastellError("the host has muted you: your chat lines are not passed on",
                               code="muted")


def until(ban: BanRecord) -> str:
    """How long a ban lasts, as a person reads it."""
    if ban.until is None:
        return ""
    return " until " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ban.until))
