"""The game's requests: ``action``, a player's move, and ``resign``, a player conceding the
game (docs/rules.md §10), which the room's runner applies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.edge.dispatch import room_of
from shared.actions import Resign

if TYPE_CHECKING:
    from server.runtime.connection import Connection
    from shared import messages as m


async def action(conn: Connection, msg: m.ActionRequest) -> None:
    """Play ``msg.action`` from the connection's seat (its room answers ``ok``)."""
    await room_of(conn).act(conn, msg.action, msg.id)


async def resign(conn: Connection, msg: m.ResignRequest) -> None:
    """Resign the game from the connection's seat (its room answers ``ok``); stored in the
    game's list of actions, as an action is."""
    await room_of(conn).act(conn, Resign(), msg.id)
