"""A room's seats and presence: who sits where (people with their tokens and accounts, bots
with their levels), who watches, the names in the room, and which seats belong to accounts.

Every way of seating someone goes through here: a person in the lowest free seat (or the one a
rematch offers them, :meth:`Presence.free_seat`), a bot into a free seat under a name no one
at the table has (:meth:`Presence.place_bot`: the one rule for every way a bot sits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic

import attrs

from server.core import bots
from server.core.names import name_key
from server.core.room_effects import Close, M
from server.core.room_writes import ClaimSeat, Write
from server.store.base import token_matches
from shared.errors import CastellError

#: Names nobody may take in a room, in any case: the server's notices are shown under them.
RESERVED_NAMES = frozenset({"server"})


class RoomError(CastellError):
    """Raised when a room refuses a request (full, not started, not the creator, ...)."""


class BadToken(RoomError):
    """Raised when a seat token matches no seat of the room."""

    code = "bad_token"


@attrs.define(eq=False)
class Seat(Generic[M]):
    """One seat: who sits there, how to prove it, and the member playing it now."""

    index: int
    name: str
    bot: str | None = None  # the bot's level, None for a person
    token_hash: bytes | None = None
    member: M | None = None
    #: The account the seat belongs to (None: a guest's, a bot's, or not read yet).
    account: str | None = None

    @property
    def connected(self) -> bool:
        return self.bot is not None or self.member is not None


def first_name(name: str) -> str:
    """A bot's first name, as names compare: ``Pau`` of ``Pau·hard`` and of ``PAU·easy``."""
    return name.split("·")[0].casefold()


class Presence(Generic[M]):
    """The seats and spectators of one room (see the module docstring)."""

    def __init__(self, room_id: str, size: int) -> None:
        self.room_id = room_id
        self.seats: list[Seat[M] | None] = [None] * size
        #: The creator's seat: the creator is whoever holds it, so a creator who drops and
        #: comes back with the token is the creator still (None: no person seated).
        self.creator_seat: int | None = None
        #: The members watching, each with the name it watches under (in the order they came).
        self.spectators: dict[M, str] = {}
        #: Whether the seats' accounts are known (a room read from the store learns them
        #: with :meth:`know_accounts`).
        self.accounts_read = True
        #: The seats stored as belonging to an account (see :meth:`claim`).
        self.accounted: set[int] = set()

    @property
    def taken(self) -> int:
        return sum(seat is not None for seat in self.seats)

    @property
    def full(self) -> bool:
        return self.taken == len(self.seats)

    def members(self) -> list[M]:
        found = [s.member for s in self.seats if s is not None and s.member is not None]
        found.extend(self.spectators)
        return found

    @property
    def creator(self) -> M | None:
        """The member playing the creator's seat now, if any."""
        seat = None if self.creator_seat is None else self.seats[self.creator_seat]
        return None if seat is None else seat.member

    def seat_of(self, member: M) -> int | None:
        for seat in self.seats:
            if seat is not None and seat.member == member:
                return seat.index
        return None

    def first_person(self) -> int | None:
        return next((s.index for s in self.seats if s is not None and s.bot is None), None)

    def player_seat(self, member: M) -> int:
        seat = self.seat_of(member)
        if seat is None:
            raise RoomError("spectators cannot do that: only players can", code="not_a_player")
        return seat

    def with_token(self, token: str) -> Seat[M]:
        for seat in self.seats:
            if seat is not None and token_matches(token, seat.token_hash):
                return seat
        raise BadToken("that seat token does not belong to any seat of this room")

    def check_name(self, name: str, room_name: str) -> None:
        """Refuse ``name`` when a seat or a spectator of the room already has it, as names
        compare (:func:`server.core.names.name_key`: in any case, or a look-alike) (``name_taken``):
        two people under one name could not be told apart. ``server`` is taken by the server
        itself (clients show its notices among the chat under it)."""
        wanted = name_key(name)
        if wanted in {name_key(n) for n in RESERVED_NAMES}:
            raise RoomError(f"{name!r} is the name the server's own notices go under: connect "
                            "under another name to come in", code="name_taken")
        taken = [s.name for s in self.seats if s is not None]
        clash = next((n for n in [*taken, *self.spectators.values()] if name_key(n) == wanted),
                     None)
        if clash is not None:  # said as the room has it, not as the newcomer spelled it
            same = "" if clash == name else f" ({name!r} counts as the same name)"
            raise RoomError(f"someone in room {room_name!r} is already called {clash!r}{same}: "
                            "connect under another name to come in", code="name_taken")

    def free_seat(self, room_name: str, offers: Mapping[int, str],
                  name: str | None = None) -> int:
        """The lowest free seat; with a ``name`` a rematch offers a seat to (``offers``: seat
        → name as names compare), that seat (a seat offered to someone else is not free for
        others)."""
        if name is not None:
            wanted = name_key(name)
            for index, offered in offers.items():
                if offered == wanted and self.seats[index] is None:
                    return index
        for index, seat in enumerate(self.seats):
            if seat is None and index not in offers:
                return index
        raise RoomError(f"room {room_name!r} is full", code="room_full")

    def place_bot(self, level: str, index: int, room_name: str) -> Seat[M]:
        """A bot of ``level`` (its own name: ``greedy`` is ``normal``) for seat ``index``: the
        one way a bot is seated. Refused (``room_full``) when the seat is taken; named with
        the first name of :func:`server.core.bots.bot_names` that nobody at the table (seated or
        watching) has: one first name per table, whatever the levels (not a ``Pau·hard``
        beside a ``Pau·easy``)."""
        level = bots.level_name(level)
        if not 0 <= index < len(self.seats) or self.seats[index] is not None:
            raise RoomError(f"seat {index} of room {room_name!r} is taken", code="room_full")
        here = [s.name for s in self.seats if s is not None]
        here.extend(self.spectators.values())
        names = {n.casefold() for n in here}
        firsts = {first_name(n) for n in here}
        name = next(n for n in bots.bot_names(level)
                    if n.casefold() not in names and first_name(n) not in firsts)
        return Seat(index, name, bot=level)

    def claim(self, index: int, account: str | None, version: int,
              fence: int | None) -> list[Write]:
        """The account write that follows a seat write of ``version`` (fenced on it when the
        room is, ``fence`` not None): none when the seat neither belongs nor belonged to an
        account, as far as is known."""
        if account is None and self.accounts_read and index not in self.accounted:
            return []
        return [ClaimSeat(self.room_id, index, account,
                          version if fence is not None else None)]

    def claimed(self, index: int, account: str | None) -> None:
        if account is None:
            self.accounted.discard(index)
        else:
            self.accounted.add(index)

    def know_accounts(self, accounts: dict[int, str]) -> None:
        """The accounts of the seats, as stored (:meth:`Store.seat_accounts`)."""
        for seat in self.seats:
            if seat is not None and seat.bot is None and seat.account is None:
                seat.account = accounts.get(seat.index)
        self.accounted = set(accounts)
        self.accounts_read = True

    def speaker(self, member: M, name: str) -> tuple[int | None, str]:
        """Who says a chat line: a player speaks from the seat, under its name as the view
        shows it; a spectator under ``name`` (the connection's)."""
        seat = self.seat_of(member)
        if seat is not None:
            taken = self.seats[seat]
            assert taken is not None
            name = taken.name
        return seat, name

    def evict(self, code: int, reason: str) -> list[Close[M]]:
        """Close every member (the room is no longer served here)."""
        effects = [Close(member, code, reason) for member in self.members()]
        for seat in self.seats:
            if seat is not None:
                seat.member = None
        self.spectators.clear()
        return effects
