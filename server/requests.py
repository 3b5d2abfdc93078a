"""Request handling: one frame in, exactly one reply out (docs/protocol.md, "Envelope").

:class:`Requests` owns what happens between a frame and a room: decoding (with the frame
limits), the connection's rate limit, the connection's protocol state (:class:`ConnState`,
checked here and only here), the handler of each request type, and the error boundary.

**The error boundary** (:func:`error_reply`): a refusal the protocol lists (a rule, a full
room, a malformed field...) goes back to the sender with its code. Anything else — a store
failure, a bug — is logged with its cause and answered ``internal_error`` with a sentence for
a person: never a path, URL, store code or stack trace.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from server.accounts import Accounts
from server.connection import Connection, ConnState
from server.export import record_file, room_record_file
from server.history import Entry
from server.limits import Buckets, network_of, recent
from server.matchmaking import Matchmaker
from server.moderation import refuse_closed
from server.names import clean_name
from server.ratings import Ratings, check_may_sit
from server.registrations import Registrations
from server.rematch import Rematches
from server.room import RESERVED_NAMES, BadToken
from server.runner import RoomRunner
from server.store.errors import StoreError
from shared import messages as m
from shared.codec import MAX_FRAME, decode_request, encode
from shared.errors import (
    ERROR_CODES,
    CastellError,
    ProtocolError,
    RoomMoved,
    RoomNotFound,
    RuleError,
)
from shared.messages import PROTOCOL_VERSION
from shared.view import RoomStatus

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from server.cluster import ClusterNode
    from server.config import ServerConfig
    from server.lobby import Lobby
    from server.metrics import Metrics
    from server.moderation import Moderation

log = logging.getLogger("castell.server")

SERVER_VERSION = "castell-server 0.1.0"

#: The requests each protocol state refuses, with the refusal's code and sentence; a request
#: not named for its state is dispatched. (A closing connection is answered nothing.)
_REFUSED: dict[ConnState, dict[type, tuple[str, str]]] = {
    ConnState.GREETING: {},  # everything but hello: see dispatch()
    ConnState.LOBBY: {
        kind: ("not_in_room", "you are not in a room")
        for kind in (m.LeaveRoom, m.AddBot, m.StartGame, m.Chat, m.ActionRequest,
                     m.HistoryRequest, m.Resync)
    },
    ConnState.SEATED: {
        m.Hello: ("already_in_room", "you cannot change your name while in a room"),
        m.CreateRoom: ("already_in_room", "leave your room before creating another"),
        m.JoinRoom: ("already_in_room", "you are already in a room: leave it first"),
    },
}
#: The requests that cost the server most (a walk over the rooms, a store write, a lookup
#: across the cluster): besides the connection's own rate, each spends a token of its
#: address's bucket, shared by all that address's connections.
_COSTLY: tuple[type, ...] = (m.ListRooms, m.CreateRoom, m.JoinRoom, m.LeaveRoom)

_REFUSED[ConnState.WATCHING] = {
    **_REFUSED[ConnState.SEATED],
    **{kind: ("not_a_player", "spectators cannot do that: only players can")
       for kind in (m.AddBot, m.StartGame, m.ActionRequest)},
}
# Accounts: a rematch is asked from the seat of a finished game; my_games and record from
# anywhere, and cost like a lookup across the cluster.
_REFUSED[ConnState.LOBBY][m.Rematch] = ("not_in_room", "you are not in a room")
_REFUSED[ConnState.WATCHING][m.Rematch] = ("not_a_player",
                                           "spectators cannot do that: only players can")
# From the seat of a finished room, join_room takes the seat its rematch offers
# (server.rematch); any other room it refuses there (already_in_room).
del _REFUSED[ConnState.SEATED][m.JoinRoom]
_COSTLY += (m.MyGames, m.RecordRequest, m.Rematch)
# Ratings and quick match (server.ratings, server.matchmaking): asked from the lobby.
for _kind in (m.QuickMatch, m.CancelMatch):
    _REFUSED[ConnState.SEATED][_kind] = ("already_in_room",
                                         "leave your room before asking for a quick match")
    _REFUSED[ConnState.WATCHING][_kind] = _REFUSED[ConnState.SEATED][_kind]
_COSTLY += (m.Leaderboard, m.ProfileRequest, m.QuickMatch)


def error_reply(re: int | None, exc: BaseException, conn: Connection) -> m.Error:
    """The ``error`` that answers request ``re`` which failed with ``exc`` (see the module
    docstring); what is not the protocol's is logged here, with its cause."""
    if isinstance(exc, CastellError) and not isinstance(exc, StoreError):
        code = exc.wire_code if isinstance(exc, RuleError) else exc.code
        if code in ERROR_CODES:
            return m.Error.from_exception(re, exc)
    log.error("%r: request %s failed: %s", conn, re, exc or type(exc).__name__, exc_info=exc)
    return m.Error(re=re, code="internal_error",
                   message="the server failed to handle that message", rule=None)


