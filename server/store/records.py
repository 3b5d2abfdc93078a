"""What the server stores: the records every storage backend takes and gives back.

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
  account's rating, one rated game of an account (schema 5, :mod:`server.features.ratings`);
* :class:`BanRecord`, :class:`MuteRecord`, :class:`KickRecord` — what the host decided about a
  player (schemas 6 and 7, :mod:`server.features.moderation`);
* :class:`FollowRecord`, :class:`NoteRecord` — an account one follows, as ``friends`` lists
  it, and a notification of an account's inbox (schema 15, :mod:`server.features.social`,
  :mod:`server.features.inbox`).
* :class:`ChallengeRecord` — a challenge by name still open, and who accepted it (schema 16,
  :mod:`server.features.challenges`).

Records go in and come out equal: ``load`` gives back exactly what was put. Besides the
records, the functions both backends share to store them (:func:`pack_result`,
:func:`room_values`, ...) and the refusals they share (:func:`version_conflict`, ...). The
interface itself is :class:`server.store.base.Store`.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
from collections.abc import Iterable
from typing import Any, Final

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
    #: The seats a rematch offers (schema 8, :mod:`server.features.rematch`): (seat, name as names
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
    name it plays under, ``name_key`` that name as compared (:func:`server.core.names.name_key`:
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
    """A ban the host set (server.features.moderation): ``kind`` ``name`` (``value`` the name as
    names
    compare, :func:`server.core.names.name_key`) or ``address``; ``until`` a Unix time, or None
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
    """A mute the host set (server.features.moderation): the chat lines of the name that compares as
    ``value`` (:func:`server.core.names.name_key`) are not said; ``until`` a Unix time, or
    None for good."""

    value: str
    until: float | None
    reason: str
    created_at: float
    #: The name as the host typed it (empty: stored before schema 12; ``value`` then).
    name: str = ""


@attrs.frozen
class KickRecord:
    """A player the host removed from a room (server.features.moderation): the name that compares as
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


@attrs.frozen
class TournamentRow:
    """A Swiss tournament as stored (schema 14): its id, name, status (``open``,
    ``running``, ``finished``, ``cancelled``), when it was created, the version its last
    write made (each write expects the one before), and its state as a JSON document
    (:mod:`server.features.tournaments` reads and writes it)."""

    tournament: str
    name: str
    status: str
    created_at: float
    version: int
    doc: str


@attrs.frozen
class FollowRecord:
    """An account ``account`` follows (schema 15): its id and name, whether it follows back
    (``mutual``: friends), when it was last seen (Unix time) and whether it hides its
    presence (then its last seen is not shown)."""

    account: str
    name: str
    mutual: bool
    last_seen: float
    hidden: bool


@attrs.frozen
class NoteRecord:
    """A notification of an account's inbox (schema 15, :mod:`server.features.inbox`): its
    id (increasing), its ``kind``, the sentence that tells it, its data (a map of plain
    values, stored as JSON), when it came (Unix time) and whether it was listed already."""

    id: int
    account: str
    kind: str
    text: str
    data: dict[str, Any]
    created_at: float
    read: bool = False


@attrs.frozen
class ChallengeRecord:
    """A challenge (:mod:`server.features.challenges`): ``id``; the challenger's account and
    name; the accounts challenged and their names, in the seats' order; the game's
    settings; when it was made and when it expires (Unix time); the accounts that have
    accepted it so far."""

    id: str
    from_account: str
    from_name: str
    to_accounts: tuple[str, ...]
    to_names: tuple[str, ...]
    seats: int
    variant: str
    turn_seconds: int | None
    rated: bool
    created_at: float
    expires_at: float
    accepted: tuple[str, ...] = ()


def challenge_values(c: ChallengeRecord) -> tuple[Any, ...]:
    """A challenge's values for the columns of ``challenges`` (both backends)."""
    return (c.id, c.from_account, c.from_name, json.dumps(list(c.to_accounts)),
            json.dumps(list(c.to_names)), c.seats, c.variant, c.turn_seconds, bool(c.rated),
            c.created_at, c.expires_at)


def challenge_of(row: Any, accepted: list[str]) -> ChallengeRecord:
    """A stored row of ``challenges`` (and its acceptances) as a record (both backends)."""
    return ChallengeRecord(row[0], row[1], row[2], tuple(json.loads(row[3])),
                           tuple(json.loads(row[4])), int(row[5]), row[6],
                           None if row[7] is None else int(row[7]), bool(row[8]),
                           float(row[9]), float(row[10]), tuple(sorted(accepted)))
