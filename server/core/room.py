"""A game room without I/O: its seats, spectators and game, changed only by inputs.

:class:`Room` owns the rules of change of one room and nothing else: no asyncio, no sockets,
no store calls and no clock of its own (every input carries ``now``). It is driven the way
``websockets`` drives its sans-I/O ``protocol.py``: :mod:`server.runtime.runner` feeds it inputs and
performs the effects it returns.

:class:`Room` is a façade over parts, one concern each: seats and presence
(:mod:`server.core.room_seats`), the game and its timer (:mod:`server.core.room_game`), versions,
fencing and the change in flight (:mod:`server.core.room_versions`), what it shows
(:mod:`server.core.room_views`), rematch offers and ratings (:mod:`server.core.room_extras`). Its
inputs are the rules of change across them; what it reads of a part it reads through
(:class:`_Via`), so callers speak to the room alone. What it writes is in
:mod:`server.core.room_writes`, what it asks of the driver in :mod:`server.core.room_effects`.

An input that changes the room (a seat taken, an action, a bot's move, a turn timing out)
does not change it at once: it returns a :class:`Change` (:mod:`server.core.room_change`) — data:
the room's next version, taken once, the store writes that make that version durable, and
its outcome (what committing it makes so). The driver performs the writes, then hands the
change back: :meth:`Room.commit` applies its outcome and returns the effects (the
replies, the one push of the new view — computed once for every member, whole or as a patch
of the view shown before (:class:`Push`) —, timers to arm, bots to wake);
:meth:`Room.abort` drops it when the store failed, and says how to go on. One change is in
flight at a time. Refusals (a full room, an illegal action) raise before any change.

The path of one action through the server::

    frame ─ server.edge.requests (decode, rate, protocol state, error boundary)
          ─ RoomRunner.act (the room's lock) ─ Room.act: who may act, engine.apply → Change
          ─ store.append_action(change's write, fenced) ─ Room.commit → effects
          ─ RoomRunner performs them: ok to the actor, state push to all, timer, bot
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from operator import attrgetter
from typing import Any, Generic, Self, TypeVar, overload

import attrs

from server.core import bots
from server.core.room_change import (
    Ack,
    Adopted,
    Back,
    Change,
    Freed,
    Gone,
    Outcome,
    Played,
    RetryBot,
    RetryTimer,
    Seated,
    Started,
    Welcome,
)
from server.core.room_effects import (
    ArmTimer,
    BotTurn,
    CancelTimer,
    Close,
    Effect,
    M,
    Push,
    Send,
    Shown,
    TurnKey,
    WakeBot,
)
from server.core.room_extras import RoomExtras
from server.core.room_game import RoomGame
from server.core.room_seats import RESERVED_NAMES, BadToken, Presence, RoomError, Seat
from server.core.room_versions import RETRY_FIRST, RETRY_MAX, RoomVersions
from server.core.room_views import RoomViews
from server.core.room_writes import (
    AppendAction,
    AppendChat,
    ClaimSeat,
    Finish,
    PutSeat,
    RemoveSeat,
    UpdateRoom,
    Write,
)
from server.store.base import (
    ActionRecord,
    ChatRecord,
    GameRecord,
    Progress,
    SeatRecord,
    hash_token,
)
from shared import engine
from shared import events as ev
from shared import messages as m
from shared.actions import Action, EndTurn, Recorded, Resign
from shared.codec import encode, pack_action, unpack_action
from shared.errors import RuleError
from shared.state import GameState
from shared.view import RoomInfo, RoomStatus, SeatInfo

__all__ = [
    "NOTICE_BACK", "NOTICE_DOWN", "RESERVED_NAMES", "RETRY_FIRST", "RETRY_MAX", "AppendAction",
    "AppendChat", "ArmTimer", "BadToken", "BotTurn", "CancelTimer", "Change", "ClaimSeat",
    "Close", "Effect", "Finish", "Push", "PutSeat", "RemoveSeat", "Room", "RoomError", "Seat",
    "Send", "Shown", "TurnKey", "UpdateRoom", "WakeBot", "Write", "game_result",
]

log = logging.getLogger("castell.room")

T = TypeVar("T")

#: What a room's members are told when its store fails, and when it works again.
NOTICE_DOWN = ("the server cannot save this game just now: nothing is lost, and the game goes "
               "on as soon as it can")
NOTICE_BACK = "the server can save this game again"


def game_result(state: GameState) -> dict[str, Any]:
    """A finished game's result as stored: scores by category and the winners (§9), and the
    seats that resigned, in the order they did, when any did (§10)."""
    assert state.scores is not None and state.winners is not None
    return {
        "scores": [
            {**attrs.asdict(score), "total": score.total} for score in state.scores
        ],
        "winners": list(state.winners),
        **({"resigned": list(state.resigned)} if state.resigned else {}),
    }


class _Via(Generic[T]):
    """An attribute of the room kept by one of its parts (a value of type ``T``), read (and
    written) through the room: what lets callers speak to the room alone while each part
    owns its concern."""

    def __init__(self, part: str, attr: str | None = None) -> None:
        self.part = part
        self.attr = attr or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = self.attr or name

    @overload
    def __get__(self, room: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, room: object, owner: type | None = None) -> T: ...

    def __get__(self, room: object, owner: type | None = None) -> T | Self:
        if room is None:
            return self
        value: T = getattr(getattr(room, self.part), self.attr)
        return value

    def __set__(self, room: object, value: T) -> None:
        setattr(getattr(room, self.part), self.attr, value)

    def fast(self) -> property:
        """The same attribute as a property whose getter is C code (``attrgetter`` of
        ``part.attr``): what the class holds at run time, since a room reads these dozens of
        times a change and a Python ``__get__`` costs several times as much."""
        part, attr = self.part, self.attr

        def put(room: object, value: T) -> None:
            setattr(getattr(room, part), attr, value)

        return property(attrgetter(f"{part}.{attr}"), put, doc=f"{part}.{attr}")


@attrs.define
class _Said(Generic[M]):
    """What applying an outcome says: its events and the effects around the push."""

    events: list[Any]
    #: Effects before the push (the acknowledgement).
    before: list[Any] = attrs.Factory(list)
    #: A member that gets its reply and first view after the push, instead of the push.
    welcome: Welcome[M] | None = None


class Room(Generic[M]):
    """One room of the lobby: a façade over its parts (see the module docstring).

    :attr:`presence` (:mod:`server.core.room_seats`) seats and spectators; :attr:`game`
    (:mod:`server.core.room_game`) the game and its timer; :attr:`versions`
    (:mod:`server.core.room_versions`) versions, fencing and the change in flight; :attr:`views`
    (:mod:`server.core.room_views`) what it shows; :attr:`extras` (:mod:`server.core.room_extras`)
    rematch offers and ratings. Each input below is one rule of change across them."""

    # seats and presence
    seats: _Via[list[Seat[M] | None]] = _Via("presence")
    spectators: _Via[dict[M, str]] = _Via("presence")
    creator_seat: _Via[int | None] = _Via("presence")
    accounts_read: _Via[bool] = _Via("presence")
    taken: _Via[int] = _Via("presence")
    full: _Via[bool] = _Via("presence")
    creator: _Via[M | None] = _Via("presence")
    members: _Via[Callable[[], list[M]]] = _Via("presence")
    seat_of: _Via[Callable[[M], int | None]] = _Via("presence")
    speaker: _Via[Callable[[M, str], tuple[int | None, str]]] = _Via("presence")
    know_accounts: _Via[Callable[[dict[int, str]], None]] = _Via("presence")
    # the game and its timing
    variant: _Via[str] = _Via("game")
    seed: _Via[int] = _Via("game")
    turn_seconds: _Via[int | None] = _Via("game")
    state: _Via[GameState | None] = _Via("game")
    log: _Via[list[tuple[int, Recorded]]] = _Via("game")
    status: _Via[RoomStatus] = _Via("game")
    deadline: _Via[float | None] = _Via("game")
    finished_at: _Via[float | None] = _Via("game")
    bot_delay: _Via[float] = _Via("game")
    time_scale: _Via[float] = _Via("game")
    bot_turn: _Via[Callable[[], BotTurn | None]] = _Via("game")
    resume_play: _Via[Callable[..., list[Effect[M]]]] = _Via("game")
    # versions
    version: _Via[int] = _Via("versions")
    stored_version: _Via[int] = _Via("versions")
    fenced: _Via[bool] = _Via("versions")
    failures: _Via[int] = _Via("versions")
    changed_at: _Via[float] = _Via("versions")
    committed: _Via[tuple[int, list[Any]]] = _Via("versions")
    busy: _Via[bool] = _Via("versions")
    fence: _Via[int | None] = _Via("versions")
    retry_delay: _Via[float] = _Via("versions")
    stores_version: _Via[Callable[[Change[M]], bool]] = _Via("versions")
    # views
    shown: _Via[Shown | None] = _Via("views")
    view: _Via[Callable[[], dict[str, Any]]] = _Via("views")
    current: _Via[Callable[[], bytes]] = _Via("views")
    show_current: _Via[Callable[[tuple[M, ...]], Push[M]]] = _Via("views")
    summary: _Via[Callable[[], m.RoomSummary]] = _Via("views")
    # extras
    rated: _Via[bool] = _Via("extras")
    reserved: _Via[dict[int, str]] = _Via("extras")
    ratings: _Via[dict[int, int]] = _Via("extras")
    ratings_before: _Via[dict[int, int]] = _Via("extras")
    provisional: _Via[dict[int, bool]] = _Via("extras")
    unrated: _Via[str | None] = _Via("extras")
    offer_seats: _Via[Callable[[dict[int, str]], None]] = _Via("extras")
    offered_to: _Via[Callable[[str], bool]] = _Via("extras")
    rated_end: _Via[Callable[[dict[int, tuple[int, int]]], None]] = _Via("extras")

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
        self.private = private
        self.code = code
        #: The address that created the room (None once restored): for the per-address cap.
        self.host_address: str | None = None
        self.created_at = now
        self.presence: Presence[M] = Presence(room_id, seats)
        # §10: a resigned seat is played by a bot where bots may sit (not a rated room).
        self.game = RoomGame(room_id, variant, seed, turn_seconds, self.presence.seats,
                             bot_delay=bot_delay, time_scale=time_scale,
                             stand_in=None if rated else "normal")
        self.versions = RoomVersions(room_id, now=now, fenced=fenced)
        self.views: RoomViews[M] = RoomViews(self)
        #: The facts :meth:`info` made last, and what they were made of.
        self._info: tuple[tuple[Any, ...], RoomInfo] | None = None
        self.extras = RoomExtras(rated=rated)

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
        room.creator_seat = room.presence.first_person()
        room.reserved = dict(r.offers)
        if r.status != RoomStatus.WAITING:
            names = [s.name for s in room.seats if s is not None]
            room.game.replay(names, ((a.seat, unpack_action(a.action)) for a in record.actions))
            if room.game.over:
                room.finished_at = r.finished_at or now
                if record.result is not None and record.result.get("unrated"):
                    room.unrated = str(record.result["unrated"])
        room.version = room.stored_version = r.version
        room.changed_at = now
        room.accounts_read = False
        return room

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

    def info(self) -> RoomInfo:
        """The room's facts as a view shows them: made again only when one of them changed
        (a change of the game's state alone, most changes, keeps them), so that the view
        of every change does not build the seats again."""
        extras, game = self.extras, self.game
        ratings, before, provisional = extras.ratings, extras.ratings_before, extras.provisional
        seats = tuple((s.index, s.name, s.bot is not None, s.connected, ratings.get(s.index),
                       before.get(s.index), provisional.get(s.index))
                      for s in self.presence.seats if s is not None)
        key = (seats, tuple(self.presence.spectators.values()), game.status, game.deadline,
               extras.unrated, self.private, self.name, game.turn_seconds)
        cached = self._info
        if cached is not None and cached[0] == key:
            return cached[1]
        info = RoomInfo(
            room=self.id,
            name=self.name,
            variant=self.variant,
            seats=self.size,
            turn_seconds=game.turn_seconds,
            status=game.status,
            deadline=game.deadline,
            players=tuple(
                SeatInfo(seat=index, name=name, bot=bot, connected=connected, rating=rating,
                         rating_before=rating_before, provisional=provisional_)
                for index, name, bot, connected, rating, rating_before, provisional_ in seats
            ),
            spectators=key[1],
            unrated=extras.unrated,
            private=self.private,
        )
        self._info = (key, info)
        return info

    # -- the one write path ----------------------------------------------------------------

    def _propose(self, writes: list[Write], outcome: Outcome[M], version: int, *,
                 forced: bool = False, retry: RetryTimer | RetryBot | None = None) -> Change[M]:
        """Keep the change of ``version`` (taken with ``versions.next``, once) until the
        driver commits or aborts it: its writes and its outcome, as data."""
        return self.versions.propose(Change(version, tuple(writes), outcome, forced, retry))

    def commit(self, change: Change[M], *, now: float, stored: bool = True) -> list[Effect[M]]:
        """The change's writes are stored (or it was forced): apply it, push it to every
        member (the same bytes for all), and say what follows."""
        effects: list[Effect[M]] = []
        if self.versions.committed_now(change, now=now, stored=stored):
            effects.append(_notice(self, NOTICE_BACK))
        said = _apply(self, change.outcome)
        self.committed = (self.version, said.events)
        effects.extend(said.before)
        effects.extend(self.game.turn_effects(now))
        welcome = said.welcome
        skip = None if welcome is None else welcome.member
        to = tuple(member for member in self.members() if member != skip)
        effects.append(self.views.show(to, said.events))
        if not to and welcome is None:
            _unseen(self)
        if welcome is not None:
            seat = self.seat_of(welcome.member)
            code = self.code if self.creator == welcome.member else None
            effects.append(Send((welcome.member,), encode(m.Joined(
                re=welcome.re, room=self.id, seat=seat, token=welcome.token, code=code))))
            effects.append(self.show_current((welcome.member,)))
        effects.extend(self.game.bot_effects())
        return effects

    def abort(self, change: Change[M]) -> list[Effect[M]]:
        """The store refused the change: the room stays as it was. Returns how to go on
        (a timer or a bot tries again after a backoff; a request was simply not done), and
        at the first failure in a row, a ``notice`` to every member; the first change stored
        after it says that the game can be saved again."""
        first = self.versions.refused(change)
        effects: list[Effect[M]] = [_notice(self, NOTICE_DOWN)] if first else []
        retry = change.retry
        if isinstance(retry, RetryTimer):
            effects.append(ArmTimer(retry.key, self.retry_delay))
        elif isinstance(retry, RetryBot):
            effects.append(WakeBot(self.retry_delay))
        return effects

    # -- seats -----------------------------------------------------------------------------

    def take_seat(self, member: M, name: str, re: int, *, now: float,
                  token: str | None = None, account: str | None = None,
                  rating: int | None = None, provisional: bool | None = None) -> Change[M]:
        """Seat a person in the lowest free seat (the one a rematch offers them, if any); on
        commit they get ``joined`` (with their seat's secret token) and the current view. A
        seat taken by a signed-in ``account`` belongs to it."""
        _not_started(self)
        index = self.presence.free_seat(self.name, self.reserved, name)
        self.presence.check_name(name, self.name)
        if self.rated and account is None:
            raise RoomError("a rated room seats signed-in accounts only: connect with your "
                            "account (not as a guest) to play in it", code="not_signed_in")
        token = token or secrets.token_urlsafe(24)  # 192 random bits
        seat = Seat(index, name, token_hash=hash_token(token), member=member, account=account)
        version = self.versions.next
        return self._propose(_seat_writes(self, seat, version), Seated(
            seat, account, rating, provisional, welcome=Welcome(member, re, token)), version)

    def seat_matched(self, index: int, name: str, token: str, account: str | None,
                     rating: int | None = None, provisional: bool | None = None) -> Change[M]:
        """A quick match seats a person in seat ``index`` before they are here (they take it
        with ``token``, as a player coming back does); it belongs to ``account``."""
        if self.seats[index] is not None:
            raise RoomError(f"seat {index} is taken", code="room_full")
        seat: Seat[M] = Seat(index, name, token_hash=hash_token(token), account=account)
        version = self.versions.next
        return self._propose(_seat_writes(self, seat, version),
                             Seated(seat, account, rating, provisional), version)

    def add_bot(self, member: M, level: str, re: int) -> Change[M]:
        """A player fills the lowest free seat with a bot of ``level`` (stored, and named,
        by the level's own name: ``greedy`` is ``normal``)."""
        level = bots.level_name(level)
        self.presence.player_seat(member)
        if self.rated:
            raise RoomError("a rated room seats signed-in accounts only: no bot may sit in it",
                            code="rated_room")
        _not_started(self)
        return self.seat_bot(self.presence.free_seat(self.name, self.reserved), level,
                             ack=Ack(member, re))

    def seat_bot(self, index: int, level: str, *, ack: Ack[M] | None = None) -> Change[M]:
        """A bot of ``level`` in seat ``index`` before the start (a rematch's bot back, a
        player's :meth:`add_bot`): refused when the seat is taken, and named with a first
        name nobody at the table has (:meth:`server.core.room_seats.Presence.place_bot`)."""
        _not_started(self)
        seat: Seat[M] = self.presence.place_bot(level, index, self.name)
        version = self.versions.next
        return self._propose(_seat_writes(self, seat, version), Seated(seat, ack=ack), version)

    def reclaim(self, member: M, index: int, re: int) -> Change[M]:
        """Give seat ``index`` to ``member``, whose account it belongs to (checked by the
        caller); as :meth:`resume` does."""
        seat = self.seats[index]
        if seat is None or seat.bot is not None:
            raise BadToken("that seat is no longer yours")
        return self._take_back(seat, member, re)

    def resume(self, member: M, token: str, re: int) -> Change[M]:
        """Give the seat whose token this is to ``member``; its old member is closed."""
        return self._take_back(self.presence.with_token(token), member, re)

    def _take_back(self, seat: Seat[M], member: M, re: int) -> Change[M]:
        version = self.versions.next
        return self._propose(self.versions.version_write(version, over=self.game.over),
                             Back(seat.index, Welcome(member, re, None)), version)

    def watch(self, member: M, re: int, *, name: str,
              max_spectators: int | None = None) -> list[Effect[M]]:
        """A spectator comes in under ``name``: no change of the room, only its reply and
        view, and the view again for the others (it lists who watches). Refused
        (``room_full``) when the room already has ``max_spectators``, and (``name_taken``)
        when someone in the room already has the name."""
        if max_spectators is not None and len(self.spectators) >= max_spectators:
            raise RoomError(f"this room already has {max_spectators} spectators: try later",
                            code="room_full")
        self.presence.check_name(name, self.name)
        self.spectators[member] = name
        others = _spectators_changed(self, skip=member)  # shows the view the joiner gets too
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
        return _spectators_changed(self)

    def leave(self, member: M, *, dropped: bool) -> Change[M] | None:
        """A member leaves (or its connection dropped): a forced change, since a member who
        is gone is gone. Before the start a player's seat is freed; after it the seat is
        kept for the player to come back (docs/rules.md §10). None for a spectator."""
        if member in self.spectators:
            self.spectators.pop(member)
            return None
        index = self.seat_of(member)
        if index is None:
            return None
        version = self.versions.next
        writes = self.versions.version_write(version, over=self.game.over)
        if self.state is None:
            writes = [RemoveSeat(self.id, index, version if writes else None, self.fence),
                      *self.presence.claim(index, None, version, self.fence)]
            return self._propose(writes, Freed(index), version, forced=True)
        return self._propose(writes, Gone(index, dropped), version, forced=True)

    def chat_line(self, member: M, name: str, text: str, *, now: float) -> AppendChat:
        """The write that keeps a chat line with the room, stored before the line is said
        (:meth:`chat`): at the room's version, which it does not change."""
        seat, name = self.speaker(member, name)
        return AppendChat(ChatRecord(self.id, self.version, seat, name, text, now),
                          self.fence)

    def chat(self, member: M, name: str, text: str, re: int,
             deaf: Callable[[M], bool] | None = None) -> list[Effect[M]]:
        """Someone in the room says something: ``ok``, then a ``chat`` push to everyone but
        those ``deaf`` says do not hear the speaker (they block them). A player speaks under
        the seat's name, as the view shows it."""
        seat, name = self.speaker(member, name)
        hearers = tuple(x for x in self.members() if deaf is None or x is member or not deaf(x))
        return [Send((member,), encode(m.Ok(re=re))),
                Send(hearers,
                     encode(m.ChatPush(room=self.id, seat=seat, name=name, text=text)),
                     lossy=True)]

    def evict(self, code: int, reason: str) -> list[Effect[M]]:
        """Close every member (the room is no longer served here); nothing is written."""
        return list(self.presence.evict(code, reason))

    # -- the game --------------------------------------------------------------------------

    def start(self, member: M, re: int, *, now: float) -> Change[M]:
        """The creator starts the game once every seat is taken."""
        self.presence.player_seat(member)
        if self.state is not None:
            raise RoomError("the game has already started", code="already_started")
        if member != self.creator:
            raise RoomError("only the room's creator can start the game", code="not_creator")
        return self._begin(now, "game started", Ack(member, re))

    def start_matched(self, *, now: float) -> Change[M]:
        """A quick match starts its room as soon as every seat is taken (no creator asks)."""
        return self._begin(now, "matched game started")

    def _begin(self, now: float, said: str, ack: Ack[M] | None = None) -> Change[M]:
        """Start the game of a full room (``said`` in the log; ``ack``: the asker's reply,
        sent ahead of the push)."""
        if self.state is not None:
            raise RoomError("the game has already started", code="already_started")
        if not self.full:
            raise RoomError(f"every seat must be taken first ({self.taken} of {self.size})",
                            code="seats_not_full")
        state = self.game.new([s.name for s in self.seats if s is not None])
        version = self.versions.next
        return self._propose([UpdateRoom(self.id, version, self.fence,
                                         status=RoomStatus.PLAYING, started_at=now,
                                         progress=Progress.of(state))],
                             Started(state, said, ack), version)

    def act(self, member: M, action: Recorded, re: int, *, now: float) -> Change[M]:
        """A player's action; the rules (``shared.engine``) refuse it or say what follows.
        On commit the actor hears ``ok`` with the new version before the ``state`` push.
        A player who resigned acts no more (``resigned``): the seat is played for them.
        A :class:`~shared.actions.Resign` is the player's resignation (:meth:`resign`)."""
        if isinstance(action, Resign):
            return self.resign(member, re, now=now)
        seat = self.presence.player_seat(member)
        state = self.state
        if state is not None and not state.over and seat in state.resigned:
            raise RoomError("you resigned this game: the rest of it is played for your seat "
                            "(`leave` for the lobby)", code="resigned")
        return self._play(seat, action, now, ack=Ack(member, re, versioned=True))

    def resign(self, member: M, re: int, *, now: float) -> Change[M]:
        """§10, "Resigning": the member's seat concedes the game, a change stored in the
        game's list of actions (its record replays it). Refused to a spectator
        (``not_a_player``), before the start (``game_not_started``), once the game is over
        (``game_over``) and to a seat that resigned already (``resigned``). The game ends with
        it when fewer than two players are left in it, or when no one but bots is: then the
        stored resignation says so (``ends``), for the replay to end it too. On commit the
        resigner hears ``ok`` with the new version before the ``state`` push; after it a
        bot, or the timer, plays the seat (:mod:`server.core.room_game`)."""
        seat = self.presence.player_seat(member)
        state = self.state
        if state is None:
            raise RoomError("the game has not started yet", code="game_not_started")
        if state.over:
            raise RoomError("the game is over: there is nothing to resign", code="game_over")
        if seat in state.resigned:
            raise RoomError("you have resigned this game already", code="resigned")
        left = [s for s in self.seats
                if s is not None and s.index != seat and s.index not in state.resigned]
        ends = bool(left) and all(s.bot is not None for s in left)
        return self._play(seat, Resign(ends), now, ack=Ack(member, re, versioned=True))

    def timer_fired(self, key: TurnKey, *, now: float, removed: bool = False
                    ) -> Change[M] | None:
        """§4: the turn ends when the room's turn timer runs out (None: that turn is over).
        ``removed``: the timer was run out at once because the host removed the seat's
        player; the ``timeout`` event says so (``reason``), as it says a resigned seat's
        turn that no bot plays (§10)."""
        state = self.state
        if state is None or self.game.turn_key != key or state.turn is None:
            return None
        seat = state.turn
        reason = "removed" if removed else "resigned" if self.game.ends_at_once(state) else None
        log.info("room %s: seat %d timed out%s", self.id, seat, f" ({reason})" if reason else "")
        return self._play(seat, EndTurn(), now, extra=[ev.TurnTimedOut(seat, reason)],
                          retry=RetryTimer(key), timed_out=True)

    def bot_chose(self, turn: BotTurn, action: Action, *, now: float) -> Change[M] | None:
        """The bot of ``turn`` chose ``action`` (None: the game moved on meanwhile). A bot
        policy must only pick legal actions; if one slips, its turn is ended instead rather
        than stall the game."""
        if self.bot_turn() != turn:
            return None
        try:
            return self._play(turn.seat, action, now, retry=RetryBot())
        except RuleError:
            log.exception("room %s: the bot in seat %d chose an illegal action %r; its turn "
                          "is ended instead", self.id, turn.seat, action)
            return self._play(turn.seat, EndTurn(), now, retry=RetryBot())

    def _play(self, seat: int, action: Recorded, now: float, *, extra: list[Any] | None = None,
              ack: Ack[M] | None = None, retry: RetryTimer | RetryBot | None = None,
              timed_out: bool = False) -> Change[M]:
        if self.state is None:
            raise RoomError("the game has not started yet", code="game_not_started")
        new, events = engine.apply(self.state, seat, action)
        # The floor of rated play (server.features.ratings): a game nobody played is not rated.
        unrated = None
        if new.over:
            unrated = self.extras.unrated_end([*(a for _, a in self.log), action])
        version = self.versions.next
        # Acknowledged means durable (docs/protocol.md): stored first, then changed.
        writes: list[Write] = [AppendAction(ActionRecord(
            self.id, len(self.log), seat, pack_action(action), now, version, timed_out,
        ), self.fence, Progress.of(new))]
        if new.over:  # the action just stored this version: the result expects it
            result = game_result(new)
            if unrated is not None:
                result["unrated"] = unrated
            writes.append(Finish(self.id, result, now, version if self.fenced else None,
                                 rated=self.rated and unrated is None))
        return self._propose(writes, Played(seat, action, new, (*(extra or ()), *events),
                                            unrated, ack), version, retry=retry)

    def take_over(self) -> Change[M]:
        """A cluster node adopts this room (restored from the store, its node gone): move
        the stored version one past the one loaded, expecting that one, so that the node
        that held the room before can no longer write to it; once committed every write is
        fenced. The store refuses it (``version_conflict``) when that node wrote after the
        room was loaded."""
        version = self.versions.next
        return self._propose([UpdateRoom(self.id, version, self.version)], Adopted(), version)


# -- how each input's outcome is applied (module functions: the room's rules, not methods) --


def _not_started(room: Room[Any]) -> None:
    if room.state is not None:
        raise RoomError("the game has already started: join as a spectator, or come back "
                        "with your seat token", code="already_started")


def _seat_writes(room: Room[Any], seat: Seat[Any], version: int) -> list[Write]:
    """Storing who sits in ``seat`` (with the version, fenced) and whose account it is."""
    record = SeatRecord(room.id, seat.index, seat.name, token_hash=seat.token_hash,
                        bot=seat.bot is not None, bot_level=seat.bot)
    over = room.versions.version_write(version, over=room.game.over)
    return [PutSeat(record, version if over else None, room.fence),
            *room.presence.claim(seat.index, seat.account, version, room.fence)]


def _apply(room: Room[M], outcome: Outcome[M]) -> _Said[M]:
    """Make a committed change's ``outcome`` so (the room's version is already its)."""
    presence = room.presence
    before: list[Any] = []
    match outcome:
        case Seated(seat=seat, account=account, ack=ack, welcome=welcome):
            presence.seats[seat.index] = seat
            presence.claimed(seat.index, account)
            room.extras.rate_seat(seat.index, outcome.rating, outcome.provisional)
            if seat.bot is None and presence.creator_seat is None:
                presence.creator_seat = seat.index
            if ack is not None:
                before.append(Send((ack.member,), encode(m.Ok(re=ack.re))))
            return _Said([ev.PlayerJoined(seat.index, seat.name)], before, welcome)
        case Freed(index=index):
            gone = presence.seats[index]
            assert gone is not None
            presence.seats[index] = None
            presence.claimed(index, None)
            if presence.creator_seat == index:  # the next person seated creates now
                presence.creator_seat = presence.first_person()
            return _Said([ev.PlayerLeft(index, gone.name)])
        case Back(index=index, welcome=welcome):
            back = presence.seats[index]
            assert back is not None
            old, back.member = back.member, welcome.member
            if old is not None and old != welcome.member:
                before.append(Close(old, 4001, "your seat was taken back by a newer connection"))
            return _Said([ev.PlayerConnected(index, back.name)], before, welcome)
        case Gone(index=index, dropped=dropped):
            left = presence.seats[index]
            assert left is not None
            left.member = None
            kind = ev.PlayerDisconnected if dropped else ev.PlayerLeft
            return _Said([kind(index, left.name)])
        case Started(state=state, said=said, ack=ack):
            room.game.state = state
            log.info("room %s: %s (%s)", room.id, said,
                     ", ".join(p.name for p in state.players))
            assert state.turn is not None
            if ack is not None:
                before.append(Send((ack.member,), encode(m.Ok(re=ack.re))))
            return _Said([ev.GameStarted(), ev.RoundStarted(1, state.first),
                          ev.TurnStarted(state.turn)], before)
        case Played(seat=seat_index, action=action, state=state, events=events, ack=ack):
            room.game.log.append((seat_index, action))
            room.game.state = state
            if outcome.unrated is not None:
                room.extras.unrated = outcome.unrated
            if ack is not None:
                before.append(Send((ack.member,), encode(m.Ok(re=ack.re, version=room.version))))
            return _Said(list(events), before)
        case Adopted():
            room.versions.fenced = True
            return _Said([])
    raise AssertionError(f"an outcome the room does not know: {outcome!r}")


# The façade's attributes at run time: C-level properties (see _Via.fast); the class body's
# _Via declarations stay what the type checker reads.
for _name, _via in list(vars(Room).items()):
    if isinstance(_via, _Via):
        setattr(Room, _name, _via.fast())


def _notice(room: Room[M], text: str) -> Send[M]:
    """Tell every member something about the room itself (a ``notice`` push)."""
    return Send(tuple(room.members()), encode(m.NoticePush(room=room.id, text=text)))


def _spectators_changed(room: Room[M], *, skip: M | None = None) -> list[Effect[M]]:
    """Show the others who is watching now: the current view again, at the same version
    (watching changes nothing of the room), with no events."""
    to = tuple(member for member in room.members() if member != skip)
    if not to and not room.members():
        _unseen(room)
    return [room.views.show(to, ())] if to else []


def _unseen(room: Room[M]) -> None:
    """Nobody is in the room any more: what it showed last, which the next patch would be
    taken against, and the maps its next view would reuse, are let go (about 8 KiB a room:
    a game nobody looks at keeps its state, not its view). A member who comes shows it
    whole, as a joiner always sees it."""
    if room.views.shown is not None:
        room.views = RoomViews(room)
