"""The ``RoomInfo`` a view is built from: one builder for every test that needs one."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from shared.state import GameState
from shared.view import RoomInfo, SeatInfo

#: The turn deadline of a playing test room (Unix time).
DEADLINE = 1_700_000_090.5


def room_info(state: GameState | None = None, *, bots: Collection[int] = (),
              offline: Collection[int] = (), **changes: Any) -> RoomInfo:
    """A playing room "r-1" ("Sala") with a 90 s turn; with ``state``, of its variant and
    seats, every player seated (those in ``bots`` as bots, those in ``offline`` not
    connected). ``changes`` set any field (``players`` included)."""
    fields: dict[str, Any] = {
        "room": "r-1", "name": "Sala", "variant": "normal", "seats": 3, "turn_seconds": 90,
        "status": "playing", "deadline": DEADLINE, "players": (),
    }
    if state is not None:
        fields.update(
            variant=state.variant, seats=state.seats,
            players=tuple(SeatInfo(p.seat, p.name, bot=p.seat in bots,
                                   connected=p.seat not in offline) for p in state.players))
    return RoomInfo(**{**fields, **changes})


def room_of(view: dict[str, Any]) -> RoomInfo:
    """The room a (plain) view says it was built from."""
    return room_info(
        room=view["room"], name=view["name"], variant=view["variant"], seats=view["seats"],
        turn_seconds=view["turn_seconds"], status=view["status"], deadline=view["deadline"],
        players=tuple(SeatInfo(p["seat"], p["name"], p["bot"], p["connected"])
                      for p in view["players"]),
    )
