"""The strict converter is whole from the start: what it accepts never depends on imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.store import STATUSES
from shared import messages as m
from shared.state import Festival, Prizes, Row, Skills
from shared.view import RoomInfo, RoomStatus, RoomStatusName, build_view, parse_view
from shared.wire import converter, field_error

REPO = Path(__file__).resolve().parents[1]

#: Wire values each of which the converter must refuse, with the type to structure them as.
BAD = {
    "festival": ("shared.state", "Festival",
                 {"round": 11, "region": "nowhere", "town": "x", "type": "III", "size": 0}),
    "row": ("shared.state", "Row", {"tiles": ["no-such-tile"], "tokens": 0}),
    "skills": ("shared.state", "Skills",
               {"balance": 9, "base": 0, "mix": 0, "strength": 0, "width": 0}),
    "prizes": ("shared.state", "Prizes", {"trophy": 99, "medal": 0, "ribbon": 0}),
    "move": ("shared.actions", "Move", {"region": "nowhere"}),
    "recruit": ("shared.actions", "Recruit", {"sizes": [11]}),
}

#: Structures every BAD value, once before ``sys.argv[1]`` is imported and once after, and
#: prints which were refused each time (the field the converter blamed, or None if accepted).
PROBE = """
import importlib, json, sys
from shared.wire import converter, field_error

def refused(bad):
    out = {}
    for name, (module, cls, value) in bad.items():
        try:
            converter.structure(value, getattr(importlib.import_module(module), cls))
            out[name] = None
        except Exception as exc:
            out[name] = field_error(exc).field
    return out

bad = json.loads(sys.argv[2])
before = refused(bad)
importlib.import_module(sys.argv[1])
print(json.dumps({"before": before, "after": refused(bad)}))
"""


def _probe(module: str) -> dict[str, dict[str, str | None]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, json.dumps(BAD)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", ["shared.view", "shared.messages", "shared.codec"])
def test_the_converter_refuses_the_same_before_and_after_any_import(module):
    seen = _probe(module)
    expected = {"festival": "round", "row": "tiles[0]", "skills": "balance",
                "prizes": "trophy", "move": "region", "recruit": "sizes[0]"}
    assert seen["before"] == expected
    assert seen["after"] == expected


def test_state_classes_are_read_with_their_limits():
    good = {"round": 3, "region": "gir", "town": "Olot", "type": "I", "size": 4}
    assert converter.structure(good, Festival) == Festival(3, "gir", "Olot", "I", 4)
    for cls, value in ((Row, {"tiles": ["x"], "tokens": 0}), (Skills, {"mix": 4}),
                       (Prizes, {"medal": 15})):
        with pytest.raises(Exception) as info:
            converter.structure(value, cls)
        assert field_error(info.value).code == "invalid_field"


def test_a_room_status_is_its_plain_name_on_the_wire():
    assert [str(s) for s in RoomStatus] == ["waiting", "playing", "finished"] == list(STATUSES)
    assert all(type(s) is str for s in STATUSES)
    read = converter.structure(RoomStatus.PLAYING, RoomStatusName)
    assert read == "playing" and type(read) is str
    with pytest.raises(Exception) as info:
        converter.structure("paused", RoomStatusName)
    assert "waiting, playing, finished" in field_error(info.value).message
    summary = m.RoomSummary("r1", "Sala", 3, 1, "normal", RoomStatus.FINISHED, None)
    wire = m.to_wire(m.Rooms(1, (summary,)))
    assert wire["rooms"][0]["status"] == "finished"
    assert m.from_wire(wire).rooms[0].status == "finished"


def test_a_view_built_with_a_status_member_reads_back():
    room = RoomInfo("r1", "Sala", "normal", 2, status=RoomStatus.WAITING)
    assert parse_view(build_view(room, None)).status == "waiting"
    assert RoomInfo("r1", "Sala", "normal", 2).status == "waiting"
