"""The connection's protocol state: what each state takes, what it refuses, and how it moves.

A connection is in one :class:`ConnState` (docs/protocol.md, "Refusals and order, request by
request"). This module owns the whole of that, as data:

* :data:`ALLOWED` is an **allow-list**: the request types each state takes. A request type
  no state lists is refused in every state, so a new message type is refused until someone
  says where it is taken.
* :func:`refusal` says what a request not allowed in a state is answered: its code and
  sentence, exactly those a client sees (``hello_first``, ``not_in_room``,
  ``already_in_room``, ``not_a_player``; ``unknown_type`` for a type no state takes). A closing
  connection takes nothing and is answered nothing (:data:`SILENT`).
* :func:`transition` is the one place a state changes: :data:`TRANSITIONS` lists, for each
  state, where each :class:`Move` takes it (hello, a seat or a spectator's place taken, the
  room left, the connection closed). A move not listed for a state is a bug of the server
  (:class:`InvalidTransition`).

Sans-I/O: no connection, no socket, only types and states (:mod:`server.edge.dispatch` asks
:func:`refusal` of each request; :class:`server.runtime.connection.Connection` moves by
:func:`transition`).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from shared import messages as m
from shared.errors import CastellError, ProtocolError


class ConnState(enum.Enum):
    """Where a connection stands in the protocol (docs/protocol.md): what it may ask is
    decided by this alone (:data:`ALLOWED`)."""

    #: Connected; only ``hello`` (and ``identify``) is understood.
    GREETING = "greeting"
    #: Said hello, in no room: may list, create and join rooms.
    LOBBY = "lobby"
    #: Holds a seat of a room.
    SEATED = "seated"
    #: Watches a room as a spectator.
    WATCHING = "watching"
    #: Being closed by the server: nothing more is answered.
    CLOSING = "closing"


#: What may be asked from anywhere once a connection said hello.
_ANYWHERE: frozenset[type] = frozenset({
    m.Identify, m.ListRooms, m.MyGames, m.RecordRequest, m.Leaderboard, m.ProfileRequest,
    # Swiss tournaments: asked from anywhere (a player at one table follows the others).
    m.TournamentsRequest, m.TournamentRequest, m.TournamentCreate, m.TournamentJoin,
    m.TournamentLeave, m.TournamentStart,
    m.Follow, m.Unfollow, m.FriendsRequest, m.PresenceRequest, m.Block, m.Unblock,
    m.InboxRequest,
    m.DeclineChallenge, m.CancelChallenge,
})
#: What a member of a room, player or spectator, may ask of it.
_MEMBER: frozenset[type] = frozenset({
    m.LeaveRoom, m.Chat, m.HistoryRequest, m.Resync,
})
#: A finished game's review: from the lobby, and from a room once its game is over (its
#: handler refuses it in a room whose game is not: no help during a game).
_REVIEW: frozenset[type] = frozenset({m.ReviewRequest})

#: The request types each state takes; any other is refused (:func:`refusal`).
ALLOWED: dict[ConnState, frozenset[type]] = {
    ConnState.GREETING: frozenset({m.Hello, m.Identify}),
    ConnState.LOBBY: _ANYWHERE | _REVIEW | {m.Hello, m.CreateRoom, m.JoinRoom, m.QuickMatch,
                                            m.CancelMatch, m.ChallengeRequest,
                                            m.AcceptChallenge},
    # From the seat of a finished room, join_room takes the seat its rematch offers
    # (server.features.rematch); any other room it refuses there (already_in_room).
    ConnState.SEATED: _ANYWHERE | _MEMBER | _REVIEW | {
        m.JoinRoom, m.AddBot, m.StartGame, m.ActionRequest, m.ResignRequest, m.Rematch},
    ConnState.WATCHING: _ANYWHERE | _MEMBER | _REVIEW,
    ConnState.CLOSING: frozenset(),
}

#: Every request type some state takes.
LISTED: frozenset[type] = frozenset().union(*ALLOWED.values())


class Refusal(NamedTuple):
    """What a request is refused with: its error code and the sentence for a person."""

    code: str
    message: str

    def error(self) -> CastellError:
        """The exception that answers a request so."""
        if self.code == "unknown_type":
            return ProtocolError(self.message, code=self.code, field="type")
        return CastellError(self.message, code=self.code)


#: The refusal of a closing connection: no answer at all.
SILENT = Refusal("", "the connection is closing: nothing more is answered")

_HELLO_FIRST = Refusal("hello_first", "say hello first")
_NOT_IN_ROOM = Refusal("not_in_room", "you are not in a room")
_NOT_A_PLAYER = Refusal("not_a_player", "spectators cannot do that: only players can")
#: What a member of a room (a player or a spectator) is refused, by request type.
_IN_ROOM: dict[type, Refusal] = {
    m.Hello: Refusal("already_in_room", "you cannot change your name while in a room"),
    m.CreateRoom: Refusal("already_in_room", "leave your room before creating another"),
    m.JoinRoom: Refusal("already_in_room", "you are already in a room: leave it first"),
    m.QuickMatch: Refusal("already_in_room", "leave your room before asking for a quick match"),
    m.CancelMatch: Refusal("already_in_room",
                           "leave your room before asking for a quick match"),
    m.ChallengeRequest: Refusal("already_in_room", "leave your room before challenging"),
    m.AcceptChallenge: Refusal("already_in_room",
                               "leave your room before accepting a challenge"),
}


def refusal(state: ConnState, kind: type) -> Refusal | None:
    """What a request of type ``kind`` is refused with in ``state``; None when ``state``
    takes it (:data:`ALLOWED`). :data:`SILENT` for a closing connection: it is answered
    nothing."""
    if kind in ALLOWED[state]:
        return None
    if state is ConnState.CLOSING:
        return SILENT
    if kind not in LISTED:  # a type no state takes: refused everywhere, as no request at all
        name = getattr(kind, "TYPE", kind.__name__)
        return Refusal("unknown_type", f"this server does not take {name!r} requests")
    if state is ConnState.GREETING:
        return _HELLO_FIRST
    if state is ConnState.LOBBY:
        return _NOT_IN_ROOM  # what the lobby does not take is asked of a room
    # In a room: what only the lobby takes, or (a spectator) what only a player may do.
    return _IN_ROOM.get(kind, _NOT_A_PLAYER)


class Move(enum.Enum):
    """What changes a connection's state (:func:`transition`)."""

    #: Said hello (again: a new name, in the lobby).
    HELLO = "hello"
    #: Took a seat of a room (created it, joined it, took a seat back or a rematch's).
    SIT = "sit"
    #: Took a spectator's place in a room.
    WATCH = "watch"
    #: Is in no room any more: left it, was let go of, or the room went elsewhere.
    LEAVE = "leave"
    #: The server closes (or cuts) the connection.
    CLOSE = "close"


