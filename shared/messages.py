"""Every message of ``docs/protocol.md`` as a frozen attrs class, and its wire form.

Owns the message schema: one class per message with a ``TYPE`` (the wire ``type``) and fields
named, typed, defaulted and limited exactly as the protocol says; the registries
:data:`REQUEST_TYPES` (client → server) and :data:`SERVER_TYPES` (server → client); and the
two conversions between a message and its wire map, :func:`to_wire` and :func:`from_wire`.
Every check on incoming data is the strict converter's (:mod:`shared.wire`), so an invalid
message never becomes an object: :func:`from_wire` raises one
:class:`~shared.errors.ProtocolError` instead.

Requests carry an ``id``; the server's replies carry ``re``, that id; pushes carry neither.
Both directions have a ``chat`` message: :class:`Chat` (a request) and :class:`ChatPush`; a
``history`` message: :class:`HistoryRequest` and its reply :class:`History`; and a ``record``
message: :class:`RecordRequest` and its reply :class:`Record`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Final, Literal

import attrs

from shared.actions import (
    ACTION_TYPES,
    EFFECT_FIELD,
    RECORDED_TYPES,
    Action,
    Recorded,
    Special,
    Train,
    action_fields,
)
from shared.errors import CastellError, ProtocolError, RoomMoved, RuleError
from shared.view import RoomStatus, RoomStatusName
from shared.wire import (
    ID_LIMIT,
    OMIT_NONE,
    AccountKey,
    ActionIndex,
    ActionKind,
    BotLevel,
    ChatText,
    GameFilter,
    GamesLimit,
    HistoryLimit,
    Invalid,
    JoinAs,
    MessageId,
    NodeUrl,
    NodeUrls,
    PlayerName,
    RecordedKind,
    RoomId,
    RoomName,
    Seat,
    SeatCount,
    Seats,
    Token,
    TurnSeconds,
    VariantName,
    Version,
    between,
    converter,
    field_error,
    length,
    one_of,
    text,
)

#: The protocol version this module implements (``welcome.protocol``).
PROTOCOL_VERSION: Final = 1
#: The WebSocket subprotocol both sides must agree on.
SUBPROTOCOL: Final = "castell.v1"

# Client → server ------------------------------------------------------------------------------


@attrs.frozen
class Hello:
    """Introduce this connection by a player name; must come first. Reply: :class:`Welcome`.

    ``key`` (an addition to version 1, left out when None) signs in to an account: the first
    ``hello`` with a new key registers one under ``name``, later ones sign in to it.
    """

    TYPE: ClassVar[str] = "hello"
    id: MessageId
    name: PlayerName
    key: AccountKey | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: Whether this connection takes view patches (an addition: :class:`Patch`); left off
    #: the wire when false, so a server that does not know it is not asked.
    patches: bool = attrs.field(default=False, metadata={OMIT_NONE: True})
    #: Whether its patches come packed (an addition, with ``patches``: :class:`PackedPatch`);
    #: left off the wire when false.
    packed: bool = attrs.field(default=False, metadata={OMIT_NONE: True})


@attrs.frozen
class Identify:
    """Ask which server this is (an addition to version 1), before ``hello`` or after:
    a client picks the account key it signs in with by the server's identity, whatever
    address reached it. Reply: :class:`Identity`."""

    TYPE: ClassVar[str] = "identify"
    id: MessageId


@attrs.frozen
class ListRooms:
    """Ask for the public rooms. Reply: :class:`Rooms`. ``after`` (an addition) asks for the
    page that follows the room of that id in the list."""

    TYPE: ClassVar[str] = "list_rooms"
    id: MessageId
    after: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class CreateRoom:
    """Open a room and take its seat 0. Reply: :class:`Joined`."""

    TYPE: ClassVar[str] = "create_room"
    id: MessageId
    name: RoomName
    seats: Seats
    variant: VariantName = "normal"
    turn_seconds: TurnSeconds | None = None
    private: bool = False
    #: A rated game (an addition, left out when false): only signed-in accounts sit, and
    #: its end changes their ratings.
    rated: bool = attrs.field(default=False, metadata={OMIT_NONE: True})


@attrs.frozen
class JoinRoom:
    """Join a room (by id or private code) as a player or a spectator, or take back a seat
    with its ``token`` (``as`` is then ignored). Reply: :class:`Joined`."""

    TYPE: ClassVar[str] = "join_room"
    id: MessageId
    room: RoomId
    as_: JoinAs = "player"  # `as` on the wire
    token: Token | None = None


@attrs.frozen
class LeaveRoom:
    """Leave the room (before the start this frees the seat). Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "leave_room"
    id: MessageId


@attrs.frozen
class AddBot:
    """Seat a bot in the lowest free seat. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "add_bot"
    id: MessageId
    level: BotLevel = "normal"


@attrs.frozen
class StartGame:
    """Start the game (the creator, once every seat is taken). Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "start_game"
    id: MessageId


@attrs.frozen
class Chat:
    """Say something to the room. Reply: :class:`Ok`; everyone gets a :class:`ChatPush`."""

    TYPE: ClassVar[str] = "chat"
    id: MessageId
    text: ChatText


@attrs.frozen
class ActionRequest:
    """Play an action. On the wire the action's ``kind`` and fields sit flat beside ``type``
    and ``id``. Reply: :class:`Ok` with the room's new ``version``."""

    TYPE: ClassVar[str] = "action"
    id: MessageId
    action: Action

    # Its own wire form, which the converter finds here (shared.wire, ``_has_own_form``).
    @classmethod
    def structure_wire(cls, value: Any) -> ActionRequest:
        return _structure_action_request(value, cls)

    def unstructure_wire(self) -> dict[str, Any]:
        return _unstructure_action_request(self)


@attrs.frozen
class ResignRequest:
    """Concede the game from this seat (an addition; docs/rules.md §10, "Resigning"). Reply:
    :class:`Ok` with the room's new ``version``, as for an action."""

    TYPE: ClassVar[str] = "resign"
    id: MessageId


