"""Players' accounts on one server: signing in by key, the names they own, the seats that
belong to them, their games, and the pushes that find them (docs/security.md, "Accounts").

An account needs no password and no e-mail: the client makes a random secret key for each
server and sends it in ``hello``. The first ``hello`` with a key registers an account under
the name given; later ones sign in to it, whatever name is typed. The server stores only the
key's hash (:func:`~server.store.base.hash_token`), as it does seat tokens.

:class:`Accounts` owns, for one server:

* signing in (:meth:`Accounts.sign_in`) and the names accounts own (:meth:`Accounts.owner`):
  names compare as :func:`server.core.names.name_key` gives them, so ``Anna``, ``ANNA``,
  ``Ａｎｎａ`` and a Cyrillic ``Аnnа`` clash;
* which connections each account has open here, and delivering a push to all of them
  (:meth:`Accounts.deliver`) — on every node of a cluster, through its relay;
* the ``your_turn`` push: after every stored change of a room whose events start a person's
  turn, that seat's account is told (:meth:`Accounts.room_changed`);
* the seats that belong to an account (:meth:`Accounts.seat_of`) and the ``games`` reply
  (:meth:`Accounts.games`): one query of the store a page, which stores where each game
  stands with its room (:class:`~server.store.base.Progress`), so no game is replayed for
  it (but once, a game stored before schema 11).

Accounts and seat claims are stored (schema 4): every server has a store (one in memory when
it is given none).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from server.core.names import name_key
from server.features.inbox import CORRESPONDENCE_SECONDS, Inbox
from server.ops.export import stored_state
from server.store.base import (
    AccountGame,
    AccountRecord,
    GameRecord,
    Progress,
    Refusal,
    hash_token,
)
from shared import events as ev
from shared import messages as m
from shared.codec import encode
from shared.errors import CastellError
from shared.state import GameState
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.features.registrations import Registrations
    from server.runtime.connection import Connection
    from server.runtime.lobby import Lobby
    from server.runtime.runner import RoomRunner
    from server.store.base import Store

log = logging.getLogger("castell.accounts")

#: Delivers a push to an account's connections on the other nodes of a cluster.
Relay = Callable[[str, Any], Awaitable[None]]


def too_many_accounts() -> CastellError:
    """The refusal of a registration past the limits on new accounts."""
    return CastellError("too many new accounts from your address or network this hour: try "
                        "again later, or sign in with the key of an account you have",
                        code="rate_limited")


def new_account_id() -> str:
    """A fresh account id (``a`` and 16 hex digits)."""
    return "a" + secrets.token_hex(8)


class Accounts:
    """The accounts of one server. See the module docstring."""

    def __init__(self, store: Store, lobby: Lobby, *,
                 registrations: Registrations | None = None, relay: Relay | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        """``relay``: sends a push to the account's connections on the other nodes of a
        cluster (None: a lone server, no other nodes)."""
        self.store = store
        self.lobby = lobby
        self.clock = clock
        #: The limits on new accounts (None: none).
        self.registrations = registrations
        #: The signed-in connections of each account on this server.
        self.connections: dict[str, set[Connection]] = {}
        self.relay = relay
        self._tasks: set[asyncio.Task[Any]] = set()
        #: The inboxes of the accounts (server.features.inbox), which deliver through
        #: these accounts' connections; a correspondence game's ``your_turn`` is kept there.
        self.inbox = Inbox(store, self)
        lobby.subscribe(on_change=self.room_changed)

    # -- signing in ------------------------------------------------------------------------

    async def sign_in(self, key: str, name: str,
                      address: str | None = None) -> AccountRecord | None:
        """The account of ``key``; a new one registered under ``name`` when no account has
        that key; None when none has it and another account owns the name. A registration
        from ``address`` past the limits on new accounts is refused (``rate_limited``)."""
        now = self.clock()
        wanted = AccountRecord(new_account_id(), name, name_key(name), hash_token(key), now)
        limits = self.registrations if address is not None else None
        registration = None if limits is None or address is None \
            else limits.for_store(address, now)
        signed = await self.store.sign_in(wanted, registration)
        if signed is Refusal.TOO_MANY:
            raise too_many_accounts()
        return None if isinstance(signed, Refusal) else signed

    async def owner(self, name: str) -> AccountRecord | None:
        """The account that owns ``name`` (as names compare), if any."""
        return await self.store.account_named(name_key(name))

    def attach(self, conn: Connection, account: str) -> None:
        self.detach(conn)
        conn.account = account
        self.connections.setdefault(account, set()).add(conn)

    def detach(self, conn: Connection) -> None:
        account, conn.account = conn.account, None
        if account is None:
            return
        held = self.connections.get(account)
        if held is not None:
            held.discard(conn)
            if not held:
                del self.connections[account]

    # -- pushes ----------------------------------------------------------------------------

    async def deliver(self, account: str, push: Any) -> None:
        """Send ``push`` to every connection of ``account``: here, and through the relay on
        the other nodes of a cluster."""
        self.deliver_here(account, push)
        if self.relay is not None:
            try:
                await self.relay(account, push)
            except Exception as exc:
                log.warning("a push to account %s could not reach the other nodes: %s",
                            account, exc)

    def deliver_here(self, account: str, push: Any) -> None:
        data = encode(push)
        # A connection sitting in the room a your_turn names sees the turn in that room's
        # own view: the push is for the account's other places (docs/protocol.md).
        here = push.room if isinstance(push, m.YourTurnPush) else None
        for conn in list(self.connections.get(account, ())):
            if here is not None and conn.room is not None and conn.room.id == here:
                continue
            conn.send_bytes(data)

    def room_changed(self, runner: RoomRunner) -> None:
        """After a stored change of a room: when it started a person's turn, that seat's
        account hears ``your_turn`` (wherever its connections are)."""
        room = runner.room
        _, events = room.committed
        turns = [e.seat for e in events if isinstance(e, ev.TurnStarted)]
        if not turns or room.state is None or room.state.over:
            return
        seat = room.seats[turns[-1]]
        if seat is None or seat.bot is not None:
            return
        if runner.away is not None and seat.index in runner.away(runner):
            return  # kicked: the turn ends at once, and is not theirs to play
        if seat.index in room.state.resigned:
            return  # resigned (docs/rules.md §10): the turn is played for the seat
        if seat.account is None and room.accounts_read:
            return  # a guest's seat: nobody to tell (and no task made for it)
        task = asyncio.get_running_loop().create_task(self._tell_turn(runner, seat.index))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _tell_turn(self, runner: RoomRunner, index: int) -> None:
        try:
            account = await self.account_of(runner, index)
            if account is not None:
                await self.deliver(account, m.YourTurnPush(room=runner.id,
                                                           name=runner.room.name))
                await self._keep_turn(runner, account)
        except Exception:
            log.exception("room %s: the your_turn push could not be sent", runner.id)

    async def _keep_turn(self, runner: RoomRunner, account: str) -> None:
        """A correspondence game's turn (turns of an hour or more) lands in the inbox too,
        quietly: the ``your_turn`` push told the connections there are."""
        seconds = runner.room.turn_seconds
        if seconds is None or seconds < CORRESPONDENCE_SECONDS:
            return
        await self.inbox.notify(account, "your_turn",
                                f"your turn in {runner.room.name}", room=runner.id,
                                push=False)

    # -- the seats of an account -----------------------------------------------------------

    async def account_of(self, runner: RoomRunner, index: int) -> str | None:
        """The account seat ``index`` of ``runner``'s room belongs to (None: a guest's, a
        bot's, a free seat), read from the store when the room has not learnt it yet."""
        seat = runner.room.seats[index]
        if seat is None or seat.bot is not None:
            return None
        if seat.account is None and not runner.room.accounts_read:
            runner.room.know_accounts(await self.store.seat_accounts(runner.id))
        return seat.account

    async def seat_of(self, runner: RoomRunner, account: str) -> int | None:
        """The seat of ``runner``'s room that belongs to ``account``, if any."""
        room = runner.room
        if not room.accounts_read:
            room.know_accounts(await self.store.seat_accounts(room.id))
        for seat in room.seats:
            if seat is not None and seat.bot is None and seat.account == account:
                return seat.index
        return None

    async def holds_seat(self, room_id: str, account: str) -> bool:
        """Whether a seat of room ``room_id`` belongs to ``account`` (the room need not be in
        memory: its id then finds a private room, as a seat token does)."""
        runner = self.lobby.rooms.get(room_id)
        if runner is not None:
            return await self.seat_of(runner, account) is not None
        return account in (await self.store.seat_accounts(room_id)).values()

    # -- my games --------------------------------------------------------------------------

    async def games(self, account: str, status: str | None, limit: int) -> list[m.GameEntry]:
        """The ``games`` reply's entries for ``account`` (newest first)."""
        finished = None if status is None else status == "finished"
        stored = await self.store.account_games(account, finished=finished, limit=limit)
        return [await self._entry(game) for game in stored]

    async def _entry(self, game: AccountGame) -> m.GameEntry:
        r = game.room
        from server.features.moderation import closed_reason  # (it needs this module's name_key)

        if closed_reason(game.result) is not None:  # the host closed it
            return m.GameEntry(room=r.room, name=r.name, status="closed", seat=game.seat,
                               turn=None, your_turn=False, round=None,
                               players=tuple(n for n in game.names if n is not None),
                               turn_seconds=r.turn_seconds, finished_at=r.finished_at,
                               seats=r.seats)
        runner = self.lobby.rooms.get(r.room)
        if runner is None:
            if r.status != RoomStatus.WAITING and r.round is None:
                game = await self._filled(game)
            return stored_entry(game)
        entry = entry_of(r.room, r.name, r.status, game.seat, game.names, r.turn_seconds,
                         runner.room.state, r.finished_at, r.seats, r.started_at)
        if game.result is not None and entry.winners is None:
            winners, scores = result_scores(game.result)
            entry = m.GameEntry(**{**_fields(entry), "winners": winners, "scores": scores})
        return entry

    async def _filled(self, game: AccountGame) -> AccountGame:
        """A game stored before schema 11 (where it stands unknown): replayed once, and
        where it stands written back to the store, so that it is never replayed again."""
        r = game.room
        record = await self.store.load(r.room)
        state = replay_state(record) if record is not None else None
        if record is None or state is None:
            return game
        progress = Progress.of(state)
        try:
            await self.store.fill_progress(r.room, record.room.version, progress)
        except Exception as exc:
            log.warning("room %s: where its game stands could not be stored: %s", r.room, exc)
        return attrs.evolve(game, room=attrs.evolve(r, round=progress.round,
                                                      turn=progress.turn))