class Requests:
    """Answers the requests of every connection of one server."""

    def __init__(self, config: ServerConfig, lobby: Lobby) -> None:
        self.config = config
        self.lobby = lobby
        self.limits = config.frame_limits
        self.cluster: ClusterNode | None = None
        #: Recent failed seat-token attempts, by address (see _check_resume_rate).
        self.failed_resumes: dict[str, list[float]] = {}
        #: Rooms being created (stored, not yet in the lobby), by address.
        self.creating: dict[str, int] = {}
        #: Recent joins by a code no room has, by address and by network (_check_code_rate).
        self.failed_codes: dict[str, list[float]] = {}
        self.failed_codes_by_network: dict[str, list[float]] = {}
        #: The costly requests of each address, over all its connections.
        self.by_address = Buckets(config.address_rate, config.address_burst)
        #: The chat lines of each room, all its members together.
        self.chat_by_room = Buckets(config.room_chat_rate, 2 * config.room_chat_rate)
        #: Players' accounts (server.accounts); recent hellos with a wrong key, by address.
        self.accounts = Accounts(lobby.store, lobby, registrations=Registrations(
            config.accounts_per_address, config.accounts_per_network,
            config.account_release_days))
        self.failed_keys: dict[str, list[float]] = {}
        #: The host's tools (server.metrics, server.moderation), set by the server.
        self.metrics: Metrics | None = None
        self.moderation: Moderation | None = None
        #: Set while the server drains (admin drain): no new rooms.
        self.draining = False
        #: Who this server is (server.identity), set by the server once its store is open.
        self.server_id: str | None = None
        self._handlers: dict[type, Callable[[Connection, Any], Awaitable[None]]] = {
            m.Hello: self.on_hello,
            m.ListRooms: self.on_list_rooms,
            m.CreateRoom: self.on_create_room,
            m.JoinRoom: self.on_join_room,
            m.LeaveRoom: self.on_leave_room,
            m.AddBot: self.on_add_bot,
            m.StartGame: self.on_start_game,
            m.Chat: self.on_chat,
            m.ActionRequest: self.on_action,
            m.HistoryRequest: self.on_history,
            m.MyGames: self.on_my_games,
            m.Rematch: self.on_rematch,
            m.RecordRequest: self.on_record,
            m.Resync: self.on_resync,
            m.Identify: self.on_identify,
        }
        #: Ratings (server.ratings) and the quick-match queue (server.matchmaking).
        self.ratings = Ratings(lobby.store, min_games=config.leaderboard_min_games)
        self.matchmaker = Matchmaker(config, lobby, self.ratings)
        self._handlers.update({
            m.Leaderboard: self.on_leaderboard,
            m.ProfileRequest: self.on_profile,
            m.QuickMatch: self.on_quick_match,
            m.CancelMatch: self.on_cancel_match,
        })
        #: Finished rooms' rematches (server.rematch).
        self.rematches = Rematches(self)

    def use_cluster(self, node: ClusterNode) -> None:
        """Rooms are found, created and listed across the cluster from now on."""
        self.cluster = node
        self.matchmaker.cluster = node

    def sweep(self, now: float) -> None:
        """Forget failed attempts older than the window, and buckets that are full again."""
        for failures in (self.failed_resumes, self.failed_codes, self.failed_codes_by_network,
                         self.failed_keys):
            for key, stamps in list(failures.items()):
                kept = recent(stamps, now, self.config.resume_window)
                if kept:
                    failures[key] = kept
                else:
                    del failures[key]
        self.by_address.sweep(now)
        self.chat_by_room.sweep(now)

    # -- one frame -------------------------------------------------------------------------

    async def handle(self, conn: Connection, data: bytes | str) -> None:
        """Answer one frame with exactly one reply.

        Every frame costs a token of the bucket, a malformed one too: garbage is no cheaper
        to send than a valid message, so it is no way around the rate limit.
        """
        re: int | None = None
        try:
            problem: ProtocolError | None = None
            try:
                if isinstance(data, str):
                    raise ProtocolError("text frames are not understood: send binary "
                                        "MessagePack frames")
                msg = decode_request(data, limits=self.limits)
            except ProtocolError as exc:
                problem, re = exc, exc.re
            else:
                re = msg.id
            self._spend(conn)
            if problem is not None:
                raise problem
            if conn.state is ConnState.CLOSING:
                return
            self.dispatch(conn.state, msg)
            if isinstance(msg, _COSTLY) and not self.by_address.take(conn.address,
                                                                      time.monotonic()):
                raise CastellError("slow down: too many requests from your address",
                                   code="rate_limited")
            await self._handlers[type(msg)](conn, msg)
        except Exception as exc:
            reply = error_reply(re, exc, conn)
            if self.metrics is not None:
                self.metrics.refused(reply.code)
            conn.send_bytes(encode(reply))

    @staticmethod
    def dispatch(state: ConnState, msg: object) -> None:
        """Refuse a request the connection's protocol state does not allow."""
        if state is ConnState.GREETING and not isinstance(msg, m.Hello | m.Identify):
            raise CastellError("say hello first", code="hello_first")
        refusal = _REFUSED.get(state, {}).get(type(msg))
        if refusal is not None:
            code, message = refusal
            raise CastellError(message, code=code)

    def charge(self, conn: Connection, *, control: bool = False) -> bool:
        """Take one message from the connection's bucket; False when it is empty, which
        is a strike: too many strikes close the connection (1008). A ``control`` frame (a
        ping, a pong) is charged so too, before it is answered (False: no pong); too many
        strikes of those cut the connection off at once (no closing handshake)."""
        if conn.bucket.take(time.monotonic()):
            return True
        conn.strikes += 1
        if conn.strikes > self.config.max_strikes and not conn.closing:
            if control:
                conn.cut("too many messages")
            else:
                log.warning("%r: closed for sending too many messages", conn)
                conn.close(1008, "too many messages")
        return False

    def _spend(self, conn: Connection) -> None:
        """Take one message from the connection's bucket, or refuse it (``rate_limited``)."""
        if not self.charge(conn):
            raise CastellError("slow down: too many messages", code="rate_limited")

    def reply(self, conn: Connection, msg: Any) -> None:
        conn.send_bytes(encode(msg))

    @staticmethod
    def _room_of(conn: Connection) -> RoomRunner:
        assert conn.room is not None, "the protocol state says the connection is in a room"
        return conn.room

    # -- the requests ----------------------------------------------------------------------

    async def on_hello(self, conn: Connection, msg: m.Hello) -> None:
        name = clean_name(msg.name)  # trimmed; no invisible characters, no mixed scripts
        if self.moderation is not None:
            self.moderation.check_name(name)
        if msg.key is not None:
            self._check_key_rate(conn)
            account = await self.accounts.sign_in(msg.key, name, conn.address)
            if account is None:
                self._key_failed(conn)
                raise CastellError(f"{name!r} is the name of an account of this server: "
                                   "choose another name (or sign in with that account's "
                                   "key)", code="name_taken")
            if self.moderation is not None:
                self.moderation.check_name(account.name)
            self.accounts.attach(conn, account.account)
            name = account.name
        else:
            if await self.accounts.owner(name) is not None:
                raise CastellError(f"{name!r} is the name of an account of this server: "
                                   "choose another name", code="name_taken")
            self.accounts.detach(conn)
        conn.name = name
        conn.patches = msg.patches
        conn.state = ConnState.LOBBY
        log.info("%s is %r%s", conn.id, name, " (signed in)" if conn.account else "")
        self.reply(conn, m.Welcome(re=msg.id, player=conn.id, server=SERVER_VERSION,
                                   protocol=PROTOCOL_VERSION, account=conn.account is not None,
                                   name=name, server_id=self.server_id))

    async def on_identify(self, conn: Connection, msg: m.Identify) -> None:
        if self.server_id is None:  # not started: never so for a connection that is served
            raise CastellError("this server is starting: try again", code="internal_error")
        self.reply(conn, m.Identity(re=msg.id, server_id=self.server_id))

    def _check_key_rate(self, conn: Connection) -> None:
        """Refuse a hello with a key once this connection, or its address, has sent too many
        wrong keys lately (the limits of seat tokens): keys cannot be guessed either."""
        cfg = self.config
        now = time.monotonic()
        conn.failed_keys = recent(conn.failed_keys, now, cfg.resume_window)
        by_address = recent(self.failed_keys.get(conn.address, []), now, cfg.resume_window)
        self.failed_keys[conn.address] = by_address
        if (len(conn.failed_keys) >= cfg.resume_attempts
                or len(by_address) >= cfg.resume_attempts_per_address):
            raise CastellError("too many wrong keys: wait a minute", code="rate_limited")

    def _key_failed(self, conn: Connection) -> None:
        now = time.monotonic()
        conn.failed_keys.append(now)
        self.failed_keys.setdefault(conn.address, []).append(now)

    async def on_list_rooms(self, conn: Connection, msg: m.ListRooms) -> None:
        if self.cluster is not None:
            rooms, nodes, more = await self.cluster.list_page(msg.after,
                                                              self.config.max_listed)
            self.reply(conn, m.Rooms(re=msg.id, rooms=rooms, nodes=nodes, more=more))
            return
        # A reply must fit in a frame: a page of at most max_listed rooms, in list order.
        public, more = self.lobby.list_page(msg.after, self.config.max_listed)
        self.reply(conn, m.Rooms(re=msg.id, rooms=tuple(r.summary() for r in public),
                                 more=more))

    async def on_create_room(self, conn: Connection, msg: m.CreateRoom) -> None:
        turn_seconds = msg.turn_seconds
        if msg.rated:
            self._check_rated(conn)
            turn_seconds = turn_seconds or self.config.rated_turn_seconds
        runner = await self.new_room(conn, msg.name, msg.seats, msg.variant, turn_seconds,
                                     msg.private, rated=msg.rated)
        await runner.join(conn, conn.name or "?", msg.id, account=conn.account)
        conn.enter(runner, seated=True)

    async def new_room(self, conn: Connection, name: str, seats: int, variant: str,
                       turn_seconds: int | None, private: bool, *, rated: bool = False,
                       offers: dict[int, str] | None = None) -> RoomRunner:
        """A room ``conn`` creates (``create_room``, ``rematch``), within the limits: none
        while the server drains, at most so many per connection and per address."""
        if self.draining:
            raise CastellError("this server is about to stop for maintenance and makes no new "
                               "rooms: create yours on another server, or in a few minutes",
                               code="draining")
        if conn.rooms_created >= self.config.rooms_per_connection:
            raise CastellError("you have created too many rooms", code="rate_limited")
        # Rooms being created count as well: the check and the room's existence are apart
        # by a store write, which many connections from one address could slip between.
        address = conn.address
        if self.lobby.rooms_by_address()[address] \
                + self.creating.get(address, 0) >= self.config.rooms_per_address:
            raise CastellError("your address has too many rooms open", code="rate_limited")
        if (conn.name or "").casefold() in RESERVED_NAMES:  # refused before a room is made
            raise CastellError(f"{conn.name!r} is the name the server's own notices go under: "
                               "connect under another name to create a room", code="name_taken")
        create = self.cluster.create if self.cluster is not None else self.lobby.create
        self.creating[address] = self.creating.get(address, 0) + 1
        try:
            runner = await create(name, seats, variant, turn_seconds, private, rated=rated,
                                  offers=offers)
            runner.room.host_address = address
        finally:
            if self.creating[address] > 1:
                self.creating[address] -= 1
            else:
                del self.creating[address]
        conn.rooms_created += 1
        return runner

    def _check_rated(self, conn: Connection) -> None:
        """A rated room needs a store (for the ratings) and a creator with an account."""
        self.ratings.need_store()
        if conn.account is None:
            raise CastellError("a rated room seats signed-in accounts only: connect with "
                               "your account (not as a guest)", code="not_signed_in")

    async def on_join_room(self, conn: Connection, msg: m.JoinRoom) -> None:
        if conn.state is ConnState.SEATED:
            await self.rematches.join_from_finished(conn, msg)
            return
        if msg.token is not None:
            self._check_resume_rate(conn)
        else:
            self._check_code_rate(conn)
        # A seat of the room belongs to the account: its id finds it, as a token's would.
        mine = (msg.token is None and conn.account is not None
                and await self.accounts.holds_seat(msg.room, conn.account))
        try:
            try:
                runner = await self.find_room(msg.room, by_id_private=msg.token is not None
                                              or mine)
            except RoomNotFound:
                # A private rematch is found by its id by whoever it offers a seat to.
                if msg.token is not None or not await self.rematches.offered(msg.room, conn):
                    raise
                runner = await self.find_room(msg.room, by_id_private=True)
        except RoomMoved:
            raise
        except CastellError as exc:
            if msg.token is not None:
                self._resume_failed(conn)  # probing for rooms with tokens costs the same
            elif isinstance(exc, RoomNotFound):
                self._code_failed(conn)
            raise
        if self.moderation is not None:
            self.moderation.check_join(conn, runner, msg.token)
        if msg.token is not None:
            try:
                seat = await runner.resume(conn, msg.token, msg.id)
            except BadToken:
                self._resume_failed(conn)
                raise
            log.info("%s took back seat %s of room %s", conn.id, seat, runner.id)
            conn.enter(runner, seated=True)
        elif msg.as_ == "spectator":
            await runner.watch(conn, msg.id, max_spectators=self.config.max_spectators)
            conn.enter(runner, seated=False)
        else:
            index = None if conn.account is None \
                else await self.accounts.seat_of(runner, conn.account)
            if index is not None:  # the account's own seat: taken back without the token
                await runner.reclaim(conn, index, msg.id)
                log.info("%s took back seat %s of room %s by its account", conn.id, index,
                         runner.id)
            else:
                if runner.room.rated and not self.config.rated_one_network:
                    check_may_sit(conn.address, [s.member.address for s in runner.room.seats
                                                 if s is not None and s.member is not None])
                await runner.join(conn, conn.name or "?", msg.id, account=conn.account)
            conn.enter(runner, seated=True)

    async def find_room(self, key: str, *, by_id_private: bool) -> RoomRunner:
        """The room ``key`` names: in this server's lobby, or else on a cluster node
        (:class:`~shared.errors.RoomMoved` says which) or taken over by this one."""
        if self.cluster is None:
            return await self.lobby.find_or_load(key, by_id_private=by_id_private)
        try:
            return self.lobby.find(key, by_id_private=by_id_private)
        except RoomNotFound:
            pass
        return await self.cluster.locate(key, by_id_private=by_id_private)

    def _check_resume_rate(self, conn: Connection) -> None:
        """Refuse a seat-token attempt once this connection, or its address, has failed
        too often lately: tokens cannot be guessed at any useful speed."""
        cfg = self.config
        now = time.monotonic()
        conn.failed_resumes = recent(conn.failed_resumes, now, cfg.resume_window)
        by_address = recent(self.failed_resumes.get(conn.address, []), now, cfg.resume_window)
        self.failed_resumes[conn.address] = by_address
        if (len(conn.failed_resumes) >= cfg.resume_attempts
                or len(by_address) >= cfg.resume_attempts_per_address):
            raise CastellError("too many wrong seat tokens: wait a minute",
                               code="rate_limited")

    def _resume_failed(self, conn: Connection) -> None:
        now = time.monotonic()
        conn.failed_resumes.append(now)
        self.failed_resumes.setdefault(conn.address, []).append(now)

    def _check_code_rate(self, conn: Connection) -> None:
        """Refuse a join by id or code once this address, or its network, has named rooms
        that do not exist too often lately: private codes cannot be guessed by
        reconnecting either."""
        cfg = self.config
        now = time.monotonic()
        by_address = recent(self.failed_codes.get(conn.address, []), now, cfg.resume_window)
        network = network_of(conn.address)
        by_network = recent(self.failed_codes_by_network.get(network, []), now,
                            cfg.resume_window)
        self.failed_codes[conn.address] = by_address
        self.failed_codes_by_network[network] = by_network
        if (len(by_address) >= cfg.code_attempts_per_address
                or len(by_network) >= cfg.code_attempts_per_network):
            raise CastellError("too many rooms not found: wait a minute", code="rate_limited")

    def _code_failed(self, conn: Connection) -> None:
        """One more join by a code no room has; said in the log (never the codes tried)
        when it takes the address or its network to its limit."""
        cfg = self.config
        now = time.monotonic()
        network = network_of(conn.address)
        by_address = self.failed_codes.setdefault(conn.address, [])
        by_network = self.failed_codes_by_network.setdefault(network, [])
        by_address.append(now)
        by_network.append(now)
        if (len(by_address) == cfg.code_attempts_per_address
                or len(by_network) == cfg.code_attempts_per_network):
            log.warning("%r: room codes being guessed: %d unknown from %s, %d from network "
                        "%s within %.0f s; refusing joins from there for a while", conn,
                        len(by_address), conn.address, len(by_network), network,
                        cfg.resume_window)

    async def on_leave_room(self, conn: Connection, msg: m.LeaveRoom) -> None:
        runner = self._room_of(conn)
        conn.leave_room()
        await runner.leave(conn, dropped=False)
        self.reply(conn, m.Ok(re=msg.id))

    async def on_add_bot(self, conn: Connection, msg: m.AddBot) -> None:
        await self._room_of(conn).add_bot(conn, msg.level, msg.id)

    async def on_start_game(self, conn: Connection, msg: m.StartGame) -> None:
        await self._room_of(conn).start(conn, msg.id)

    async def on_chat(self, conn: Connection, msg: m.Chat) -> None:
        runner = self._room_of(conn)
        if self.moderation is not None:
            self.moderation.check_chat(conn, runner)
        if not self.chat_by_room.take(runner.id, time.monotonic()):
            raise CastellError("slow down: this room is chatting too fast",
                               code="rate_limited")
        await runner.chat(conn, conn.name or "?", msg.text, msg.id)

    async def on_action(self, conn: Connection, msg: m.ActionRequest) -> None:
        await self._room_of(conn).act(conn, msg.action, msg.id)

    async def on_history(self, conn: Connection, msg: m.HistoryRequest) -> None:
        entries = await self._room_of(conn).history(msg.before, msg.limit)
        self.reply(conn, history_reply(msg.id, entries))

    async def on_my_games(self, conn: Connection, msg: m.MyGames) -> None:
        if conn.account is None:
            raise CastellError("my_games needs an account: say hello with a key",
                               code="not_signed_in")
        entries = await self.accounts.games(conn.account, msg.status, msg.limit)
        self.reply(conn, m.Games(re=msg.id, entries=entries))

    async def on_rematch(self, conn: Connection, msg: m.Rematch) -> None:
        await self.rematches.rematch(conn, msg)

    async def on_record(self, conn: Connection, msg: m.RecordRequest) -> None:
        """A finished game's record: from the store, or from memory on a server without
        one. A private room's only for an account that played it."""
        runner = self.lobby.rooms.get(msg.room)
        store = self.lobby.store
        record = await store.load(msg.room) if store is not None else None
        private = record.room.private if record is not None \
            else runner is not None and runner.room.private
        if private and not (conn.account is not None
                            and await self.accounts.holds_seat(msg.room, conn.account)):
            if record is not None:
                refuse_closed(record)  # said, as join_room says it to a seat token
            record = None
            runner = None
        if record is not None:
            if record.room.status != RoomStatus.FINISHED:
                raise CastellError("that game is not over yet", code="not_finished")
            game = record_file(record)
        elif runner is not None and store is None:
            if runner.room.status != RoomStatus.FINISHED:
                raise CastellError("that game is not over yet", code="not_finished")
            game = room_record_file(runner.room)
        else:
            raise RoomNotFound(f"there is no finished game {msg.room!r} on this server")
        self.reply(conn, m.Record(re=msg.id, game=game.to_data()))

    async def on_resync(self, conn: Connection, msg: m.Resync) -> None:
        await self._room_of(conn).resync(conn, msg.id)


    # -- ratings and quick match (server.ratings, server.matchmaking) -------------------------

    async def on_leaderboard(self, conn: Connection, msg: m.Leaderboard) -> None:
        if msg.around_me and conn.account is None:
            raise CastellError("around_me needs an account: say hello with a key",
                               code="not_signed_in")
        entries = await self.ratings.leaderboard(msg.limit,
                                                 conn.account if msg.around_me else None)
        self.reply(conn, m.LeaderboardReply(re=msg.id, entries=entries))

    async def on_profile(self, conn: Connection, msg: m.ProfileRequest) -> None:
        self.ratings.need_store()
        account = await self.accounts.owner(msg.name)
        if account is None:
            raise CastellError(f"no account of this server is called {msg.name!r}",
                               code="not_found")
        self.reply(conn, await self.ratings.profile(msg.id, account.account, account.name,
                                                    last=10))

    async def on_quick_match(self, conn: Connection, msg: m.QuickMatch) -> None:
        if msg.rated:
            self.ratings.need_store()
        await self.matchmaker.enqueue(conn, msg)
        self.reply(conn, m.Ok(re=msg.id))

    async def on_cancel_match(self, conn: Connection, msg: m.CancelMatch) -> None:
        await self.matchmaker.cancel(conn)
        self.reply(conn, m.Ok(re=msg.id))

def history_reply(re: int, entries: list[Entry], *, frame: int = MAX_FRAME) -> m.History:
    """The ``history`` reply holding the latest of ``entries`` that fit in one frame (all
    of them, unless they would not): the client asks for the ones before with ``before``."""
    keep = len(entries)
    while True:
        reply = m.History(re=re, entries=[m.HistoryEntry(e.version, tuple(e.events))
                                          for e in entries[len(entries) - keep:]])
        size = len(encode(reply))
        if size <= frame or keep == 0:
            return reply
        keep = min(keep - 1, keep * frame // size)
