"""§9 Final scoring: the five categories, kept apart, and the winners."""

from __future__ import annotations

import attrs
import pytest

from shared.actions import EndTurn
from shared.board import REGIONS
from shared.engine import apply
from shared.scoring import final_scores, score_player, winners
from shared.state import Player, Score, Taken
from tests.support.games import game, with_player

#: The diversity table of §9.2, by number of regions 0..7.
DIVERSITY = {0: 0, 1: 0, 2: 1, 3: 3, 4: 5, 5: 7, 6: 10, 7: 14}


def player(**changes) -> Player:
    return attrs.evolve(Player(seat=0, name="Anna"), **changes)


@pytest.mark.parametrize("count", range(8))
def test_region_diversity(count):
    # one thing of each kind, spread over `count` regions, counts each region once
    kinds = ("tiles", "prizes", "sizes")
    items = {"tiles": "lp01", "prizes": "ribbon", "sizes": 1}
    taken: dict[str, tuple] = {kind: () for kind in kinds}
    for i, region in enumerate(REGIONS[:count]):
        kind = kinds[i % 3]
        taken[kind] += (Taken(items[kind], region), Taken(items[kind], region))
    assert score_player(player(**taken)).diversity == DIVERSITY[count]


def test_prizes():
    prizes = (Taken("trophy", "gir"), Taken("medal", "gir"), Taken("ribbon", "alt"),
              Taken("trophy", "alt"))
    assert score_player(player(prizes=prizes)).prizes == 5 + 3 + 1 + 5


def test_size_tokens_two_for_the_first_of_a_size_one_for_each_repeat():
    sizes = tuple(Taken(s, "bcn") for s in (5, 5, 5, 3, 10))
    assert score_player(player(sizes=sizes)).sizes == (2 + 1 + 1) + 2 + 2


def test_local_performances_and_row_tokens():
    tiles = (Taken("lp01", "lle"), Taken("lp16", "tar"), Taken("lp32", "tar"))
    score = score_player(player(tiles=tiles, taken_tokens=4))
    assert score.performances == 2 + 7 + 5 + 4


def test_unspent_tokens_score_nothing_and_best_tower_is_the_marker():
    score = score_player(player(tokens=7, best=11))
    assert score == Score(seat=0, tower=11, diversity=0, prizes=0, sizes=0, performances=0)


def test_total_is_the_sum_of_the_categories():
    p = player(
        best=9,
        tiles=(Taken("lp05", "lle"),),
        prizes=(Taken("medal", "bcn"),),
        sizes=(Taken(4, "gir"), Taken(4, "gir")),
        taken_tokens=2,
    )
    score = score_player(p)
    assert (score.tower, score.diversity, score.prizes, score.sizes, score.performances) == (
        9, 3, 3, 3, 5,
    )
    assert score.total == 9 + 3 + 3 + 3 + 5


def s(seat, tower, total):
    return Score(seat=seat, tower=tower, diversity=0, prizes=total - tower, sizes=0,
                 performances=0)


def test_the_highest_total_wins():
    assert winners([s(0, 5, 20), s(1, 9, 21), s(2, 3, 4)]) == (1,)


def test_a_tie_goes_to_the_best_tower():
    assert winners([s(0, 5, 21), s(1, 9, 21), s(2, 10, 4)]) == (1,)


def test_a_further_tie_is_a_shared_victory():
    assert winners([s(0, 9, 21), s(1, 9, 21), s(2, 3, 21)]) == (0, 1)


def test_the_last_turn_of_round_ten_scores_the_game():
    state = game(2, seed=4)
    state = attrs.evolve(state, round=10, turn=state.first, turns_taken=1,
                         festivals=tuple(attrs.evolve(f, done=True) for f in state.festivals))
    state = with_player(state, 0, best=8, prizes=(Taken("trophy", "gir"),))
    state = with_player(state, 1, best=12)
    state, _ = apply(state, state.turn, EndTurn())
    assert state.scores == final_scores(state.players)[0]
    assert [sc.total for sc in state.scores] == [13, 12]
    assert state.winners == (0,)
