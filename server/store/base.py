"""What the server stores about a game, and the interface every storage backend keeps.

A game is its seed, its room settings and its list of actions: replaying the actions on a game
set up from the seed rebuilds the state exactly, so those few records are all that needs to be
durable. They are frozen attrs classes:

* :class:`RoomRecord` — a room's settings, seed, status and version;
* :class:`SeatRecord` — who sits where; a seat token only as its hash (:func:`hash_token`);
* :class:`ActionRecord` — one applied action, stored as the bytes of its fields;
* :class:`ChatRecord` — one chat line said in a room (the last :data:`CHAT_KEPT` are kept);
* :class:`GameRecord` — all of one room's records, as :meth:`Store.load` returns them;
* :class:`AccountRecord` — a player's account: its name, and its key only as a hash;
* :class:`AccountGame` — one game of an account, as :meth:`Store.account_games` lists them;
* :class:`Progress` — where a started game stands (its round and turn), stored with the room
  by the write that moves it (schema 11);
* :class:`Placing`, :class:`RatingRecord`, :class:`RatedGame` — a rated game's final order, an
  account's rating, one rated game of an account (schema 5, :mod:`server.ratings`);
* :class:`BanRecord`, :class:`MuteRecord`, :class:`KickRecord` — what the host decided about a
  player (schemas 6 and 7, :mod:`server.moderation`).

:class:`Store` is the abstract interface, every method a coroutine. A write is durable when its
coroutine returns. Records go in and come out equal: ``load`` gives back exactly what was put.
"""

from __future__ import annotations

import abc
import enum
import hashlib
import hmac
from collections.abc import Iterable
from typing import Any, Final, Self

import attrs
import msgpack

from server.store.errors import StoreError, VersionConflict
from shared.state import GameState
from shared.view import RoomStatus

#: A room's life (:class:`~shared.view.RoomStatus`): seats being filled, a game under way, a
#: game over — as the plain strings stored.
STATUSES: Final = tuple(status.value for status in RoomStatus)

#: Seeds are stored as signed 64-bit integers (SQLite INTEGER, PostgreSQL bigint); the server
#: draws them with ``secrets.randbits(63)``.
SEED_LIMIT = 2**63

#: The chat lines kept per room: storing one more forgets the oldest (docs/protocol.md,
#: ``history``).
CHAT_KEPT: Final = 500


def _check_status(_instance: object, _attribute: attrs.Attribute, value: str) -> None:
    if value not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {value!r}")


def _check_seed(_instance: object, _attribute: attrs.Attribute, value: int) -> None:
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(f"seed must be in 0 ≤ seed < 2**63, not {value}")


@attrs.frozen
class RoomRecord:
    """A room: its settings (as ``create_room`` asked), its seed, status and version.

    ``room`` is the room id, ``code`` a private room's join code (None for a public room),
    ``version`` the room's latest version as pushed in ``state``; times are Unix seconds.
    ``started_version`` is the version at which the game started (stored by
    :meth:`Store.update_room` with the status ``playing``; None before, and for a game
    started before schema 3).
    """

    room: str
    name: str
    seats: int
    variant: str
    turn_seconds: int | None
    private: bool
    code: str | None
    seed: int = attrs.field(validator=_check_seed)
    status: str = attrs.field(default=RoomStatus.WAITING.value, validator=_check_status)
    version: int = 0
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    started_version: int | None = None
    #: Whether the room's game is rated (schema 5): only accounts sit in it, and its end
    #: changes their ratings.
    rated: bool = False
    #: The seats a rematch offers (schema 8, :mod:`server.rematch`): (seat, name as names
    #: compare) pairs in seat order, stored with the room (:func:`pack_offers`).
    offers: tuple[tuple[int, str], ...] = ()
    #: Where the game stands (schema 11), stored with every write that moves it (see
    #: :class:`Progress`): its round (None before the start; for a game stored before
    #: schema 11, until :meth:`Store.fill_progress`) and the seat whose turn it is (None
    #: before the start and after the end).
    round: int | None = None
    turn: int | None = None


