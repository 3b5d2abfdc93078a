"""Request handling: the part every area's handlers share, and the one table of handlers.

:class:`Requests` is the request side of one server. It builds the handlers of each area
(lobby, room, game, accounts, matches, ratings, reviews, tournaments, social, challenges:
the ``server.handlers_*`` modules) and
registers them in one table (:attr:`Requests.handlers`), which its :class:`Dispatcher`
(:mod:`server.edge.dispatch`: decoding, rate limits, the protocol state, the error boundary)
answers each frame from. It owns what several areas share: the making of a room within its
limits (:meth:`Requests.new_room`: ``create_room``, ``rematch``), the finding of one, here or
on a cluster node (:meth:`Requests.find_room`), and the limits on guessing keys, seat tokens
and room codes (recent failed attempts by connection, address and network).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.core.limits import network_of, recent
from server.core.room import RESERVED_NAMES
from server.edge import handlers_game
from server.edge.dispatch import Dispatcher, Handler
from server.edge.handlers_accounts import AccountHandlers
from server.edge.handlers_challenges import ChallengeHandlers
from server.edge.handlers_lobby import LobbyHandlers
from server.edge.handlers_matches import MatchHandlers
from server.edge.handlers_ratings import RatingHandlers
from server.edge.handlers_review import ReviewHandlers
from server.edge.handlers_room import RoomHandlers
from server.edge.handlers_social import SocialHandlers
from server.edge.handlers_tournaments import TournamentHandlers
from server.features.accounts import Accounts
from server.features.challenges import Challenges
from server.features.matchmaking import Matchmaker
from server.features.ratings import Ratings
from server.features.rematch import Rematches
from server.runtime.connection import Connection
from server.runtime.runner import RoomRunner
from shared import messages as m
from shared.errors import CastellError

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.features.identity import Identity
    from server.features.inbox import Inbox
    from server.features.moderation import Moderation
    from server.features.reviews import Reviews
    from server.features.social import Social
    from server.features.tournaments import Tournaments
    from server.ops.metrics import Metrics
    from server.runtime.directory import Directory
    from server.runtime.lobby import Lobby

log = logging.getLogger("castell.server")


class Requests:
    """Answers the requests of every connection of one server."""

    def __init__(self, config: ServerConfig, lobby: Lobby, directory: Directory, *,
                 accounts: Accounts, ratings: Ratings, matchmaker: Matchmaker,
                 identity: Identity, moderation: Moderation, reviews: Reviews,
                 tournaments: Tournaments, social: Social, inbox: Inbox,
                 metrics: Metrics | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``directory``: where rooms are made, found and listed (this server's alone, or a
        cluster's); the host's tools, ``moderation`` and ``metrics`` (None: not counted)."""
        self.config = config
        #: The time the limits on guessing count in (seconds, ``time.monotonic`` unless a
        #: test moves it on itself): a failed attempt is forgotten ``resume_window`` after.
        self.clock = clock
        self.lobby = lobby
        self.directory = directory
        #: Recent failed seat-token attempts, by address (see check_resume_rate).
        self.failed_resumes: dict[str, list[float]] = {}
        #: Rooms being created (stored, not yet in the lobby), by address.
        self.creating: dict[str, int] = {}
        #: Recent joins by a code no room has, by address and by network (check_code_rate).
        self.failed_codes: dict[str, list[float]] = {}
        self.failed_codes_by_network: dict[str, list[float]] = {}
        #: Players' accounts (server.features.accounts); recent hellos with a wrong key, by address.
        self.accounts = accounts
        self.failed_keys: dict[str, list[float]] = {}
        #: The host's tools (server.ops.metrics, server.features.moderation).
        self.metrics = metrics
        self.moderation = moderation
        #: Set while the server drains (admin drain): no new rooms.
        self.draining = False
        #: Who this server is (server.features.identity), read once its store is open.
        self.identity = identity
        #: Ratings (server.features.ratings) and the quick-match queue
        #: (server.features.matchmaking).
        self.ratings = ratings
        self.matchmaker = matchmaker
        #: Friends, blocks and presence (server.features.social); the inboxes
        #: (server.features.inbox).
        self.social = social
        self.inbox = inbox
        #: Finished rooms' rematches (server.features.rematch).
        self.rematches = Rematches(self)
        #: Challenges by name (server.features.challenges).
        self.challenges = Challenges(self)
        challenges = ChallengeHandlers(self.challenges)
        lobby_ = LobbyHandlers(self)
        room = self.room_handlers = RoomHandlers(config, moderation)
        accounts_ = AccountHandlers(lobby, self.accounts, self.rematches)
        matches = MatchHandlers(self.matchmaker, self.ratings)
        ratings_ = RatingHandlers(self.ratings, self.accounts)
        #: Finished games' reviews (server.features.reviews).
        self.reviews = reviews
        reviews_ = ReviewHandlers(lobby.store, self.accounts, reviews)
        tournaments_ = TournamentHandlers(tournaments)
        social_ = SocialHandlers(social, inbox)
        #: The one table of handlers: each request type, and the handler of its area.
        #: Which protocol state takes which type is :data:`server.edge.states.ALLOWED`'s to say.
        self.handlers: dict[type, Handler] = {
            # the lobby (server.edge.handlers_lobby)
            m.Hello: lobby_.hello,
            m.Identify: lobby_.identify,
            m.ListRooms: lobby_.list_rooms,
            m.CreateRoom: lobby_.create_room,
            m.JoinRoom: lobby_.join_room,
            # a room (server.edge.handlers_room)
            m.LeaveRoom: room.leave_room,
            m.AddBot: room.add_bot,
            m.StartGame: room.start_game,
            m.Chat: room.chat,
            m.Resync: room.resync,
            m.HistoryRequest: room.history,
            # the game (server.edge.handlers_game)
            m.ActionRequest: handlers_game.action,
            m.ResignRequest: handlers_game.resign,
            # accounts (server.edge.handlers_accounts)
            m.MyGames: accounts_.my_games,
            m.RecordRequest: accounts_.record,
            m.Rematch: accounts_.rematch,
            # quick match (server.edge.handlers_matches)
            m.QuickMatch: matches.quick_match,
            m.CancelMatch: matches.cancel_match,
            # ratings (server.edge.handlers_ratings)
            m.Leaderboard: ratings_.leaderboard,
            m.ProfileRequest: ratings_.profile,
            # reviews (server.edge.handlers_review)
            m.ReviewRequest: reviews_.review,
            # Swiss tournaments (server.edge.handlers_tournaments)
            m.TournamentCreate: tournaments_.create,
            m.TournamentsRequest: tournaments_.listed,
            m.TournamentRequest: tournaments_.one,
            m.TournamentJoin: tournaments_.join,
            m.TournamentLeave: tournaments_.leave,
            m.TournamentStart: tournaments_.start,
            # friends, presence, blocks, the inbox (server.edge.handlers_social)
            m.Follow: social_.follow,
            m.Unfollow: social_.unfollow,
            m.FriendsRequest: social_.friends,
            m.PresenceRequest: social_.presence,
            m.Block: social_.block,
            m.Unblock: social_.unblock,
            m.InboxRequest: social_.inbox_,
            # challenges (server.edge.handlers_challenges)
            m.ChallengeRequest: challenges.challenge,
            m.AcceptChallenge: challenges.accept,
            m.DeclineChallenge: challenges.decline,
            m.CancelChallenge: challenges.cancel,
        }
        self.dispatcher = Dispatcher(config, self.handlers, metrics)

    @property
    def server_id(self) -> str | None:
        """This server's identity (None while it starts)."""
        return self.identity.id

    def sweep(self, now: float) -> None:
        """Forget failed attempts older than the window (by :attr:`clock`), and buckets
        that are full again at ``now`` (``time.monotonic``, the buckets' time)."""
        stamped = self.clock()
        for failures in (self.failed_resumes, self.failed_codes, self.failed_codes_by_network,
                         self.failed_keys):
            for key, stamps in list(failures.items()):
                kept = recent(stamps, stamped, self.config.resume_window)
                if kept:
                    failures[key] = kept
                else:
                    del failures[key]
        self.dispatcher.sweep(now)
        self.room_handlers.sweep(now)

    # -- rooms made and found, within their limits ---------------------------------------------

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
        create = self.directory.create
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

    def check_rated(self, conn: Connection) -> None:
        """A rated room needs a creator with an account."""
        if conn.account is None:
            raise CastellError("a rated room seats signed-in accounts only: connect with "
                               "your account (not as a guest)", code="not_signed_in")

    async def find_room(self, key: str, *, by_id_private: bool) -> RoomRunner:
        """The room ``key`` names (:meth:`server.runtime.directory.Directory.find`)."""
        return await self.directory.find(key, by_id_private=by_id_private)

    def check_resume_rate(self, conn: Connection) -> None:
        """Refuse a seat-token attempt once this connection, or its address, has failed
        too often lately: tokens cannot be guessed at any useful speed."""
        cfg = self.config
        now = self.clock()
        conn.failed_resumes = recent(conn.failed_resumes, now, cfg.resume_window)
        by_address = recent(self.failed_resumes.get(conn.address, []), now, cfg.resume_window)
        self.failed_resumes[conn.address] = by_address
        if (len(conn.failed_resumes) >= cfg.resume_attempts
                or len(by_address) >= cfg.resume_attempts_per_address):
            raise CastellError("too many wrong seat tokens: wait a minute",
                               code="rate_limited")

    def resume_failed(self, conn: Connection) -> None:
        now = self.clock()
        conn.failed_resumes.append(now)
        self.failed_resumes.setdefault(conn.address, []).append(now)

    def check_code_rate(self, conn: Connection) -> None:
        """Refuse a join by id or code once this address, or its network, has named rooms
        that do not exist too often lately: private codes cannot be guessed by
        reconnecting either."""
        cfg = self.config
        now = self.clock()
        by_address = recent(self.failed_codes.get(conn.address, []), now, cfg.resume_window)
        network = network_of(conn.address)
        by_network = recent(self.failed_codes_by_network.get(network, []), now,
                            cfg.resume_window)
        self.failed_codes[conn.address] = by_address
        self.failed_codes_by_network[network] = by_network
        if (len(by_address) >= cfg.code_attempts_per_address
                or len(by_network) >= cfg.code_attempts_per_network):
            raise CastellError("too many rooms not found: wait a minute", code="rate_limited")

    def code_failed(self, conn: Connection) -> None:
        """One more join by a code no room has; said in the log (never the codes tried)
        when it takes the address or its network to its limit."""
        cfg = self.config
        now = self.clock()
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

    def check_key_rate(self, conn: Connection) -> None:
        """Refuse a hello with a key once this connection, or its address, has sent too many
        wrong keys lately (the limits of seat tokens): keys cannot be guessed either."""
        cfg = self.config
        now = self.clock()
        conn.failed_keys = recent(conn.failed_keys, now, cfg.resume_window)
        by_address = recent(self.failed_keys.get(conn.address, []), now, cfg.resume_window)
        self.failed_keys[conn.address] = by_address
        if (len(conn.failed_keys) >= cfg.resume_attempts
                or len(by_address) >= cfg.resume_attempts_per_address):
            raise CastellError("too many wrong keys: wait a minute", code="rate_limited")

    def key_failed(self, conn: Connection) -> None:
        now = self.clock()
        conn.failed_keys.append(now)
        self.failed_keys.setdefault(conn.address, []).append(now)
