"""``castell-server export``: a stored game as a record file (``shared.record``)."""

from __future__ import annotations

from pathlib import Path

from server.room import decode_action
from server.store.base import GameRecord
from shared.record import GameRecordFile, RecordedAction


def record_file(record: GameRecord) -> GameRecordFile:
    """The record file of a stored game."""
    r = record.room
    seats = sorted(record.seats, key=lambda s: s.seat)
    return GameRecordFile(
        room=r.room, name=r.name, variant=r.variant, turn_seconds=r.turn_seconds,
        seed=r.seed, seats=tuple(s.name for s in seats), bots=tuple(s.bot for s in seats),
        actions=tuple(RecordedAction(a.seat, decode_action(a.action), a.at)
                      for a in record.actions),
        result=record.result,
    )


def export_game(record: GameRecord, path: str | Path) -> None:
    """Write the record file; refuses to overwrite an existing file."""
    with open(path, "x", encoding="utf-8") as out:
        out.write(record_file(record).to_json())
