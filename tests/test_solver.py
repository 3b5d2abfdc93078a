"""The tower solver finds optimal legal towers, checked against brute force."""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.board import TILES
from shared.solver import FestivalGoal, Solution, TallestGoal, TileGoal, best_tower
from shared.state import Skills
from shared.tower import SKILL_NAMES, check_tile, check_tower, enters_festival, festival_score

ALL3 = dict.fromkeys(SKILL_NAMES, 3)


def _sub_levels(left: Counter, top: int, widest: int):
    """Every level (biggest first) drawable from ``left`` with sizes <= top, at most widest."""
    for hi in range(top, 0, -1):
        for lo in (hi, hi - 1):
            if lo < 1:
                continue
            sizes = sorted({hi, lo}, reverse=True)
            ranges = [range(1, left[s] + 1) for s in sizes]
            for picks in product(*ranges):
                if sum(picks) <= widest:
                    yield tuple(s for s, k in zip(sizes, picks, strict=True) for _ in range(k))


def all_towers(team):
    """Every tower the team can stack that no skill could rule out (checked later)."""
    out = []

    def grow(levels, left):
        if levels:
            out.append(tuple(levels))
        top = min(levels[-1]) if levels else 10
        widest = len(levels[-1]) if levels else len(team)
        for level in _sub_levels(left, top, widest):
            grow([*levels, level], left - Counter(level))

    grow([], Counter(team))
    return out


def brute(team, ranks, goal):
    """The optimum by enumeration, as the solver defines it (value to compare, or None)."""
    best = None
    for levels in all_towers(team):
        n = sum(map(len, levels))
        if isinstance(goal, TileGoal):
            if not check_tile(levels, ranks, goal.tile_id).legal:
                continue
            value = -n
        else:
            if not check_tower(levels, ranks).legal:
                continue
            if isinstance(goal, TallestGoal):
                value = (len(levels), n)
            else:
                if not enters_festival(levels, goal.size):
                    continue
                value = (festival_score(levels, goal.size), -n)
        best = value if best is None else max(best, value)
    return best


def value_of(solution: Solution, goal):
    n = solution.castellers
    if isinstance(goal, TileGoal):
        return -n
    if isinstance(goal, TallestGoal):
        return (len(solution.levels), n)
    return (solution.score, -n)


def assert_sound(team, ranks, goal, solution: Solution):
    """The solver's tower is built from the team, legal, and meets its goal."""
    assert not Counter(s for level in solution.levels for s in level) - Counter(team)
    if isinstance(goal, TileGoal):
        assert check_tile(solution.levels, ranks, goal.tile_id).legal
        assert solution.score == TILES[goal.tile_id].points
    else:
        assert check_tower(solution.levels, ranks).legal
    if isinstance(goal, FestivalGoal):
        assert enters_festival(solution.levels, goal.size)
        assert solution.score == festival_score(solution.levels, goal.size)
    if isinstance(goal, TallestGoal):
        assert solution.score == len(solution.levels)


# Sizes from a narrow window so small teams can stack several levels.
teams = st.integers(1, 7).flatmap(
    lambda low: st.lists(st.integers(low, low + 3), min_size=2, max_size=8)
)


def goals_for(team):
    """A goal for ``team``: festival sizes mostly drawn from the team itself."""
    sizes = st.sampled_from(team) | st.integers(1, 10) if team else st.integers(1, 10)
    return st.one_of(
        st.just(TallestGoal()),
        st.builds(FestivalGoal, sizes),
        st.builds(TileGoal, st.sampled_from(sorted(TILES))),
    )


problems = teams.flatmap(lambda team: st.tuples(st.just(team), goals_for(team)))
rank_maps = st.fixed_dictionaries({s: st.integers(0, 3) for s in SKILL_NAMES})


@settings(max_examples=150, deadline=None)
@given(problems, rank_maps)
def test_solver_matches_brute_force(problem, ranks):
    team, goal = problem
    expected = brute(team, ranks, goal)
    solution = best_tower(team, ranks, goal)
    if expected is None:
        assert solution is None
    else:
        assert solution is not None
        assert_sound(team, ranks, goal, solution)
        assert value_of(solution, goal) == expected


