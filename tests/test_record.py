"""A game record file reads its actions as the wire does, and refuses a bad one in words."""

from __future__ import annotations

import json

import pytest

from shared.actions import Build, EndTurn, Move, Recruit
from shared.record import GameRecordFile, RecordedAction, RecordError


def a_record() -> GameRecordFile:
    return GameRecordFile(
        room="r1", name="Festa", variant="normal", seats=("Anna", "Biel"), bots=(False, True),
        seed=7, actions=(RecordedAction(0, Move("ebr"), 1.5), RecordedAction(0, Recruit((3,))),
                         RecordedAction(0, Build(((3,),))), RecordedAction(0, EndTurn())),
    )


def test_a_record_round_trips_through_json():
    record = a_record()
    assert GameRecordFile.from_json(record.to_json()) == record


@pytest.mark.parametrize(("action", "says"), [
    ({"kind": "recruit", "sizes": [3, 11]}, "sizes[1] must be from 1 to 10"),
    ({"kind": "move"}, "region is missing"),
    ({"kind": "end_turn", "id": 0}, "id is not a field"),
    (["end_turn"], "an action must be a map"),
])
def test_a_bad_action_makes_a_damaged_record(action, says):
    data = json.loads(a_record().to_json())
    data["actions"][1]["action"] = action
    with pytest.raises(RecordError) as refused:
        GameRecordFile.from_json(json.dumps(data))
    assert str(refused.value).startswith("a damaged game record: an action is not valid: ")
    assert says in str(refused.value)
