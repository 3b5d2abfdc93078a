"""Server settings: every limit and default in one frozen value, set from the command line."""

from __future__ import annotations

import attrs

#: The WebSocket subprotocol this server speaks (docs/protocol.md, "Transport").
SUBPROTOCOL = "castell.v1"
DEFAULT_PORT = 8765


@attrs.frozen
class ServerConfig:
    """How a server listens and what it allows. Defaults suit a public server for friends."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    #: Largest frame accepted; a bigger one closes that connection with 1009.
    max_frame: int = 64 * 1024
    #: Token bucket per connection: messages per second, and the burst allowed.
    rate: float = 20.0
    burst: float = 40.0
    #: ``rate_limited`` refusals tolerated before the connection is closed for abuse.
    max_strikes: int = 50
    max_connections: int = 5000
    max_per_address: int = 512
    max_rooms: int = 2000
    #: Rooms one connection may create over its life.
    rooms_per_connection: int = 20
    #: Seconds a new connection has to say ``hello``.
    hello_timeout: float = 10.0
    #: Seconds without any message before a connection is closed (None: never).
    idle_timeout: float | None = 3600.0
    #: Bytes allowed to wait in one connection's write buffer before it is closed as too slow.
    write_buffer_limit: int = 1024 * 1024
    #: Failed seat-token attempts allowed per connection per minute.
    resume_attempts: int = 10
    #: Seconds a bot waits before each of its actions (0 in tests).
    bot_delay: float = 0.6
    #: Multiplies every turn timer; below 1 only to make tests of timers quick.
    turn_time_scale: float = 1.0
    #: Seconds a finished or abandoned room stays listed before it is forgotten.
    room_linger: float = 600.0
    #: Per-message deflate; off by default so one encoded push is the same bytes for all.
    compression: bool = False
    ping_interval: float | None = 20.0
