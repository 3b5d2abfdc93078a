"""The bot levels (shared.bots, shared.search, shared.greedy's styles): ``hard`` plans its
whole turn once and plays it out, never reads the bag's secret order, and is a function of
the state and its seed; ``easy`` is ``normal`` short-sighted and noisy, yet plays real
Castell. How strong each is lives in ``python -m bench bots`` and BENCHMARKS.md."""

from __future__ import annotations

import random

import attrs

from shared import bots, search
from shared.actions import EndTurn, Special
from shared.engine import apply, new_game
from shared.events import FestivalResolved
from tests.support.games import NAMES


def _play(lineup: tuple[str, ...], seed: int, *, think: float | None = None,
          ) -> tuple[object, dict[int, int], list[int]]:
    """A whole game as the server plays it (decide, then follow the plan; a ``hard`` search
    bounded by ``think`` seconds, as the server bounds it); the final state, how many times
    each seat decided afresh, and how many festivals each seat entered."""
    state = new_game(list(NAMES[:len(lineup)]), seed=seed)
    rngs = [random.Random(seed * 16 + i) for i in range(len(lineup))]
    plans: dict[int, bots.Decision] = {}
    decided = dict.fromkeys(range(len(lineup)), 0)
    entered = [0] * len(lineup)
    while not state.over:
        seat = state.turn
        decision = bots.follow(plans.get(seat), state, seat)
        if decision is None:
            decision = bots.decide(state, seat, lineup[seat], rngs[seat], think=think)
            decided[seat] += 1
        state, events = apply(state, seat, decision.action)  # raises if illegal
        plans[seat] = decision
        for event in events:
            if isinstance(event, FestivalResolved):
                for result in event.results:
                    entered[result.seat] += 1
    return state, decided, entered


def test_hard_decides_once_a_turn_and_plays_its_line_to_the_end_of_the_game():
    # (think=0: a deadline already past, so each search samples each candidate line once;
    # whether its lines are played out does not depend on how many samples chose them)
    state, decided, _ = _play(("hard", "normal"), seed=5, think=0.0)
    assert state.scores is not None
    # ten turns, ten searches: every step after the first of a turn follows the plan
    assert decided[0] == 10
    assert decided[1] > 30  # normal asks again at every action


def test_hard_is_a_function_of_the_state_and_its_seed():
    state = new_game(list(NAMES[:3]), seed=8)
    seat = state.turn
    first = search.plan(state, seat, random.Random(4))
    assert search.plan(state, seat, random.Random(4)) == first
    # the line is the whole turn: legal step by step, ending the turn
    after = state
    for action in first:
        after, _ = apply(after, seat, action)
    assert isinstance(first[-1], EndTurn) and after.turn != seat


def test_hard_never_reads_the_bags_secret_order():
    # two games alike in all but the order of the bag: the same samples, the same choice
    state = new_game(list(NAMES[:2]), seed=21)
    for _ in range(6):  # into round 2, where the next refill is near
        state, _ = apply(state, state.turn, bots.choose(state, state.turn, "normal",
                                                         random.Random(0)))
    other = attrs.evolve(state, bag=tuple(reversed(state.bag)))
    assert other.bag != state.bag
    seat = state.turn
    assert search.plan(state, seat, random.Random(9)) == search.plan(other, seat,
                                                                     random.Random(9))


def test_hard_stops_at_its_deadline_with_what_it_has():
    state = new_game(list(NAMES[:4]), seed=3)
    seat = state.turn
    clock = iter(range(1, 1000))
    # a clock past the deadline at once: one sample per candidate, then the choice
    line = search.plan(state, seat, random.Random(1), deadline=0.5,
                       clock=lambda: float(next(clock)))
    assert next(clock) == 2  # asked once, after the first sample
    after = state
    for action in line:
        after, _ = apply(after, seat, action)


def test_follow_plays_the_plan_only_where_it_expected_to_be():
    state = new_game(list(NAMES[:2]), seed=2)
    seat = state.turn
    decision = bots.decide(state, seat, "hard", random.Random(3))
    assert decision.rest and decision.expect is not None
    after, _ = apply(state, seat, decision.action)
    step = bots.follow(decision, after, seat)
    assert step is not None and step.action == decision.rest[0]
    # anywhere else (the game moved on otherwise, or another seat): decide afresh
    assert bots.follow(decision, state, seat) is None
    assert bots.follow(decision, after, 1 - seat) is None


def test_easy_plays_short_sighted_with_its_seed():
    # no special moves; its choices are drawn, so its seed decides them (and only it)
    for seed in range(4):
        state, _, entered = _play(("easy", "random"), seed=40 + seed)
        assert state.scores is not None and state.scores[0].total > 0
        assert entered[0] > 0  # it goes to festivals
    state = new_game(list(NAMES[:2]), seed=6)
    seat = state.turn
    lines = set()
    for rng_seed in range(12):
        s, line = state, []
        while s.turn == seat:
            action = bots.choose(s, seat, "easy", random.Random(rng_seed * 100 + len(line)))
            assert not (isinstance(action, Special) and action.effect == "move")
            line.append(action)
            s, _ = apply(s, seat, action)
        lines.add(tuple(line))
    assert len(lines) > 1  # the noise makes a difference


def test_hard_never_reads_the_bags_secret_order_when_its_line_ends_the_round():
    # the last turn of round 2 ends with the refill (§8.2): the line's end draws from the
    # bag, so each sample must draw from its own shuffle, not from the secret order
    for seed in (21, 22, 23):
        state = new_game(list(NAMES[:2]), seed=seed)
        while not (state.round == 2 and state.turns_taken == 1):
            state, _ = apply(state, state.turn, bots.choose(state, state.turn, "normal",
                                                             random.Random(0)))
        other = attrs.evolve(state, bag=tuple(reversed(state.bag)))
        seat = state.turn
        mine = search.choose(state, seat, random.Random(9))
        theirs = search.choose(other, seat, random.Random(9))
        assert (mine.actions, mine.margin) == (theirs.actions, theirs.margin)
