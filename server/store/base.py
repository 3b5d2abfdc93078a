"""The interface every storage backend keeps, by what it keeps.

* :class:`GamesStore` — rooms, their seats, actions, chat lines, results, where a game stands
  and rematch links;
* :class:`AccountsStore` — players' accounts, the seats that belong to them, registrations,
  and the server's own identity;
* :class:`RatingsStore` — ratings, rated games and the leaderboard;
* :class:`ModerationStore` — what the host decided: bans, mutes and kicks;
* :class:`ReviewsStore` — finished games' reviews, one per game.
* :class:`TournamentsStore` — Swiss tournaments, each one's state and results.
* :class:`ChallengesStore` — challenges by name still open (schema 16).

:class:`Store` is all eight, with the store's life (open, close): what the server is given.
Every method is a coroutine; a write is durable when its coroutine returns. The records they
take and give live in :mod:`server.store.records` (and are importable from here too).
"""

from __future__ import annotations

import abc
from typing import Any, Self

from server.store.records import (
    CHAT_KEPT,
    SEED_LIMIT,
    STATUSES,
    AccountGame,
    AccountRecord,
    ActionRecord,
    BanRecord,
    ChallengeRecord,
    ChatRecord,
    FollowRecord,
    GameRecord,
    KickRecord,
    MuteRecord,
    NoteRecord,
    Placing,
    Progress,
    RatedGame,
    RatingRecord,
    Refusal,
    Registration,
    RoomRecord,
    SeatRecord,
    StoredRoom,
    TournamentRow,
    assemble_games,
    hash_token,
    pack_offers,
    pack_result,
    room_changes,
    room_values,
    schema_too_new,
    seq_refused,
    token_matches,
    unpack_offers,
    unpack_result,
    version_conflict,
)

__all__ = [
    "CHAT_KEPT",
    "SEED_LIMIT",
    "STATUSES",
    "AccountGame",
    "AccountRecord",
    "AccountsStore",
    "ActionRecord",
    "BanRecord",
    "ChallengeRecord",
    "ChallengesStore",
    "ChatRecord",
    "FollowRecord",
    "GameRecord",
    "GamesStore",
    "KickRecord",
    "ModerationStore",
    "MuteRecord",
    "NoteRecord",
    "Placing",
    "Progress",
    "RatedGame",
    "RatingRecord",
    "RatingsStore",
    "Refusal",
    "Registration",
    "ReviewsStore",
    "RoomRecord",
    "SeatRecord",
    "SocialStore",
    "Store",
    "StoredRoom",
    "TournamentRow",
    "TournamentsStore",
    "assemble_games",
    "hash_token",
    "pack_offers",
    "pack_result",
    "room_changes",
    "room_values",
    "schema_too_new",
    "seq_refused",
    "token_matches",
    "unpack_offers",
    "unpack_result",
    "version_conflict",
]


class GamesStore(abc.ABC):
    """Rooms and their games: settings, seats, actions, chat lines, results, where a game
    stands (schema 11) and rematch links (schema 8). Every write about a room takes
    ``expect_version`` and is fenced by it (see :meth:`append_action`)."""

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
        transaction (:func:`server.features.ratings.rate`); returns the rated games so stored, by
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

    @abc.abstractmethod
    async def fill_progress(self, room: str, version: int, progress: Progress) -> bool:
        """Store ``progress`` for a room stored before schema 11 (its round unknown), made
        by replaying it at ``version``: only while the room is still at that version with
        no round stored (a newer write knows better). Whether it was stored."""

    @abc.abstractmethod
    async def link_rematch(self, room: str, rematch: str) -> str | None:
        """Store that ``rematch`` is the rematch of the finished ``room``, unless ``room``
        has one already: the first link stored wins, whichever server writes it. Returns the
        rematch stored now (``rematch``, or the one stored before); None when either room is
        not stored. A link goes with either of its rooms."""

    @abc.abstractmethod
    async def rematch_of(self, room: str) -> str | None:
        """The rematch stored for ``room``, if any."""


class AccountsStore(abc.ABC):
    """Players' accounts (schema 4): accounts and their name keys, registrations, the seats
    that belong to accounts and the games an account holds; and the server's own identity
    (``server_meta``)."""

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
    async def account_games(self, account: str, *, finished: bool | None = None,
                            limit: int = 20) -> list[AccountGame]:
        """The games ``account`` holds a seat of, newest first, at most ``limit``: only the
        finished ones (``finished`` True), only the others (False), or both (None)."""

    @abc.abstractmethod
    async def server_meta(self, name: str, made: str) -> str:
        """The value of ``name`` in ``server_meta``: the stored one, or ``made``, stored now
        when none was (two servers sharing the store that race get the same value)."""


class RatingsStore(abc.ABC):
    """Ratings (schema 5): each account's rating, its rated games, and the leaderboard. (A
    rated game's ratings are written by :meth:`GamesStore.finish`, in the transaction of
    its result.)"""

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


class ModerationStore(abc.ABC):
    """What the host decided about players (schemas 6 and 10): bans, mutes and kicks."""

    @abc.abstractmethod
    async def put_ban(self, ban: BanRecord) -> None:
        """Bar a name or an address (a ban of the same ``kind`` and ``value`` is replaced)."""

    @abc.abstractmethod
    async def delete_ban(self, kind: str, value: str) -> bool:
        """Lift a ban; whether there was one."""

    @abc.abstractmethod
    async def list_bans(self) -> list[BanRecord]:
        """Every ban stored, those that ran out included (they bar nobody)."""

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


