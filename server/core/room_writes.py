"""What a room's change writes to the store: one record per write, performed by the driver
(:func:`server.runtime.runner.perform`), each fenced on the version the room stored last when the
room is fenced. Pure data: no store is called here."""

from __future__ import annotations

from typing import Any

import attrs

from server.store.base import ActionRecord, ChatRecord, Progress, SeatRecord


@attrs.frozen
class PutSeat:
    """Who holds a seat; with ``version``, the room's version stored in the same write."""

    record: SeatRecord
    version: int | None = None
    expect_version: int | None = None


@attrs.frozen
class RemoveSeat:
    room: str
    seat: int
    version: int | None = None
    expect_version: int | None = None


@attrs.frozen
class UpdateRoom:
    room: str
    version: int
    expect_version: int | None
    status: str | None = None
    started_at: float | None = None
    #: Where the game stands after the change (stored with the room, for ``my_games``).
    progress: Progress | None = None


@attrs.frozen
class AppendAction:
    record: ActionRecord
    expect_version: int | None
    #: Where the game stands after the action, stored by the same statement.
    progress: Progress | None = None


@attrs.frozen
class Finish:
    room: str
    result: dict[str, Any]
    finished_at: float
    expect_version: int | None = None
    #: A rated game: the driver stores its ratings with the result (server.features.ratings).
    rated: bool = False


@attrs.frozen
class AppendChat:
    """A chat line kept with the room (it changes no version; fenced like the rest)."""

    record: ChatRecord
    expect_version: int | None


@attrs.frozen
class ClaimSeat:
    """Which account a seat belongs to (None: none), written with every seat change, so that
    a seat never keeps the account of whoever held it before."""

    room: str
    seat: int
    account: str | None
    expect_version: int | None = None


#: One store write, performed by the driver (:func:`server.runtime.runner.perform`).
Write = PutSeat | RemoveSeat | UpdateRoom | AppendAction | Finish | AppendChat | ClaimSeat


def stores_version(writes: tuple[Write, ...]) -> bool:
    """Whether storing ``writes`` stores the room's version (what a read-back can check)."""
    return any(
        isinstance(w, UpdateRoom | AppendAction)
        or (isinstance(w, PutSeat | RemoveSeat) and w.version is not None)
        for w in writes
    )