@attrs.frozen
class SeatRecord:
    """Who holds a seat: a player (with the hash of their seat token) or a bot (with its level).

    The token itself is never stored: only ``hash_token(token)``, checked with
    :func:`token_matches` when a player comes back with ``join_room`` and a token.
    """

    room: str
    seat: int
    name: str
    bot: bool = False
    bot_level: str | None = None
    token_hash: bytes | None = None


@attrs.frozen
class ActionRecord:
    """One action applied in a room, in order: ``seq`` increases with every action.

    ``action`` is the action as :func:`shared.codec.pack_action` gives it: the MessagePack map
    of its wire fields, ``kind`` and the rest (``{"kind": "move", "region": "ebr"}``), without
    the ``type`` and ``id`` of the request that carried it; :func:`shared.codec.unpack_action`
    reads it back. The store keeps these bytes opaque: it neither reads nor checks them (until
    schema 2 they were the whole request frame; migration 2 rewrote them, see
    :mod:`server.store.migrations`). ``version`` is the room's version after the action;
    ``at`` when it was applied (Unix seconds); ``timed_out`` whether the turn timer played it
    (an ``end_turn`` for a seat whose time ran out: its history says ``timeout``).
    """

    room: str
    seq: int
    seat: int
    action: bytes
    at: float
    version: int
    timed_out: bool = False


@attrs.frozen
class ChatRecord:
    """One chat line said in a room: ``version`` is the room's version when it was said (a
    line changes no version), ``seat`` the speaker's seat (None for a spectator), ``name``
    and ``text`` as pushed, ``at`` when (Unix seconds)."""

    room: str
    version: int
    seat: int | None
    name: str
    text: str
    at: float


@attrs.frozen
class GameRecord:
    """Everything stored about one room: enough to rebuild its game by replay.

    ``seats`` are in seat order, ``actions`` in ``seq`` order; ``result`` is what
    :meth:`Store.finish` stored, or None while the game is not over.
    """

    room: RoomRecord
    seats: tuple[SeatRecord, ...] = ()
    actions: tuple[ActionRecord, ...] = ()
    result: dict[str, Any] | None = None


@attrs.frozen
class Progress:
    """Where a started game stands after a write (schema 11): its ``round`` and the seat
    whose ``turn`` it is (None once the game is over). Stored on the room's row by the write
    that moves the game (:meth:`Store.append_action`, :meth:`Store.update_room`), so that a
    list of an account's games (``my_games``) reads it without replaying any game."""

    round: int
    turn: int | None

    @classmethod
    def of(cls, state: GameState) -> Progress:
        """Where ``state`` stands."""
        return cls(state.round, None if state.over else state.turn)


@attrs.frozen
class StoredRoom:
    """A room as a cheap listing of the store gives it, without its game: its record, and
    how many of its seats bots hold (:meth:`Store.unfinished_summaries`)."""

    room: RoomRecord
    bots: int = 0


@attrs.frozen
class AccountRecord:
    """A player's account (docs/security.md, "Accounts"): ``account`` its id, ``name`` the
    name it plays under, ``name_key`` that name as compared (:func:`server.names.name_key`:
    unique per server), ``key_hash`` its secret key as :func:`hash_token` gives it (the key
    itself is never stored), ``created_at`` Unix seconds."""

    account: str
    name: str
    name_key: str
    key_hash: bytes
    created_at: float = 0.0


@attrs.frozen
class Registration:
    """What a new account registered by :meth:`Store.sign_in` is held to (docs/security.md,
    "Accounts"): at most ``per_address`` accounts registered from ``address``, and at most
    ``per_network`` from ``network`` (its /24 or /64), after ``since`` (Unix seconds); and
    the name it asks for is given up to it by an account that never finished a game and was
    last seen before ``release_before`` (None: a name is never given up)."""

    address: str
    network: str
    per_address: int
    per_network: int
    since: float
    release_before: float | None = None