@attrs.frozen
class HistoryRequest:
    """Ask for the room's history: the entries with versions below ``before`` (the latest
    ones when None), at most ``limit``. Reply: :class:`History`."""

    TYPE: ClassVar[str] = "history"
    id: MessageId
    before: Version | None = None
    limit: HistoryLimit = 200


@attrs.frozen
class MyGames:
    """Ask for the games of the signed-in account (``status``: ``playing``, the games not
    over yet, waiting ones included; ``finished``; None: both), newest first, at most
    ``limit``. Reply: :class:`Games`."""

    TYPE: ClassVar[str] = "my_games"
    id: MessageId
    status: GameFilter | None = None
    limit: GamesLimit = 20


@attrs.frozen
class Rematch:
    """In a finished room: a new waiting room with the same settings, each seat offered to
    the player who held it (bots seated again), or the one another player made already.
    Reply: :class:`Joined`; the other players in the room get an :class:`InvitePush`."""

    TYPE: ClassVar[str] = "rematch"
    id: MessageId


@attrs.frozen
class RecordRequest:
    """Ask for a finished game's record (what ``castell replay`` reads). Reply:
    :class:`Record`. ``from`` (an addition, left out when None: 0) asks for the record's
    actions from that one on: a reply holds as many as fit in a frame, and says where the
    next page starts (:attr:`Record.next`)."""

    TYPE: ClassVar[str] = "record"
    id: MessageId
    room: RoomId
    from_: ActionIndex | None = attrs.field(default=None,  # `from` on the wire
                                            metadata={OMIT_NONE: True})


@attrs.frozen
class ReviewRequest:
    """Ask for a finished game's review (an addition: ``docs/review.md``), computed by the
    server once and kept. Reply: :class:`Review`, after :class:`ReviewProgressPush` pushes
    while it is computed. ``from`` (left out when None: 0) asks for the review's turns from
    that one on: a reply holds as many as fit in a frame, and says where the next page
    starts (:attr:`Review.next`)."""

    TYPE: ClassVar[str] = "review"
    id: MessageId
    room: RoomId
    from_: ActionIndex | None = attrs.field(default=None,  # `from` on the wire
                                            metadata={OMIT_NONE: True})


@attrs.frozen
class Resync:
    """Ask for the room's whole view again (a patch did not fit the view this client holds).
    Reply: :class:`Ok`, after a :class:`StatePush` with the current view."""

    TYPE: ClassVar[str] = "resync"
    id: MessageId


# Server → client ------------------------------------------------------------------------------


@attrs.frozen
class Welcome:
    """Reply to :class:`Hello`: this connection's player id and the server's version."""

    TYPE: ClassVar[str] = "welcome"
    re: MessageId
    player: str
    server: str
    protocol: int = PROTOCOL_VERSION
    #: Whether the connection is signed in to an account (an addition to version 1).
    account: bool = False
    #: The name the connection goes by: an account's own, whatever name was typed.
    name: PlayerName | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: The server's identity (an addition): the same at every address that reaches it, made
    #: once and kept in its store (the nodes of a cluster share it).
    server_id: str | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class Identity:
    """Reply to :class:`Identify`: the server's identity (as ``welcome.server_id``)."""

    TYPE: ClassVar[str] = "identity"
    re: MessageId
    server_id: str


@attrs.frozen
class RoomSummary:
    """One line of the room list."""

    room: RoomId
    name: RoomName
    seats: Seats
    taken: SeatCount
    variant: VariantName
    status: RoomStatusName
    turn_seconds: TurnSeconds | None
    #: Whether the room's game is rated (an addition, left out when false).
    rated: bool = attrs.field(default=False, metadata={OMIT_NONE: True})


def _optional_tuple(value: Any) -> tuple | None:
    return None if value is None else tuple(value)


def _summaries(value: Iterable[RoomSummary]) -> tuple[RoomSummary, ...]:
    return tuple(value)


