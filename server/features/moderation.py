"""The host's moderation: bans, mutes and kicks (stored), and what a closed room is.

A ban by name bars a guest who types that name and an account whose name it is (names
compare as :func:`server.core.names.name_key` says); a ban by address bars an address, or a
network (``10.1.2.0/24``), at the handshake. A mute keeps a name's chat lines from being said
(``muted``). A kick keeps a player (the seat's name, and its account) out of one room: no
seat taken back, by token or by account, no seat taken anew, no watching (``kicked``). Each
may last a while or for good, and says the host's reason to whom it concerns.

Bans (schema 6), mutes and kicks (schema 10) are stored, so they outlive a restart, and every
node of a cluster reads them again every ``moderation_refresh`` seconds (2 unless told,
``--moderation-refresh``) from the database they share (the node that serves a room has its
kicks at once: the kick was set there).

A room the host closed (``castell-server admin close``) is stored finished, its result
``{"abandoned": reason}`` (:func:`closed_reason`), its game not over: it is never served
again (:func:`refuse_closed`, ``room_closed``), and its players' ``my_games`` say
``closed``.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import TYPE_CHECKING

from server.core.names import name_key
from server.store.base import BanRecord, GameRecord, KickRecord, MuteRecord, Store, token_matches
from shared import messages as m
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.runtime.connection import Connection
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.moderation")

def ban_target(target: str) -> tuple[str, str]:
    """``(kind, value)`` of a ban's target: an address or network, else a name."""
    try:
        ipaddress.ip_network(target, strict=False)
    except ValueError:
        return "name", name_key(target)
    return "address", target


#: The key of a closed room's result (what ``admin close`` stores), its value the reason.
CLOSED = "abandoned"


def closed_reason(result: dict[str, object] | None) -> str | None:
    """The host's reason, when a stored result says the host closed the room."""
    if result is None or CLOSED not in result:
        return None
    return str(result[CLOSED])


def refuse_closed(record: GameRecord) -> None:
    """Refuse to serve a room the host closed (``room_closed``, the host's reason said)."""
    reason = closed_reason(record.result)
    if reason is not None:
        raise CastellError(f"the host closed this room: {reason}", code="room_closed")


def removed(room: str | None, why: str, reason: str, ends: float | None) -> bytes:
    """The ``removed`` push (:class:`shared.messages.RemovedPush`), encoded."""
    from shared.codec import encode

    return encode(m.RemovedPush(room=room, why=why, text=reason[:200] or why, until=ends))


