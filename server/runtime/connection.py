"""One client connection: its identity, its room, its limits, and how bytes reach it.

Every send is non-blocking (``websockets``' ``broadcast`` writes straight into the
transport), so no room ever waits on a slow client; instead a connection whose write buffer
grows past the limit is closed as too slow (docs/security.md). A client that stops reading
first fills the kernel's socket buffers, then the transport's buffer, which is what is
measured: the memory one slow client can hold is bounded by the limit plus those.

Chat is lossy: a chat push is left out for a connection whose unread bytes are already past
a fraction of the limit (:data:`LOSSY_FRACTION`), so that no amount of chat in a room, all
of it within the rate limits, can get a member on a slow link closed; state pushes and
replies are never left out, and close a connection that cannot keep up with them.

Control frames count too: :class:`CastellWebSocket` charges every ping and pong the peer
sends to the connection's message bucket (:meth:`server.edge.dispatch.Dispatcher.charge`) as it is
read, before websockets answers it: a ping over the rate gets no pong, and a connection
that goes on (too many strikes) is cut at once — its socket aborted, without a closing
handshake, during which every ping it sent would still be read and answered.

Closing never waits on the peer for longer than the close timeout: a peer that reads
nothing would never finish a closing handshake, so its socket is then dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from server.core.limits import TokenBucket
from server.edge.states import ConnState, Move, transition

if TYPE_CHECKING:
    from server.core.room import Push
    from server.ops.metrics import Metrics
    from server.runtime.runner import RoomRunner

log = logging.getLogger("castell.conn")

_ids = itertools.count(1)

#: A lossy push (chat) is left out for a connection with more than this fraction of its
#: write-buffer limit unread.
LOSSY_FRACTION = 0.5


#: The last payload framed, and its frame: a push goes to every member of a room one after
#: the other, so one entry is framed once for all of them.
_framed: tuple[bytes, bytes] | None = None


def frame_of(data: bytes) -> bytes:
    """``data`` as one unmasked binary frame, as a server sends it (RFC 6455 §5.2), made
    once for the members of a room that are sent the same bytes in a row."""
    global _framed
    last = _framed
    if last is not None and last[0] is data:
        return last[1]
    frame = Frame(Opcode.BINARY, data).serialize(mask=False, extensions=[])
    _framed = (data, frame)
    return frame


def write_frame(ws: ServerConnection, data: bytes) -> None:
    """Send ``data`` to ``ws`` as one binary frame without waiting. Where websockets' own
    path would frame it exactly so (the connection open, no extension such as compression
    that makes each connection's frame its own, no fragmented message or write of its own
    pending), the frame shared by every member is written to the transport directly;
    otherwise websockets frames it (``broadcast``, which skips a connection not open)."""
    protocol = ws.protocol
    if (protocol.state is State.OPEN and not protocol.extensions
            and not protocol.expect_continuation_frame and not protocol.writes
            and ws.send_in_progress is None):
        ws.transport.write(frame_of(data))
    else:
        broadcast([ws], data)


class CastellWebSocket(ServerConnection):
    """websockets' server connection, which asks ``on_control`` of each control frame (ping,
    pong) the peer sends, as it is parsed: websockets answers a ping by itself, below any
    handler, and it is answered only when ``on_control`` says yes. Once :meth:`cut_off`,
    nothing more the peer sends is read."""

    on_control: Callable[[], bool] | None = None
    #: Whether the socket was cut off (aborted) for a flood.
    cut = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        answer = self.protocol.recv_frame

        def recv_frame(frame: Frame) -> None:
            if frame.opcode in (Opcode.PING, Opcode.PONG) and self.on_control is not None \
                    and (self.cut or not self.on_control()):
                return  # over the rate: no pong, and no event
            answer(frame)

        self.protocol.recv_frame = recv_frame  # type: ignore[method-assign]

    def data_received(self, data: bytes) -> None:
        if not self.cut:
            super().data_received(data)

    def cut_off(self) -> None:
        """Drop the socket now: no closing handshake, nothing more read or answered."""
        self.cut = True
        self.transport.abort()


class Connection:
    """A client connected over one websocket."""

    def __init__(self, ws: ServerConnection, address: str, bucket: TokenBucket,
                 write_limit: int, *, close_timeout: float = 10.0,
                 metrics: Metrics | None = None) -> None:
        self.ws = ws
        self.address = address
        self.id = f"p{next(_ids)}"
        self.name: str | None = None
        #: The account this connection is signed in to (None: a guest).
        self.account: str | None = None
        #: The accounts this connection's account blocks (server.features.social): their
        #: chat lines are not delivered to it.
        self.blocked: frozenset[str] = frozenset()
        self.state = ConnState.GREETING
        self.room: RoomRunner | None = None
        self.bucket = bucket
        self.strikes = 0
        self.rooms_created = 0
        self.failed_resumes: list[float] = []
        #: Recent hellos with a key that matched no account and could not register one.
        self.failed_keys: list[float] = []
        #: Lossy pushes (chat) left out because this connection was slow to read.
        self.dropped = 0
        #: time.monotonic() of the opening, of the last frame received, of the last sent.
        self.opened = 0.0
        self.last_seen = 0.0
        self.last_sent = 0.0
        self.write_limit = write_limit
        self.close_timeout = close_timeout
        #: Why the server closed this connection, once it did.
        self.close_reason: str | None = None
        #: Whether it takes view patches (said at hello), and the id of the view it was
        #: shown last (:class:`server.core.room.Shown`; None: none, in this room).
        self.patches = False
        self.packed = False
        self.shown: int | None = None
        self._closer: asyncio.Task[None] | None = None
        #: The one timer of :meth:`watch`, and the timeouts it enforces (hello, idle).
        self._deadline: asyncio.TimerHandle | None = None
        self._timeouts: tuple[float, float | None] = (0.0, None)
        #: The server's metrics (None: not counted).
        self.metrics = metrics

    @property
    def closing(self) -> bool:
        """Whether the server is closing this connection."""
        return self.state is ConnState.CLOSING

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.name or '?'} from {self.address}>"

    def send_bytes(self, data: bytes, *, lossy: bool = False) -> None:
        """Queue one frame without waiting; close the connection if it cannot keep up. A
        ``lossy`` frame is left out instead when the connection is already slow to read."""
        if self.closing:
            return
        transport = self.ws.transport
        if (lossy and transport is not None
                and transport.get_write_buffer_size() > self.write_limit * LOSSY_FRACTION):
            self.dropped += 1
            return
        write_frame(self.ws, data)
        if self.metrics is not None:
            self.metrics.sent += len(data)
        self.last_sent = time.monotonic()
        if transport is not None and transport.get_write_buffer_size() > self.write_limit:
            log.warning("%r: closed as too slow, %d bytes unread", self,
                        transport.get_write_buffer_size())
            if self.metrics is not None:
                self.metrics.slow_closed.inc()
            self.close(1008, "too slow: the server could not deliver updates to you")

    def show(self, push: Push[Connection]) -> None:
        """Show this connection the room's view: as a patch when it takes patches and holds
        the view the patch is taken against, whole otherwise. Either is encoded once for
        the room, not per connection."""
        data = None
        base = push.base
        if self.patches and base is not None and base.id == self.shown:
            data = push.packed() if self.packed else push.patch()
        self.shown = push.shown.id
        if self.metrics is not None:
            self.metrics.pushed += 1
        self.send_bytes(data if data is not None else push.data)

    def watch(self, hello_timeout: float, idle_timeout: float | None) -> None:
        """Close this connection if it has not said hello within ``hello_timeout`` of its
        opening, and after that once idle (no frame from it, nothing sent to it) for
        ``idle_timeout`` (None: never).

        One timer per connection, which looks at the connection when it fires and is armed
        again for the deadline as it stands then (a frame or a push moved it meanwhile): a
        timeout armed around each frame read cost a timer, a context and a cancellation per
        frame, more than the rest of reading it."""
        self._timeouts = (hello_timeout, idle_timeout)
        # Neither deadline can come before this (the idle one runs from the last frame).
        self._arm(self.opened + min(hello_timeout, idle_timeout or hello_timeout))

    def unwatch(self) -> None:
        """Stop the timer of :meth:`watch` (the connection is gone)."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _arm(self, deadline: float) -> None:
        delay = max(0.0, deadline - time.monotonic())
        self._deadline = asyncio.get_running_loop().call_later(delay, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        if self.closing:
            return
        hello, idle = self._timeouts
        now = time.monotonic()
        if self.state is ConnState.GREETING:
            if now >= self.opened + hello:
                self.close(1008, "no hello: say hello first")
            else:
                self._arm(self.opened + hello)
            return
        if idle is None:
            return
        deadline = max(self.last_seen, self.last_sent) + idle
        if now >= deadline:
            self.close(1000, "idle for too long")
        else:
            self._arm(deadline)

    def close(self, code: int, reason: str) -> None:
        """Close without waiting for the peer (the handler's finally does the cleanup)."""
        if self.closing:
            return
        self.move(Move.CLOSE)
        self.close_reason = reason
        log.info("%r: closing (%d %s)", self, code, reason)
        self._closer = asyncio.get_running_loop().create_task(self._close(code, reason))

    def cut(self, reason: str) -> None:
        """Drop the socket at once, without a closing handshake: for a peer flooding control
        frames, which a handshake would go on reading and answering until its timeout."""
        if self.closing:
            return
        self.move(Move.CLOSE)
        self.close_reason = reason
        log.warning("%r: cut off (%s)", self, reason)
        if isinstance(self.ws, CastellWebSocket):
            self.ws.cut_off()
        else:
            self.ws.transport.abort()

    async def wait_closed(self) -> None:
        """Wait for a close this side started (so nothing closes it first with another code)."""
        if self._closer is not None:
            await asyncio.shield(self._closer)

    async def _close(self, code: int, reason: str) -> None:
        # The close frame queues behind whatever the peer has not read; a peer that reads
        # nothing never answers it, and websockets would wait for its buffer to drain
        # before even starting the close timeout. So: a bounded wait, then drop the socket.
        try:
            async with asyncio.timeout(self.close_timeout):
                await self.ws.close(code, reason)
        except TimeoutError:
            log.info("%r: no closing handshake within %.1f s; dropped", self,
                     self.close_timeout)
            with contextlib.suppress(Exception):
                self.ws.transport.abort()
        except Exception:  # the socket is already gone: nothing left to close
            log.debug("%r: close failed", self, exc_info=True)

    def move(self, move: Move) -> None:
        """Change this connection's protocol state: the only way it changes
        (:func:`server.edge.states.transition`)."""
        self.state = transition(self.state, move)

    def said_hello(self, name: str, patches: bool, *, packed: bool = False) -> None:
        """The connection said hello: it goes by ``name`` now, in the lobby; it takes view
        patches (``patches``), packed (``packed``: :mod:`shared.packed`) or not."""
        self.move(Move.HELLO)
        self.name = name
        self.patches = patches
        self.packed = packed

    def enter(self, room: RoomRunner, *, seated: bool) -> None:
        """The connection is now in ``room``, as a player or a spectator."""
        self.move(Move.SIT if seated else Move.WATCH)
        self.room = room

    def leave_room(self) -> None:
        """The connection is in no room any more (it left, its seat was taken back by a
        newer connection, or the room is served elsewhere now)."""
        self.room = None
        self.shown = None
        self.move(Move.LEAVE)
