"""What every benchmark shares: seeded sample games, percentiles, ratios, and the machine.

Each benchmark prints its figures next to a baseline measured in the same run, and the ratio
of the two; absolute times on a shared machine mean little, ratios travel better.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from shared import engine
from shared.actions import Action, Build
from shared.errors import RuleError
from shared.events import Event
from shared.solver import TallestGoal, best_tower
from shared.state import GameState
from shared.view import RoomInfo, SeatInfo

NAMES = ("Anna", "Biel", "Carme", "Dani")

#: The repository root: subprocesses run from here with it on PYTHONPATH.
ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    """One line naming what the figures were measured on, and how busy it was (the load
    average: on a shared machine, other work shows in every figure)."""
    versions = []
    for dist in ("websockets", "msgpack", "cattrs", "attrs"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append(f"{dist} {metadata.version(dist)}")
    load = ""
    with contextlib.suppress(OSError):
        load = f", load average {os.getloadavg()[0]:.1f}"
    return (f"{os.cpu_count()} cpu(s){load}, {platform.python_implementation()} "
            f"{platform.python_version()} on {sys.platform}, " + ", ".join(versions))


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values (0 when there are none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def ratio(value: float, base: float) -> str:
    """``value / base`` as ``2.31×``; ``-`` when the baseline is zero."""
    return f"{value / base:.2f}×" if base else "-"


def best_of(fn: Callable[[], Any], number: int, repeat: int = 5) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` runs of ``number`` calls each (the
    least disturbed run, as ``timeit`` recommends)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def random_action(state: GameState, rng: random.Random) -> Action:
    """A random legal action of the seat to act, from ``shared.engine.legal_actions``."""
    assert state.turn is not None
    return rng.choice(engine.legal_actions(state, state.turn))


def sample_game(seats: int = 4, seed: int = 1, until_round: int = 5,
                ) -> tuple[GameState, list[Event]]:
    """A seeded game played up to the start of ``until_round``: random legal actions, and at
    each turn's start the tallest tower the player can build (so the view carries towers).

    Then the seat to act takes its first legal action (a move): the state and that action's
    events make a typical mid-game ``state`` push.
    """
    rng = random.Random(seed)
    state = engine.new_game(list(NAMES[:seats]), "normal", seed)
    events: list[Event] = []
    while not state.over and state.round < until_round:
        seat = state.turn
        assert seat is not None
        player = state.players[seat]
        if not state.done and len(player.team) >= 3:
            found = best_tower(player.team, player.skills, TallestGoal())
            if found is not None and found.levels != player.tower:
                with contextlib.suppress(RuleError):
                    state, events = engine.apply(state, seat, Build(found.levels))
        state, events = engine.apply(state, seat, random_action(state, rng))
    if not state.over:
        assert state.turn is not None
        state, events = engine.apply(state, state.turn, engine.legal_actions(state, state.turn)[0])
    return state, events


def room_info(state: GameState, room: str = "r1b2c3d4") -> RoomInfo:
    """The public facts of a room of people playing ``state``."""
    return RoomInfo(room=room, name="Friday night", variant=state.variant, seats=state.seats,
                    turn_seconds=120, status="finished" if state.over else "playing",
                    deadline=time.time() + 60 if not state.over else None,
                    players=tuple(SeatInfo(p.seat, p.name) for p in state.players))


def rss_kib(pid: int) -> int:
    """Resident memory of process ``pid`` in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def table(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as aligned text: the first column left, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)
