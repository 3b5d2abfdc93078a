"""A game room: its seats, spectators, the one true game state, and everything that changes it.

A room is the unit of consistency. Every change — a seat taken, a player reconnecting, an
action, a bot's move, a turn timing out — happens under the room's lock, bumps the room's
version by one, and is pushed to every member as one encoded ``state`` message (the same
bytes for all). Rule checking is ``shared.engine``'s job; the room checks only who may act.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from server import bots
from server.store.base import (
    ActionRecord,
    GameRecord,
    SeatRecord,
    hash_token,
    token_matches,
)
from shared import engine
from shared import events as ev
from shared.actions import Action, EndTurn
from shared.codec import encode_state, pack_action, unpack_action
from shared.errors import CastellError
from shared.state import GameState
from shared.view import RoomInfo, SeatInfo, build_view

if TYPE_CHECKING:
    from server.connection import Connection
    from server.store.base import Store

log = logging.getLogger("castell.room")


def encode_action(action: Action) -> bytes:
    """An action as stored (:func:`shared.codec.pack_action`)."""
    return pack_action(action)


def decode_action(data: bytes) -> Action:
    """The inverse of :func:`encode_action` (:func:`shared.codec.unpack_action`)."""
    return unpack_action(data)


def game_result(state: GameState) -> dict[str, Any]:
    """A finished game's result as stored: scores by category and the winners (§9)."""
    assert state.scores is not None and state.winners is not None
    return {
        "scores": [
            {**attrs.asdict(score), "total": score.total} for score in state.scores
        ],
        "winners": list(state.winners),
    }


class RoomError(CastellError):
    """Raised when a room refuses a request (full, not started, not the creator, ...)."""


@attrs.define(eq=False)
class Seat:
    """One seat: who sits there, how to prove it, and the connection playing it now."""

    index: int
    name: str
    bot: str | None = None  # the bot's level, None for a person
    token_hash: bytes | None = None
    conn: Connection | None = None

    @property
    def connected(self) -> bool:
        return self.bot is not None or self.conn is not None


