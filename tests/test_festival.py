"""§5 Festivals, resolved at the end of their round (§8.1), on states built from seeded games."""

from __future__ import annotations

import attrs
import pytest
from game_helpers import game, with_player

from shared.actions import EndTurn
from shared.board import TOWNS
from shared.engine import apply
from shared.events import FestivalResolved, FestivalResult
from shared.state import Festival, Prizes, Skills, Taken

SKILLED = Skills(balance=3, base=3, mix=3, strength=3, width=3)
# Towers for a festival of size 5, with their festival scores (levels + castellers of size 5).
FOUR_ONE_FIVE = ((9, 9, 9), (7, 7), (5,), (3,))  # 4 + 1 = 5
FIVE_TWO_FIVES = ((9, 9, 9), (5, 5), (4,), (3,), (1,))  # 5 + 2 = 7
FOUR_THREE_FIVES = ((9, 9, 9), (5, 5, 5), (3,), (1,))  # 4 + 3 = 7
THREE_LEVELS = ((9, 9, 9), (5, 5), (3,))
NO_FIVE = ((9, 9, 9), (7, 7), (4,), (3,))


def festival(region="bcn", size=5, round_=3, kind="I"):
    return Festival(round=round_, region=region, town=TOWNS[region][kind], type=kind, size=size)


def at_festival(seats, towers, *, region="bcn", size=5, first=0, festivals=None, **changes):
    """A game at the last turn of round 3 with one festival; ``towers`` by seat (None: away)."""
    state = game(seats, seed=3)
    setting = {
        "round": 3,
        "first": first,
        "turn": (first - 1) % seats,
        "turns_taken": seats - 1,
        "festivals": festivals or (festival(region, size),),
        **changes,
    }
    state = attrs.evolve(state, **setting)
    for seat, tower in enumerate(towers):
        if tower is None:
            state = with_player(state, seat, region="alt")
        else:
            team = tuple(c for level in tower for c in level)
            state = with_player(state, seat, region=region, tower=tower, team=team, skills=SKILLED)
    return state


def resolve(state):
    """End the round; the new state and its festival events."""
    assert state.turn is not None
    state, events = apply(state, state.turn, EndTurn())
    return state, [e for e in events if isinstance(e, FestivalResolved)]


def test_scores_prizes_and_size_token_of_a_festival():
    state, [event] = resolve(at_festival(3, [FOUR_ONE_FIVE, FIVE_TWO_FIVES, None]))
    assert (event.round, event.region, event.town, event.size) == (3, "bcn", "Barcelona", 5)
    assert event.results == (
        FestivalResult(seat=1, score=7, prize="trophy", size_token=True),
        FestivalResult(seat=0, score=5, prize="medal", size_token=False),
    )
    a, b, c = state.players
    assert (a.best, b.best, c.best) == (5, 7, 0)
    assert a.prizes == (Taken("medal", "bcn"),) and b.prizes == (Taken("trophy", "bcn"),)
    assert b.sizes == (Taken(5, "bcn"),) and a.sizes == () and c.prizes == ()
    assert state.prizes == Prizes(trophy=11, medal=13, ribbon=14)
    assert state.festivals[0].done


def test_who_takes_part():
    towers = [THREE_LEVELS, NO_FIVE, FOUR_ONE_FIVE, None]
    state, [event] = resolve(at_festival(4, towers))
    assert [r.seat for r in event.results] == [2]
    assert [p.best for p in state.players] == [0, 0, 5, 0]


def test_a_pawn_elsewhere_does_not_take_part():
    state = at_festival(2, [FOUR_ONE_FIVE, FOUR_ONE_FIVE])
    state = with_player(state, 1, region="tar")
    _, [event] = resolve(state)
    assert [r.seat for r in event.results] == [0]


def test_no_participant_and_the_size_token_leaves():
    state, [event] = resolve(at_festival(2, [None, THREE_LEVELS]))
    assert event.results == ()
    assert all(p.sizes == () and p.prizes == () for p in state.players)
    assert state.festivals[0].done


def test_a_tie_for_rank_one_shares_it_and_skips_rank_two():
    """§5.3 in a 3-player game: 1, 1, 3 — two trophies, and rank 3 has no prize."""
    towers = [FIVE_TWO_FIVES, FOUR_ONE_FIVE, FOUR_THREE_FIVES]
    state, [event] = resolve(at_festival(3, towers))
    prizes = {r.seat: r.prize for r in event.results}
    assert prizes == {0: "trophy", 2: "trophy", 1: None}
    assert state.prizes.trophy == 10 and state.prizes.medal == 14