def replay_state(record: GameRecord) -> GameState | None:
    """The game of a stored room, replayed (None before the start, or when it cannot be)."""
    try:
        return stored_state(record)
    except Exception:
        log.exception("room %s: its stored game cannot be replayed", record.room.room)
        return None


def _fields(entry: m.GameEntry) -> dict[str, Any]:
    return attrs.asdict(entry, recurse=False)


def result_scores(result: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A stored result's winners (seats) and totals by seat."""
    scores = sorted(result.get("scores", []), key=lambda s: s.get("seat", 0))
    return (tuple(result.get("winners", ())), tuple(int(s.get("total", 0)) for s in scores))


def stored_entry(game: AccountGame) -> m.GameEntry:
    """One line of ``games`` for a game this node does not serve, from the store alone: the
    room's row says where its game stands (:class:`~server.store.base.Progress`), its
    result how it ended; no game is replayed."""
    r = game.room
    turn = r.turn if r.status == RoomStatus.PLAYING else None
    winners = scores = None
    if game.result is not None:
        winners, scores = result_scores(game.result)
    return m.GameEntry(
        room=r.room, name=r.name, status=str(r.status), seat=game.seat, turn=turn,
        your_turn=turn is not None and turn == game.seat,
        round=None if r.status == RoomStatus.WAITING else r.round,
        players=tuple(n for n in game.names if n is not None),
        turn_seconds=r.turn_seconds, winners=winners, scores=scores,
        finished_at=r.finished_at if r.status == RoomStatus.FINISHED else None,
        seats=r.seats,
        resigned=_resigned(game.result, game.seat),
        started_at=r.started_at if r.status != RoomStatus.WAITING else None,
    )


def _resigned(result: dict[str, Any] | None, seat: int) -> bool | None:
    """True when a finished game's ``result`` says ``seat`` resigned (None: it did not, or the
    game is not over)."""
    if result is None:
        return None
    return True if seat in result.get("resigned", ()) else None


def entry_of(room: str, name: str, status: str, seat: int, names: tuple[str | None, ...],
             turn_seconds: int | None, state: GameState | None,
             finished_at: float | None, seats: int | None = None,
             started_at: float | None = None) -> m.GameEntry:
    """One line of ``games`` (``seats``: the room's, else as many as ``names``)."""
    playing = state is not None and not state.over
    turn = state.turn if playing and state is not None else None
    winners = scores = None
    if state is not None and state.over and state.scores is not None:
        winners = tuple(state.winners or ())
        scores = tuple(s.total for s in sorted(state.scores, key=lambda s: s.seat))
    return m.GameEntry(
        room=room, name=name, status=str(status), seat=seat, turn=turn,
        your_turn=turn is not None and turn == seat,
        round=state.round if state is not None else None,
        players=tuple(n for n in names if n is not None),
        turn_seconds=turn_seconds, winners=winners, scores=scores,
        finished_at=finished_at if status == RoomStatus.FINISHED else None,
        seats=seats if seats is not None else len(names),
        resigned=True if state is not None and seat in state.resigned else None,
        started_at=started_at if state is not None else None,
    )