_IN_A_ROOM: dict[Move, ConnState] = {
    Move.SIT: ConnState.SEATED,
    Move.WATCH: ConnState.WATCHING,
    Move.LEAVE: ConnState.LOBBY,
    Move.CLOSE: ConnState.CLOSING,
}

#: Where each move takes each state; a move not listed for a state is a bug (it is refused
#: before: a connection that did not say hello never takes a seat, a member of a room never
#: says hello). Closing is for good: every move leaves a closing connection closing, a seat
#: taken while it closed too.
TRANSITIONS: dict[ConnState, dict[Move, ConnState]] = {
    ConnState.GREETING: {
        Move.HELLO: ConnState.LOBBY,
        Move.LEAVE: ConnState.GREETING,
        Move.CLOSE: ConnState.CLOSING,
    },
    ConnState.LOBBY: {Move.HELLO: ConnState.LOBBY, **_IN_A_ROOM},
    ConnState.SEATED: _IN_A_ROOM,
    ConnState.WATCHING: _IN_A_ROOM,
    ConnState.CLOSING: {move: ConnState.CLOSING for move in Move},
}


class InvalidTransition(RuntimeError):
    """A move the state does not have: the server asked for something it refuses."""


def transition(state: ConnState, move: Move) -> ConnState:
    """The state ``move`` takes a connection in ``state`` to (:data:`TRANSITIONS`)."""
    try:
        return TRANSITIONS[state][move]
    except KeyError:
        raise InvalidTransition(f"a {state.value} connection cannot {move.value}") from None
