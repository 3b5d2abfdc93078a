"""§4 and §8: turns clockwise, the end of a round (refill, first player, round) and of the game."""

from __future__ import annotations

import attrs
import pytest
from game_helpers import game, with_region

from shared.actions import EndTurn, Move
from shared.board import REGIONS
from shared.engine import apply, legal_actions
from shared.errors import GameOver
from shared.events import GameEnded, Refilled, RoundStarted, TurnStarted


def end_round(state):
    """Every remaining seat ends its turn; the state and the events of the round's end."""
    events = []
    while True:
        round_ = state.round
        state, new = apply(state, state.turn, EndTurn())
        events += new
        if state.over or state.round != round_:
            return state, events


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_turns_go_clockwise_from_the_first_player_who_passes_clockwise(seats):
    state = game(seats, seed=21)
    first = state.first
    for round_ in (1, 2, 3):
        expected_first = (first + round_ - 1) % seats
        assert (state.round, state.first, state.turn) == (round_, expected_first, expected_first)
        order = []
        for _ in range(seats):
            order.append(state.turn)
            state, events = apply(state, state.turn, EndTurn())
        assert order == [(expected_first + k) % seats for k in range(seats)]
        assert RoundStarted(round=round_ + 1, first=(expected_first + 1) % seats) in events
        assert events[-1] == TurnStarted(seat=(expected_first + 1) % seats)


def test_a_turn_passes_to_the_next_seat():
    state = attrs.evolve(game(3, seed=1), first=2, turn=2)
    state, events = apply(state, 2, EndTurn())
    assert state.turn == 0 and state.turns_taken == 1 and state.round == 1
    assert events[1:] == [TurnStarted(seat=0)]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_regions_refill_after_rounds_two_four_six_and_eight_only(seats):
    state = game(seats, seed=13)
    for round_ in range(1, 10):
        # empty two regions and thin a third, then end the round
        state = with_region(state, "alt", ())
        state = with_region(state, "cen", ())
        state = with_region(state, "ebr", state.region_castellers("ebr")[:1])
        bag, before = state.bag, state.regions
        state, events = end_round(state)
        refills = [e for e in events if isinstance(e, Refilled)]
        if round_ in (2, 4, 6, 8):
            [refill] = refills
            assert all(len(r) == state.refill for r in state.regions)
            # drawn from the front of the bag, regions in board order
            drawn = [c for region in REGIONS for c in refill.drawn[region]]
            assert sorted(drawn) == sorted(bag[: len(drawn)])
            assert state.bag == bag[len(drawn):]
            need = [state.refill - len(r) for r in before]
            assert [len(refill.drawn[r]) for r in REGIONS] == need
            assert refill.drawn["alt"] == sorted(bag[: state.refill], reverse=True)
        else:
            assert refills == [] and state.regions == before and state.bag == bag


def test_a_refill_stops_when_the_bag_is_empty():
    state = game(2, seed=13)
    state = attrs.evolve(state, round=2, bag=(4, 9))
    for region in ("alt", "gir", "cen"):
        state = with_region(state, region, ())
    state, events = end_round(state)
    [refill] = [e for e in events if isinstance(e, Refilled)]
    assert refill.drawn["alt"] == [9, 4] and refill.drawn["gir"] == []
    assert state.region_castellers("alt") == (9, 4) and state.bag == ()


def test_the_game_ends_after_round_ten():
    state = game(3, seed=6)
    while state.round < 10:
        state, events = end_round(state)
        assert not state.over
    state, events = end_round(state)
    assert state.over and state.turn is None and state.round == 10
    assert isinstance(events[-1], GameEnded)
    assert events[-1].scores == state.scores and events[-1].winners == state.winners
    assert state.winners == (0, 1, 2)  # nobody scored: a shared victory
    assert all(f.done for f in state.festivals)
    assert legal_actions(state, 0) == []
    with pytest.raises(GameOver):
        apply(state, 0, Move("gir"))


def test_legal_actions_only_for_the_seat_on_turn():
    state = game(3, seed=6)
    others = [s for s in range(3) if s != state.turn]
    assert all(legal_actions(state, s) == [] for s in others)
    assert legal_actions(state, state.turn)[-1] == EndTurn()
