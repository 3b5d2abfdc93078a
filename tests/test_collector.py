"""The collector's policy (server.runtime.collector) on this process's real collector: young
collections rare, survivors frozen after each collection, a thaw (one
whole collection) only once the frozen set has grown and an interval has passed, and
CPython's thresholds back at the end. Each test leaves the collector as it found it."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator

import pytest

from server.runtime.collector import Collector


class _Cycle:
    """An object in a reference cycle with itself: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def scheduled() -> Iterator[list[Callable[[], None]]]:
    """What the collector asked to run soon, in order (the event loop's part, run by hand)."""
    thresholds = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    asked: list[Callable[[], None]] = []
    try:
        yield asked
    finally:
        gc.set_threshold(*thresholds)
        if gc.get_freeze_count() != frozen_before:
            gc.unfreeze()


def test_start_freezes_what_start_up_left_and_takes_the_young_threshold(scheduled):
    thresholds = gc.get_threshold()
    collector = Collector(scheduled.append, young=12_345, floor=10)
    collector.start()
    assert gc.get_threshold() == (12_345, *thresholds[1:])
    assert collector.frozen == collector.baseline > 0
    collector.stop()
    assert gc.get_threshold() == thresholds
    assert collector._collected not in gc.callbacks


def test_every_collection_asks_for_a_freeze_of_its_survivors(scheduled):
    collector = Collector(scheduled.append, floor=10**9)
    collector.start()
    try:
        assert scheduled == []
        gc.collect(0)
        gc.collect(1)
        assert scheduled == [collector.freeze, collector.freeze]
        survivors = [_Cycle() for _ in range(100)]
        frozen = gc.get_freeze_count()
        scheduled.pop()()
        assert gc.get_freeze_count() >= frozen + len(survivors)
        assert collector.thaws == 0
        assert collector.frozen == collector.baseline  # not counted again within the hour
    finally:
        collector.stop()


def test_cycles_frozen_then_dropped_are_freed_at_the_thaw_once_the_set_grew(scheduled):
    collector = Collector(scheduled.append, floor=1_000, every=0.0)
    collector.start()
    try:
        cycles = [_Cycle() for _ in range(collector.baseline + 2_000)]
        alive = [weakref.ref(c) for c in cycles[:10]]
        gc.freeze()  # as a freeze after a collection would: the cycles are frozen now
        del cycles
        gc.collect()  # frozen: no collection frees them
        assert all(ref() is not None for ref in alive)
        assert collector.thaw_due()
        scheduled.clear()
        collector.freeze()  # the next freeze asked for is a thaw
        assert collector.thaws == 1
        assert all(ref() is None for ref in alive)
        assert collector.baseline == collector.frozen
        assert not collector.thaw_due()
    finally:
        collector.stop()


def test_a_doubled_set_waits_for_the_thaws_interval(scheduled):
    now = [1_000.0]
    collector = Collector(scheduled.append, floor=1_000, every=3_600.0, clock=lambda: now[0])
    collector.start()
    try:
        keep = [_Cycle() for _ in range(collector.baseline + 2_000)]
        gc.freeze()
        now[0] += 3_599.0
        assert not collector.thaw_due()
        collector.freeze()
        assert collector.thaws == 0
        now[0] += 1.0  # an hour since the start: the thaw comes with the next freeze
        collector.freeze()
        assert collector.thaws == 1 and collector.thawed_at == now[0]
        assert collector.frozen >= len(keep)
    finally:
        collector.stop()


def test_no_thaw_while_the_frozen_set_grew_by_less_than_the_floor(scheduled):
    collector = Collector(scheduled.append, floor=10**9, every=0.0)
    collector.start()
    try:
        keep = [_Cycle() for _ in range(collector.baseline + 1_000)]
        collector.freeze()
        assert collector.thaws == 0
        assert gc.get_freeze_count() >= collector.baseline + len(keep)
    finally:
        collector.stop()


def test_a_collection_after_the_loop_closed_stops_the_policy_quietly(scheduled):
    loop = asyncio.new_event_loop()
    loop.close()
    thresholds = gc.get_threshold()
    collector = Collector(loop.call_soon_threadsafe, young=9_999)
    collector.start()
    gc.collect(0)  # call_soon_threadsafe raises on a closed loop: the policy steps aside
    assert collector._collected not in gc.callbacks
    assert gc.get_threshold() == thresholds


def test_a_thaw_whose_whole_collection_could_not_run_is_not_counted(scheduled):
    # inside a collection (as while another thread's runs) gc.collect returns at once
    collector = Collector(scheduled.append, floor=0, every=0.0)
    collector.start()
    tried: list[int] = []

    def during(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and not tried:
            tried.append(collector.thaws)
            collector.thaw()
            tried.append(collector.thaws)

    gc.callbacks.append(during)
    try:
        gc.collect(0)
    finally:
        gc.callbacks.remove(during)
        collector.stop()
    assert tried == [0, 0]
    collector.start()
    try:
        collector.thaw()  # outside a collection it runs, and counts
        assert collector.thaws == 1
    finally:
        collector.stop()