class Moderation:
    """The bans, mutes and kicks of one server (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.bans: dict[tuple[str, str], BanRecord] = {}
        self.mutes: dict[str, MuteRecord] = {}
        self.kicks: dict[tuple[str, str], KickRecord] = {}

    async def load(self) -> None:
        """Read the stored bans, mutes and kicks (again)."""
        self.bans = {(b.kind, b.value): b for b in await self.store.list_bans()}
        self.mutes = {u.value: u for u in await self.store.list_mutes()}
        self.kicks = {(k.room, k.value): k for k in await self.store.list_kicks()}

    async def ban(self, target: str, *, seconds: float | None, reason: str) -> BanRecord:
        kind, value = ban_target(target)
        now = time.time()
        ban = BanRecord(kind, value, None if seconds is None else now + seconds, reason, now,
                        target if kind == "name" else "")
        await self.store.put_ban(ban)
        self.bans[(kind, value)] = ban
        return ban

    async def unban(self, target: str) -> bool:
        kind, value = ban_target(target)
        stored = await self.store.delete_ban(kind, value)
        return self.bans.pop((kind, value), None) is not None or stored

    def _live(self, ban: BanRecord | None) -> BanRecord | None:
        return ban if ban is not None and live(ban.until) else None

    # -- mutes ---------------------------------------------------------------------------

    async def mute(self, name: str, *, seconds: float | None, reason: str) -> MuteRecord:
        now = time.time()
        mute = MuteRecord(name_key(name), None if seconds is None else now + seconds, reason,
                          now, name)
        await self.store.put_mute(mute)
        self.mutes[mute.value] = mute
        return mute

    async def unmute(self, name: str) -> bool:
        key = name_key(name)
        stored = await self.store.delete_mute(key)
        return self.mutes.pop(key, None) is not None or stored

    def muted(self, name: str) -> MuteRecord | None:
        mute = self.mutes.get(name_key(name))
        return mute if mute is not None and live(mute.until) else None

    # -- kicks ---------------------------------------------------------------------------

    async def kick(self, room: str, seat: int, name: str, account: str | None, *,
                   seconds: float | None, reason: str) -> KickRecord:
        """Keep the player of ``seat`` (its ``name`` and ``account``) out of ``room``."""
        now = time.time()
        kick = KickRecord(room, name_key(name), account, seat,
                          None if seconds is None else now + seconds, reason, now, name)
        await self.store.put_kick(kick)
        self.kicks[(room, kick.value)] = kick
        return kick

    async def unkick(self, room: str, name: str) -> bool:
        key = name_key(name)
        stored = await self.store.delete_kick(room, key)
        return self.kicks.pop((room, key), None) is not None or stored

    def kicked(self, room: str, names: set[str], account: str | None) -> KickRecord | None:
        """The live kick that keeps out of ``room`` a player with one of ``names`` or with
        ``account``."""
        keys = {name_key(n) for n in names}
        for (where, value), kick in self.kicks.items():
            if where == room and live(kick.until) and (
                    value in keys or (account is not None and kick.account == account)):
                return kick
        return None

    def away(self, runner: RoomRunner) -> set[int]:
        """The seats of ``runner``'s room whose player is kicked from it now: their turns end
        at once when they come (:attr:`server.runtime.runner.RoomRunner.away`)."""
        if not self.kicks:
            return set()
        return {seat.index for seat in runner.room.seats
                if seat is not None and seat.bot is None
                and self.kicked(runner.id, {seat.name}, seat.account) is not None}

    def check_join(self, conn: Connection, runner: RoomRunner, token: str | None) -> None:
        """Refuse a ``join_room`` of a kicked player (``kicked``): by the name it says, its
        account, or the name of the seat its token takes back."""
        if not self.kicks:
            return
        names = {conn.name or ""}
        if token is not None:
            for seat in runner.room.seats:
                if seat is not None and token_matches(token, seat.token_hash):
                    names.add(seat.name)
        kick = self.kicked(runner.id, names, conn.account)
        if kick is not None:
            raise CastellError(f"the host removed you from this room{ending(kick.until)}: "
                               f"{kick.reason}", code="kicked")

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
        """Refuse a hello under a banned name (``banned``), the host's reason said."""
        ban = self.name_ban(name)
        if ban is not None:
            raise CastellError(f"{name!r} is barred from this server{until(ban)}: "
                               f"{ban.reason}", code="banned")

    def check_chat(self, conn: Connection, runner: RoomRunner) -> None:
        """Refuse a chat line from a muted name (``muted``)."""
        names = {conn.name or ""}
        seat = runner.room.seat_of(conn)
        if seat is not None:
            taken = runner.room.seats[seat]
            if taken is not None:
                names.add(taken.name)
        for name in names:
            mute = self.muted(name)
            if mute is not None:
                raise CastellError(f"the host has muted you{ending(mute.until)}: your chat "
                                   f"lines are not passed on ({mute.reason})", code="muted")


def live(ends: float | None) -> bool:
    """Whether a ban, mute or kick that ends at ``ends`` (None: never) still holds."""
    return ends is None or ends > time.time()


def ending(ends: float | None) -> str:
    """When a ban, mute or kick ends, as a person reads it (nothing: for good)."""
    if ends is None:
        return ""
    return " until " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ends))


def until(ban: BanRecord) -> str:
    """How long a ban lasts, as a person reads it."""
    return ending(ban.until)


async def refuse_closed_code(store: Store, key: str) -> None:
    """A private room's code that names a room the host closed: ``room_closed``, with
    the reason (a code of any other stored room says nothing: ``room_not_found``)."""
    room = await store.room_by_code(key.upper())
    record = await store.load(room) if room is not None else None
    if record is not None and record.room.private:
        refuse_closed(record)
