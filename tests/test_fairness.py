"""The order bots' decisions wait in (server/core/fairness.py), by value: no processes, no clock.
Items are strings named for their room; rooms ``a1``… belong to address A, ``b1``… to B."""

from __future__ import annotations

from server.core.fairness import FairQueue


def _queue(*items: tuple[str, str, str]) -> FairQueue[str]:
    q: FairQueue[str] = FairQueue()
    for item, owner, share in items:
        q.push(item, owner, share)
    return q


def _drain(q: FairQueue[str]) -> list[str]:
    """Everything, one at a time: each item done before the next is taken (one worker)."""
    out = []
    while (item := q.pop()) is not None:
        out.append(item)
        q.done(item)
    return out


def test_one_address_s_many_rooms_do_not_go_before_another_address_s_one():
    q = _queue(*((f"a{i}", f"a{i}", "A") for i in range(1, 31)), ("b1", "b1", "B"))
    order = _drain(q)
    # in a first-in-first-out queue b1 would be 31st; here it is second
    assert order[:3] == ["a1", "b1", "a2"]
    assert sorted(order) == sorted([f"a{i}" for i in range(1, 31)] + ["b1"])


def test_addresses_take_turns_and_each_address_s_rooms_take_turns():
    q = _queue(("a1-1", "a1", "A"), ("a1-2", "a1", "A"), ("a2-1", "a2", "A"),
               ("b1-1", "b1", "B"), ("b1-2", "b1", "B"), ("c1-1", "c1", "C"))
    assert _drain(q) == ["a1-1", "b1-1", "c1-1", "a2-1", "b1-2", "a1-2"]


def test_a_room_has_at_most_one_item_running():
    q = _queue(("a1-1", "a1", "A"), ("a1-2", "a1", "A"))
    assert q.pop() == "a1-1"
    assert q.pop() is None  # a1's second waits for its first
    assert len(q) == 1
    q.done("a1-1")
    assert q.pop() == "a1-2"


def test_with_several_workers_each_address_runs_an_even_share():
    q = _queue(*((f"a{i}", f"a{i}", "A") for i in range(1, 11)))
    running = [q.pop(), q.pop(), q.pop(), q.pop()]  # four workers, A alone: all A's
    assert running == ["a1", "a2", "a3", "a4"] and q.running("A") == 4
    q.push("b1", "b1", "B")
    q.push("b2", "b2", "B")
    q.done("a1")  # a worker comes free: B runs none, so B's turn
    assert q.pop() == "b1"
    q.done("a2")
    assert q.pop() == "b2"  # B runs 1, A runs 2: still B's
    q.done("a3")
    assert q.pop() == "a5"  # B runs 2, A runs 1: A's
    assert (q.running("A"), q.running("B")) == (2, 2)


def test_an_item_dropped_while_waiting_or_running_frees_its_place():
    q = _queue(("a1", "a1", "A"), ("a2", "a2", "A"), ("b1", "b1", "B"))
    q.done("a2")  # dropped while waiting (its room was let go of)
    assert sorted(q) == ["a1", "b1"] and len(q) == 2
    assert q.pop() == "a1"
    q.done("a1")
    q.done("a1")  # told twice: ignored
    assert q.running("A") == 0
    assert _drain(q) == ["b1"]
    assert len(q) == 0 and q.pop() is None


def test_clear_forgets_everything():
    q = _queue(("a1", "a1", "A"), ("b1", "b1", "B"))
    q.pop()
    q.clear()
    assert len(q) == 0 and q.pop() is None and q.running("A") == 0


def test_rooms_of_no_known_address_share_one_share():
    """Rooms restored from the store have no creator's address (None): together they are
    one share, not one each, beside a new room's address."""
    q = _queue(*((f"r{i}", f"r{i}", None) for i in range(1, 51)), ("b1", "b1", "B"))
    assert _drain(q)[:3] == ["r1", "b1", "r2"]
