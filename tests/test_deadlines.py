"""One heap for a node's deadlines (server/runtime/deadlines.py): the heap by value, with no
clock (many rooms, arming again, cancelling, their order, one time for several); the same
heap on the event loop, which holds one handle for all of them and starts no task; and the
turn timers of rooms on it, armed again and cancelled as a room's effects say. Nothing here
waits a real timer: a deadline the loop runs is one whose time has come already."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from server.runtime.deadlines import COMPACT_AT, DeadlineHeap, LoopDeadlines
from server.runtime.timers import LoopScheduler, VirtualClock

pytestmark = pytest.mark.timeout(60)


def test_many_rooms_deadlines_run_in_the_order_of_their_times() -> None:
    heap = DeadlineHeap()
    rng = random.Random(3)
    times = [rng.uniform(0, 7 * 24 * 3600) for _ in range(10_000)]
    ran: list[float] = []
    for when in times:
        heap.push(when, ran.append, when)
    assert len(heap) == 10_000 and heap.soonest == min(times)
    middle = sorted(times)[4_999]
    assert heap.run_due(middle) == 5_000
    assert ran == sorted(times)[:5_000]
    assert heap.soonest == sorted(times)[5_000] and len(heap) == 5_000
    heap.run_due(float("inf"))
    assert ran == sorted(times) and len(heap) == 0 and heap.soonest is None


def test_nothing_runs_before_its_time() -> None:
    heap = DeadlineHeap()
    ran: list[str] = []
    heap.push(10.0, ran.append, "a")
    assert heap.run_due(9.999) == 0 and ran == []
    assert heap.run_due(10.0) == 1 and ran == ["a"]
    assert heap.run_due(1e9) == 0 and ran == ["a"]  # once only


def test_deadlines_of_one_time_run_in_the_order_they_were_set() -> None:
    heap = DeadlineHeap()
    ran: list[int] = []
    for n in range(50):
        heap.push(100.0, ran.append, n)
    heap.push(99.0, ran.append, -1)
    heap.run_due(100.0)
    assert ran == [-1, *range(50)]


def test_a_cancelled_deadline_never_runs_and_arming_again_replaces() -> None:
    heap = DeadlineHeap()
    ran: list[str] = []
    first = heap.push(60.0, ran.append, "turn 1")
    first.cancel()  # armed again: the last deadline is replaced
    second = heap.push(120.0, ran.append, "turn 1, again")
    other = heap.push(30.0, ran.append, "another room")
    assert len(heap) == 2 and heap.soonest == 30.0
    assert not first.pending and second.pending and other.pending
    heap.run_due(1000.0)
    assert ran == ["another room", "turn 1, again"]
    second.cancel()  # after it ran: nothing happens
    first.cancel()  # twice: nothing either
    assert len(heap) == 0


def test_the_soonest_skips_the_cancelled() -> None:
    heap = DeadlineHeap()
    soon = heap.push(1.0, print)
    heap.push(5.0, print)
    soon.cancel()
    assert heap.soonest == 5.0 and heap.waiting() == [5.0]


def test_arming_one_room_again_and_again_keeps_the_heap_small() -> None:
    # a 7-day timer armed again at every turn: the cancelled entries would stay a week
    heap = DeadlineHeap()
    waiting = [heap.push(1e6 + n, print) for n in range(10)]  # other rooms
    entry = heap.push(7 * 86400.0, print)
    for turn in range(10_000):
        entry.cancel()
        entry = heap.push(7 * 86400.0 + turn, print)
        assert heap.size <= 2 * (COMPACT_AT + len(heap)) + 1
    assert len(heap) == 11 and all(w.pending for w in waiting)


def test_cancelling_every_deadline_empties_the_heap_and_says_so() -> None:
    emptied: list[bool] = []
    heap = DeadlineHeap(emptied=lambda: emptied.append(True))
    entries = [heap.push(float(n), print) for n in range(5)]
    for entry in entries[:-1]:
        entry.cancel()
    assert emptied == []
    entries[-1].cancel()
    assert emptied == [True] and heap.size == 0 and heap.soonest is None


def test_a_failing_callback_is_logged_and_the_others_still_run(
        caplog: pytest.LogCaptureFixture) -> None:
    heap = DeadlineHeap()
    ran: list[str] = []

    def fails() -> None:
        raise RuntimeError("boom")

    heap.push(1.0, ran.append, "before")
    heap.push(2.0, fails)
    heap.push(3.0, ran.append, "after")
    with caplog.at_level(logging.ERROR):
        assert heap.run_due(3.0) == 3
    assert ran == ["before", "after"]
    assert any("deadline's callback failed" in r.getMessage() for r in caplog.records)


def test_a_deadline_set_by_a_callback_runs_in_the_same_pass_when_due() -> None:
    heap = DeadlineHeap()
    ran: list[str] = []
    heap.push(1.0, lambda: heap.push(2.0, ran.append, "set meanwhile"))
    heap.push(3.0, ran.append, "later")
    heap.run_due(2.5)
    assert ran == ["set meanwhile"]


def _live_handles(loop: asyncio.AbstractEventLoop) -> int:
    """The timer handles waiting in the loop's queue (asyncio's own loop; a test only)."""
    return sum(not handle.cancelled() for handle in loop._scheduled)  # type: ignore[attr-defined]


async def test_the_loop_holds_one_handle_for_all_the_deadlines_and_no_task() -> None:
    loop = asyncio.get_running_loop()
    handles, tasks = _live_handles(loop), len(asyncio.all_tasks())
    deadlines = LoopDeadlines()
    entries = [deadlines.call_later(3600.0 + n, print) for n in range(1_000)]
    assert len(deadlines) == 1_000 and deadlines.handles == 1
    assert _live_handles(loop) == handles + 1
    assert len(asyncio.all_tasks()) == tasks
    # a sooner deadline moves the one handle; it is still one
    soon = deadlines.call_later(60.0, print)
    assert _live_handles(loop) == handles + 1
    assert min(h.when() for h in loop._scheduled if not h.cancelled()) == soon.when  # type: ignore[attr-defined]
    soon.cancel()
    for entry in entries:
        entry.cancel()
    assert len(deadlines) == 0 and deadlines.handles == 0
    assert _live_handles(loop) == handles


async def test_the_loop_runs_the_deadlines_whose_time_has_come_in_order() -> None:
    deadlines = LoopDeadlines()
    ran: list[int] = []
    done = asyncio.Event()
    later = deadlines.call_later(3600.0, ran.append, 99)
    # deadlines whose time has passed already: the one handle runs them on the loop's next
    # turns, soonest first, and is then set for the next one still waiting
    for n in (3, 1, 2):
        deadlines.call_later(-n, ran.append, -n)
    deadlines.call_later(-0.5, done.set)
    async with asyncio.timeout(10):
        await done.wait()
    assert ran == [-3, -2, -1]
    assert later.pending and deadlines.handles == 1 and len(deadlines) == 1
    later.cancel()
    assert deadlines.handles == 0


async def test_a_scheduler_runs_a_deadline_of_no_delay_at_once() -> None:
    for scheduler in (LoopScheduler(), VirtualClock(50.0)):
        fired = asyncio.Event()
        scheduler.call_later(0.0, fired.set)
        async with asyncio.timeout(10):
            await fired.wait()  # no clock moved: a deadline of no delay does not wait
        cancelled = asyncio.Event()
        scheduler.call_later(0.0, cancelled.set).cancel()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert not cancelled.is_set()


async def test_a_virtual_clock_runs_its_deadlines_and_waits_from_one_heap() -> None:
    clock = VirtualClock(1000.0)
    ran: list[str] = []
    clock.call_later(30.0, ran.append, "turn timer")
    cancelled = clock.call_later(10.0, ran.append, "cancelled")
    sleeper = asyncio.ensure_future(clock.sleep(20.0))
    await asyncio.sleep(0)  # the sleeper's first step: its wait is set
    async with asyncio.timeout(10):
        assert await clock.deadline() == 1010.0
        assert await clock.deadline(later_than=1010.0) == 1020.0
    cancelled.cancel()
    assert clock.deadlines == [1020.0, 1030.0]
    clock.advance(20.0)
    async with asyncio.timeout(10):
        await sleeper
    assert ran == []
    clock.advance(10.0)
    assert ran == ["turn timer"] and clock.deadlines == []
