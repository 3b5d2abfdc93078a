"""§4 and §8: turns clockwise, the end of a round (refill, first player, round) and of the game."""

from __future__ import annotations

import attrs
import pytest

from shared.actions import EndTurn, Move
from shared.board import REGIONS
from shared.engine import apply, legal_actions
from shared.errors import GameOver
from shared.events import (
    ActionTaken,
    FestivalResolved,
    GameEnded,
    Refilled,
    RoundStarted,
    TurnStarted,
)
from shared.state import Skills
from tests.support.games import game, with_player, with_region


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


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_end_of_round_four_in_the_order_of_the_rules(seats):
    """§8: festivals (calendar order), refill, then the marker passes and round 5 starts."""
    state = attrs.evolve(game(seats, seed=17), round=4)
    state = with_region(state, "alt", ())
    first = state.first
    state, events = end_round(state)
    kinds = [type(e).__name__ for e in events if not isinstance(e, ActionTaken | TurnStarted)]
    festivals = [f for f in state.festivals if f.round == 4]
    assert kinds == ["FestivalResolved"] * len(festivals) + ["Refilled", "RoundStarted"]
    assert [e.region for e in events if isinstance(e, FestivalResolved)] == [
        f.region for f in festivals
    ]
    assert events[-1] == TurnStarted(seat=(first + 1) % seats)
    assert (state.round, state.first, state.turn) == (5, (first + 1) % seats, state.first)


def test_round_ten_s_festival_counts_in_the_final_scoring():
    """§8: after round 10 come its festivals, then (no refill) the final scoring."""
    state = game(2, seed=4)
    last = state.festivals[-1]
    assert last.round == 10
    sizes = sorted({last.size, *[s for s in (10, 8, 6, 4) if s != last.size][:3]}, reverse=True)
    tower = tuple((size,) * count for size, count in zip(sizes, (3, 2, 1, 1), strict=True))
    team = tuple(c for level in tower for c in level)
    state = attrs.evolve(state, round=10, bag=(1, 2, 3))
    seat = state.first
    state = with_player(state, seat, region=last.region, tower=tower, team=team,
                        skills=Skills(balance=1))
    state = with_region(state, "alt", ())
    state, events = end_round(state)
    assert state.over and state.bag == (1, 2, 3) and state.region_castellers("alt") == ()
    assert not [e for e in events if isinstance(e, Refilled)]
    [festival] = [e for e in events if isinstance(e, FestivalResolved)]
    [result] = festival.results
    assert result.seat == seat
    assert result.score == 4 + sum(level.count(last.size) for level in tower)
    winner = state.scores[seat]
    assert (winner.tower, winner.prizes, winner.sizes) == (result.score, 5, 2)
    assert state.winners == (seat,)
