"""Towers (§7), performance tiles (§6) and festival scores (§5.2)."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.board import TILES
from shared.state import Skills
from shared.tower import (
    SKILL_NAMES,
    TowerCheck,
    check_tile,
    check_tower,
    describe_tower,
    enters_festival,
    festival_score,
    shape_of,
    width_readings,
)

N = [9, 9, 9, 9]
TALL4 = [N, [6, 6, 6], [3, 3], [1]]
TALL5 = [[9] * 5, [6] * 4, [3, 3], [1]]

# The example table of §7: tower, ranks, legal, uses (when legal).
EXAMPLES = [
    ([[7, 7, 7], [5, 5], [2]], {}, True, set()),
    ([[7, 7, 7], [7, 7]], {}, False, None),
    ([[7, 7, 7], [7, 7]], {"strength": 1}, True, {"strength"}),
    ([[6, 6], [4, 4]], {}, False, None),
    ([[6, 6], [4, 4]], {"balance": 1}, True, {"balance"}),
    ([[6, 5, 5], [3]], {"mix": 1}, True, {"mix"}),
    ([[6, 4], [3]], {"mix": 3}, False, None),
    (TALL4, {}, False, None),
    (TALL4, {"width": 1}, True, {"width"}),
    (TALL4, {"base": 1}, True, {"base"}),
    (TALL5, {"base": 1, "width": 1}, True, {"base", "width"}),
    (TALL5, {"base": 2}, True, {"base"}),
    (TALL5, {"width": 1}, False, None),
    ([[8, 8, 8], [8, 8, 8], [5, 5]], {"strength": 1, "balance": 1}, True,
     {"strength", "balance"}),
]


@pytest.mark.parametrize(("levels", "ranks", "legal", "uses"), EXAMPLES)
def test_rules_example_table(levels, ranks, legal, uses):
    check = check_tower(levels, ranks)
    assert check.legal is legal, check.reason
    if legal:
        assert check.uses == uses
        assert check.reason == "" and check.code == ""
        # Each listed use is a use of one single reading.
        assert check_tower(levels, ranks, require=uses).legal
    else:
        assert check.code and check.reason


def test_example_reasons_name_the_rule_broken():
    assert check_tower([[7, 7, 7], [7, 7]], {}).code == "tower_missing_skill"
    assert "Strength" in check_tower([[7, 7, 7], [7, 7]], {}).reason
    assert check_tower([[6, 6], [4, 4]], {}).reason == (
        "level 2 has as many castellers as level 1: that needs Balance"
    )
    mixed = check_tower([[6, 4], [3]], {"mix": 3})
    assert mixed.code == "tower_mixed_sizes"
    assert mixed.reason == (
        "level 1 mixes sizes 6 and 4: a level may only mix sizes one apart, with Mix"
    )
    wide = check_tower(TALL4, {})
    assert (wide.code, wide.reason) == (
        "tower_too_wide", "level 1 is 4 wide: that needs Width or Base"
    )
    assert "Width 2" in check_tower(TALL5, {"width": 1}).reason


def test_tall5_with_base_two_uses_base_twice_and_no_width():
    check = check_tower(TALL5, {"base": 2})
    assert check.readings == (frozenset({"base"}),)
    # §7 "base (2 uses)": its one reading makes both wide levels base levels, with no width
    assert width_readings(shape_of(TALL5), 0, 2) == [(2, 0)]
    assert width_readings(shape_of(TALL5), 1, 1) == [(1, 1)]
    assert width_readings(shape_of(TALL4), 1, 1) == [(0, 1), (1, 0)]


# One tower per skill needing exactly k uses of it; legal iff the rank reaches k.


def _strength_tower(k):
    # k + 1 levels of one size, counts k+1 .. 1 (Width covers the counts above 3).
    return [[5] * (k + 1 - j) for j in range(k + 1)], {"width": max(0, k - 2)}


def _balance_tower(k):
    return [[10 - 2 * j] for j in range(k + 1)], {}


def _mix_tower(k):
    # k mixed levels of counts k+1 .. 2, then a single casteller on top.
    levels = [[10 - 3 * j] + [9 - 3 * j] * (k - j) for j in range(k)] + [[1]]
    return levels, {"width": max(0, k - 2)}


def _width_tower(k):
    return [[5] * (3 + k)], {}


def _base_tower(k):
    # k levels wider than 3 (each narrower than the one below), then one casteller.
    return [[10 - j] * (3 + k - j) for j in range(k)] + [[1]], {}


BUILDERS = {
    "strength": _strength_tower,
    "balance": _balance_tower,
    "mix": _mix_tower,
    "width": _width_tower,
    "base": _base_tower,
}


@pytest.mark.parametrize("skill", SKILL_NAMES)
@pytest.mark.parametrize("need", [0, 1, 2, 3])
@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_each_skill_bends_its_rule_as_often_as_its_rank(skill, need, rank):
    levels, extra = BUILDERS[skill](need)
    check = check_tower(levels, {**extra, skill: rank})
    assert check.legal is (need <= rank), (describe_tower(levels), check.reason)
    if check.legal:
        assert (skill in check.uses) is (need > 0)
    else:
        assert skill.capitalize() in check.reason
        assert check.code in {"tower_missing_skill", "tower_too_wide"}


def test_a_skill_beyond_rank_says_how_many_ranks_it_needs():
    levels, _ = _strength_tower(2)
    assert check_tower(levels, {"strength": 1}).reason == (
        "levels 2 and 3 stand on castellers of the same size: that needs Strength rank 2"
        " (each rank lets one level do it; you have rank 1)"
    )
    four = [[10], [8], [6], [4], [2]]
    assert "beyond the top rank 3" in check_tower(four, {"balance": 3}).reason


def test_width_readings_are_minimal():
    # Width is counted only as far as needed: a 4-wide tower uses width 1, never 2.
    assert check_tower([[5] * 4], {"width": 3}).uses == {"width"}
    # A 3-wide tower uses neither, whatever the ranks.
    assert check_tower([[5] * 3], {"width": 3, "base": 3}).uses == frozenset()
    assert not check_tower([[5] * 3], {"width": 3, "base": 3}, require=["base"]).legal


def test_require_needs_one_reading_using_all_skills():
    ranks = {"base": 1, "width": 1}
    assert check_tower(TALL4, ranks, require=["base"]).uses == {"base"}
    assert check_tower(TALL4, ranks, require=["width"]).uses == {"width"}
    both = check_tower(TALL4, ranks, require=("base", "width"))
    assert not both.legal
    assert both.code == "tower_skill_unused"
    assert both.reason == "the tower cannot use Base and Width at once"
    assert check_tower(TALL5, ranks, require=("base", "width")).legal
    unused = check_tower([[7, 7, 7], [5, 5]], {"mix": 1}, require=["mix"])
    assert unused.reason == "the tower does not use Mix"


def test_forced_uses_come_with_every_reading():
    levels = [[9, 9, 9, 9], [7, 7, 6], [4, 4, 4], [2]]
    ranks = {"mix": 1, "balance": 1, "width": 1, "base": 1}
    check = check_tower(levels, ranks)
    assert check.readings == (
        frozenset({"mix", "balance", "base"}), frozenset({"mix", "balance", "width"})
    )


def test_structural_refusals():
    assert check_tower([], {}).code == "tower_empty"
    assert check_tower([[5], []], {}).code == "tower_empty_level"
    assert check_tower([[11]], {}).code == "tower_bad_size"
    assert check_tower([[0]], {}).code == "tower_bad_size"
    assert check_tower([["5"]], {}).code == "tower_bad_size"
    bigger = check_tower([[6, 6], [7]], {"strength": 3})
    assert (bigger.code, bigger.level) == ("tower_not_smaller", 2)
    assert bigger.reason == (
        "level 2 holds size 7 above size 6 in level 1: each level must be smaller than the"
        " level below"
    )
    wider = check_tower([[6], [4, 4]], {"balance": 3})
    assert (wider.code, wider.level) == ("tower_not_narrower", 2)


def test_ranks_may_be_skills_and_must_name_skills():
    assert check_tower(TALL4, Skills(width=1)).legal
    assert not check_tower(TALL4, Skills()).legal
    with pytest.raises(ValueError):
        check_tower(TALL4, {"widht": 1})
    with pytest.raises(ValueError):
        check_tower(TALL4, {}, require=["luck"])


def test_an_illegal_check_becomes_a_rule_error():
    check = check_tower([[6, 6], [4, 4]], {})
    with pytest.raises(Exception) as caught:
        check.raise_if_illegal()
    assert caught.value.code == "tower_missing_skill"
    check_tower([[6, 6], [4]], {}).raise_if_illegal()


def _every_reason():
    cases = [
        ([], {}), ([[5], []], {}), ([[12]], {}), ([[6, 4]], {}), ([[6], [7]], {}),
        ([[6], [4, 4]], {}), ([[6, 5]], {}), ([[6], [6]], {}),
        ([[6], [4], [2]], {"balance": 1}), (TALL5, {"base": 1}), (TALL5, {"width": 1}),
        ([[5] * 8], {"width": 1}),
    ]
    return [check_tower(levels, ranks) for levels, ranks in cases]


@pytest.mark.parametrize("check", _every_reason(), ids=lambda c: c.code)
def test_reasons_are_player_sentences(check: TowerCheck):
    assert not check.legal
    text = check.reason
    assert text and text[0].islower() and not text.endswith(".")
    assert "\n" not in text and "[" not in text and "_" not in text
    assert len(text.split()) >= 5


# §6 performance tiles --------------------------------------------------------------------


def test_shape_tile_needs_the_exact_counts():
    assert check_tile([[7, 7, 7], [5, 5, 5], [3, 3], [1]], {"balance": 1}, "lp12").legal
    short = check_tile([[7, 7, 7], [5, 5], [3]], {}, TILES["lp12"])
    assert (short.code, short.reason) == (
        "tile_wrong_shape", "lp12 needs levels of 3·3·2·1 castellers; your tower is 3·2·1"
    )
    # An illegal tower is refused for the tower's own reason, even in the right shape.
    assert check_tile([[7, 7, 7], [5, 5, 5], [3, 3], [1]], {}, "lp12").code == (
        "tower_missing_skill"
    )


def test_exhibition_needs_exact_height_and_one_reading_with_every_skill():
    levels = [[9] * 5, [7] * 4, [5, 5], [3], [1]]
    ranks = {"base": 1, "width": 1, "balance": 1}
    assert check_tile(levels, ranks, "lp30").uses >= {"base", "width"}
    low = check_tile(levels[:4], ranks, "lp30")
    assert (low.code, low.reason) == (
        "tile_wrong_height", "lp30 needs a tower of exactly 5 levels; yours has 4"
    )
    # Five levels, each reading uses Base or Width, never both: lp30 refuses it.
    either = [[9] * 4, [7] * 3, [5, 5], [3], [1]]
    assert check_tower(either, ranks).legal
    refused = check_tile(either, ranks, "lp30")
    assert refused.code == "tile_skill_unused"
    assert refused.reason == (
        "lp30 needs a tower that uses Width and Base; yours cannot use Base and Width at once"
    )
    plain = check_tile([[7, 7, 7], [5, 5], [3]], {"strength": 3}, "lp22")
    assert plain.reason == "lp22 needs a tower that uses Strength; yours does not use Strength"
    assert check_tile([[7, 7, 7], [7, 7], [3]], {"strength": 3}, "lp22").legal


def test_check_tile_rejects_unknown_tiles():
    with pytest.raises(ValueError):
        check_tile([[1]], {}, "lp99")


# §5.2 festivals ----------------------------------------------------------------------------


def test_festival_score_counts_levels_and_castellers_of_the_size():
    levels = [[9, 9, 9], [7, 7], [7], [2]]
    assert festival_score(levels, 7) == 4 + 3
    assert festival_score(levels, 5) == 4
    assert enters_festival(levels, 9)
    assert not enters_festival(levels, 5)
    assert not enters_festival(levels[:3], 9)


# The formal definition of §7, read literally, against check_tower ---------------------------


def _formal_forced(levels, ranks):
    """The Mix/Strength/Balance part of §7's formal definition: the forced uses, or None."""
    if any(max(lv) - min(lv) > 1 for lv in levels):
        return None
    mixed = sum(max(lv) != min(lv) for lv in levels)
    strong = balanced = 0
    for i in range(1, len(levels)):
        if max(levels[i]) > min(levels[i - 1]) or len(levels[i]) > len(levels[i - 1]):
            return None
        strong += max(levels[i]) == min(levels[i - 1])
        balanced += len(levels[i]) == len(levels[i - 1])
    counts = {"mix": mixed, "strength": strong, "balance": balanced}
    if any(k > ranks[s] for s, k in counts.items()):
        return None
    return {s for s, k in counts.items() if k}


