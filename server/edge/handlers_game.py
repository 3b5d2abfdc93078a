"""The game's request: ``action``, a player's move, which the room's runner applies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import room_of

if TYPE_CHECKING:
    from server.runtime.connection import Connection
    from shared import messages as m


async def action(conn: Connection, msg: m.ActionRequest) -> None:
    """Play ``msg.action`` from the connection's seat (its room answers ``ok``)."""
    await room_of(conn).act(conn, msg.action, msg.id)