RICH = [
    ([9, 9, 9, 8, 6, 6, 5, 4, 3], ALL3),
    ([8, 8, 8, 8, 7, 6, 6, 6, 5, 3], dict.fromkeys(SKILL_NAMES, 1)),
]


@pytest.mark.parametrize("tile_id", sorted(TILES))
def test_every_tile_against_brute_force_with_rich_teams(tile_id):
    goal = TileGoal(tile_id)
    for team, ranks in RICH:
        expected = brute(team, ranks, goal)
        solution = best_tower(team, ranks, goal)
        assert (solution is None) is (expected is None)
        if solution is not None:
            assert_sound(team, ranks, goal, solution)
            assert value_of(solution, goal) == expected


def test_festival_needs_four_levels_and_the_size():
    team = [9, 9, 9, 7, 7, 5, 3]
    # Counts 3·2·1·1: the fourth level needs Balance.
    assert best_tower(team, {}, FestivalGoal(7)) is None
    solution = best_tower(team, {"balance": 1}, FestivalGoal(7))
    assert solution is not None
    assert solution.levels == ((9, 9, 9), (7, 7), (5,), (3,))
    assert solution.score == 4 + 2
    assert best_tower(team, {"balance": 3}, FestivalGoal(4)) is None


def test_tallest_and_ties_with_more_castellers():
    team = [9, 9, 9, 7, 7, 5, 5, 3]
    plain = best_tower(team, Skills(), TallestGoal())
    assert (plain.score, plain.castellers) == (3, 6)
    # Balance lets one level match the one below: every casteller fits in 4 levels.
    solution = best_tower(team, Skills(balance=1), TallestGoal())
    assert solution.levels == ((9, 9, 9), (7, 7), (5, 5), (3,))
    assert solution.score == 4
    assert best_tower([], {}, TallestGoal()) is None


def test_base_and_width_exhibition_needs_both_in_one_reading():
    # Four and three wide: Base or Width, never both; five and four wide: both.
    ranks = {"base": 1, "width": 1, "balance": 1}
    narrow = [9, 9, 9, 9, 7, 7, 7, 5, 5, 3, 1]
    assert best_tower(narrow, ranks, TileGoal("lp30")) is None
    wide = [*narrow, 9, 7]
    solution = best_tower(wide, ranks, TileGoal("lp30"))
    assert solution is not None
    assert check_tile(solution.levels, ranks, "lp30").uses >= {"base", "width"}


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        best_tower([11], {}, TallestGoal())
    with pytest.raises(ValueError):
        best_tower([5], {"luck": 1}, TallestGoal())
    with pytest.raises(ValueError):
        best_tower([5], {}, TileGoal("lp99"))
    with pytest.raises(TypeError):
        best_tower([5], {}, "tallest")


big_teams = st.lists(st.integers(1, 10), min_size=8, max_size=24)


@settings(max_examples=40, deadline=None)
@given(big_teams, rank_maps, st.integers(1, 10), st.sampled_from(SKILL_NAMES), st.data())
def test_more_castellers_or_skill_never_make_it_worse(team, ranks, size, skill, data):
    """Beyond brute force's reach: answers are sound, and a bigger team or a higher rank
    never lowers the optimum."""
    extra = data.draw(st.integers(1, 10))
    better = {**ranks, skill: min(3, ranks[skill] + 1)}
    tile = data.draw(st.sampled_from(sorted(TILES)))
    for goal in (TallestGoal(), FestivalGoal(size), TileGoal(tile)):
        base = best_tower(team, ranks, goal)
        if base is None:
            continue
        assert_sound(team, ranks, goal, base)
        for team2, ranks2 in (([*team, extra], ranks), (team, better)):
            other = best_tower(team2, ranks2, goal)
            assert other is not None
            assert_sound(team2, ranks2, goal, other)
            if isinstance(goal, TileGoal):
                assert other.castellers <= base.castellers
            elif isinstance(goal, TallestGoal):
                assert value_of(other, goal) >= value_of(base, goal)
            else:
                assert other.score >= base.score