class Room:
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
        bot_delay: float,
        code: str | None = None,
        store: Store | None = None,
        time_scale: float = 1.0,
        clock: Callable[[], float] = time.time,
        on_empty: Callable[[Room], None] | None = None,
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
        self.store = store
        self.time_scale = time_scale
        self.clock = clock
        self.on_empty = on_empty
        self.seats: list[Seat | None] = [None] * seats
        #: The creator's seat: the creator is whoever holds it, so a creator who drops and
        #: comes back with the token is the creator still (None: no person seated).
        self.creator_seat: int | None = None
        #: The address that created the room (None once restored): for the per-address cap.
        self.host_address: str | None = None
        self.spectators: set[Connection] = set()
        self.state: GameState | None = None
        self.log: list[tuple[int, Action]] = []
        self.version = 0
        #: Set by a cluster node that holds this room under a lease (server.cluster): each
        #: write that moves the stored version then expects the version this room stored
        #: last, so a node that lost the room to another can no longer write to it.
        self.fenced = False
        self._stored_version = 0
        #: Called after every change (each new version): a cluster node refreshes the room's
        #: line in the cluster's room list.
        self.on_change: Callable[[Room], None] | None = None
        self.deadline: float | None = None
        self.lock = asyncio.Lock()
        self._turn_key: tuple[int, int | None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._bot_task: asyncio.Task[None] | None = None
        self._bot_rng = random.Random(seed ^ 0x5EED)
        self.created_at = clock()
        #: When the room last changed (a push); an unwatched room idle long enough is
        #: unloaded from memory and comes back from the store on demand.
        self.changed_at = self.created_at
        self.finished_at: float | None = None

    @classmethod
    def from_record(cls, record: GameRecord, **options: Any) -> Room:
        """Rebuild a stored room: its seats, and its game by replaying the stored actions
        on a game set up from the stored seed (a game is its seed plus its actions)."""
        r = record.room
        room = cls(r.room, r.name, r.seats, r.variant, r.turn_seconds, r.private,
                   seed=r.seed, code=r.code, **options)
        room.created_at = r.created_at
        for s in record.seats:
            room.seats[s.seat] = Seat(s.seat, s.name, bot=s.bot_level if s.bot else None,
                                      token_hash=s.token_hash)
        # The creator's seat is not stored: it is the lowest seat a person holds, which it
        # always is unless the creator left before the start and someone took a lower seat.
        room.creator_seat = next(
            (s.index for s in room.seats if s is not None and s.bot is None), None)
        if r.status != "waiting":
            names = [s.name for s in room.seats if s is not None]
            state = engine.new_game(names, r.variant, r.seed)
            for a in record.actions:
                action = decode_action(a.action)
                state, _ = engine.apply(state, a.seat, action)
                room.log.append((a.seat, action))
            room.state = state
            if state.over:
                room.finished_at = r.finished_at or room.clock()
        room.version = room._stored_version = r.version
        return room

    def resume_play(self) -> None:
        """After a restore: start the turn timer afresh (a fair full turn) and wake bots."""
        state = self.state
        if state is None or state.over:
            return
        self._turn_key = (state.round, state.turn)
        self._arm_timer(self._turn_key)
        self._schedule_bot()

    # -- what the room looks like ----------------------------------------------------------

    @property
    def status(self) -> str:
        if self.state is None:
            return "waiting"
        return "finished" if self.state.over else "playing"

    @property
    def taken(self) -> int:
        return sum(seat is not None for seat in self.seats)

    @property
    def full(self) -> bool:
        return self.taken == self.size

    def members(self) -> list[Connection]:
        conns = [s.conn for s in self.seats if s is not None and s.conn is not None]
        conns.extend(self.spectators)
        return conns

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
                SeatInfo(seat=s.index, name=s.name, bot=s.bot is not None, connected=s.connected)
                for s in self.seats
                if s is not None
            ),
        )

    def view(self) -> dict[str, Any]:
        return build_view(self.info(), self.state)

    @property
    def creator(self) -> Connection | None:
        """The connection playing the creator's seat now, if any."""
        seat = None if self.creator_seat is None else self.seats[self.creator_seat]
        return None if seat is None else seat.conn

    def seat_name(self, index: int) -> str:
        """The name of the player in seat ``index`` (a taken seat)."""
        seat = self.seats[index]
        assert seat is not None
        return seat.name

    def seat_of(self, conn: Connection) -> int | None:
        for seat in self.seats:
            if seat is not None and seat.conn is conn:
                return seat.index
        return None

    # -- pushing changes -------------------------------------------------------------------

    def publish(self, events: list[Any], *, skip: Connection | None = None) -> None:
        """Bump the version and push the new view to every member, encoded once."""
        self.version += 1
        self.changed_at = self.clock()
        data = encode_state(self.id, self.version, self.view(), events)
        for conn in self.members():
            if conn is not skip:
                conn.send_bytes(data)
        if self.on_change is not None:
            self.on_change(self)

    def push_current(self, conn: Connection) -> None:
        """Send one member the current view with no events (right after it joined)."""
        conn.send_bytes(encode_state(self.id, self.version, self.view(), ()))

    # -- seats -----------------------------------------------------------------------------

    def _new_token(self) -> tuple[str, bytes]:
        token = secrets.token_urlsafe(24)  # 192 random bits
        return token, hash_token(token)

    async def take_seat(self, conn: Connection, name: str) -> tuple[int, str]:
        """Seat a person in the lowest free seat; returns the seat and its secret token."""
        if self.state is not None:
            raise RoomError("the game has already started: join as a spectator, or come back "
                            "with your seat token", code="already_started")
        free = [i for i, s in enumerate(self.seats) if s is None]
        if not free:
            raise RoomError(f"room {self.name!r} is full", code="room_full")
        token, digest = self._new_token()
        seat = Seat(free[0], name, token_hash=digest, conn=conn)
        if self.store is not None:
            await self.store.put_seat(SeatRecord(self.id, seat.index, name, token_hash=digest))
        self.seats[seat.index] = seat
        if self.creator_seat is None:
            self.creator_seat = seat.index
        self.publish([ev.PlayerJoined(seat.index, name)], skip=conn)
        await self._save_version()
        return seat.index, token

    async def add_bot(self, level: str) -> int:
        if self.state is not None:
            raise RoomError("the game has already started", code="already_started")
        free = [i for i, s in enumerate(self.seats) if s is None]
        if not free:
            raise RoomError(f"room {self.name!r} is full", code="room_full")
        index = free[0]
        taken_names = {s.name for s in self.seats if s is not None}
        name = next(n for n in bots.bot_names(level) if n not in taken_names)
        if self.store is not None:
            await self.store.put_seat(SeatRecord(self.id, index, name, bot=True,
                                                 bot_level=level))
        self.seats[index] = Seat(index, name, bot=level)
        self.publish([ev.PlayerJoined(index, name)])
        await self._save_version()
        return index

    async def resume(self, conn: Connection, token: str) -> int:
        """Give the seat whose token this is to ``conn``; the old connection is closed."""
        for seat in self.seats:
            if seat is not None and seat.token_hash is not None and token_matches(
                token, seat.token_hash
            ):
                old = seat.conn
                seat.conn = conn
                if old is not None and old is not conn:
                    old.detach()
                    old.close(4001, "your seat was taken back by a newer connection")
                self.publish([ev.PlayerConnected(seat.index, seat.name)],
                             skip=conn)
                await self._save_version()
                return seat.index
        raise RoomError("that seat token does not belong to any seat of this room",
                        code="bad_token")

    def add_spectator(self, conn: Connection) -> None:
        self.spectators.add(conn)

    async def leave(self, conn: Connection, *, dropped: bool) -> None:
        """A member leaves (or its connection dropped). Before the start a player's seat is
        freed; after it the seat is kept for the player to come back (docs/rules.md §10)."""
        if conn in self.spectators:
            self.spectators.discard(conn)
            return
        index = self.seat_of(conn)
        if index is None:
            return
        seat = self.seats[index]
        assert seat is not None
        if self.state is None:
            if self.store is not None:
                await self.store.remove_seat(self.id, index)
            self.seats[index] = None
            if self.creator_seat == index:  # the next person seated creates now
                self.creator_seat = next(
                    (s.index for s in self.seats if s is not None and s.bot is None), None
                )
            self.publish([ev.PlayerLeft(index, seat.name)])
            await self._save_version()
        else:
            seat.conn = None
            kind = ev.PlayerDisconnected if dropped else ev.PlayerLeft
            self.publish([kind(index, seat.name)])
            await self._save_version()
        if self.on_empty is not None and not self.members():
            self.on_empty(self)

    # -- the game --------------------------------------------------------------------------

    async def start(self, conn: Connection) -> None:
        async with self.lock:
            if self.state is not None:
                raise RoomError("the game has already started", code="already_started")
            if conn is not self.creator:
                raise RoomError("only the room's creator can start the game",
                                code="not_creator")
            if not self.full:
                raise RoomError(
                    f"every seat must be taken first ({self.taken} of {self.size})",
                    code="seats_not_full",
                )
            names = [s.name for s in self.seats if s is not None]
            state = engine.new_game(names, self.variant, self.seed)
            if self.store is not None:
                await self.store.update_room(self.id, status="playing", version=self.version + 1,
                                             started_at=self.clock(),
                                             expect_version=self._fence())
                self._stored_version = self.version + 1
            self.state = state
            log.info("room %s: game started (%s)", self.id, ", ".join(names))
            events: list[Any] = [
                ev.GameStarted(),
                ev.RoundStarted(1, state.first),
                ev.TurnStarted(state.turn),
            ]
            self._commit(events)

    async def act(self, seat: int, action: Action,
                  ack: Callable[[int], None] | None = None) -> int:
        """Apply one seat's action; returns the room's new version.

        ``ack`` is called with that version once the action is durable and before the push,
        so the actor hears ``ok`` before the new ``state``.
        """
        async with self.lock:
            return await self._apply(seat, action, [], ack)

    async def _apply(self, seat: int, action: Action, extra: list[Any],
                     ack: Callable[[int], None] | None = None) -> int:
        if self.state is None:
            raise RoomError("the game has not started yet", code="game_not_started")
        new, events = engine.apply(self.state, seat, action)
        if self.store is not None:
            # Acknowledged means durable (docs/protocol.md): store first, then change.
            await self.store.append_action(ActionRecord(
                self.id, len(self.log), seat, encode_action(action), self.clock(),
                self.version + 1,
            ), expect_version=self._fence())
            self._stored_version = self.version + 1
            if new.over:
                await self.store.finish(self.id, game_result(new), self.clock())
        self.log.append((seat, action))
        self.state = new
        self._commit([*extra, *events], ack)
        return self.version

    def _commit(self, events: list[Any],
                ack: Callable[[int], None] | None = None) -> None:
        """After a game change: turn timer, the acknowledgement, the push, then bots."""
        state = self.state
        assert state is not None
        key = (state.round, state.turn)
        if key != self._turn_key:
            self._turn_key = key
            self._cancel_timer()
            if state.over:
                self.deadline = None
                self.finished_at = self.clock()
                log.info("room %s: game over, winners %s", self.id, state.winners)
            else:
                self._arm_timer(key)
        if ack is not None:
            ack(self.version + 1)
        self.publish(events)
        self._schedule_bot()

    def _cancel_timer(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None

    async def _turn_timer(self, key: tuple[int, int | None], delay: float) -> None:
        """§4: the turn ends when the room's turn timer runs out."""
        await asyncio.sleep(delay)
        async with self.lock:
            if self.state is None or self._turn_key != key or self.state.turn is None:
                return
            seat = self.state.turn
            log.info("room %s: seat %d timed out", self.id, seat)
            await self._apply(seat, EndTurn(), [ev.TurnTimedOut(seat)])

    def _arm_timer(self, key: tuple[int, int | None]) -> None:
        """§4: a fresh full turn on the room's timer, if it has one (shown as ``deadline``)."""
        if self.turn_seconds is None:
            return
        seconds = self.turn_seconds * self.time_scale
        self.deadline = self.clock() + seconds
        self._timer = asyncio.create_task(self._turn_timer(key, seconds))

    def _bot_to_play(self) -> Seat | None:
        """The bot's seat whose turn it is, or None (a person's turn, or no game on)."""
        state = self.state
        if state is None or state.over or state.turn is None:
            return None
        seat = self.seats[state.turn]
        return seat if seat is not None and seat.bot is not None else None

    def _schedule_bot(self) -> None:
        if self._bot_to_play() is None:
            return
        if self._bot_task is None or self._bot_task.done():
            self._bot_task = asyncio.create_task(self._bot_turn())

    async def _bot_turn(self) -> None:
        """Play bot turns until a person is to act or the game is over."""
        while True:
            await asyncio.sleep(self.bot_delay)
            async with self.lock:
                seat = self._bot_to_play()
                if seat is None:
                    return
                state = self.state
                assert state is not None
                # a greedy bot may think for tens of milliseconds: off the event loop (the
                # lock keeps the room still meanwhile)
                action = await asyncio.to_thread(
                    bots.choose, state, seat.index, seat.bot, self._bot_rng
                )
                try:
                    await self._apply(seat.index, action, [])
                except CastellError:
                    # A bot policy must only pick legal actions; if one slips, end the turn
                    # rather than stall the game.
                    log.exception("room %s: bot %s chose an illegal action", self.id, seat.name)
                    await self._apply(seat.index, EndTurn(), [])

    async def _save_version(self) -> None:
        """Presence changes bump the version too; keep the stored one in step so a restored
        room never goes back to a version its players already saw. A fenced room stores
        every change, seats filling before the start too, so that each of its writes can
        expect the version it stored last."""
        if self.store is None or (self.state is not None and self.state.over):
            return
        if self.state is None and not self.fenced:
            return
        await self.store.update_room(self.id, version=self.version,
                                     expect_version=self._fence())
        self._stored_version = self.version

    def _fence(self) -> int | None:
        """The stored version a write must find (None: any), see :attr:`fenced`."""
        return self._stored_version if self.fenced else None

    async def take_over(self) -> None:
        """A cluster node adopted this room (restored from the store, its node gone): move
        the stored version one past the one loaded, expecting that one, so that the node that
        held the room before can no longer write to it; from now on every write is fenced.
        Raises ``version_conflict`` when that node wrote after the room was loaded."""
        assert self.store is not None
        await self.store.update_room(self.id, version=self.version + 1,
                                     expect_version=self.version)
        self.version = self._stored_version = self.version + 1
        self.fenced = True

    def close(self) -> None:
        self._cancel_timer()
        if self._bot_task is not None:
            self._bot_task.cancel()
