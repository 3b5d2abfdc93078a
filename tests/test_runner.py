"""The room's runner (server/runtime/runner.py) at its own layer: a real room, a real SQLite file,
no
sockets (the rooms here have no members: a quick match's players and bots are seated without
a connection).

The faults are real: the store is :class:`~server.store.sqlite.SQLiteStore` itself, a
subclass of which stores a write and then loses its answer, and whose read-back is held on an
:class:`asyncio.Event` the test controls. The turn timer runs on a virtual clock
(:class:`server.runtime.timers.ManualTimers`) that the test moves on: no test here waits real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.core.room import Room
from server.runtime.runner import RoomRunner
from server.runtime.timers import VirtualClock
from server.store.base import RoomRecord
from server.store.sqlite import SQLiteStore

pytestmark = pytest.mark.timeout(30)

NOW = 1_000_000.0


class LostAnswers(SQLiteStore):
    """A SQLite store whose next seat write fails: stored but its answer lost (as when the
    connection drops after the commit), or with ``before`` not stored at all; and whose read
    of the stored version waits, while ``hold`` is set, until ``release`` is."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.lose_next = False
        self.before = False
        self.hold = False
        self.reading = asyncio.Event()
        self.release = asyncio.Event()

    async def put_seat(self, *args: Any, **kwargs: Any) -> None:
        if self.lose_next and self.before:
            self.lose_next = False
            raise ConnectionResetError("the connection dropped before the write")
        await super().put_seat(*args, **kwargs)
        if self.lose_next:
            self.lose_next = False
            raise ConnectionResetError("the answer to the write was lost")

    async def stored_version(self, room: str) -> int | None:
        if self.hold:
            self.reading.set()
            await self.release.wait()
        return await super().stored_version(room)


async def stored_room(store: SQLiteStore, *, seats: int = 2,
                      turn_seconds: int | None = None) -> Room[Any]:
    await store.create_room(RoomRecord("r1", "Table", seats, "normal", turn_seconds, False,
                                       None, seed=7, created_at=NOW))
    return Room("r1", "Table", seats, "normal", turn_seconds, False, seed=7, now=NOW)


@pytest.fixture
async def lossy(tmp_path: Path) -> AsyncIterator[LostAnswers]:
    store = LostAnswers(tmp_path / "castell.sqlite3")
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "not-stored"])
async def test_a_change_cancelled_during_its_read_back_leaves_the_room_free_to_change(
        lossy: LostAnswers, stored: bool) -> None:
    # a write fails (its answer lost, or the write itself), and while the runner reads back
    # whether it was stored, the task is cancelled (a server stopping, a connection's task
    # ended): the room must not keep the change pending, or every later change fails "a
    # change is already in flight"
    runner = RoomRunner(await stored_room(lossy), lossy, clock=lambda: NOW)
    lossy.lose_next = lossy.hold = True
    lossy.before = not stored
    seating = asyncio.get_running_loop().create_task(runner.seat_bots({0: "easy"}))
    async with asyncio.timeout(10):
        await lossy.reading.wait()  # the write was stored, its answer lost: reading back
    seating.cancel()
    with pytest.raises(asyncio.CancelledError):
        await seating
    lossy.hold = False
    # the room takes a later change; what the store held of the cancelled one is read first
    await runner.seat_bots({1: "normal"})
    room = runner.room
    record = await lossy.load("r1")
    assert record is not None
    if stored:  # the store held the cancelled change: the room went on from it
        assert [seat is not None and seat.bot for seat in room.seats] == ["easy", "normal"]
        assert record.room.version == room.version == 2
        assert sorted((s.seat, s.bot_level) for s in record.seats) == \
            [(0, "easy"), (1, "normal")]
    else:  # it did not: the room is as before it, plus the later change
        assert [seat is not None and seat.bot for seat in room.seats] == [False, "normal"]
        assert record.room.version == room.version == 1
        assert [(s.seat, s.bot_level) for s in record.seats] == [(1, "normal")]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "castell.sqlite3")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_turn_timer_runs_out_on_a_virtual_clock(store: SQLiteStore) -> None:
    # a quick match's room with a 30 s turn timer; its time is the test's: the turn ends
    # when the clock is moved past the deadline, and no real second is waited
    clock = VirtualClock(NOW)
    runner = RoomRunner(await stored_room(store, turn_seconds=30), store, clock=clock,
                        scheduler=clock)
    await runner.seat_matched([("Anna", "anna-token", None), ("Biel", "biel-token", None)])
    assert runner.room.state is not None
    first, version = runner.room.state.turn, runner.room.version
    async with asyncio.timeout(10):
        deadline = await clock.deadline()
    assert deadline == NOW + 30 and runner.room.deadline == NOW + 30
    clock.advance(29.5)
    assert clock.deadlines == [deadline]  # not yet run out
    clock.advance(0.5)
    async with asyncio.timeout(10):  # the next turn's timer is armed once the end is stored
        following = await clock.deadline(later_than=deadline)
    assert following == NOW + 60
    state = runner.room.state
    assert state is not None and state.turn == 1 - first
    assert runner.room.version == version + 1
    record = await store.load("r1")
    assert record is not None and record.room.version == version + 1
    last = record.actions[-1]
    assert (last.seat, last.timed_out) == (first, True)
    runner.close()
    assert clock.deadlines == []  # closing the room stops its timer
