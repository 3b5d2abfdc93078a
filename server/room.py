"""A game room without I/O: its seats, spectators and game, changed only by inputs.

:class:`Room` owns the rules of change of one room and nothing else: no asyncio, no sockets,
no store calls and no clock of its own (every input carries ``now``). It is driven the way
``websockets`` drives its sans-I/O ``protocol.py``: :mod:`server.runner` feeds it inputs and
performs the effects it returns.

An input that changes the room (a seat taken, an action, a bot's move, a turn timing out)
does not change it at once: it returns a :class:`Change` — the room's next version, taken
once, and the store writes that make that version durable. The driver performs the writes,
then hands the change back: :meth:`Room.commit` applies it and returns the effects (the
replies, the one push of the new view — computed once for every member, whole or as a patch
of the view shown before (:class:`Push`) —, timers to arm, bots to wake);
:meth:`Room.abort` drops it when the store failed, and says how to go on. One change is in
flight at a time. Refusals (a full room, an illegal action) raise before any change.

The path of one action through the server::

    frame ─ server.requests (decode, rate, protocol state, error boundary)
          ─ RoomRunner.act (the room's lock) ─ Room.act: who may act, engine.apply → Change
          ─ store.append_action(change's write, fenced) ─ Room.commit → effects
          ─ RoomRunner performs them: ok to the actor, state push to all, timer, bot
"""

from __future__ import annotations

import itertools
import logging
import random
import secrets
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import attrs

from server import bots, ratings
from server.names import name_key
from server.store.base import (
    ActionRecord,
    ChatRecord,
    GameRecord,
    Progress,
    SeatRecord,
    hash_token,
    token_matches,
)
from shared import engine
from shared import events as ev
from shared import messages as m
from shared.actions import Action, EndTurn
from shared.codec import encode, encode_patch, encode_state, pack_action, unpack_action
from shared.errors import CastellError, RuleError
from shared.patch import diff
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo, ViewParts, build_view

log = logging.getLogger("castell.room")

#: A member of a room: whatever the driver uses for a connection (the room only compares it).
M = TypeVar("M", bound=Hashable)

#: The turn a timer belongs to: (round, seat whose turn it is).
TurnKey = tuple[int, int | None]

#: What a room's members are told when its store fails, and when it works again.
NOTICE_DOWN = ("the server cannot save this game just now: nothing is lost, and the game goes "
               "on as soon as it can")
NOTICE_BACK = "the server can save this game again"

#: Seconds before the first retry of a change the store refused; doubled each time after.
RETRY_FIRST = 0.5
RETRY_MAX = 30.0


def game_result(state: GameState) -> dict[str, Any]:
    """A finished game's result as stored: scores by category and the winners (§9)."""
    assert state.scores is not None and state.winners is not None
    return {
        "scores": [
            {**attrs.asdict(score), "total": score.total} for score in state.scores
        ],
        "winners": list(state.winners),
    }


#: Names nobody may take in a room, in any case: the server's notices are shown under them.
RESERVED_NAMES = frozenset({"server"})


class RoomError(CastellError):
    """Raised when a room refuses a request (full, not started, not the creator, ...)."""


class BadToken(RoomError):
    """Raised when a seat token matches no seat of the room."""

    code = "bad_token"


# -- what a change writes -------------------------------------------------------------------


@attrs.frozen
class PutSeat:
    """Who holds a seat; with ``version``, the room's version stored in the same write."""

    record: SeatRecord
    version: int | None = None
    expect_version: int | None = None


@attrs.frozen
class RemoveSeat:
    room: str
    seat: int
    version: int | None = None
    expect_version: int | None = None


@attrs.frozen
class UpdateRoom:
    room: str
    version: int
    expect_version: int | None
    status: str | None = None
    started_at: float | None = None
    #: Where the game stands after the change (stored with the room, for ``my_games``).
    progress: Progress | None = None


@attrs.frozen
class AppendAction:
    record: ActionRecord
    expect_version: int | None
    #: Where the game stands after the action, stored by the same statement.
    progress: Progress | None = None


@attrs.frozen
class Finish:
    room: str
    result: dict[str, Any]
    finished_at: float
    expect_version: int | None = None
    #: A rated game: the driver stores its ratings with the result (server.ratings).
    rated: bool = False


@attrs.frozen
class AppendChat:
    """A chat line kept with the room (it changes no version; fenced like the rest)."""

    record: ChatRecord
    expect_version: int | None


@attrs.frozen
class ClaimSeat:
    """Which account a seat belongs to (None: none), written with every seat change, so that
    a seat never keeps the account of whoever held it before."""

    room: str
    seat: int
    account: str | None
    expect_version: int | None = None


#: One store write, performed by the driver (:func:`server.runner.perform`).
Write = PutSeat | RemoveSeat | UpdateRoom | AppendAction | Finish | AppendChat | ClaimSeat


# -- what the driver does -------------------------------------------------------------------


@attrs.frozen
class Send(Generic[M]):
    """Send ``data`` (one encoded message) to each of ``to``. A ``lossy`` one (chat) may be
    left out for a member that is slow to read, rather than close it."""

    to: tuple[M, ...]
    data: bytes
    lossy: bool = False


#: Ids of the views rooms show, unique in the server: a connection's id of the view it holds
#: says which view that is, whatever room it came from.
_shown_ids = itertools.count(1)

#: The most changes a ``patch`` push carries; a bigger change of the view is sent whole.
MAX_CHANGES = 200


