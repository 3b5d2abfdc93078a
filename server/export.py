"""``castell-server export``: a stored game as a record file (``shared.record``)."""

from __future__ import annotations

from pathlib import Path

from server.store.base import ActionRecord, GameRecord
from server.store.errors import StoreError
from shared.actions import Action
from shared.codec import unpack_action
from shared.errors import ProtocolError
from shared.record import GameRecordFile, RecordedAction


def _action(stored: ActionRecord) -> Action:
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


def export_game(record: GameRecord, path: str | Path) -> None:
    """Write the record file; refuses to overwrite an existing file."""
    with open(path, "x", encoding="utf-8") as out:
        out.write(record_file(record).to_json())