def _formal_legal(levels, ranks):
    """§7's formal definition: some w <= rank(width) and B, |B| <= rank(base), fit."""
    if _formal_forced(levels, ranks) is None:
        return False
    n = len(levels)
    return any(
        all(len(levels[i]) <= 3 + w for i in range(n) if i not in base)
        for w in range(ranks["width"] + 1)
        for size in range(ranks["base"] + 1)
        for base in combinations(range(n), size)
    )


def _formal_readings(levels, ranks):
    """Every legal reading's uses, with §7's "uses" restrictions read literally."""
    forced = _formal_forced(levels, ranks)
    if forced is None:
        return []
    n = len(levels)
    out = []
    for size in range(ranks["base"] + 1):
        for base in combinations(range(n), size):
            rest = [len(levels[i]) for i in range(n) if i not in base]
            w = max(0, max(rest, default=0) - 3)
            if w > ranks["width"] or any(len(levels[i]) <= 3 + w for i in base):
                continue
            uses = forced | ({"base"} if base else set()) | ({"width"} if w else set())
            out.append(frozenset(uses))
    return out


# Levels of one size or of two sizes one apart, stacked widest and biggest first: mostly
# close to legal, so both verdicts come up often.
_levels = st.builds(
    lambda size, n, mixed: [size] * n + [size - 1] * mixed,
    st.integers(2, 10), st.integers(1, 6), st.sampled_from([0, 0, 0, 1, 2]),
) | st.lists(st.integers(1, 10), min_size=1, max_size=3)
towers = st.lists(_levels, min_size=1, max_size=5).map(
    lambda levels: sorted(levels, key=lambda lv: (-max(lv), -len(lv)))
)
rank_maps = st.fixed_dictionaries({s: st.integers(0, 3) for s in SKILL_NAMES})


@settings(max_examples=300, deadline=None)
@given(towers, rank_maps, st.sets(st.sampled_from(SKILL_NAMES), max_size=2))
def test_check_tower_agrees_with_the_formal_definition(levels, ranks, require):
    readings = _formal_readings(levels, ranks)
    check = check_tower(levels, ranks)
    assert check.legal is bool(readings), (levels, ranks, check.reason)
    assert check.legal is _formal_legal(levels, ranks)
    if readings:
        assert set(check.readings) == set(readings)
        with_require = check_tower(levels, ranks, require=require)
        assert with_require.legal is any(set(require) <= r for r in readings)
        if with_require.legal:
            assert with_require.uses >= require
            assert with_require.uses in readings