class Shown:
    """A view as the room showed it to its members: its id, version and the view itself.

    The view may be given as how to build it (``make``): it is then built the first time it
    is read, which is after the ``ok`` a change owes its actor has gone out (the effects of
    a change are performed in order, the reply first), so that the reply does not wait on
    the view. ``make`` must build it from what the room was at that version."""

    __slots__ = ("_make", "_view", "id", "version")

    def __init__(self, id: int, version: int, view: dict[str, Any] | None = None, *,
                 make: Callable[[], dict[str, Any]] | None = None) -> None:
        if (view is None) == (make is None):
            raise ValueError("a Shown takes a view or how to make it, not both")
        self.id = id
        self.version = version
        self._view = view
        self._make = make

    @property
    def view(self) -> dict[str, Any]:
        if self._view is None:
            assert self._make is not None
            self._view, self._make = self._make(), None
        return self._view

    def __repr__(self) -> str:
        return f"<Shown {self.id} v{self.version}>"


@attrs.define(eq=False)
class Push(Generic[M]):
    """Show the room's view (``shown``) to each of ``to``, with ``events``: a ``state`` push
    of the whole view, or, to a member that takes patches and holds the view shown before
    (``base``), a ``patch`` push of what changed since. Each is computed and encoded at most
    once however many members get it (:attr:`data`, :meth:`patch`): never per member."""

    to: tuple[M, ...]
    room: str
    shown: Shown
    events: tuple[Any, ...] = ()
    base: Shown | None = None
    _data: bytes | None = None
    _patch: bytes | None = None
    _patched: bool = False

    @property
    def data(self) -> bytes:
        """The ``state`` push of the whole view."""
        if self._data is None:
            self._data = encode_state(self.room, self.shown.version, self.shown.view,
                                      self.events)
        return self._data

    def patch(self) -> bytes | None:
        """The ``patch`` push against ``base``; None when there is no base, or the view
        changed too much for a patch to be worth it."""
        if not self._patched:
            self._patched = True
            base = self.base
            if base is not None:
                changes = diff(base.view, self.shown.view)
                if len(changes) <= MAX_CHANGES:
                    self._patch = encode_patch(self.room, base.version, self.shown.version,
                                               changes, self.events)
        return self._patch


@attrs.frozen
class _ShowTo(Generic[M]):
    """In a change's outcome: the view as committed, whole, to ``member`` (a joiner)."""

    member: M


@attrs.frozen
class Close(Generic[M]):
    """Close a member's connection; it is no longer in the room."""

    member: M
    code: int
    reason: str


@attrs.frozen
class ArmTimer:
    """(Re)arm the room's one timer: after ``delay`` seconds, call :meth:`Room.timer_fired`
    with ``key``. Replaces the timer armed before."""

    key: TurnKey
    delay: float


@attrs.frozen
class CancelTimer:
    """Disarm the room's timer."""


@attrs.frozen
class WakeBot:
    """After ``delay`` seconds, let the bot to play choose (see :meth:`Room.bot_turn`)."""

    delay: float


Effect = Send[M] | Push[M] | Close[M] | ArmTimer | CancelTimer | WakeBot


@attrs.frozen(eq=False)
class Change:
    """A change the room proposed: durable once ``writes`` are stored, in order.

    ``version`` is the room's version after it; ``forced`` changes (a member who is gone)
    are committed even when their writes fail: they only record what already happened.
    """

    version: int
    writes: tuple[Write, ...]
    forced: bool = False


@attrs.frozen
class BotTurn:
    """What a bot needs to choose its action: the game, its seat, its level, its dice."""

    seat: int
    level: str
    state: GameState
    rng: random.Random


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


@attrs.define(eq=False)
class _Pending:
    change: Change
    #: Applies the change to the room; returns its events and the effects around the push.
    apply: Callable[[], _Outcome]
    #: What to do when the store refused the change (retries of a timer or bot).
    failed: Callable[[], list[Any]] | None = None
    stores_version: bool = False


@attrs.define
class _Outcome(Generic[M]):
    events: list[Any]
    #: Effects before the push (the acknowledgement).
    before: list[Any] = attrs.Factory(list)
    #: Effects after the push (a joiner's reply and first view).
    after: list[Any] = attrs.Factory(list)
    #: A member the push is not sent to (a joiner gets its view after its reply).
    skip: Any = None


