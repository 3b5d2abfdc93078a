"""The dispatch: one frame in, exactly one reply out (docs/protocol.md, "Envelope").

:class:`Dispatcher` owns what happens between a frame and the handler of its request type:
decoding (with the frame limits), the connection's rate limit and its address's for the
costly requests (:data:`COSTLY`), the protocol state's word on the request
(:func:`server.edge.states.refusal`), the call of its handler (the one table of them,
:attr:`server.edge.requests.Requests.handlers`), and the error boundary.

**The error boundary** (:func:`error_reply`): a refusal the protocol lists (a rule, a full
room, a malformed field...) goes back to the sender with its code. Anything else — a store
failure, a bug — is logged with its cause and answered ``internal_error`` with a sentence for
a person: never a path, URL, store code or stack trace.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from server.core.limits import Buckets
from server.edge.states import SILENT, refusal
from server.store.errors import StoreError
from shared import messages as m
from shared.codec import decode_request, encode
from shared.errors import ERROR_CODES, CastellError, ProtocolError, RuleError

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.ops.metrics import Metrics
    from server.runtime.connection import Connection
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.server")

#: The handler of one request type: answers the request (one reply) or raises its refusal.
Handler = Callable[["Connection", Any], Awaitable[None]]

#: The requests that cost the server most (a walk over the rooms, a store write, a lookup
#: across the cluster): besides the connection's own rate, each spends a token of its
#: address's bucket, shared by all that address's connections.
COSTLY: tuple[type, ...] = (
    m.ListRooms, m.CreateRoom, m.JoinRoom, m.LeaveRoom,
    # Accounts: my_games and record cost like a lookup across the cluster, rematch a room.
    m.MyGames, m.RecordRequest, m.Rematch,
    # Ratings and quick match (server.features.ratings, server.features.matchmaking).
    m.Leaderboard, m.ProfileRequest, m.QuickMatch,
    # A game's review: a store read, or a computation in the bot workers.
    m.ReviewRequest,
    # Swiss tournaments: each a store read or write (server.features.tournaments).
    m.TournamentCreate, m.TournamentsRequest, m.TournamentRequest, m.TournamentJoin,
    m.TournamentLeave, m.TournamentStart,
)


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


def reply(conn: Connection, msg: Any) -> None:
    """Send ``msg`` (a reply or a push) to ``conn``."""
    conn.send_bytes(encode(msg))


def room_of(conn: Connection) -> RoomRunner:
    """The room of a connection its state says is in one (SEATED or WATCHING)."""
    assert conn.room is not None, "the protocol state says the connection is in a room"
    return conn.room


class Dispatcher:
    """Answers the frames of every connection of one server (see the module docstring)."""

    def __init__(self, config: ServerConfig, handlers: Mapping[type, Handler],
                 metrics: Metrics | None = None) -> None:
        self.config = config
        self.limits = config.frame_limits
        self.handlers = handlers
        self.metrics = metrics
        #: The costly requests of each address, over all its connections.
        self.by_address = Buckets(config.address_rate, config.address_burst)

    def sweep(self, now: float) -> None:
        """Forget the buckets that are full again."""
        self.by_address.sweep(now)

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
            refused = refusal(conn.state, type(msg))
            if refused is SILENT:
                return
            if refused is not None:
                raise refused.error()
            if isinstance(msg, COSTLY) and not self.by_address.take(conn.address,
                                                                     time.monotonic()):
                raise CastellError("slow down: too many requests from your address",
                                   code="rate_limited")
            await self.handlers[type(msg)](conn, msg)
        except Exception as exc:
            reply_ = error_reply(re, exc, conn)
            if self.metrics is not None:
                self.metrics.refused(reply_.code)
            conn.send_bytes(encode(reply_))

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
