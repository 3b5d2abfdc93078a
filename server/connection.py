"""One client connection: its identity, its room, its limits, and how bytes reach it.

Every send is non-blocking (``websockets``' ``broadcast`` writes straight into the
transport), so no room ever waits on a slow client; instead a connection whose write buffer
grows past the limit is closed as too slow (docs/security.md).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection, broadcast

from server.limits import TokenBucket

if TYPE_CHECKING:
    from server.room import Room

log = logging.getLogger("castell.conn")

_ids = itertools.count(1)


class Connection:
    """A client connected over one websocket."""

    def __init__(self, ws: ServerConnection, address: str, bucket: TokenBucket,
                 write_limit: int) -> None:
        self.ws = ws
        self.address = address
        self.id = f"p{next(_ids)}"
        self.name: str | None = None
        self.room: Room | None = None
        self.bucket = bucket
        self.strikes = 0
        self.rooms_created = 0
        self.failed_resumes: list[float] = []
        self.opened = 0.0
        self.last_seen = 0.0
        self.write_limit = write_limit
        self.closing = False

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.name or '?'} from {self.address}>"

    def send_bytes(self, data: bytes) -> None:
        """Queue one frame without waiting; close the connection if it cannot keep up."""
        if self.closing:
            return
        broadcast([self.ws], data)
        transport = self.ws.transport
        if transport is not None and transport.get_write_buffer_size() > self.write_limit:
            log.warning("%r: closed, %d bytes unread", self, transport.get_write_buffer_size())
            self.close(1008, "too slow: the server could not deliver updates to you")

    def close(self, code: int, reason: str) -> None:
        """Close without waiting for the peer (the handler's finally does the cleanup)."""
        if self.closing:
            return
        self.closing = True
        asyncio.get_running_loop().create_task(self.ws.close(code, reason))

    def detach(self) -> None:
        """Forget the room (its seat was given to another connection)."""
        self.room = None