class Refusal(enum.Enum):
    """Why :meth:`Store.sign_in` registered no account, besides a name taken (None)."""

    #: Too many accounts were registered lately from the address or its network.
    TOO_MANY = "too_many"


@attrs.frozen
class AccountGame:
    """One game an account holds a seat of: the room (its round and turn with it, see
    :class:`Progress`), the account's ``seat``, the names of every seat (by seat, None for a
    free one) and, once finished, the result."""

    room: RoomRecord
    seat: int
    names: tuple[str | None, ...]
    result: dict[str, Any] | None = None


@attrs.frozen
class Placing:
    """Where a seat of a rated game finished: ``place`` 1 for the winners, and so on (tied
    seats share a place); ``account`` the account the seat belongs to."""

    seat: int
    account: str
    place: int


@attrs.frozen
class RatingRecord:
    """An account's rating (openskill's ``mu`` and ``sigma``), its rated games and wins;
    ``name`` the account's name."""

    account: str
    name: str
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0


@attrs.frozen
class RatedGame:
    """One rated game of an account: the room, the seat, how many seats the game had, the
    place, the rating before and after, and when it finished (Unix seconds)."""

    room: str
    seat: int
    seats: int
    place: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    at: float
    account: str = ""


def hash_token(token: str) -> bytes:
    """The 32-byte SHA-256 digest under which a seat token is stored.

    A fast unsalted hash is enough here, unlike for passwords: a seat token holds at least 128
    random bits, so nobody can guess it by trying candidates however fast the hash is, and a
    salt would only defend against precomputed tables of likely inputs, which do not exist for
    random tokens. What the hash does give: a copy of the database does not hand out seats.
    """
    return hashlib.sha256(token.encode("utf-8")).digest()


def token_matches(token: str, token_hash: bytes | None) -> bool:
    """Whether ``token`` is the one stored as ``token_hash`` (False when none is stored).

    Compared in constant time so that response timing does not leak how much of a hash matched.
    """
    if token_hash is None:
        return False
    return hmac.compare_digest(hash_token(token), token_hash)


