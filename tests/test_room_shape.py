"""The room's shape (server/core/room*.py): sans-I/O, by concern, its changes as data.

``import server.core.room`` loads no asyncio, sockets, store backend, Redis, ratings mathematics
or accounts; no class of it has over 30 methods; and a change in flight holds no code, only
its writes and its outcome."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import attrs

from server.core.room import Room
from server.core.room_change import Seated

ROOT = Path(__file__).resolve().parent.parent
CHECK = ("import server.core.room, sys; print(sorted(m for m in sys.modules if m.startswith(("
         "'asyncio', 'websockets', 'openskill', 'redis', 'server.store.sqlite', "
         "'server.store.postgres', 'server.features.accounts'))))")


def test_importing_the_room_loads_no_io_store_backend_or_ratings_mathematics() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_no_class_of_the_room_has_over_30_methods() -> None:
    counts = {}
    for path in sorted((ROOT / "server" / "core").glob("room*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                counts[f"{path.name}:{node.name}"] = sum(
                    isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in node.body)
    assert "room.py:Room" in counts
    assert {name: n for name, n in counts.items() if n > 30} == {}


def _code_in(value: object, seen: set[int]) -> list[object]:
    """Every function or method reachable from ``value`` through attrs fields and
    containers."""
    if id(value) in seen:
        return []
    seen.add(id(value))
    if callable(value) and not isinstance(value, type):
        return [value]
    if attrs.has(type(value)):
        return [c for f in attrs.fields(type(value))
                for c in _code_in(getattr(value, f.name), seen)]
    if isinstance(value, list | tuple | set | frozenset):
        return [c for item in value for c in _code_in(item, seen)]
    if isinstance(value, dict):
        return [c for item in value.items() for c in _code_in(item, seen)]
    return []


def test_a_change_in_flight_is_its_writes_and_its_outcome() -> None:
    room: Room[str] = Room("r1", "Table", 2, "normal", 60, False, seed=7, now=1.0)
    change = room.take_seat("anna", "Anna", 1, now=1.0)
    assert room.versions.pending is change
    assert isinstance(change.outcome, Seated) and change.outcome.seat.name == "Anna"
    assert _code_in(change, set()) == []
    room.commit(change, now=1.0)
    room.commit(room.take_seat("biel", "Biel", 2, now=1.0), now=1.0)
    room.commit(room.start("anna", 3, now=1.0), now=1.0)
    state = room.state
    assert state is not None and state.turn is not None
    timed_out = room.timer_fired((state.round, state.turn), now=2.0)
    assert timed_out is not None and _code_in(timed_out, set()) == []