def test_four_players_rank_three_takes_a_ribbon():
    towers = [FOUR_ONE_FIVE, FIVE_TWO_FIVES, FIVE_TWO_FIVES, FOUR_ONE_FIVE]
    _, [event] = resolve(at_festival(4, towers))
    assert {r.seat: r.prize for r in event.results} == {
        1: "trophy", 2: "trophy", 0: "ribbon", 3: "ribbon",
    }


def test_a_short_supply_goes_clockwise_from_the_first_player():
    towers = [FIVE_TWO_FIVES, FIVE_TWO_FIVES, FIVE_TWO_FIVES]
    state = at_festival(3, towers, first=2, prizes=Prizes(trophy=2))
    state, [event] = resolve(state)
    assert {r.seat: r.prize for r in event.results} == {2: "trophy", 0: "trophy", 1: None}
    assert [r.seat for r in event.results] == [2, 0, 1]
    assert state.prizes.trophy == 0


def test_an_empty_supply_gives_nothing():
    state = at_festival(2, [FIVE_TWO_FIVES, None], prizes=Prizes(trophy=0))
    state, [event] = resolve(state)
    assert event.results[0].prize is None and state.players[0].prizes == ()
    assert event.results[0].size_token and state.players[0].sizes == (Taken(5, "bcn"),)


def test_a_size_token_tie_leaves_the_game():
    # both have two 5s (scores 7 and 6); the token goes to nobody, prizes are still given
    towers = [FIVE_TWO_FIVES, ((9, 9, 9), (5, 5), (3,), (1,)), None]
    state, [event] = resolve(at_festival(3, towers))
    assert [r.size_token for r in event.results] == [False, False]
    assert [r.prize for r in event.results] == ["trophy", "medal"]
    assert all(p.sizes == () for p in state.players)


def test_the_size_token_goes_to_the_most_castellers_of_its_size_not_the_best_score():
    tall = ((9, 9, 9), (7, 7), (5,), (4,), (3,), (1,))  # 6 levels + one 5 = 7
    state, [event] = resolve(at_festival(2, [tall, FOUR_THREE_FIVES]))  # 4 + three 5s = 7
    by_seat = {r.seat: r for r in event.results}
    assert by_seat[0].score == 7 and by_seat[1].score == 7
    assert by_seat[1].size_token and not by_seat[0].size_token
    assert state.players[1].sizes == (Taken(5, "bcn"),)


def test_the_best_tower_marker_never_goes_down():
    state = at_festival(2, [FOUR_ONE_FIVE, FOUR_ONE_FIVE])
    state = with_player(state, 0, best=9)
    state = with_player(state, 1, best=2)
    state, [event] = resolve(state)
    assert [r.score for r in event.results] == [5, 5]
    assert [p.best for p in state.players] == [9, 5]


def test_festivals_of_a_round_in_calendar_order():
    """The first festival on the calendar takes the last trophy."""
    calendar = (festival("bcn", 5, 4), festival("alt", 5, 4))
    state = at_festival(4, [FOUR_ONE_FIVE, None, None, None], festivals=calendar,
                        round=4, prizes=Prizes(trophy=1))
    state = with_player(state, 1, region="alt", tower=FOUR_ONE_FIVE, skills=SKILLED)
    state, events = resolve(state)
    assert [e.region for e in events] == ["bcn", "alt"]
    assert events[0].results[0].prize == "trophy" and events[1].results[0].prize is None
    assert state.players[1].sizes == (Taken(5, "alt"),)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_festivals_wait_for_the_end_of_their_round(seats):
    state = game(seats, seed=8)
    state = attrs.evolve(state, turn=0, first=0)
    for _ in range(seats - 1):
        state, events = apply(state, state.turn, EndTurn())
        assert not any(isinstance(e, FestivalResolved) for e in events)
    for round_ in range(1, 11):
        state = attrs.evolve(state, turn=(state.first - 1) % seats, turns_taken=seats - 1)
        state, events = apply(state, state.turn, EndTurn())
        resolved = [(e.round, e.region) for e in events if isinstance(e, FestivalResolved)]
        assert resolved == [(f.round, f.region) for f in state.festivals if f.round == round_]