def _events(value: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(value)


@attrs.frozen
class Rooms:
    """Reply to :class:`ListRooms`: the public rooms.

    ``nodes`` (an addition to version 1, left out when None) is sent by a node of a cluster
    of servers: the addresses of every node serving now, for a client to fall back on.
    """

    TYPE: ClassVar[str] = "rooms"
    re: MessageId
    rooms: tuple[RoomSummary, ...] = attrs.field(converter=_summaries)
    nodes: NodeUrls | None = attrs.field(default=None, converter=_optional_tuple,
                                         metadata={OMIT_NONE: True})
    #: Whether more rooms follow this page (an addition, left out when false): ask for them
    #: with ``after`` set to the last room of this one.
    more: bool = attrs.field(default=False, metadata={OMIT_NONE: True})


@attrs.frozen
class Joined:
    """Reply to :class:`CreateRoom` and :class:`JoinRoom`: where this connection now sits.

    ``seat`` is None for a spectator; ``token`` (the seat token) and ``code`` (a private room's
    join code, for its creator) are sent only to this connection.
    """

    TYPE: ClassVar[str] = "joined"
    re: MessageId
    room: RoomId
    seat: Seat | None = None
    token: Token | None = None
    code: RoomId | None = None


@attrs.frozen
class Ok:
    """Success with nothing else to say; ``version`` only in reply to an action."""

    TYPE: ClassVar[str] = "ok"
    re: MessageId
    version: Version | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class Error:
    """A refused request. ``re`` is None when the request's id could not be read.

    ``rule`` is the rules engine's code for ``illegal_action``; ``field`` (an addition to
    version 1, left out when None) names the offending field of an ``invalid_field``;
    ``url`` (an addition too, left out when None) is where a ``moved`` room is served.
    """

    TYPE: ClassVar[str] = "error"
    re: MessageId | None
    code: str
    message: str
    rule: str | None = None
    field: str | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    url: NodeUrl | None = attrs.field(default=None, metadata={OMIT_NONE: True})

    @classmethod
    def from_exception(cls, re: int | None, exc: BaseException) -> Error:
        """The reply to request ``re`` that failed with ``exc``.

        A :class:`RuleError` travels as its ``wire_code`` with ``rule`` = its own code (unless
        the two are the same); a :class:`ProtocolError` keeps its code and field; a
        :class:`RoomMoved` its code and url; any other
        :class:`CastellError` keeps its code; anything else is an ``internal_error`` that
        says nothing of its cause.
        """
        if isinstance(exc, RuleError):
            rule = None if exc.code == exc.wire_code else exc.code
            return cls(re, exc.wire_code, exc.message, rule)
        if isinstance(exc, ProtocolError):
            return cls(re, exc.code, exc.message, field=exc.field)
        if isinstance(exc, RoomMoved):
            return cls(re, exc.code, exc.message, url=exc.url)
        if isinstance(exc, CastellError):
            return cls(re, exc.code, exc.message)
        return cls(re, "internal_error", "the server failed while handling this request")


@attrs.frozen
class StatePush:
    """Push: the room's public view at ``version`` and the events since the last push."""

    TYPE: ClassVar[str] = "state"
    room: RoomId
    version: Version
    view: dict[str, Any]
    events: tuple[dict[str, Any], ...] = attrs.field(converter=_events)


def _changes(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


@attrs.frozen
class Patch:
    """Push (an addition, to a connection that said ``patches`` at hello): the room's view at
    ``version`` as ``changes`` (:mod:`shared.patch`) to the view at version ``base``, the one
    this connection was sent last; with the events since, as in :class:`StatePush`."""

    TYPE: ClassVar[str] = "patch"
    room: RoomId
    base: Version
    version: Version
    changes: tuple[Any, ...] = attrs.field(converter=_changes)
    events: tuple[dict[str, Any], ...] = attrs.field(converter=_events)


@attrs.frozen
class PackedPatch:
    """Push (an addition, to a connection that said ``packed`` at hello): a :class:`Patch`
    told shorter (:mod:`shared.packed`): ``b`` its base, ``v`` its version, ``c`` its changes
    and ``e`` its events, map keys as the table's codes; of the room the connection is in.
    A client reads it with :func:`shared.codec.decode_server` (``packed_room``), which gives
    the :class:`Patch` back."""

    TYPE: ClassVar[str] = "p"
    b: Version
    v: Version
    c: tuple[Any, ...] = attrs.field(converter=_changes)
    e: tuple[Any, ...] = attrs.field(converter=_changes)


@attrs.frozen
class HistoryEntry:
    """What happened at one version of a room: its events, as in ``state`` pushes, and the
    chat lines said at it (events of kind ``chat``)."""

    version: Version
    events: tuple[dict[str, Any], ...] = attrs.field(converter=_events)


def _entries(value: Iterable[HistoryEntry]) -> tuple[HistoryEntry, ...]:
    return tuple(value)


@attrs.frozen
class History:
    """Reply to :class:`HistoryRequest`: the room's history entries, oldest first."""

    TYPE: ClassVar[str] = "history"
    re: MessageId
    entries: tuple[HistoryEntry, ...] = attrs.field(converter=_entries)


@attrs.frozen
class ChatPush:
    """Push: someone in the room said something (``seat`` None for a spectator)."""

    TYPE: ClassVar[str] = "chat"
    room: RoomId
    seat: Seat | None
    name: PlayerName
    text: ChatText


@attrs.frozen
class NoticePush:
    """Push: the server tells the room something about itself (its game cannot be saved
    just now, or can be again); no one said it. Without ``room`` (an addition), the host
    tells every connection of the server (``castell-server admin announce``)."""

    TYPE: ClassVar[str] = "notice"
    room: RoomId | None = attrs.field(metadata={OMIT_NONE: True})
    text: ChatText


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


#: A game's status in :class:`GameEntry`: a room's, or ``closed`` (the host closed it: it is
#: played no more, and cannot be taken back).
GameStatusName = Annotated[str, one_of(*RoomStatus, "closed")]


@attrs.frozen
class GameEntry:
    """One game of an account (a line of :class:`Games`).

    ``turn`` is the seat whose turn it is (None before the start and after the end),
    ``your_turn`` whether that is the account's seat; ``players`` the seats' names, by seat;
    ``winners`` (seats), ``scores`` (totals by seat) and ``finished_at`` (Unix time) only for
    a finished game; ``seats`` the room's seats (an addition: with ``players``, whether a
    waiting room is full).
    """

    room: RoomId
    name: RoomName
    status: GameStatusName
    seat: Seat
    turn: Seat | None
    your_turn: bool
    round: int | None
    players: tuple[PlayerName, ...] = attrs.field(converter=_names)
    turn_seconds: TurnSeconds | None = None
    winners: tuple[Seat, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    scores: tuple[int, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    finished_at: float | None = None
    seats: Seats | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: True when the account resigned this game (an addition, left out otherwise).
    resigned: bool | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: When the game started (Unix time; an addition, left out before the start).
    started_at: float | None = attrs.field(default=None, metadata={OMIT_NONE: True})


def _game_entries(value: Iterable[GameEntry]) -> tuple[GameEntry, ...]:
    return tuple(value)


@attrs.frozen
class Games:
    """Reply to :class:`MyGames`: the account's games, newest first."""

    TYPE: ClassVar[str] = "games"
    re: MessageId
    entries: tuple[GameEntry, ...] = attrs.field(converter=_game_entries)


@attrs.frozen
class Record:
    """Reply to :class:`RecordRequest`: the finished game's record, the map a record file
    holds (``shared.record``: ``format``, ``seed``, ``seats``, ``actions``, ``result``...),
    its ``actions`` those of the page asked for (from ``from``, as many as fit a frame)."""

    TYPE: ClassVar[str] = "record"
    re: MessageId
    game: dict[str, Any]
    #: Where the next page of the record's actions starts (an addition, left out when
    #: None: ``game`` holds the record's last actions): ask ``record`` with ``from`` it.
    next: ActionIndex | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class Review:
    """Reply to :class:`ReviewRequest`: the game's review, as
    :meth:`shared.review.Review.to_data` gives it, its ``turns`` those of the page asked for
    (from ``from``, as many as fit a frame)."""

    TYPE: ClassVar[str] = "review"
    re: MessageId
    review: dict[str, Any]
    #: Where the next page of the review's turns starts (left out when None: ``review``
    #: holds its last turns): ask ``review`` with ``from`` it.
    next: ActionIndex | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class ReviewProgressPush:
    """Push to whoever asked for a review (an addition) while the server computes it:
    ``done`` of the game's ``total`` turns are reviewed."""

    TYPE: ClassVar[str] = "review_progress"
    room: RoomId
    done: ActionIndex
    total: ActionIndex


@attrs.frozen
class InvitePush:
    """Push: ``from`` made ``room``, a rematch of a game you played (``name``): ``join_room``
    it to take your seat."""

    TYPE: ClassVar[str] = "invite"
    room: RoomId
    from_: PlayerName  # `from` on the wire
    name: RoomName


@attrs.frozen
class YourTurnPush:
    """Push to every connection of a signed-in account: one of its games (``room``, named
    ``name``) has reached its turn."""

    TYPE: ClassVar[str] = "your_turn"
    room: RoomId
    name: RoomName


# Ratings and quick match (additions to version 1) ---------------------------------------------

#: How many leaderboard entries one reply holds at most, and a profile's last games.
LEADERBOARD_MAX: Final = 100
LeaderLimit = Annotated[int, between(1, LEADERBOARD_MAX)]
#: The seat counts a quick match accepts: 1 to 3 distinct counts of 2–4.
SeatChoices = Annotated[tuple[Seats, ...], length(1, 3)]
#: Seconds an unrated quick match waits before bots fill it (up to ten minutes).
BotsAfter = Annotated[int, between(0, 600)]
#: A displayed rating (docs/protocol.md, "Ratings").
RatingValue = Annotated[int, between(-100_000, 100_000)]
Count = Annotated[int, between(0, 2**31 - 1)]


def _seat_counts(value: Iterable[int]) -> tuple[int, ...]:
    return tuple(value)


@attrs.frozen
class Leaderboard:
    """Ask for the ranked accounts: the best ``limit``, or (``around_me``) the ``limit``
    around the signed-in account's place. Reply: :class:`LeaderboardReply`."""

    TYPE: ClassVar[str] = "leaderboard"
    id: MessageId
    limit: LeaderLimit = 20
    around_me: bool = False


@attrs.frozen
class ProfileRequest:
    """Ask for an account's rating and rated games, by its name. Reply:
    :class:`ProfileReply`."""

    TYPE: ClassVar[str] = "profile"
    id: MessageId
    name: PlayerName


@attrs.frozen
class QuickMatch:
    """Wait in the quick-match queue for a game of one of ``seats`` players (rated: with
    accounts of close ratings only). Reply: :class:`Ok`; later a :class:`MatchedPush`.
    ``bots_after`` (unrated only): after that many seconds, bots fill the free seats."""

    TYPE: ClassVar[str] = "quick_match"
    id: MessageId
    seats: SeatChoices = attrs.field(default=(2,), converter=_seat_counts)
    rated: bool = False
    bots_after: BotsAfter | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class CancelMatch:
    """Leave the quick-match queue. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "cancel_match"
    id: MessageId


@attrs.frozen
class LeaderEntry:
    """One line of the leaderboard: place (1 = best), name, rating, rated games and wins."""

    rank: Count
    name: PlayerName
    rating: RatingValue
    games: Count
    wins: Count


def _leader_entries(value: Iterable[LeaderEntry]) -> tuple[LeaderEntry, ...]:
    return tuple(value)


@attrs.frozen
class LeaderboardReply:
    """Reply to :class:`Leaderboard`: ranked entries, best first."""

    TYPE: ClassVar[str] = "leaderboard"
    re: MessageId
    entries: tuple[LeaderEntry, ...] = attrs.field(converter=_leader_entries)


@attrs.frozen
class SeatsRecord:
    """An account's rated games and wins at one seat count."""

    seats: Seats
    games: Count
    wins: Count


@attrs.frozen
class RatedResult:
    """One rated game of a profile: its room, seat count, place, the rating before and after
    it, and when it ended (Unix time)."""

    room: RoomId
    seats: Seats
    place: Count
    before: RatingValue
    after: RatingValue
    at: float


def _seat_records(value: Iterable[SeatsRecord]) -> tuple[SeatsRecord, ...]:
    return tuple(value)


def _rated_results(value: Iterable[RatedResult]) -> tuple[RatedResult, ...]:
    return tuple(value)


@attrs.frozen
class ProfileReply:
    """Reply to :class:`ProfileRequest`: the account's rating, rated games and wins, its
    place on the leaderboard (None: not ranked yet), its games and wins by seat count, its
    last rated games, latest first, and whether its rating is still provisional."""

    TYPE: ClassVar[str] = "profile"
    re: MessageId
    name: PlayerName
    rating: RatingValue
    games: Count
    wins: Count
    rank: Count | None = None
    by_seats: tuple[SeatsRecord, ...] = attrs.field(default=(), converter=_seat_records)
    last: tuple[RatedResult, ...] = attrs.field(default=(), converter=_rated_results)
    #: Whether the rating is still provisional (too few rated games or opponents).
    provisional: bool = False


#: Why the host removed a connection from its room or its server (a :class:`RemovedPush`).
RemovedWhy = Annotated[str, one_of("closed", "kicked", "banned")]


@attrs.frozen
class RemovedPush:
    """Push: the host removed you (an addition): ``closed`` your room (for good), ``kicked``
    you from it, or ``banned`` you from the server, saying why in ``text``; ``until`` (Unix
    time) is when a kick or a ban ends (absent: for good). After ``closed`` and ``kicked``
    you are in the lobby, the connection open; after ``banned`` the server closes it.
    ``room`` is the room you were in (absent: the lobby)."""

    TYPE: ClassVar[str] = "removed"
    room: RoomId | None = attrs.field(metadata={OMIT_NONE: True})
    why: RemovedWhy
    text: ChatText
    until: float | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class MatchedPush:
    """Push: the quick match found a game. The room has started with you in ``seat``;
    ``token`` is its seat token. Without ``url`` you are in the room already (a ``state``
    push follows); with it, the room is served by that node of the cluster: connect there
    and ``join_room`` with the token."""

    TYPE: ClassVar[str] = "matched"
    room: RoomId
    seat: Seat
    token: Token
    url: NodeUrl | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class MatchWaitingPush:
    """Push while in the quick-match queue: ``found`` players (you included) of the ``of``
    the closest game needs are waiting."""

    TYPE: ClassVar[str] = "match_waiting"
    found: SeatCount
    of: Seats


# Swiss tournaments (additions to version 1: server.features.tournaments) ---------------------

#: A tournament's id (``t`` and 8 hex digits on this server; any short text on the wire).
TournamentId = Annotated[str, text(1, 16)]
#: A tournament's rounds (1 to 20).
TournamentRounds = Annotated[int, between(1, 20)]
#: A round's number (0 before the first is paired).
RoundNumber = Annotated[int, between(0, 20)]
#: Seconds from now a tournament starts by itself (up to a week).
StartsIn = Annotated[int, between(0, 7 * 24 * 3600)]
#: A tournament table's turn timer when its creator names none (five minutes): every
#: tournament table has a timer, so an absent player's turns end and the round ends.
TOURNAMENT_TURN_SECONDS: Final = 300
#: A tournament's status.
TournamentStatus = Annotated[str, one_of("open", "running", "finished", "cancelled")]


@attrs.frozen
class TournamentCreate:
    """Create a Swiss tournament of ``rounds`` rounds at tables of ``seats`` (an account
    only; on a server with organisers, one of them). Reply: :class:`TournamentReply`."""

    TYPE: ClassVar[str] = "tournament_create"
    id: MessageId
    name: RoomName
    rounds: TournamentRounds = 3
    seats: Seats = 2
    #: Each table's turn timer (never none: see :data:`TOURNAMENT_TURN_SECONDS`).
    turn_seconds: TurnSeconds = TOURNAMENT_TURN_SECONDS
    rated: bool = False
    #: Start by itself that many seconds from now (None: when its creator starts it).
    starts_in: StartsIn | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class TournamentsRequest:
    """Ask for the server's tournaments (open, running and finished), the newest 50, newest
    first. Reply:
    :class:`TournamentsReply`."""

    TYPE: ClassVar[str] = "tournaments"
    id: MessageId


@attrs.frozen
class TournamentRequest:
    """Ask for one tournament: its standings and the current round's tables. Reply:
    :class:`TournamentReply`."""

    TYPE: ClassVar[str] = "tournament"
    id: MessageId
    tournament: TournamentId


@attrs.frozen
class TournamentJoin:
    """Enter an open tournament (an account only). Reply: :class:`TournamentReply`."""

    TYPE: ClassVar[str] = "tournament_join"
    id: MessageId
    tournament: TournamentId


@attrs.frozen
class TournamentLeave:
    """Leave a tournament: before its start, off its list; after, paired no more. Reply:
    :class:`TournamentReply`."""

    TYPE: ClassVar[str] = "tournament_leave"
    id: MessageId
    tournament: TournamentId


@attrs.frozen
class TournamentStart:
    """Its creator starts an open tournament now: the first round is paired. Reply:
    :class:`TournamentReply`; each player gets a :class:`TournamentTablePush`."""

    TYPE: ClassVar[str] = "tournament_start"
    id: MessageId
    tournament: TournamentId


@attrs.frozen
class TournamentEntry:
    """One tournament of :class:`TournamentsReply`."""

    tournament: TournamentId
    name: RoomName
    status: TournamentStatus
    rounds: TournamentRounds
    seats: Seats
    round: RoundNumber
    players: Count


def _tournament_entries(value: Iterable[TournamentEntry]) -> tuple[TournamentEntry, ...]:
    return tuple(value)


@attrs.frozen
class TournamentsReply:
    """Reply to :class:`TournamentsRequest`."""

    TYPE: ClassVar[str] = "tournaments"
    re: MessageId
    entries: tuple[TournamentEntry, ...] = attrs.field(converter=_tournament_entries)


@attrs.frozen
class StandingEntry:
    """One line of a tournament's standings: rank, name, points, tie-break (Buchholz), the
    game score summed, games played, and whether the player left."""

    rank: Count
    name: PlayerName
    points: float
    buchholz: float
    score: Annotated[int, between(-100_000, 100_000)]
    games: Count
    withdrawn: bool = False


@attrs.frozen
class TableEntry:
    """One table of the current round: its room, its players by seat, and (once its game is
    over) their places."""

    room: RoomId
    players: tuple[PlayerName, ...] = attrs.field(converter=_names)
    places: tuple[Count, ...] | None = attrs.field(default=None, converter=_optional_tuple)


def _standing_entries(value: Iterable[StandingEntry]) -> tuple[StandingEntry, ...]:
    return tuple(value)


def _table_entries(value: Iterable[TableEntry]) -> tuple[TableEntry, ...]:
    return tuple(value)


@attrs.frozen
class TournamentReply:
    """Reply to the ``tournament…`` requests: the tournament as it stands."""

    TYPE: ClassVar[str] = "tournament"
    re: MessageId
    tournament: TournamentId
    name: RoomName
    creator: PlayerName | None
    status: TournamentStatus
    rounds: TournamentRounds
    seats: Seats
    turn_seconds: TurnSeconds
    rated: bool
    round: RoundNumber
    standings: tuple[StandingEntry, ...] = attrs.field(converter=_standing_entries)
    tables: tuple[TableEntry, ...] = attrs.field(converter=_table_entries)
    bye: PlayerName | None = None


@attrs.frozen
class TournamentTablePush:
    """Push to a tournament's player: round ``round`` is paired, and their game is ``room``,
    at ``seat`` (``token``: its seat token; ``join_room`` with it), or (``bye``) they sit this
    round out."""

    TYPE: ClassVar[str] = "tournament_table"
    tournament: TournamentId
    name: RoomName
    round: RoundNumber
    room: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    seat: Seat | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    token: Token | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    bye: bool = False


@attrs.frozen
class TournamentEndedPush:
    """Push to a tournament's players: it is over (``finished`` after its last round, or
    ``cancelled`` by the host); ``rank`` is the player's final place (absent: cancelled)."""

    TYPE: ClassVar[str] = "tournament_ended"
    tournament: TournamentId
    name: RoomName
    status: TournamentStatus
    rank: Count | None = attrs.field(default=None, metadata={OMIT_NONE: True})
# Friends, presence, blocks and the inbox (additions to version 1) ----------------------------

#: Where a followed account is (``friends``): in the lobby, playing or watching in a room,
#: offline, or hiding its presence.
PresenceState = Annotated[str, one_of("lobby", "playing", "watching", "offline", "hidden")]
#: What a notification is about (``note``): a client shows its ``text`` whatever the kind.
NOTE_KINDS: Final = ("your_turn", "invite", "challenge", "tournament", "announcement",
                     "follow")
NoteKind = Annotated[str, one_of(*NOTE_KINDS)]
#: A notification's sentence: up to 300 printable characters.
NoteText = Annotated[str, text(1, 300)]
#: Notifications in one ``inbox`` reply (the newest), and shown in an ``inbox_new`` push.
INBOX_MAX: Final = 50
INBOX_NEW_SHOWN: Final = 3
#: Accounts one account may follow, and block.
FOLLOWS_MAX: Final = 200
BLOCKS_MAX: Final = 200
NoteId = Annotated[int, between(0, 2**53 - 1)]


@attrs.frozen
class Follow:
    """Follow an account by its name (you hear nothing of it but its presence in
    ``friends``; it is told in its inbox). Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "follow"
    id: MessageId
    name: PlayerName


@attrs.frozen
class Unfollow:
    """Stop following an account. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "unfollow"
    id: MessageId
    name: PlayerName


@attrs.frozen
class FriendsRequest:
    """Ask for the accounts you follow, with their presence. Reply: :class:`FriendsReply`."""

    TYPE: ClassVar[str] = "friends"
    id: MessageId


@attrs.frozen
class PresenceRequest:
    """Show (``visible``) or hide your presence from those who follow you. Reply:
    :class:`Ok`."""

    TYPE: ClassVar[str] = "presence"
    id: MessageId
    visible: bool


@attrs.frozen
class Block:
    """Block an account: its chat lines, invites and challenges stay away from you, and quick
    match never seats you together. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "block"
    id: MessageId
    name: PlayerName


@attrs.frozen
class Unblock:
    """Stop blocking an account. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "unblock"
    id: MessageId
    name: PlayerName


@attrs.frozen
class InboxRequest:
    """List your notifications (they are then read), or ``clear`` them all. Reply:
    :class:`InboxReply`."""

    TYPE: ClassVar[str] = "inbox"
    id: MessageId
    clear: bool = False


@attrs.frozen
class Friend:
    """One account of a ``friends`` reply."""

    name: PlayerName
    #: It follows you too: a friend.
    mutual: bool
    presence: PresenceState
    room: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    room_name: RoomName | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    #: When it was last seen (Unix time), while offline and not hidden.
    last_seen: float | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class FriendsReply:
    """The accounts you follow, by name, with where each is; those you block; whether your
    own presence is shown."""

    TYPE: ClassVar[str] = "friends"
    re: MessageId
    friends: tuple[Friend, ...]
    blocked: tuple[PlayerName, ...]
    visible: bool


@attrs.frozen
class Note:
    """One notification: its id, kind, sentence, when it came (Unix time), whether it is new
    (not listed before), and what it is about when it is a room, a player or another thing
    (``ref``: a challenge's or a tournament's id)."""

    id: NoteId
    kind: NoteKind
    text: NoteText
    at: float
    new: bool
    room: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    from_: PlayerName | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    ref: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class InboxReply:
    """Your newest notifications (newest first; none after ``clear``), and how many there
    were."""

    TYPE: ClassVar[str] = "inbox"
    re: MessageId
    notes: tuple[Note, ...]
    cleared: Count = 0


@attrs.frozen
class NotePush:
    """Push: a notification just came to your inbox."""

    TYPE: ClassVar[str] = "note"
    note: Note


@attrs.frozen
class InboxNewPush:
    """Push right after a ``welcome`` of an account with new notifications: how many, and
    the newest few."""

    TYPE: ClassVar[str] = "inbox_new"
    count: Count
    notes: tuple[Note, ...]


# Challenges (an addition to version 1) ---------------------------------------------------------

#: The players a challenge names (one to three: the seats but the challenger's).
ChallengedNames = Annotated[tuple[PlayerName, ...], length(1, 3)]
#: Why a challenge ended.
ChallengeEnd = Annotated[str, one_of("accepted", "declined", "expired", "cancelled")]


@attrs.frozen
class ChallengeRequest:
    """Challenge the accounts named ``to`` to a game of ``seats`` (the challenger's seat, one
    for each name, bots in the rest; none in a rated game). Reply: :class:`ChallengeSent`;
    each named player hears :class:`ChallengePush`."""

    TYPE: ClassVar[str] = "challenge"
    id: MessageId
    to: ChallengedNames = attrs.field(converter=_names)
    seats: Seats = 2
    variant: VariantName = "normal"
    turn_seconds: TurnSeconds | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    rated: bool = attrs.field(default=False, metadata={OMIT_NONE: True})


@attrs.frozen
class ChallengeSent:
    """Reply to ``challenge``: its id, and when it expires (Unix time)."""

    TYPE: ClassVar[str] = "challenge_sent"
    re: MessageId
    challenge: RoomId
    expires: float


@attrs.frozen
class AcceptChallenge:
    """Accept challenge ``challenge``. Reply: :class:`Ok`; once every named player has
    accepted, each player hears :class:`MatchedPush` with their seat of the game."""

    TYPE: ClassVar[str] = "accept"
    id: MessageId
    challenge: RoomId


@attrs.frozen
class DeclineChallenge:
    """Decline challenge ``challenge`` (it ends for everyone). Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "decline"
    id: MessageId
    challenge: RoomId


@attrs.frozen
class CancelChallenge:
    """The challenger takes challenge ``challenge`` back. Reply: :class:`Ok`."""

    TYPE: ClassVar[str] = "challenge_cancel"
    id: MessageId
    challenge: RoomId


@attrs.frozen
class ChallengePush:
    """Push to each account a challenge names: ``from`` challenges you (and ``to``, every
    player named) to a game of ``seats``; ``accept`` or ``decline`` it by ``challenge``
    before ``expires`` (Unix time)."""

    TYPE: ClassVar[str] = "challenge"
    challenge: RoomId
    from_: PlayerName  # `from` on the wire
    to: ChallengedNames = attrs.field(converter=_names)
    seats: Seats
    variant: VariantName
    rated: bool
    expires: float
    turn_seconds: TurnSeconds | None = attrs.field(default=None, metadata={OMIT_NONE: True})


@attrs.frozen
class ChallengeEndedPush:
    """Push to the challenger and every player named: challenge ``challenge`` ended
    (``why``), ``by`` whom when a player ended it; ``room`` is the game's when accepted."""

    TYPE: ClassVar[str] = "challenge_ended"
    challenge: RoomId
    why: ChallengeEnd
    by: PlayerName | None = attrs.field(default=None, metadata={OMIT_NONE: True})
    room: RoomId | None = attrs.field(default=None, metadata={OMIT_NONE: True})


Request = Hello | ListRooms | CreateRoom | JoinRoom | LeaveRoom | AddBot | StartGame | Chat \
    | ActionRequest | HistoryRequest | MyGames | Rematch | RecordRequest | Resync | ResignRequest
ServerMessage = Welcome | Rooms | Joined | Ok | Error | StatePush | ChatPush | NoticePush \
    | History | Games | Record | InvitePush | YourTurnPush | Patch
Message = Request | ServerMessage | Leaderboard | ProfileRequest | QuickMatch | CancelMatch \
    | LeaderboardReply | ProfileReply | MatchedPush | MatchWaitingPush | Identify | Identity \
    | RemovedPush | ReviewRequest | Review | ReviewProgressPush | TournamentCreate \
    | TournamentsRequest | TournamentRequest | TournamentJoin | TournamentLeave | TournamentStart \
    | TournamentsReply | TournamentReply | TournamentTablePush | TournamentEndedPush \
    | Follow | Unfollow | FriendsRequest | PresenceRequest | Block | Unblock \
    | InboxRequest | FriendsReply | InboxReply | NotePush | InboxNewPush \
    | ChallengeRequest | ChallengeSent | AcceptChallenge | DeclineChallenge \
    | CancelChallenge | ChallengePush | ChallengeEndedPush | PackedPatch

#: Client → server messages by ``type``.
REQUEST_TYPES: Final[dict[str, type]] = {
    cls.TYPE: cls
    for cls in (
        Hello, ListRooms, CreateRoom, JoinRoom, LeaveRoom, AddBot, StartGame, Chat,
        ActionRequest, HistoryRequest, MyGames, Rematch, RecordRequest, Resync, ResignRequest,
    )
}
#: Server → client messages by ``type``.
SERVER_TYPES: Final[dict[str, type]] = {
    cls.TYPE: cls
    for cls in (Welcome, Rooms, Joined, Ok, Error, StatePush, ChatPush, NoticePush, History,
                Games, Record, InvitePush, YourTurnPush, Patch)
}


# The flat action request ----------------------------------------------------------------------


@attrs.frozen
class _ActionId:
    # The field of an action request that is not the action's own.
    id: MessageId


@attrs.frozen
class _ActionKind:
    # The field of an action's map that picks its class.
    kind: ActionKind


@attrs.frozen
class _RecordedKind:
    # The same field of an entry of a game's list of actions (a resignation too).
    kind: RecordedKind


def _check_effect(action: Recorded) -> None:
    # `special` (and `train` with an effect) carries exactly the field its effect needs (§4).
    if not isinstance(action, Special | Train):
        return
    # The converter has checked `effect`; `special` requires one, `train` may have one.
    needed = EFFECT_FIELD[action.effect] if action.effect is not None else None
    if needed is not None and getattr(action, needed) is None:
        raise ProtocolError(
            f"{needed} is missing (effect {action.effect} needs it)",
            code="invalid_field", field=needed,
        )
    for name in EFFECT_FIELD.values():
        if name != needed and getattr(action, name) is not None:
            reason = f"effect {action.effect}" if needed else "an action without an effect"
            raise ProtocolError(
                f"{name} is not used by {reason}", code="invalid_field", field=name
            )


def action_from_fields(fields: Mapping[str, Any]) -> Action:
    """The action whose fields are ``fields`` (``kind`` and the rest, as
    :func:`~shared.actions.action_fields` gives them), checked exactly as the wire checks the
    action of an ``action`` request: the same strict converter, the same limits.

    Raises :class:`ProtocolError` (``invalid_field``, ``field`` naming the culprit: ``kind``,
    ``sizes[1]``, an unknown key, ...) for anything that is not one valid action; ``re`` is
    None. The ``action`` request's own structuring goes through here, so the wire, the store
    and the game record read an action one way. A resignation is no action here: it has a
    request of its own (:class:`ResignRequest`).
    """
    action: Action = _from_fields(fields, ACTION_TYPES, _ActionKind)
    return action


def recorded_from_fields(fields: Mapping[str, Any]) -> Recorded:
    """An entry of a game's list of actions (the store's, a record file's): an action, as
    :func:`action_from_fields` reads it, or a resignation (``{"kind": "resign"}``)."""
    recorded: Recorded = _from_fields(fields, RECORDED_TYPES, _RecordedKind)
    return recorded


def _from_fields(fields: Mapping[str, Any], kinds: Mapping[str, type],
                 head_type: type) -> Any:
    if not isinstance(fields, Mapping):
        raise ProtocolError("an action must be a map of fields", code="invalid_field")
    try:
        rest = {k: v for k, v in fields.items() if k != "kind"}
        kind = fields.get("kind")
        if type(kind) is not str or kind not in kinds:  # the converter says why
            head = {k: v for k, v in fields.items() if k == "kind"}
            kind = converter.structure(head, head_type).kind
        action: Any = converter.structure(rest, kinds[kind])
    except Exception as exc:  # every converter failure is the data's fault
        raise field_error(exc) from None
    _check_effect(action)
    return action


def _structure_action_request(payload: Any, _: Any) -> ActionRequest:
    if type(payload) is not dict:
        raise Invalid("must be a map")
    ident = payload.get("id")
    if type(ident) is not int or not 0 <= ident < ID_LIMIT:  # the converter says why
        ident = converter.structure({k: v for k, v in payload.items() if k == "id"},
                                    _ActionId).id
    action = action_from_fields({k: v for k, v in payload.items() if k != "id"})
    return ActionRequest(ident, action)


def _unstructure_action_request(message: ActionRequest) -> dict[str, Any]:
    return {"id": message.id, **action_fields(message.action)}


# Conversions ------------------------------------------------------------------------------------


def to_wire(message: Message) -> dict[str, Any]:
    """The message as its wire map: ``type`` first, then its fields (plain data only)."""
    return {"type": message.TYPE, **converter.unstructure(message)}


def _readable_id(payload: dict[Any, Any]) -> int | None:
    # The id to answer with, when the message carries a valid one.
    ident = payload.get("id")
    if type(ident) is int and 0 <= ident < ID_LIMIT:
        return ident
    try:
        return converter.structure(payload["id"], MessageId)
    except Exception:
        return None


def from_wire(
    payload: Any, *, sender: Literal["client", "server"] | None = None
) -> Message:
    """The message a wire map stands for, checked field by field.

    ``sender`` restricts the types accepted to those that side sends (``"client"`` for a
    server reading requests); with None, both are accepted and a type both sides send
    (``chat``, ``history``, ``record``, ``review``) is a request when it carries an ``id``
    (every request does, no server message does).

    Raises :class:`ProtocolError`: ``bad_message`` when ``payload`` is not a map with a string
    ``type``; ``unknown_type``; ``invalid_field`` (with ``field``) for anything else. ``re`` is
    set when the map holds a valid ``id``.
    """
    if type(payload) is not dict:
        raise ProtocolError("a message must be a map", code="bad_message")
    kind = payload.get("type")
    if type(kind) is not str:
        raise ProtocolError("a message needs a string type", code="bad_message", field="type")
    re = _readable_id(payload)
    cls: type | None
    if sender == "client":
        cls = REQUEST_TYPES.get(kind)
    elif sender == "server":
        cls = SERVER_TYPES.get(kind)
    elif kind in REQUEST_TYPES and kind in SERVER_TYPES:
        cls = REQUEST_TYPES[kind] if "id" in payload else SERVER_TYPES[kind]
    else:
        cls = REQUEST_TYPES.get(kind) or SERVER_TYPES.get(kind)
    if cls is None:
        shown = kind if len(kind) <= 40 else kind[:40] + "…"
        raise ProtocolError(
            f"unknown message type {shown!r}", code="unknown_type", field="type", re=re
        )
    body = {k: v for k, v in payload.items() if k != "type"}
    try:
        return converter.structure(body, cls)
    except Exception as exc:  # every converter failure is the sender's fault
        raise field_error(exc, re=re) from None


REQUEST_TYPES.update({cls.TYPE: cls for cls in (Leaderboard, ProfileRequest, QuickMatch,
                                                CancelMatch, Identify, ReviewRequest,
                                                ChallengeRequest, AcceptChallenge,
                                                DeclineChallenge, CancelChallenge)})
SERVER_TYPES.update({cls.TYPE: cls for cls in (LeaderboardReply, ProfileReply, MatchedPush,
                                               MatchWaitingPush, Identity,
                                               RemovedPush, Review, ReviewProgressPush,
                                               ChallengeSent, ChallengePush,
                                               ChallengeEndedPush)})


REQUEST_TYPES.update({cls.TYPE: cls for cls in (TournamentCreate, TournamentsRequest,
                                                TournamentRequest, TournamentJoin,
                                                TournamentLeave, TournamentStart)})
SERVER_TYPES.update({cls.TYPE: cls for cls in (TournamentsReply, TournamentReply,
                                               TournamentTablePush, TournamentEndedPush)})


REQUEST_TYPES.update({cls.TYPE: cls for cls in (Follow, Unfollow, FriendsRequest,
                                                PresenceRequest, Block, Unblock,
                                                InboxRequest)})
SERVER_TYPES.update({cls.TYPE: cls for cls in (FriendsReply, InboxReply, NotePush,
                                               InboxNewPush)})


SERVER_TYPES.update({PackedPatch.TYPE: PackedPatch})
