"""Server settings: every limit and default in one frozen value, set from the command line.

Each limit has a ``castell-server`` flag (``server.cli``) and is explained, with its default
and what a client sees when it trips, in ``docs/security.md``.
"""

from __future__ import annotations

import os

import attrs

from shared import codec, search

# The WebSocket subprotocol this server speaks (docs/protocol.md, "Transport"), defined once in
# shared for both ends; re-exported here for the server's modules.
from shared.messages import SUBPROTOCOL as SUBPROTOCOL

DEFAULT_PORT = 8765
#: Bot worker processes unless told: one per core, at most four.
DEFAULT_BOT_WORKERS = min(4, os.cpu_count() or 1)


@attrs.frozen
class ServerConfig:
    """How a server listens and what it allows. Defaults suit a public server for friends."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT

    # -- one frame (docs/protocol.md, "Limits") ---------------------------------------------
    #: Largest frame accepted; a bigger one closes that connection with 1009.
    max_frame: int = codec.MAX_FRAME
    #: Longest string (or binary value) in a frame, in bytes; longer is ``bad_message``.
    max_string: int = codec.MAX_STR_BYTES
    #: Most items in one array of a frame.
    max_list: int = codec.MAX_ARRAY
    #: Most pairs in one map of a frame.
    max_map: int = codec.MAX_MAP
    #: Deepest nesting of arrays and maps (the frame's own map is level 1).
    max_depth: int = codec.MAX_DEPTH

    # -- flow of messages -------------------------------------------------------------------
    #: Token bucket per connection: messages per second, and the burst allowed.
    rate: float = 20.0
    burst: float = 40.0
    #: ``rate_limited`` refusals tolerated before the connection is closed (1008) for abuse.
    max_strikes: int = 50
    #: Bytes allowed to wait in one connection's write buffer before it is closed as too slow.
    write_buffer_limit: int = 1024 * 1024
    #: The kernel's send buffer for each connection (SO_SNDBUF; None: the system's own,
    #: which grows to megabytes). Together with ``write_buffer_limit`` it bounds what one
    #: client that stops reading can make the server hold.
    socket_send_buffer: int | None = 256 * 1024
    #: Token bucket per address, over all its connections, for the requests that cost the
    #: server most (list, create, join and leave rooms): more is ``rate_limited``.
    address_rate: float = 20.0
    address_burst: float = 60.0
    #: Token bucket per address for the web pages (``--web``): pages one address may fetch
    #: per second, and in one burst; more is HTTP 429.
    web_rate: float = 5.0
    web_burst: float = 30.0

    # -- connections ------------------------------------------------------------------------
    #: Open connections, those still in their handshake included (more: HTTP 503).
    max_connections: int = 5000
    #: Open connections from one address (more: HTTP 429).
    max_per_address: int = 512
    #: Seconds a new connection has to finish its TLS and WebSocket handshakes.
    open_timeout: float | None = 10.0
    #: Seconds a new connection has to say ``hello``.
    hello_timeout: float = 10.0
    #: Seconds without a message from the client and without any change in its room before
    #: the connection is closed (None: never).
    idle_timeout: float | None = 3600.0
    #: Seconds a closing handshake may take before the connection is simply dropped.
    close_timeout: float = 10.0
    ping_interval: float | None = 20.0
    #: Behind a reverse proxy: take the client's address from the last X-Forwarded-For entry.
    trust_proxy: bool = False

    # -- rooms and seats --------------------------------------------------------------------
    max_rooms: int = 2000
    #: Rooms one connection may create over its life.
    rooms_per_connection: int = 20
    #: Rooms created from one address that may exist at once.
    rooms_per_address: int = 100
    #: Most rooms one ``list_rooms`` reply holds (waiting rooms first).
    max_listed: int = 200
    #: Failed seat-token attempts allowed per connection, and per address, per window.
    resume_attempts: int = 10
    resume_attempts_per_address: int = 30
    resume_window: float = 60.0
    #: Failed joins by code (no room has it) allowed per address, and per network (/24 for
    #: IPv4, /64 for IPv6), per ``resume_window``: private codes cannot be guessed.
    code_attempts_per_address: int = 20
    code_attempts_per_network: int = 60
    #: New accounts (a ``hello`` with a key no account has) allowed per address, and per
    #: network (/24 for IPv4, /64 for IPv6), per hour, counted in the store over every node
    #: of a cluster; more is ``rate_limited``.
    accounts_per_address: int = 10
    accounts_per_network: int = 30
    #: Days after which an account that never finished a game and has not signed in gives
    #: up its name to a new account that asks for it (None: never).
    account_release_days: float | None = 30.0
    #: Spectators one room may have at once (more: ``room_full``).
    max_spectators: int = 50
    #: Chat lines one room may carry per second, all its members together (bursts of twice
    #: as many); more is ``rate_limited``.
    room_chat_rate: float = 10.0

    # -- TLS ----------------------------------------------------------------------------------
    #: PEM certificate chain (and key, unless ``keyfile``): serve wss:// instead of ws://.
    certfile: str | None = None
    keyfile: str | None = None

    # -- games ------------------------------------------------------------------------------
    #: Seconds a bot waits before each of its actions (0 in tests).
    bot_delay: float = 0.6
    #: Worker processes bots think in (0: a thread of the server's process instead).
    bot_workers: int = DEFAULT_BOT_WORKERS
    #: Seconds a ``hard`` bot may think once a turn (it plays the normal choice if it runs
    #: over by more than a grace of two seconds).
    bot_think: float = 1.5
    #: Multiplies every turn timer; below 1 only to make tests of timers quick.
    turn_time_scale: float = 1.0
    #: Seconds between two probes of a store that refused a write, while a room waits to
    #: try again (server.runtime.retries): the first probe it takes lets them all go on.
    store_probe_every: float = 0.5
    #: Seconds a finished or abandoned room stays listed before it is forgotten.
    room_linger: float = 600.0
    #: Seconds an unfinished game with nobody connected stays in memory; it stays stored,
    #: and comes back the moment a player returns with a token (None: never unloaded).
    room_unload_after: float | None = 1800.0
    #: Seconds a started game stays in memory once nobody is in it (no player, no
    #: spectator), however its bots and timer move it; it stays stored, and comes back when
    #: a player returns with a token (None: only ``room_unload_after`` applies). Lone
    #: servers only.
    room_unattended_after: float | None = 60.0
    #: Per-message deflate; off by default so one encoded push is the same bytes for all.
    compression: bool = False

    # -- reviews of finished games (docs/review.md) -------------------------------------------
    #: The budget a review searches with (``shared.review.Budget``): bag orders per line and
    #: candidate lines per turn; the ``hard`` bot's own unless told (tests make it small).
    review_samples: int = search.SAMPLES
    review_candidates: int = search.CANDIDATES
    #: Reviews being computed at once for the connections of one address (more:
    #: ``rate_limited``; a review already kept, or already being computed, is not counted).
    reviews_per_address: int = 2

    # -- the host's tools (docs/operations.md) --------------------------------------------------
    #: Serve no ``/metrics`` (else the Prometheus text format, on this port unless
    #: ``metrics_listen``).
    no_metrics: bool = False
    #: ``HOST:PORT`` to serve ``/metrics`` on instead of the game's port (None: the same).
    metrics_listen: str | None = None
    #: The admin console's Unix socket (None: no console).
    admin_socket: str | None = None
    #: Serve the web pages on the game's port (server.web, docs/operations.md "Web pages").
    web: bool = True
    #: The server's name at the top of every page.
    web_name: str = "Castell"
    #: The address the pages tell players to join (``castell URL``); None: the address the
    #: browser asked (its ``Host``), with ``ws://`` or ``wss://`` as this server speaks.
    web_join: str | None = None
    #: Seconds after which a page of a game in play reloads itself.
    web_refresh: int = 5
    # -- ratings and quick match -------------------------------------------------------------
    #: Seconds between two reads of the stored bans, mutes and kicks on a cluster node (what
    #: the other nodes set meanwhile).
    moderation_refresh: float = 2.0
    #: Rated games an account needs before it appears on the leaderboard.
    leaderboard_min_games: int = 3
    #: The turn timer of a rated room created without one (seconds): an abandoned rated game
    #: still ends, its absent players' turns ended by the timer.
    rated_turn_seconds: int = 300
    #: Seconds between two rounds of the quick-match matcher.
    match_interval: float = 1.0
    #: Rating points two waiting players may be apart at first, how many more each second
    #: of waiting allows, and the most it ever allows.
    match_window: int = 100
    match_widen: float = 10.0
    match_window_max: int = 1000
    #: Seconds a quick match's seats are held for its players: a room whose matched seats
    #: are not all taken by then is called off (server.features.reservations).
    match_reserve: float = 10.0
    #: Seconds a challenge waits for its answer (a correspondence game's waits a day:
    #: server.features.challenges), and how many one account may make in an hour.
    challenge_expiry: float = 600.0
    challenges_per_hour: int = 20
    #: Let accounts connected from one network (a /24, a /64) meet in rated play: for a
    #: server on a LAN, where everyone shares one (server.features.ratings, "the floor").
    rated_one_network: bool = False
    # -- tournaments (server.features.tournaments) ---------------------------------------------
    #: The names of the accounts that may create tournaments (None: any account).
    organisers: tuple[str, ...] | None = None
    #: Seconds between two moves of the tournament director (reading results, pairing).
    tournament_interval: float = 1.0

    @property
    def frame_limits(self) -> codec.FrameLimits:
        """The limits every incoming frame is decoded with."""
        return codec.FrameLimits(frame=self.max_frame, string=self.max_string,
                                 array=self.max_list, map=self.max_map, depth=self.max_depth)

    @property
    def scheme(self) -> str:
        return "wss" if self.certfile else "ws"