def pack_result(result: dict[str, Any], room: str) -> bytes:
    """A finished game's result as stored: msgpack bytes (``invalid_record`` when it is not
    plain data)."""
    try:
        return msgpack.packb(result, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise StoreError(
            f"the result of room {room} cannot be stored: {exc}", code="invalid_record"
        ) from exc


def pack_offers(offers: tuple[tuple[int, str], ...]) -> bytes | None:
    """A room's offered seats as stored (``rooms.offers``): msgpack, or NULL for none."""
    return msgpack.packb([list(pair) for pair in offers], use_bin_type=True) if offers \
        else None


def room_values(room: RoomRecord) -> tuple[Any, ...]:
    """A room's column values in :class:`RoomRecord`'s field order, as stored (its offers
    packed, :func:`pack_offers`)."""
    names = [field.name for field in attrs.fields(RoomRecord)]
    return tuple(pack_offers(value) if name == "offers" else value
                 for name, value in zip(names, attrs.astuple(room, recurse=False), strict=True))


def unpack_offers(blob: bytes | None) -> tuple[tuple[int, str], ...]:
    """The inverse of :func:`pack_offers`."""
    if blob is None:
        return ()
    return tuple((int(seat), str(name)) for seat, name in msgpack.unpackb(bytes(blob),
                                                                          raw=False))


def unpack_result(blob: bytes) -> dict[str, Any]:
    """The inverse of :func:`pack_result`."""
    return msgpack.unpackb(blob, raw=False, strict_map_key=False)


def room_changes(
    status: str | None,
    version: int | None,
    started_at: float | None,
    finished_at: float | None,
    path: str | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The columns an :meth:`Store.update_room` call changes (those given), by name; a status
    that is not one of :data:`STATUSES` is refused (``invalid_record``). The status
    ``playing`` with a version stores that version as the room's ``started_version``; a
    ``progress`` stores its round and turn (a turn of None included)."""
    if status is not None and status not in STATUSES:
        raise StoreError(
            f"status must be one of {', '.join(STATUSES)}, not {status!r}",
            code="invalid_record",
            path=path,
        )
    given = {
        "status": status,
        "version": version,
        "started_at": started_at,
        "finished_at": finished_at,
    }
    if status == RoomStatus.PLAYING.value and version is not None:
        given["started_version"] = version
    changes: dict[str, Any] = {name: value for name, value in given.items()
                               if value is not None}
    if progress is not None:
        changes.update(round=progress.round, turn=progress.turn)
    return changes


def version_conflict(room: str, stored: int, expected: int, path: str | None) -> StoreError:
    """The ``version_conflict`` refusal of a fenced write (see :meth:`Store.append_action`)."""
    return VersionConflict(
        f"room {room} is at version {stored}, not {expected}: another server has taken it "
        "over, so this write is refused",
        path=path,
    )


def seq_refused(action: ActionRecord, last: int, stored: bool, path: str | None) -> StoreError:
    """Why :meth:`Store.append_action` refuses a seq not after the room's ``last``: it is
    ``stored`` already (``duplicate_action``) or would go back (``action_out_of_order``)."""
    return StoreError(
        f"room {action.room} already has action {action.seq}"
        if stored
        else f"room {action.room}: action {action.seq} comes after action {last}",
        code="duplicate_action" if stored else "action_out_of_order",
        path=path,
    )


def schema_too_new(where: str, current: int, latest: int, path: str | None) -> StoreError:
    """The refusal of a database (``where``) whose schema a newer Castell wrote."""
    return StoreError(
        f"{where} was written by a newer Castell (schema {current}; this version knows up to "
        f"{latest}); upgrade Castell",
        code="schema_too_new",
        path=path,
    )


def assemble_games(
    rooms: Iterable[RoomRecord],
    seats: Iterable[SeatRecord],
    actions: Iterable[ActionRecord],
    results: dict[str, bytes],
) -> list[GameRecord]:
    """One :class:`GameRecord` per room from rows read in bulk: ``seats`` and ``actions``
    already in seat and seq order, ``results`` packed results by room."""
    by_room: dict[str, tuple[list[SeatRecord], list[ActionRecord]]] = {
        room.room: ([], []) for room in rooms
    }
    for seat in seats:
        by_room[seat.room][0].append(seat)
    for action in actions:
        by_room[action.room][1].append(action)
    return [
        GameRecord(
            room,
            tuple(by_room[room.room][0]),
            tuple(by_room[room.room][1]),
            unpack_result(results[room.room]) if room.room in results else None,
        )
        for room in rooms
    ]


@attrs.frozen
class BanRecord:
    """A ban the host set (server.moderation): ``kind`` ``name`` (``value`` the name as names
    compare, :func:`server.names.name_key`) or ``address``; ``until`` a Unix time, or None
    for good."""

    kind: str
    value: str
    until: float | None
    reason: str
    created_at: float
    #: The name as the host typed it (empty: stored before schema 12; ``value`` then).
    name: str = ""


@attrs.frozen
class MuteRecord:
    """A mute the host set (server.moderation): the chat lines of the name that compares as
    ``value`` (:func:`server.names.name_key`) are not said; ``until`` a Unix time, or
    None for good."""

    value: str
    until: float | None
    reason: str
    created_at: float
    #: The name as the host typed it (empty: stored before schema 12; ``value`` then).
    name: str = ""


@attrs.frozen
class KickRecord:
    """A player the host removed from a room (server.moderation): the name that compares as
    ``value``, and the ``account`` of the seat (None: a guest's), kept out of ``room`` until
    ``until`` (a Unix time; None: for good). ``seat`` is the seat they held."""

    room: str
    value: str
    account: str | None
    seat: int
    until: float | None
    reason: str
    created_at: float
    #: The seat's name as it was (empty: stored before schema 12; ``value`` then).
    name: str = ""


class Store(abc.ABC):
    """The persistence interface the server uses; one backend per database kind.

    Use it as ``async with open_store(url) as store:`` or call :meth:`open` and :meth:`close`.
    Every method raises :class:`~server.store.errors.StoreError` when it cannot do its work, and
    a write that raised changed nothing. Writes about one room are applied in the order they
    were awaited.
    """

    @abc.abstractmethod
    async def open(self) -> None:
        """Open the database, creating or upgrading its schema; refuse one in use elsewhere."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the database; everything acknowledged before stays stored. Idempotent."""

    @abc.abstractmethod
    async def create_room(self, room: RoomRecord) -> None:
        """Store a new room (``room_exists`` if its id is already stored)."""

    @abc.abstractmethod
    async def put_seat(
        self, seat: SeatRecord, *, version: int | None = None, expect_version: int | None = None
    ) -> None:
        """Store who holds a seat, replacing whoever held it (``invalid_record`` when the seat
        number is outside the room's seats). With ``version``, the room's version is set to
        it in the same transaction; ``expect_version`` fences as in :meth:`append_action`."""

    @abc.abstractmethod
    async def remove_seat(
        self, room: str, seat: int, *, version: int | None = None,
        expect_version: int | None = None,
    ) -> None:
        """Free a seat; nothing happens when it is not held. ``version`` and
        ``expect_version`` as in :meth:`put_seat`."""

    @abc.abstractmethod
    async def update_room(
        self,
        room: str,
        *,
        status: str | None = None,
        version: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        expect_version: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        """Change the given fields of a room; a field left at None is left as it is. A
        ``progress`` is stored as the room's round and turn.

        With ``expect_version``, refused (``version_conflict``) unless the stored version is
        that one: see :meth:`append_action`.
        """

    @abc.abstractmethod
    async def append_action(
        self, action: ActionRecord, *, expect_version: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        """Store an action after the room's others, durably before returning.

        Also sets the room's version to ``action.version``, and with ``progress`` its round
        and turn after the action (in the same statement, so one write per action).
        Refused: an unknown or finished room, a (room, seq) already stored
        (``duplicate_action``), a seq lower than the room's last (``action_out_of_order``).

        ``expect_version`` fences out a stale writer: when given, the write is refused with
        ``version_conflict`` unless the room's stored version is exactly that one. A server
        that holds a room passes the version it last stored; once another server has taken
        the room over (and written a newer version), the old holder can no longer write.
        Every write about a room takes it (seats, status, result, deletion), checked in the
        write's own transaction.
        """

    @abc.abstractmethod
    async def finish(self, room: str, result: dict[str, Any], finished_at: float, *,
                     expect_version: int | None = None,
                     placings: tuple[Placing, ...] = ()) -> list[RatedGame]:
        """Mark a room finished and store its result (plain msgpack-able data: dicts, lists,
        str, int, float, bool, None; tuples come back as lists). ``expect_version`` fences
        as in :meth:`append_action`.

        A rated game's ``placings`` update the ratings of their accounts in the same
        transaction (:func:`server.ratings.rate`); returns the rated games so stored, by
        seat (none for an unrated game)."""

    @abc.abstractmethod
    async def append_chat(self, line: ChatRecord, *, expect_version: int | None = None) -> None:
        """Store a chat line after the room's others, durably before returning, and forget
        the room's oldest lines past :data:`CHAT_KEPT`. The room's version is not changed;
        ``expect_version`` fences as in :meth:`append_action` (an unknown room is refused,
        ``unknown_room``)."""

    @abc.abstractmethod
    async def load_chat(self, room: str) -> list[ChatRecord]:
        """The chat lines kept for ``room``, oldest first (none for an unknown room)."""

    @abc.abstractmethod
    async def load(self, room: str) -> GameRecord | None:
        """Everything stored about one room, or None when it is not stored."""

    @abc.abstractmethod
    async def room_by_code(self, code: str) -> str | None:
        """The id of the stored room whose private join code is ``code`` (as stored: upper
        case), or None."""

    async def stored_version(self, room: str) -> int | None:
        """The version stored for ``room`` (None: no such room): what a server reads back
        after a write whose answer it never got, to learn whether it was stored. Backends
        override this with one cheap query."""
        record = await self.load(room)
        return None if record is None else record.room.version

    @abc.abstractmethod
    async def load_unfinished(self) -> list[GameRecord]:
        """Every room still waiting or playing (to resume after a restart), oldest first."""

    async def unfinished_rooms(self) -> list[str]:
        """The ids of every room still waiting or playing, oldest first, without loading
        their games (what a server scans to find rooms nobody serves). Backends override
        this with one cheap query."""
        return [game.room.room for game in await self.load_unfinished()]

    async def unfinished_summaries(self) -> list[StoredRoom]:
        """Every room still waiting or playing, oldest first, without its game: what a
        server reads at start to choose which games to load at once (the rest it loads when
        a player comes back). Backends override this with one cheap query."""
        return [StoredRoom(game.room, sum(seat.bot for seat in game.seats))
                for game in await self.load_unfinished()]

    @abc.abstractmethod
    async def list_finished(self, limit: int = 50) -> list[RoomRecord]:
        """The most recently finished rooms, latest first, at most ``limit``."""

    @abc.abstractmethod
    async def delete_room(self, room: str, *, expect_version: int | None = None) -> None:
        """Forget a room and everything about it; nothing happens when it is not stored.
        ``expect_version`` fences as in :meth:`append_action` (a room not stored is not
        refused: there is nothing to delete)."""

    # -- accounts (schema 4) ------------------------------------------------------------------

    @abc.abstractmethod
    async def sign_in(self, account: AccountRecord, registration: Registration | None = None
                      ) -> AccountRecord | Refusal | None:
        """The account whose key hash is ``account.key_hash``: the one stored (now last
        seen at ``account.created_at``), or else ``account`` itself, stored now (a
        registration); None when no account has that key and another one already has
        ``account.name_key`` (the name is taken). With a ``registration``, a new account is
        counted against its address and network (:attr:`Refusal.TOO_MANY` past their
        limits), and an unused account gives up the name when it is old enough (it is
        deleted). One transaction: two registrations of one name never both succeed, nor
        two registrations from one network past its limit."""

    @abc.abstractmethod
    async def account_named(self, name_key: str) -> AccountRecord | None:
        """The account whose name compares as ``name_key``, if any."""

    @abc.abstractmethod
    async def claim_seat(self, room: str, seat: int, account: str | None, *,
                         expect_version: int | None = None) -> None:
        """Say which account a seat belongs to (None: none, a guest's or a bot's seat, or a
        seat freed). ``expect_version`` fences as in :meth:`append_action`."""

    @abc.abstractmethod
    async def seat_accounts(self, room: str) -> dict[int, str]:
        """The accounts the seats of ``room`` belong to, by seat."""

    @abc.abstractmethod
    async def fill_progress(self, room: str, version: int, progress: Progress) -> bool:
        """Store ``progress`` for a room stored before schema 11 (its round unknown), made
        by replaying it at ``version``: only while the room is still at that version with
        no round stored (a newer write knows better). Whether it was stored."""

    @abc.abstractmethod
    async def account_games(self, account: str, *, finished: bool | None = None,
                            limit: int = 20) -> list[AccountGame]:
        """The games ``account`` holds a seat of, newest first, at most ``limit``: only the
        finished ones (``finished`` True), only the others (False), or both (None)."""

    # -- ratings (schema 5) -------------------------------------------------------------------

    @abc.abstractmethod
    async def ratings(self, accounts: tuple[str, ...]) -> dict[str, RatingRecord]:
        """The ratings of those of ``accounts`` that have played a rated game."""

    @abc.abstractmethod
    async def leaderboard(self, min_games: int, limit: int, offset: int = 0,
                          min_opponents: int = 0) -> list[RatingRecord]:
        """The accounts with at least ``min_games`` rated games against at least
        ``min_opponents`` distinct accounts, best first (by ``mu - 3 sigma``, then name),
        ``limit`` of them from the ``offset``-th."""

    @abc.abstractmethod
    async def rank_of(self, account: str, min_games: int,
                      min_opponents: int = 0) -> int | None:
        """The 0-based place of ``account`` in :meth:`leaderboard` (None: not ranked)."""

    @abc.abstractmethod
    async def opponents(self, accounts: tuple[str, ...]) -> dict[str, int]:
        """How many distinct accounts each of ``accounts`` has met in rated games (those
        that met none are left out)."""

    @abc.abstractmethod
    async def rated_games(self, account: str, limit: int) -> list[RatedGame]:
        """The rated games of ``account``, latest first, at most ``limit``."""

    @abc.abstractmethod
    async def wins_by_seats(self, account: str) -> dict[int, tuple[int, int]]:
        """The rated games and wins of ``account`` by the games' seat counts."""

    # -- bans (schema 6) ----------------------------------------------------------------------

    @abc.abstractmethod
    async def server_meta(self, name: str, made: str) -> str:
        """The value of ``name`` in ``server_meta``: the stored one, or ``made``, stored now
        when none was (two servers sharing the store that race get the same value)."""

    @abc.abstractmethod
    async def put_ban(self, ban: BanRecord) -> None:
        """Bar a name or an address (a ban of the same ``kind`` and ``value`` is replaced)."""

    @abc.abstractmethod
    async def delete_ban(self, kind: str, value: str) -> bool:
        """Lift a ban; whether there was one."""

    @abc.abstractmethod
    async def list_bans(self) -> list[BanRecord]:
        """Every ban stored, those that ran out included (they bar nobody)."""

    # -- rematches (schema 8) -----------------------------------------------------------------

    @abc.abstractmethod
    async def link_rematch(self, room: str, rematch: str) -> str | None:
        """Store that ``rematch`` is the rematch of the finished ``room``, unless ``room``
        has one already: the first link stored wins, whichever server writes it. Returns the
        rematch stored now (``rematch``, or the one stored before); None when either room is
        not stored. A link goes with either of its rooms."""

    @abc.abstractmethod
    async def rematch_of(self, room: str) -> str | None:
        """The rematch stored for ``room``, if any."""

    # -- mutes and kicks (schema 10) ----------------------------------------------------------

    @abc.abstractmethod
    async def put_mute(self, mute: MuteRecord) -> None:
        """Mute a name (a mute of the same ``value`` is replaced)."""

    @abc.abstractmethod
    async def delete_mute(self, value: str) -> bool:
        """Lift a mute; whether there was one."""

    @abc.abstractmethod
    async def list_mutes(self) -> list[MuteRecord]:
        """Every mute stored, those that ran out included (they mute nobody)."""

    @abc.abstractmethod
    async def put_kick(self, kick: KickRecord) -> None:
        """Keep a player out of a room (a kick of the same ``room`` and ``value`` is
        replaced). The kick goes when its room is deleted."""

    @abc.abstractmethod
    async def delete_kick(self, room: str, value: str) -> bool:
        """Let a kicked player back into a room; whether they were kept out."""

    @abc.abstractmethod
    async def list_kicks(self) -> list[KickRecord]:
        """Every kick stored, those that ran out included (they keep nobody out)."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