class Room(Generic[M]):
    """One room of the lobby. See the module docstring for the rules of change."""

    def __init__(
        self,
        room_id: str,
        name: str,
        seats: int,
        variant: str,
        turn_seconds: int | None,
        private: bool,
        *,
        seed: int,
        now: float,
        bot_delay: float = 0.0,
        code: str | None = None,
        time_scale: float = 1.0,
        fenced: bool = False,
        rated: bool = False,
    ) -> None:
        self.id = room_id
        self.name = name
        self.size = seats
        self.variant = variant
        self.turn_seconds = turn_seconds
        self.private = private
        self.code = code
        self.seed = seed
        self.bot_delay = bot_delay
        self.time_scale = time_scale
        self.seats: list[Seat[M] | None] = [None] * seats
        #: The creator's seat: the creator is whoever holds it, so a creator who drops and
        #: comes back with the token is the creator still (None: no person seated).
        self.creator_seat: int | None = None
        #: The address that created the room (None once restored): for the per-address cap.
        self.host_address: str | None = None
        #: The members watching, each with the name it watches under (in the order they came).
        self.spectators: dict[M, str] = {}
        self.state: GameState | None = None
        self.log: list[tuple[int, Action]] = []
        self.version = 0
        #: Whether every write expects the version this room stored last (a cluster node
        #: holds its rooms so): a node that lost the room can then no longer write to it.
        self.fenced = fenced
        self.stored_version = 0
        self.deadline: float | None = None
        self._turn_key: TurnKey | None = None
        #: The bots' randomness, seeded from the room's seed; made at the first bot turn
        #: (a Mersenne Twister holds 2.5 KiB, and most rooms never have a bot).
        self._bot_rng: random.Random | None = None
        self._pending: _Pending | None = None
        #: Store failures in a row (the backoff of retries); 0 once a change is stored.
        self.failures = 0
        self.created_at = now
        #: When the room last changed; an unwatched room idle long enough is unloaded from
        #: memory and comes back from the store on demand.
        self.changed_at = now
        self.finished_at: float | None = None
        #: The version and events of the change committed last (what a history adds).
        self.committed: tuple[int, list[Any]] = (0, [])
        #: The maps of the view built last, which the next view reuses where unchanged.
        self._view_parts = ViewParts()
        self._summary: tuple[tuple[int, int, RoomStatus], m.RoomSummary] | None = None
        #: Whether the seats' accounts are known (a room read from the store learns them
        #: with :meth:`know_accounts`).
        self.accounts_read = True
        #: The seats a rematch offers to the players who held them: seat → name (as names
        #: compare); stored with the room (``RoomRecord.offers``, :mod:`server.rematch`).
        self.reserved: dict[int, str] = {}
        #: The seats stored as belonging to an account (see :meth:`_claim`).
        self._accounted: set[int] = set()
        #: The view shown to the members last (what a patch is taken against).
        self.shown: Shown | None = None
        #: A rated room (server.ratings): accounts only, and its end rates them. Its seats'
        #: displayed ratings, and once the end is rated, the ratings before it (by seat).
        self.rated = rated
        self.ratings: dict[int, int] = {}
        self.ratings_before: dict[int, int] = {}
        #: Whether each seat's rating is still provisional; and, for a rated game whose
        #: end was not rated, why (server.ratings: nobody played).
        self.provisional: dict[int, bool] = {}
        self.unrated: str | None = None

    @classmethod
    def from_record(cls, record: GameRecord, *, now: float, **options: Any) -> Room[M]:
        """Rebuild a stored room: its seats, and its game by replaying the stored actions
        on a game set up from the stored seed (a game is its seed plus its actions)."""
        r = record.room
        room: Room[M] = cls(r.room, r.name, r.seats, r.variant, r.turn_seconds, r.private,
                            seed=r.seed, code=r.code, now=r.created_at, rated=r.rated,
                            **options)
        for s in record.seats:
            room.seats[s.seat] = Seat(s.seat, s.name, bot=s.bot_level if s.bot else None,
                                      token_hash=s.token_hash)
        # The creator's seat is not stored: it is the lowest seat a person holds, which it
        # always is unless the creator left before the start and someone took a lower seat.
        room.creator_seat = room._first_person()
        room.reserved = dict(r.offers)
        if r.status != RoomStatus.WAITING:
            names = [s.name for s in room.seats if s is not None]
            state = engine.new_game(names, r.variant, r.seed)
            for a in record.actions:
                action = unpack_action(a.action)
                state, _ = engine.apply(state, a.seat, action)
                room.log.append((a.seat, action))
            room.state = state
            room._turn_key = (state.round, state.turn)
            if state.over:
                room.finished_at = r.finished_at or now
                if record.result is not None and record.result.get("unrated"):
                    room.unrated = str(record.result["unrated"])
        room.version = room.stored_version = r.version
        room.changed_at = now
        room.accounts_read = False
        return room

    def know_accounts(self, accounts: dict[int, str]) -> None:
        """The accounts of the seats, as stored (:meth:`Store.seat_accounts`)."""
        for seat in self.seats:
            if seat is not None and seat.bot is None and seat.account is None:
                seat.account = accounts.get(seat.index)
        self._accounted = set(accounts)
        self.accounts_read = True

    def reloaded(self, record: GameRecord, *, now: float) -> tuple[Room[M], list[Effect[M]]]:
        """This room as ``record`` (the store) holds it, its members carried over, and the
        effects that show it to them: what a room becomes when a write whose answer was
        lost turns out to have been stored after all."""
        room: Room[M] = Room.from_record(record, now=now, bot_delay=self.bot_delay,
                                         time_scale=self.time_scale, fenced=self.fenced)
        room.host_address = self.host_address
        room.ratings, room.ratings_before = self.ratings, self.ratings_before
        room.provisional, room.unrated = self.provisional, self.unrated
        room.creator_seat = self.creator_seat
        for seat in self.seats:
            if seat is not None and seat.member is not None:
                again = room.seats[seat.index]
                if again is not None:
                    again.member = seat.member
        room.spectators = dict(self.spectators)
        effects: list[Effect[M]] = [room.show_current(tuple(room.members()))]
        return room, [*effects, *room.resume_play(now=now)]

    # -- what the room looks like ----------------------------------------------------------

    @property
    def status(self) -> RoomStatus:
        if self.state is None:
            return RoomStatus.WAITING
        return RoomStatus.FINISHED if self.state.over else RoomStatus.PLAYING

    @property
    def taken(self) -> int:
        return sum(seat is not None for seat in self.seats)

    @property
    def full(self) -> bool:
        return self.taken == self.size

    @property
    def busy(self) -> bool:
        """Whether a change is in flight (proposed, not yet committed or aborted)."""
        return self._pending is not None

    def members(self) -> list[M]:
        found = [s.member for s in self.seats if s is not None and s.member is not None]
        found.extend(self.spectators)
        return found

    def info(self) -> RoomInfo:
        return RoomInfo(
            room=self.id,
            name=self.name,
            variant=self.variant,
            seats=self.size,
            turn_seconds=self.turn_seconds,
            status=self.status,
            deadline=self.deadline,
            players=tuple(
                SeatInfo(seat=s.index, name=s.name, bot=s.bot is not None, connected=s.connected,
                         rating=self.ratings.get(s.index),
                         rating_before=self.ratings_before.get(s.index),
                         provisional=self.provisional.get(s.index))
                for s in self.seats
                if s is not None
            ),
            spectators=tuple(self.spectators.values()),
            unrated=self.unrated,
            private=self.private,
        )

    def summary(self) -> m.RoomSummary:
        """The room as a room list shows it; made again only once the room has changed
        (every change takes a new version), so that a page of a long list costs a slice."""
        key = (self.version, self.taken, self.status)
        cached = self._summary
        if cached is None or cached[0] != key:
            cached = self._summary = (key, m.RoomSummary(
                room=self.id, name=self.name, seats=self.size, taken=key[1],
                variant=self.variant, status=key[2], turn_seconds=self.turn_seconds,
                rated=self.rated))
        return cached[1]

    def view(self) -> dict[str, Any]:
        return build_view(self.info(), self.state, self._view_parts)

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

    def _first_person(self) -> int | None:
        return next((s.index for s in self.seats if s is not None and s.bot is None), None)

    def _check_name(self, name: str) -> None:
        """Refuse ``name`` when a seat or a spectator of the room already has it, as names
        compare (:func:`server.names.name_key`: in any case, or a look-alike) (``name_taken``):
        two people under one name could not be told apart. ``server`` is taken by the server
        itself (clients show its notices among the chat under it)."""
        wanted = name_key(name)
        if wanted in {name_key(n) for n in RESERVED_NAMES}:
            raise RoomError(f"{name!r} is the name the server's own notices go under: connect "
                            "under another name to come in", code="name_taken")
        taken = [s.name for s in self.seats if s is not None]
        if any(name_key(n) == wanted for n in [*taken, *self.spectators.values()]):
            raise RoomError(f"someone in room {self.name!r} is already called {name!r}: "
                            "connect under another name to come in", code="name_taken")

    def _spectators_changed(self, *, skip: M | None = None) -> list[Effect[M]]:
        """Show the others who is watching now: the current view again, at the same version
        (watching changes nothing of the room), with no events."""
        to = tuple(member for member in self.members() if member != skip)
        return [self._show(to, ())] if to else []

    def _player_seat(self, member: M) -> int:
        seat = self.seat_of(member)
        if seat is None:
            raise RoomError("spectators cannot do that: only players can", code="not_a_player")
        return seat

    def _free_seat(self, name: str | None = None) -> int:
        """The lowest free seat; with a ``name`` a rematch offers a seat to, that seat
        (a seat offered to someone else is not free for others)."""
        if self.state is not None:
            raise RoomError("the game has already started: join as a spectator, or come back "
                            "with your seat token", code="already_started")
        if name is not None:
            wanted = name_key(name)
            for index, offered in self.reserved.items():
                if offered == wanted and self.seats[index] is None:
                    return index
        for index, seat in enumerate(self.seats):
            if seat is None and index not in self.reserved:
                return index
        raise RoomError(f"room {self.name!r} is full", code="room_full")

    def current(self) -> bytes:
        """The current view with no events: what a member gets right after joining."""
        return encode_state(self.id, self.version, self.view(), ())

    def _show(self, to: tuple[M, ...], events: Any) -> Push[M]:
        """Show the view as it is now to ``to``, as a change of the view shown before."""
        info, state, parts = self.info(), self.state, self._view_parts
        shown = Shown(next(_shown_ids), self.version,
                      make=lambda: build_view(info, state, parts))
        push: Push[M] = Push(to, self.id, shown, tuple(events), self.shown)
        self.shown = shown
        return push

    def show_current(self, to: tuple[M, ...]) -> Push[M]:
        """The current view, whole and with no events, to ``to`` (a joiner; a member that
        asked for it again): the view shown to the others, when it is the current one."""
        view = self.view()
        shown = self.shown
        if shown is None or shown.version != self.version or shown.view != view:
            shown = self.shown = Shown(next(_shown_ids), self.version, view)
        return Push(to, self.id, shown)

    # -- the one write path ----------------------------------------------------------------

    def _fence(self) -> int | None:
        """The stored version a write must find (None: any), see :attr:`fenced`."""
        return self.stored_version if self.fenced else None

    @property
    def fence(self) -> int | None:
        """What a write about this room from outside a change (deleting it) must expect."""
        return self._fence()

    def _version_write(self, version: int) -> list[Write]:
        """A presence change bumps the version too: store it, seats filling before the start
        too, so that a room restored after a crash never goes back to a version its players
        already saw (and a fenced room's next write can expect it)."""
        if self.state is not None and self.state.over:
            return []
        return [UpdateRoom(self.id, version, self._fence())]

    def _seat_version(self, version: int) -> int | None:
        """The version a seat write stores with it (one fenced write per seat change), or
        None when a presence change of this room stores no version (see above)."""
        return version if self._version_write(version) else None

    def _propose(self, writes: Callable[[int], list[Write]],
                 apply: Callable[[], _Outcome[M]], *, forced: bool = False,
                 failed: Callable[[], list[Any]] | None = None) -> Change:
        """Take the next version (once), say what storing it takes, and keep the change
        until the driver commits or aborts it."""
        if self._pending is not None:
            raise RuntimeError(f"room {self.id}: a change is already in flight")
        version = self.version + 1
        stored = writes(version)
        change = Change(version, tuple(stored), forced)
        stores_version = any(
            isinstance(w, UpdateRoom | AppendAction)
            or (isinstance(w, PutSeat | RemoveSeat) and w.version is not None)
            for w in stored
        )
        self._pending = _Pending(change, apply, failed, stores_version)
        return change

    def _take(self, change: Change) -> _Pending:
        pending = self._pending
        if pending is None or pending.change is not change:
            raise RuntimeError(f"room {self.id}: that change is not the one in flight")
        self._pending = None
        return pending

    def commit(self, change: Change, *, now: float, stored: bool = True) -> list[Effect[M]]:
        """The change's writes are stored (or it was forced): apply it, push it to every
        member (the same bytes for all), and say what follows."""
        pending = self._take(change)
        self.version = change.version
        self.changed_at = now
        effects: list[Effect[M]] = []
        if stored:
            if self.failures:
                effects.append(self._notice(NOTICE_BACK))
            self.failures = 0
            if pending.stores_version:
                self.stored_version = change.version
        outcome = pending.apply()
        self.committed = (self.version, outcome.events)
        effects.extend(outcome.before)
        effects.extend(self._turn_effects(now))
        to = tuple(member for member in self.members() if member != outcome.skip)
        effects.append(self._show(to, outcome.events))
        effects.extend(self.show_current((e.member,)) if isinstance(e, _ShowTo) else e
                       for e in outcome.after)
        effects.extend(self._bot_effects())
        return effects

    def abort(self, change: Change) -> list[Effect[M]]:
        """The store refused the change: the room stays as it was. Returns how to go on
        (a timer or a bot tries again after a backoff; a request was simply not done), and
        at the first failure in a row, a ``notice`` to every member; the first change stored
        after it says that the game can be saved again."""
        pending = self._take(change)
        self.failures += 1
        effects: list[Effect[M]] = [self._notice(NOTICE_DOWN)] if self.failures == 1 else []
        if pending.failed is not None:
            effects.extend(pending.failed())
        return effects

    def _notice(self, text: str) -> Send[M]:
        """Tell every member something about the room itself (a ``notice`` push)."""
        return Send(tuple(self.members()), encode(m.NoticePush(room=self.id, text=text)))

    def stores_version(self, change: Change) -> bool:
        """Whether storing ``change`` stores its version (what a read-back can check)."""
        pending = self._pending
        return pending is not None and pending.change is change and pending.stores_version

    @property
    def retry_delay(self) -> float:
        """How long to wait before trying again what the store refused (doubling)."""
        return min(RETRY_MAX, RETRY_FIRST * 2 ** max(0, self.failures - 1))

    # -- seats -----------------------------------------------------------------------------

    def take_seat(self, member: M, name: str, re: int, *, now: float,
                  token: str | None = None, account: str | None = None,
                  rating: int | None = None, provisional: bool | None = None) -> Change:
        """Seat a person in the lowest free seat (the one a rematch offers them, if any); on
        commit they get ``joined`` (with their seat's secret token) and the current view. A
        seat taken by a signed-in ``account`` belongs to it."""
        index = self._free_seat(name)
        self._check_name(name)
        if self.rated and account is None:
            raise RoomError("a rated room seats signed-in accounts only: connect with your "
                            "account (not as a guest) to play in it", code="not_signed_in")
        token = token or secrets.token_urlsafe(24)  # 192 random bits
        seat = Seat(index, name, token_hash=hash_token(token), member=member, account=account)

        def writes(version: int) -> list[Write]:
            record = SeatRecord(self.id, index, name, token_hash=seat.token_hash)
            return [PutSeat(record, self._seat_version(version), self._fence()),
                    *self._claim(index, account, version)]

        def apply() -> _Outcome[M]:
            self.seats[index] = seat
            self._claimed(index, account)
            if rating is not None:
                self.ratings[index] = rating
            if provisional is not None:
                self.provisional[index] = provisional
            if self.creator_seat is None:
                self.creator_seat = index
            code = self.code if self.creator == member else None
            return _Outcome([ev.PlayerJoined(index, name)], skip=member, after=[
                Send((member,), encode(m.Joined(re=re, room=self.id, seat=index, token=token,
                                                code=code))),
                _ShowTo(member),
            ])

        return self._propose(writes, apply)

    def add_bot(self, member: M, level: str, re: int) -> Change:
        """A player fills the lowest free seat with a bot of ``level`` (stored, and named,
        by the level's own name: ``greedy`` is ``normal``)."""
        level = bots.level_name(level)
        self._player_seat(member)
        if self.rated:
            raise RoomError("a rated room seats signed-in accounts only: no bot may sit in it",
                            code="rated_room")
        index = self._free_seat()
        taken_names = {s.name.casefold() for s in self.seats if s is not None}
        taken_names.update(n.casefold() for n in self.spectators.values())
        # one first name per table, whatever the levels (not a Pau·hard beside a Pau·easy)
        firsts = {n.split("·")[0] for n in taken_names}
        name = next(n for n in bots.bot_names(level)
                    if n.casefold() not in taken_names and n.split("·")[0].casefold() not in firsts)

        def writes(version: int) -> list[Write]:
            record = SeatRecord(self.id, index, name, bot=True, bot_level=level)
            return [PutSeat(record, self._seat_version(version), self._fence()),
                    *self._claim(index, None, version)]

        def apply() -> _Outcome[M]:
            self.seats[index] = Seat(index, name, bot=level)
            self._claimed(index, None)
            return _Outcome([ev.PlayerJoined(index, name)],
                            before=[Send((member,), encode(m.Ok(re=re)))])

        return self._propose(writes, apply)

    def _claim(self, index: int, account: str | None, version: int) -> list[Write]:
        """The account write that follows a seat write of ``version`` (fenced on it): none
        when the seat neither belongs nor belonged to an account, as far as is known."""
        if account is None and self.accounts_read and index not in self._accounted:
            return []
        return [ClaimSeat(self.id, index, account, version if self.fenced else None)]

    def _claimed(self, index: int, account: str | None) -> None:
        if account is None:
            self._accounted.discard(index)
        else:
            self._accounted.add(index)

    def seat_matched(self, index: int, name: str, token: str, account: str | None,
                     rating: int | None = None, provisional: bool | None = None) -> Change:
        """A quick match seats a person in seat ``index`` before they are here (they take it
        with ``token``, as a player coming back does); it belongs to ``account``."""
        if self.seats[index] is not None:
            raise RoomError(f"seat {index} is taken", code="room_full")
        seat: Seat[M] = Seat(index, name, token_hash=hash_token(token), account=account)

        def writes(version: int) -> list[Write]:
            record = SeatRecord(self.id, index, name, token_hash=seat.token_hash)
            return [PutSeat(record, self._seat_version(version), self._fence()),
                    *self._claim(index, account, version)]

        def apply() -> _Outcome[M]:
            self.seats[index] = seat
            self._claimed(index, account)
            if rating is not None:
                self.ratings[index] = rating
            if provisional is not None:
                self.provisional[index] = provisional
            if self.creator_seat is None:
                self.creator_seat = index
            return _Outcome([ev.PlayerJoined(index, name)])

        return self._propose(writes, apply)

    def start_matched(self, *, now: float) -> Change:
        """A quick match starts its room as soon as every seat is taken (no creator asks)."""
        return self._begin(now, "matched game started")

    def rated_end(self, changes: dict[int, tuple[int, int]]) -> None:
        """A rated game's end was stored with its ratings: each seat's displayed rating
        before and after it (seat → (before, after)), shown from the next view on."""
        for index, (before, after) in changes.items():
            self.ratings_before[index] = before
            self.ratings[index] = after

    def offer_seats(self, offered: dict[int, str]) -> None:
        """A rematch offers each seat of ``offered`` (seat → name) to the player who held it
        in the finished game: nobody else takes it (set before the room is stored, and
        stored with it: no change)."""
        self.reserved = {index: name_key(name) for index, name in offered.items()}

    def offered_to(self, name: str) -> bool:
        """Whether a rematch offers a seat of this room to ``name`` (as names compare)."""
        return name_key(name) in self.reserved.values()

    def seat_bot(self, index: int, level: str) -> Change:
        """A rematch's bot back in seat ``index`` before anyone sits (named as
        :meth:`add_bot` names bots)."""
        level = bots.level_name(level)
        taken = {s.name.casefold() for s in self.seats if s is not None}
        name = next(n for n in bots.bot_names(level) if n.casefold() not in taken)

        def writes(version: int) -> list[Write]:
            record = SeatRecord(self.id, index, name, bot=True, bot_level=level)
            return [PutSeat(record, self._seat_version(version), self._fence()),
                    *self._claim(index, None, version)]

        def apply() -> _Outcome[M]:
            self.seats[index] = Seat(index, name, bot=level)
            self._claimed(index, None)
            return _Outcome([ev.PlayerJoined(index, name)])

        return self._propose(writes, apply)

    def reclaim(self, member: M, index: int, re: int) -> Change:
        """Give seat ``index`` to ``member``, whose account it belongs to (checked by the
        caller); as :meth:`resume` does."""
        seat = self.seats[index]
        if seat is None or seat.bot is not None:
            raise BadToken("that seat is no longer yours")
        return self._take_back(seat, member, re)

    def resume(self, member: M, token: str, re: int) -> Change:
        """Give the seat whose token this is to ``member``; its old member is closed."""
        for seat in self.seats:
            if seat is not None and token_matches(token, seat.token_hash):
                break
        else:
            raise BadToken("that seat token does not belong to any seat of this room")
        return self._take_back(seat, member, re)

    def _take_back(self, seat: Seat[M], member: M, re: int) -> Change:
        found = seat

        def apply() -> _Outcome[M]:
            old, found.member = found.member, member
            before: list[Any] = []
            if old is not None and old != member:
                before.append(Close(old, 4001, "your seat was taken back by a newer connection"))
            code = self.code if self.creator == member else None
            return _Outcome([ev.PlayerConnected(found.index, found.name)], before=before,
                            skip=member, after=[
                Send((member,), encode(m.Joined(re=re, room=self.id, seat=found.index,
                                                token=None, code=code))),
                _ShowTo(member),
            ])

        return self._propose(self._version_write, apply)

    def watch(self, member: M, re: int, *, name: str,
              max_spectators: int | None = None) -> list[Effect[M]]:
        """A spectator comes in under ``name``: no change of the room, only its reply and
        view, and the view again for the others (it lists who watches). Refused
        (``room_full``) when the room already has ``max_spectators``, and (``name_taken``)
        when someone in the room already has the name."""
        if max_spectators is not None and len(self.spectators) >= max_spectators:
            raise RoomError(f"this room already has {max_spectators} spectators: try later",
                            code="room_full")
        self._check_name(name)
        self.spectators[member] = name
        others = self._spectators_changed(skip=member)  # shows the view the joiner gets too
        return [Send((member,), encode(m.Joined(re=re, room=self.id, seat=None, token=None,
                                                code=None))),
                self.show_current((member,)), *others]

    def resync(self, member: M, re: int) -> list[Effect[M]]:
        """A member asks for the whole view again (a patch did not fit the one it holds):
        the current view, then ``ok``."""
        return [self.show_current((member,)), Send((member,), encode(m.Ok(re=re)))]

    def unwatch(self, member: M) -> list[Effect[M]]:
        """A spectator leaves (or its connection dropped): the others see it gone."""
        if self.spectators.pop(member, None) is None:
            return []
        return self._spectators_changed()

    def leave(self, member: M, *, dropped: bool) -> Change | None:
        """A member leaves (or its connection dropped): a forced change, since a member who
        is gone is gone. Before the start a player's seat is freed; after it the seat is
        kept for the player to come back (docs/rules.md §10). None for a spectator."""
        if member in self.spectators:
            self.spectators.pop(member)
            return None
        index = self.seat_of(member)
        if index is None:
            return None
        seat = self.seats[index]
        assert seat is not None
        if self.state is None:
            def writes(version: int) -> list[Write]:
                return [RemoveSeat(self.id, index, self._seat_version(version), self._fence()),
                        *self._claim(index, None, version)]

            def apply() -> _Outcome[M]:
                self.seats[index] = None
                self._claimed(index, None)
                if self.creator_seat == index:  # the next person seated creates now
                    self.creator_seat = self._first_person()
                return _Outcome([ev.PlayerLeft(index, seat.name)])

            return self._propose(writes, apply, forced=True)

        def gone() -> _Outcome[M]:
            seat.member = None
            kind = ev.PlayerDisconnected if dropped else ev.PlayerLeft
            return _Outcome([kind(index, seat.name)])

        return self._propose(self._version_write, gone, forced=True)

    def speaker(self, member: M, name: str) -> tuple[int | None, str]:
        """Who says a chat line: a player speaks from the seat, under its name as the view
        shows it; a spectator under ``name`` (the connection's)."""
        seat = self.seat_of(member)
        if seat is not None:
            taken = self.seats[seat]
            assert taken is not None
            name = taken.name
        return seat, name

    def chat_line(self, member: M, name: str, text: str, *, now: float) -> AppendChat:
        """The write that keeps a chat line with the room, stored before the line is said
        (:meth:`chat`): at the room's version, which it does not change."""
        seat, name = self.speaker(member, name)
        return AppendChat(ChatRecord(self.id, self.version, seat, name, text, now),
                          self._fence())

    def chat(self, member: M, name: str, text: str, re: int) -> list[Effect[M]]:
        """Someone in the room says something: ``ok``, then a ``chat`` push to everyone. A
        player speaks under the seat's name, as the view shows it."""
        seat, name = self.speaker(member, name)
        return [Send((member,), encode(m.Ok(re=re))),
                Send(tuple(self.members()),
                     encode(m.ChatPush(room=self.id, seat=seat, name=name, text=text)),
                     lossy=True)]

    def evict(self, code: int, reason: str) -> list[Effect[M]]:
        """Close every member (the room is no longer served here); nothing is written."""
        effects: list[Effect[M]] = [Close(member, code, reason) for member in self.members()]
        for seat in self.seats:
            if seat is not None:
                seat.member = None
        self.spectators.clear()
        return effects

    # -- the game --------------------------------------------------------------------------

    def start(self, member: M, re: int, *, now: float) -> Change:
        """The creator starts the game once every seat is taken."""
        self._player_seat(member)
        if self.state is not None:
            raise RoomError("the game has already started", code="already_started")
        if member != self.creator:
            raise RoomError("only the room's creator can start the game", code="not_creator")
        return self._begin(now, "game started", before=[Send((member,), encode(m.Ok(re=re)))])

    def _begin(self, now: float, said: str, before: list[Any] | None = None) -> Change:
        """Start the game of a full room (``said`` in the log; ``before``: the asker's
        reply, sent ahead of the push)."""
        if self.state is not None:
            raise RoomError("the game has already started", code="already_started")
        if not self.full:
            raise RoomError(f"every seat must be taken first ({self.taken} of {self.size})",
                            code="seats_not_full")
        names = [s.name for s in self.seats if s is not None]
        state = engine.new_game(names, self.variant, self.seed)
        assert state.turn is not None

        def writes(version: int) -> list[Write]:
            return [UpdateRoom(self.id, version, self._fence(), status=RoomStatus.PLAYING,
                               started_at=now, progress=Progress.of(state))]

        def apply() -> _Outcome[M]:
            self.state = state
            log.info("room %s: %s (%s)", self.id, said, ", ".join(names))
            assert state.turn is not None
            return _Outcome([ev.GameStarted(), ev.RoundStarted(1, state.first),
                             ev.TurnStarted(state.turn)], before=before or [])

        return self._propose(writes, apply)

    def act(self, member: M, action: Action, re: int, *, now: float) -> Change:
        """A player's action; the rules (``shared.engine``) refuse it or say what follows.
        On commit the actor hears ``ok`` with the new version before the ``state`` push."""
        seat = self._player_seat(member)
        return self._play(seat, action, now, ack=(member, re))

    def timer_fired(self, key: TurnKey, *, now: float) -> Change | None:
        """§4: the turn ends when the room's turn timer runs out (None: that turn is over)."""
        state = self.state
        if state is None or self._turn_key != key or state.turn is None:
            return None
        seat = state.turn
        log.info("room %s: seat %d timed out", self.id, seat)

        def again() -> list[Any]:
            return [ArmTimer(key, self.retry_delay)]

        return self._play(seat, EndTurn(), now, extra=[ev.TurnTimedOut(seat)], failed=again,
                          timed_out=True)

    def bot_turn(self) -> BotTurn | None:
        """The bot whose turn it is, with what it needs to choose; None when a person is to
        act, or no game is on."""
        state = self.state
        if state is None or state.over or state.turn is None:
            return None
        seat = self.seats[state.turn]
        if seat is None or seat.bot is None:
            return None
        if self._bot_rng is None:
            self._bot_rng = random.Random(self.seed ^ 0x5EED)
        return BotTurn(seat.index, seat.bot, state, self._bot_rng)

    def bot_chose(self, turn: BotTurn, action: Action, *, now: float) -> Change | None:
        """The bot of ``turn`` chose ``action`` (None: the game moved on meanwhile). A bot
        policy must only pick legal actions; if one slips, its turn is ended instead rather
        than stall the game."""
        if self.bot_turn() != turn:
            return None

        def again() -> list[Any]:
            return [WakeBot(self.retry_delay)]

        try:
            return self._play(turn.seat, action, now, failed=again)
        except RuleError:
            log.exception("room %s: the bot in seat %d chose an illegal action %r; its turn "
                          "is ended instead", self.id, turn.seat, action)
            return self._play(turn.seat, EndTurn(), now, failed=again)

    def _play(self, seat: int, action: Action, now: float, *, extra: list[Any] | None = None,
              ack: tuple[M, int] | None = None,
              failed: Callable[[], list[Any]] | None = None, timed_out: bool = False) -> Change:
        if self.state is None:
            raise RoomError("the game has not started yet", code="game_not_started")
        new, events = engine.apply(self.state, seat, action)
        # The floor of rated play (server.ratings): a game nobody played is not rated.
        unrated = None
        if new.over and self.rated and not ratings.played(
                [*(a for _, a in self.log), action]):
            unrated = ratings.NOBODY_PLAYED

        def writes(version: int) -> list[Write]:
            # Acknowledged means durable (docs/protocol.md): stored first, then changed.
            out: list[Write] = [AppendAction(ActionRecord(
                self.id, len(self.log), seat, pack_action(action), now, version, timed_out,
            ), self._fence(), Progress.of(new))]
            if new.over:  # the action just stored this version: the result expects it
                result = game_result(new)
                if unrated is not None:
                    result["unrated"] = unrated
                out.append(Finish(self.id, result, now, version if self.fenced else None,
                                  rated=self.rated and unrated is None))
            return out

        def apply() -> _Outcome[M]:
            self.log.append((seat, action))
            self.state = new
            if unrated is not None:
                self.unrated = unrated
            before: list[Any] = []
            if ack is not None:
                member, re = ack
                before.append(Send((member,), encode(m.Ok(re=re, version=self.version))))
            return _Outcome([*(extra or ()), *events], before=before)

        return self._propose(writes, apply, failed=failed)

    def _turn_effects(self, now: float) -> list[Effect[M]]:
        """After a game change: a new turn gets a fresh timer (§4); a finished game none."""
        state = self.state
        if state is None:
            return []
        key = (state.round, state.turn)
        if key == self._turn_key:
            return []
        self._turn_key = key
        if state.over:
            self.deadline = None
            self.finished_at = now
            log.info("room %s: game over, winners %s", self.id, state.winners)
            return [CancelTimer()]
        return self._arm(key, now)

    def _arm(self, key: TurnKey, now: float) -> list[Effect[M]]:
        """§4: a fresh full turn on the room's timer, if it has one (shown as ``deadline``)."""
        if self.turn_seconds is None:
            return [CancelTimer()]
        seconds = self.turn_seconds * self.time_scale
        self.deadline = now + seconds
        return [ArmTimer(key, seconds)]

    def _bot_effects(self) -> list[Effect[M]]:
        return [WakeBot(self.bot_delay)] if self.bot_turn() is not None else []

    def resume_play(self, *, now: float) -> list[Effect[M]]:
        """After a restore: a fresh full turn on the timer, and the bots woken."""
        state = self.state
        if state is None or state.over:
            return []
        self._turn_key = (state.round, state.turn)
        return [*self._arm(self._turn_key, now), *self._bot_effects()]

    def take_over(self) -> Change:
        """A cluster node adopts this room (restored from the store, its node gone): move
        the stored version one past the one loaded, expecting that one, so that the node
        that held the room before can no longer write to it; once committed every write is
        fenced. The store refuses it (``version_conflict``) when that node wrote after the
        room was loaded."""
        loaded = self.version

        def writes(version: int) -> list[Write]:
            return [UpdateRoom(self.id, version, loaded)]

        def apply() -> _Outcome[M]:
            self.fenced = True
            return _Outcome([])

        return self._propose(writes, apply)
