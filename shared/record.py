"""A game's record: the file ``castell-server export`` writes and ``castell replay`` reads.

A game is its seed, its seats and its list of actions, so the record holds exactly those
(plus the room's settings and the result) as JSON, and :mod:`shared.replay` rebuilds every
state of the game from it with the rules engine. A resignation (docs/rules.md §10) is in the
list where it happened, as ``{"kind": "resign"}``: a record without one (every record
written before resigning existed) replays as it always did. Note that a record holds the
seed, which reveals the bag's order: export a game only when it is over, or only for
yourself.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from shared.actions import Recorded, action_fields
from shared.errors import CastellError, ProtocolError
from shared.events import Event
from shared.messages import recorded_from_fields
from shared.state import GameState

FORMAT = "castell-game"
FORMAT_VERSION = 1
#: The largest integer a record holds as a number: what a JSON reader holds exactly (2**53 - 1).
#: A larger seed (a game stored before seeds were drawn within 53 bits, up to 2**63 - 1) is
#: held as its decimal string instead; :meth:`GameRecordFile.from_data` reads either.
SAFE_INT = 2**53 - 1
#: Seeds a record may hold: 0 to SEED_LIMIT - 1 (the store's limit).
SEED_LIMIT = 2**63


class RecordError(CastellError):
    """Raised when a game record cannot be read (not a record, a newer format, bad data)."""

    code = "bad_record"


@attrs.frozen
class RecordedAction:
    """One action of the game (or a resignation): who, what, when (Unix seconds);
    ``timed_out`` when the turn timer played it (an ``end_turn`` for a seat that ran out of
    time)."""

    seat: int
    action: Recorded
    at: float = 0.0
    timed_out: bool = False


@attrs.frozen
class GameRecordFile:
    """Everything needed to replay one game."""

    room: str
    name: str
    variant: str
    seats: tuple[str, ...]  # seat names, by seat
    bots: tuple[bool, ...]
    seed: int
    actions: tuple[RecordedAction, ...]
    turn_seconds: int | None = None
    result: dict[str, Any] | None = None

    def to_json(self) -> str:
        return json.dumps(self.to_data(), indent=1, ensure_ascii=False)

    def to_data(self) -> dict[str, Any]:
        """The record as plain data (the file's JSON, and the wire's ``record`` reply)."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "room": self.room,
            "name": self.name,
            "variant": self.variant,
            "turn_seconds": self.turn_seconds,
            "seed": self.seed if self.seed <= SAFE_INT else str(self.seed),
            "seats": [{"seat": i, "name": n, "bot": b}
                      for i, (n, b) in enumerate(zip(self.seats, self.bots, strict=True))],
            "actions": [{"seat": a.seat, "at": a.at, "action": action_fields(a.action),
                         **({"timed_out": True} if a.timed_out else {})}
                        for a in self.actions],
            "result": self.result,
        }

    @classmethod
    def from_json(cls, text: str) -> GameRecordFile:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RecordError(f"not a Castell game record: {exc}") from exc
        return cls.from_data(data)

    @classmethod
    def from_data(cls, data: Any) -> GameRecordFile:
        """The record held by plain data, as :meth:`to_data` gives it (checked likewise)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordError("not a Castell game record")
        if data.get("version") != FORMAT_VERSION:
            raise RecordError(
                f"this record has format version {data.get('version')}; this Castell "
                f"reads version {FORMAT_VERSION}"
            )
        try:
            seats = sorted(data["seats"], key=lambda s: s["seat"])
            return cls(
                room=str(data["room"]), name=str(data["name"]), variant=str(data["variant"]),
                turn_seconds=data.get("turn_seconds"), seed=_seed(data["seed"]),
                seats=tuple(str(s["name"]) for s in seats),
                bots=tuple(bool(s["bot"]) for s in seats),
                actions=tuple(
                    RecordedAction(int(a["seat"]), recorded_from_fields(a["action"]),
                                   float(a.get("at", 0.0)), a.get("timed_out") is True)
                    for a in data["actions"]
                ),
                result=data.get("result"),
            )
        except ProtocolError as exc:  # an action the wire would refuse
            raise RecordError(f"a damaged game record: an action is not valid: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"a damaged game record: {exc!r}") from exc


def _seed(value: Any) -> int:
    """A record's ``seed``: an integer, or (a seed over :data:`SAFE_INT`) its decimal
    string; 0 to :data:`SEED_LIMIT` - 1 either way."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        seed = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        seed = value
    else:
        raise RecordError(f"a damaged game record: its seed is {value!r}, not an integer")
    if not 0 <= seed < SEED_LIMIT:
        raise RecordError(f"a damaged game record: its seed {seed} is out of range")
    return seed


def replay(record: GameRecordFile) -> list[tuple[GameState, list[Event]]]:
    """Every state of the game, from the setup (with no events) to the last action
    (:func:`shared.replay.record_steps`)."""
    from shared.replay import record_steps

    return record_steps(record)