class ReviewsStore(abc.ABC):
    """Finished games' reviews (schema 13, :mod:`server.features.reviews`): one per game,
    kept as the MessagePack bytes of :meth:`shared.review.Review.to_data`, gone with its
    room."""

    @abc.abstractmethod
    async def put_review(self, room: str, data: bytes, made_at: float) -> bool:
        """Keep ``data`` as the review of the stored room ``room``, made at ``made_at`` (Unix
        time), unless it has one already: the first stored wins, whichever server writes it
        (two servers of a cluster that computed one review store it once). Whether this one
        was stored."""

    @abc.abstractmethod
    async def review(self, room: str) -> bytes | None:
        """The review kept for ``room`` (None: none)."""



class TournamentsStore(abc.ABC):
    """Swiss tournaments (schema 14), each a row with its state as a document."""

    @abc.abstractmethod
    async def put_tournament(self, row: TournamentRow, *, expect_version: int | None) -> bool:
        """Store ``row``: a new one when ``expect_version`` is None (False if the id is
        taken), else only over the stored version ``expect_version`` (False when another
        write came first: nothing is written)."""

    @abc.abstractmethod
    async def load_tournament(self, tournament: str) -> TournamentRow | None:
        """One tournament, or None."""

    @abc.abstractmethod
    async def list_tournaments(self, statuses: tuple[str, ...], limit: int | None = 50, *,
                               newest_first: bool = False) -> list[TournamentRow]:
        """The tournaments of these statuses, the oldest first (``newest_first``: the newest),
        at most ``limit`` (None: all)."""


class SocialStore(abc.ABC):
    """Friends, blocks and the inbox (schema 15): who follows and blocks whom, who hides
    their presence, and each account's notifications until cleared."""

    @abc.abstractmethod
    async def follow(self, account: str, target: str, at: float) -> None:
        """``account`` follows ``target`` (again: nothing changes)."""

    @abc.abstractmethod
    async def unfollow(self, account: str, target: str) -> bool:
        """``account`` no longer follows ``target``; whether it did."""

    @abc.abstractmethod
    async def following(self, account: str) -> list[FollowRecord]:
        """The accounts ``account`` follows, by name as stored."""

    @abc.abstractmethod
    async def block(self, account: str, target: str, at: float) -> None:
        """``account`` blocks ``target`` (again: nothing changes)."""

    @abc.abstractmethod
    async def unblock(self, account: str, target: str) -> bool:
        """``account`` no longer blocks ``target``; whether it did."""

    @abc.abstractmethod
    async def blocked(self, account: str) -> list[tuple[str, str]]:
        """The accounts ``account`` blocks: (id, name), by name."""

    @abc.abstractmethod
    async def is_blocked(self, account: str, target: str) -> bool:
        """Whether ``account`` blocks ``target``."""

    @abc.abstractmethod
    async def set_hidden(self, account: str, hidden: bool) -> None:
        """Hide (or show again) ``account``'s presence."""

    @abc.abstractmethod
    async def hidden(self, account: str) -> bool:
        """Whether ``account`` hides its presence."""

    @abc.abstractmethod
    async def accounts_seen_since(self, at: float) -> list[str]:
        """The accounts seen at ``at`` (Unix time) or later."""

    @abc.abstractmethod
    async def touch_account(self, account: str, at: float) -> None:
        """``account`` was seen at ``at`` (its ``last_seen`` never goes back)."""

    @abc.abstractmethod
    async def add_note(self, account: str, kind: str, text: str, data: dict[str, Any],
                       at: float, keep: int) -> NoteRecord:
        """Store a notification for ``account``; only its newest ``keep`` are kept."""

    @abc.abstractmethod
    async def notes(self, account: str, limit: int) -> list[NoteRecord]:
        """``account``'s newest ``limit`` notifications, newest first."""

    @abc.abstractmethod
    async def read_notes(self, account: str) -> None:
        """Mark every notification of ``account`` read."""

    @abc.abstractmethod
    async def clear_notes(self, account: str) -> int:
        """Delete every notification of ``account``; how many there were."""


class ChallengesStore(abc.ABC):
    """Challenges by name (schema 16, :mod:`server.features.challenges`): stored while open,
    so that a restart, or another node of a cluster, knows them; ended once, atomically."""

    @abc.abstractmethod
    async def put_challenge(self, challenge: ChallengeRecord) -> None:
        """Store a new open challenge (its ``accepted`` is empty)."""

    @abc.abstractmethod
    async def open_challenge(self, challenge: str) -> ChallengeRecord | None:
        """Challenge ``challenge`` with who has accepted it, if it is still open."""

    @abc.abstractmethod
    async def open_challenges(self) -> list[ChallengeRecord]:
        """Every challenge still open (expired ones too, until they are ended)."""

    @abc.abstractmethod
    async def accept_challenge(self, challenge: str, account: str) -> ChallengeRecord | None:
        """``account`` accepts ``challenge``: the challenge with every acceptance so far,
        or None when it is not open any more."""

    @abc.abstractmethod
    async def end_challenge(self, challenge: str, why: str,
                            at: float) -> ChallengeRecord | None:
        """End ``challenge`` (``why``: accepted, declined, expired, cancelled) if it is still
        open: the challenge when this call ended it, None when it was not open (another call,
        on any node, ended it first)."""

    @abc.abstractmethod
    async def challenges_since(self, account: str, since: float) -> int:
        """How many challenges ``account`` made at or after ``since`` (the rate limit)."""


class Store(GamesStore, AccountsStore, RatingsStore, ModerationStore, ReviewsStore,
            TournamentsStore, SocialStore, ChallengesStore):
    """The persistence interface the server uses (all eight parts); one backend per
    database kind.

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
    async def probe(self) -> None:
        """A write that changes nothing: raises the ``StoreError`` a write would raise now
        (asked while rooms wait on a refused write, :mod:`server.runtime.retries`)."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
