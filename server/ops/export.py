"""``castell-server export``: a stored game as a record file (``shared.record``), and the
state a stored game stands at (:func:`stored_state`, replayed by :mod:`shared.replay`)."""

from __future__ import annotations

from pathlib import Path

from server.store.base import ActionRecord, GameRecord
from server.store.errors import StoreError
from shared.actions import Recorded
from shared.codec import unpack_action
from shared.errors import ProtocolError
from shared.record import GameRecordFile, RecordedAction
from shared.replay import record_state
from shared.state import GameState
from shared.view import RoomStatus


def _action(stored: ActionRecord) -> Recorded:
    try:
        return unpack_action(stored.action)
    except ProtocolError as exc:
        raise StoreError(
            f"room {stored.room}: stored action {stored.seq} cannot be read ({exc})",
            code="corrupt_database",
        ) from exc


def record_file(record: GameRecord) -> GameRecordFile:
    """The record file of a stored game (``corrupt_database`` when a stored action cannot be
    read)."""
    r = record.room
    seats = sorted(record.seats, key=lambda s: s.seat)
    return GameRecordFile(
        room=r.room, name=r.name, variant=r.variant, turn_seconds=r.turn_seconds,
        seed=r.seed, seats=tuple(s.name for s in seats), bots=tuple(s.bot for s in seats),
        actions=tuple(RecordedAction(a.seat, _action(a), a.at, a.timed_out)
                      for a in record.actions),
        result=record.result,
    )


def stored_state(record: GameRecord) -> GameState | None:
    """The state a stored game stands at, replayed from its record (None before its start).
    Raises ``corrupt_database`` when a stored action cannot be read, and what the rules
    engine raises when they refuse one."""
    if record.room.status == RoomStatus.WAITING:
        return None
    return record_state(record_file(record))


def export_game(record: GameRecord, path: str | Path) -> None:
    """Write the record file; refuses to overwrite an existing file."""
    with open(path, "x", encoding="utf-8") as out:
        out.write(record_file(record).to_json())
