"""§4 and §7: each action of a turn, legal and refused, on states built from seeded games."""

from __future__ import annotations

import attrs
import pytest

from shared.actions import Build, Dismantle, EndTurn, Move, Recruit, Special, Train
from shared.board import ADJACENT, REGION_NAMES, REGIONS, SKILLS, wheel_segments
from shared.engine import apply, legal_actions
from shared.errors import GameOver, NotYourTurn, RuleError
from shared.events import ActionTaken, Trained
from shared.state import Skills
from tests.support.games import game, on_turn, play, refused, showing, with_player, with_region


@pytest.fixture
def start():
    """Seat 0 to act on a fresh 3-player game, pawn not yet placed."""
    return on_turn(game(3, seed=1), 0)


def placed(state, region, seat=0, **changes):
    return with_player(state, seat, region=region, **changes)


# Whose turn, and the end of the game ---------------------------------------------------------


def test_only_the_seat_on_turn_may_act(start):
    for seat in (1, 2):
        with pytest.raises(NotYourTurn) as info:
            apply(start, seat, EndTurn())
        assert info.value.code == "not_your_turn" and "Anna" in info.value.message


def test_nothing_after_the_game_is_over(start):
    over = attrs.evolve(start, turn=None, scores=(), winners=())
    with pytest.raises(GameOver) as info:
        apply(over, 0, EndTurn())
    assert info.value.code == "game_over"


def test_every_applied_action_is_reported_first(start):
    state, events = apply(start, 0, Move("gir"))
    assert events[0] == ActionTaken(seat=0, action={"kind": "move", "region": "gir"})
    assert state.players[0].region == "gir" and state.done == ("move",)


# Move ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("region", REGIONS)
def test_first_move_places_the_pawn_anywhere(start, region):
    state, _ = apply(start, 0, Move(region))
    assert state.players[0].region == region


@pytest.mark.parametrize("here", REGIONS)
def test_a_placed_pawn_moves_only_to_adjacent_regions(start, here):
    state = placed(start, here)
    for there in REGIONS:
        if there == here:
            assert refused(state, 0, Move(there)).code == "already_there"
        elif there in ADJACENT[here]:
            assert apply(state, 0, Move(there))[0].players[0].region == there
        else:
            error = refused(state, 0, Move(there))
            assert error.code == "not_adjacent"
            assert error.message == (
                f"{REGION_NAMES[there]} is not adjacent to {REGION_NAMES[here]}"
            )


def test_the_coastal_route_counts_as_adjacent(start):
    state, _ = apply(placed(start, "bcn"), 0, Move("ebr"))
    assert state.players[0].region == "ebr"
    state, _ = apply(placed(start, "ebr"), 0, Move("bcn"))
    assert state.players[0].region == "bcn"


def test_girona_is_not_adjacent_to_tarragona(start):
    error = refused(placed(start, "tar"), 0, Move("gir"))
    assert (error.code, error.message) == ("not_adjacent", "Girona is not adjacent to Tarragona")


@pytest.mark.parametrize("bad", ["xyz", "", 3, None, ["gir"]])
def test_unknown_regions_are_refused(start, bad):
    assert refused(start, 0, Move(bad)).code == "unknown_region"


def test_a_pawn_left_off_the_board_is_placed_anywhere_later(start):
    state, _ = play(start, 0, EndTurn())
    state = on_turn(state, 0)
    state, _ = apply(state, 0, Move("ebr"))
    assert state.players[0].region == "ebr"


# Once per turn -------------------------------------------------------------------------------


def test_each_action_at_most_once_per_turn(start):
    state = placed(start, "lle")
    state = with_region(state, "lle", (9, 8, 8, 5))
    state = showing(state, "lle", "mix")
    cases = [
        (Move("cen"), Move("lle"), "already_moved", "you already moved this turn"),
        (Recruit([9]), Recruit([5]), "already_recruited", "you already recruited this turn"),
        (Train("region"), Train("region"), "already_trained", "you already trained this turn"),
        (
            Special("recruit", size=8),
            Special("recruit", size=8),
            "already_special",
            "you already took a special action this turn",
        ),
    ]
    for first, second, code, message in cases:
        after, _ = apply(state, 0, first)
        error = refused(after, 0, second)
        assert (error.code, error.message) == (code, message)


def test_all_four_actions_in_one_turn_in_any_order(start):
    state = placed(start, "lle")
    state = with_region(state, "lle", (9, 8, 8, 5))
    state = showing(state, "lle", "mix")
    state, _ = play(
        state, 0, Special("recruit", size=9), Recruit([8, 8]), Train("region"), Move("alt")
    )
    assert set(state.done) == {"move", "recruit", "train", "special"}
    assert state.players[0].region == "alt"


def test_end_turn_clears_the_actions_taken(start):
    state, _ = play(placed(start, "lle"), 0, Move("cen"), EndTurn())
    assert state.turn == 1 and state.done == ()


# Recruit -------------------------------------------------------------------------------------


def test_recruit_takes_one_or_two_castellers_from_the_region(start):
    state = with_region(placed(start, "lle"), "lle", (9, 6, 6, 2))
    team = state.players[0].team
    after, _ = apply(state, 0, Recruit([6, 6]))
    assert after.region_castellers("lle") == (9, 2)
    assert sorted(after.players[0].team) == sorted((*team, 6, 6))
    after, _ = apply(state, 0, Recruit([2]))
    assert after.region_castellers("lle") == (9, 6, 6)


def test_recruit_needs_the_sizes_in_the_region(start):
    state = with_region(placed(start, "lle"), "lle", (9, 6, 2))
    error = refused(state, 0, Recruit([5]))
    assert (error.code, error.message) == ("not_in_region", "there is no 5 in Lleida")
    error = refused(state, 0, Recruit([6, 6]))
    assert (error.code, error.message) == ("not_in_region", "there is only one 6 in Lleida")


@pytest.mark.parametrize("sizes", [(), (9, 6, 2)])
def test_recruit_one_or_two(start, sizes):
    state = with_region(placed(start, "lle"), "lle", (9, 6, 2))
    assert refused(state, 0, Recruit(sizes)).code == "bad_recruit"


@pytest.mark.parametrize("size", [0, 11, -1, "6", 6.0, None, True])
def test_recruit_sizes_are_casteller_sizes(start, size):
    state = with_region(placed(start, "lle"), "lle", (9, 6, 2))
    assert refused(state, 0, Recruit([size])).code == "bad_size"


def test_recruit_needs_a_placed_pawn(start):
    assert refused(start, 0, Recruit([5])).code == "pawn_not_placed"


# Train ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("skill", [s.value for s in SKILLS])
def test_training_raises_the_skill_the_region_shows(start, skill):
    state = showing(placed(start, "gir"), "gir", skill)
    after, events = apply(state, 0, Train("region"))
    assert after.players[0].skills.rank(skill) == 1
    assert Trained(seat=0, tile=skill) in events


def test_training_with_the_all_segment(start):
    state = showing(start, "all", "base")
    after, _ = apply(state, 0, Train("all"))  # no pawn needed for the 'all' segment
    assert after.players[0].skills.base == 1


def test_the_advanced_game_has_no_all_segment():
    state = on_turn(game(2, seed=4, variant="advanced"), 0)
    error = refused(placed(state, "gir"), 0, Train("all"))
    assert (error.code, error.message) == (
        "all_not_allowed", "the advanced game has no 'all' segment"
    )


def test_training_a_skill_at_rank_three_is_refused(start):
    state = showing(placed(start, "gir", skills=Skills(strength=3)), "gir", "strength")
    error = refused(state, 0, Train("region"))
    assert (error.code, error.message) == ("rank_max", "Strength is already at rank 3")


def test_train_region_needs_a_placed_pawn(start):
    assert refused(start, 0, Train("region")).code == "pawn_not_placed"


@pytest.mark.parametrize("choice", ["gir", "", None, 1])
def test_train_choice_is_region_or_all(start, choice):
    assert refused(placed(start, "gir"), 0, Train(choice)).code == "bad_choice"


@pytest.mark.parametrize("round_", range(1, 11))
def test_the_wheel_turns_one_segment_a_round(start, round_):
    """§4: in round r segment i shows ring position (i + r - 1) mod 8."""
    for i, segment in enumerate(wheel_segments("normal")):
        expected = start.wheel[(i + round_ - 1) % 8]
        region = "gir" if segment == "all" else segment
        state = placed(attrs.evolve(start, round=round_), region)
        choice = "all" if segment == "all" else "region"
        if expected == "special":
            action = Train(choice, effect="move", region=min(ADJACENT[region]))
        else:
            action = Train(choice)
        _, events = apply(state, 0, action)
        assert [e.tile for e in events if isinstance(e, Trained)] == [expected]


def test_a_skill_tile_takes_no_effect(start):
    state = showing(placed(start, "gir"), "gir", "mix")
    error = refused(state, 0, Train("region", effect="move", region="alt"))
    assert error.code == "not_special"


def test_a_special_tile_needs_an_effect(start):
    state = showing(placed(start, "gir"), "gir", "special")
    assert refused(state, 0, Train("region")).code == "effect_missing"


def test_a_special_tile_is_a_free_effect_no_token_spent_or_placed(start):
    state = showing(placed(start, "gir"), "gir", "special")
    state = with_region(state, "gir", (7, 3))
    after, events = apply(state, 0, Train("region", effect="recruit", size=7))
    assert 7 in after.players[0].team and after.region_castellers("gir") == (3,)
    assert after.players[0].tokens == 7
    assert [row.tokens for row in after.rows] == [0] * 7
    assert Trained(seat=0, tile="special") in events
    assert after.done == ("train",)  # the special action is still free this turn
    after, _ = apply(after, 0, Special("recruit", size=3))
    assert after.players[0].tokens == 6


def test_a_special_tile_move_is_a_free_move_and_leaves_the_move_action(start):
    state = showing(placed(start, "gir"), "gir", "special")
    after, _ = play(state, 0, Train("region", effect="move", region="cen"), Move("bcn"))
    assert after.players[0].region == "bcn"
    assert after.players[0].tokens == 7 and after.row("gir").tokens == 0


# Special action ------------------------------------------------------------------------------


def test_special_spends_a_token_onto_the_row_of_the_region_left(start):
    state = placed(start, "gir")
    after, _ = apply(state, 0, Special("move", region="bcn"))
    assert after.players[0].region == "bcn"
    assert after.players[0].tokens == 6
    assert after.row("gir").tokens == 1 and after.row("bcn").tokens == 0
    # a special move after the ordinary move: both allowed in one turn
    after, _ = play(state, 0, Move("cen"), Special("move", region="tar"))
    assert after.players[0].region == "tar" and after.row("cen").tokens == 1


def test_special_recruit_takes_one_casteller(start):
    state = with_region(placed(start, "lle"), "lle", (9, 6))
    after, _ = apply(state, 0, Special("recruit", size=6))
    assert after.region_castellers("lle") == (9,) and after.row("lle").tokens == 1
    assert refused(state, 0, Special("recruit", size=5)).code == "not_in_region"


def test_special_needs_a_token(start):
    state = placed(start, "gir", tokens=0)
    error = refused(state, 0, Special("move", region="alt"))
    assert (error.code, error.message) == ("no_tokens", "you have no special action tokens left")


def test_special_needs_a_placed_pawn(start):
    assert refused(start, 0, Special("move", region="alt")).code == "pawn_not_placed"


@pytest.mark.parametrize(
    "action",
    [
        Special("jump", region="alt"),
        Special("move"),
        Special("move", region="alt", size=3),
        Special("recruit", region="alt"),
        Special("perform", size=3),
        Special(None),
        Special(["move"], region="alt"),
    ],
)
def test_special_effect_and_its_field_must_match(start, action):
    assert refused(placed(start, "gir"), 0, action).code == "bad_effect"


# Build and dismantle (§7) --------------------------------------------------------------------


TOWER = ((7, 7, 7), (5, 5), (2,))


def test_build_from_the_team_replaces_the_standing_tower(start):
    state = placed(start, "gir", team=(9, 7, 7, 7, 5, 5, 2, 1))
    after, _ = play(state, 0, Build(TOWER))
    assert after.players[0].tower == TOWER
    after, _ = play(after, 0, Build([[7, 7], [5]]), Build([[5, 5], [2]]))
    assert after.players[0].tower == ((5, 5), (2,))
    assert after.players[0].team == state.players[0].team  # castellers are never used up
    after, _ = apply(after, 0, Dismantle())
    assert after.players[0].tower == ()


def test_build_is_free_any_number_of_times_and_marks_nothing(start):
    state = with_player(start, 0, team=(9, 7, 7, 7, 5, 5, 2, 1))
    after, _ = play(state, 0, Build(TOWER), Dismantle(), Build(TOWER))
    assert after.done == ()


def test_build_needs_the_castellers_in_the_team(start):
    state = with_player(start, 0, team=(9, 7, 7, 5, 5, 2, 1))
    error = refused(state, 0, Build(TOWER))
    assert (error.code, error.message) == ("not_in_team", "your team has only two 7s")
    error = refused(state, 0, Build([[8]]))
    assert (error.code, error.message) == ("not_in_team", "your team has no 8")


def test_build_refuses_an_illegal_tower_with_the_towers_reason(start):
    state = with_player(start, 0, team=(7, 7, 7, 7, 7, 5))
    for levels in ([[7, 7, 7], [7, 7]], [[5], [7]], [[7, 7, 7, 7]], [[7, 5]]):
        error = refused(state, 0, Build(levels))
        assert error.code.startswith("tower_") and error.message


@pytest.mark.parametrize("levels", [[], [[]], [[7], []]])
def test_build_needs_levels_with_castellers(start, levels):
    state = with_player(start, 0, team=(7, 7, 7))
    assert refused(state, 0, Build(levels)).code in {"tower_empty", "tower_empty_level"}


@pytest.mark.parametrize("size", [0, 11, "7", None, 7.0, [7]])
def test_build_sizes_are_casteller_sizes(start, size):
    assert refused(start, 0, Build([[size]])).code == "tower_bad_size"


def test_dismantle_needs_a_tower(start):
    error = refused(start, 0, Dismantle())
    assert error.code == "no_tower"


def test_an_unknown_action_object_is_a_rule_error(start):
    with pytest.raises(RuleError) as info:
        apply(start, 0, "move")  # type: ignore[arg-type]
    assert info.value.code == "unknown_action"


# Before the pawn is on the board (§4) ----------------------------------------------------------


@pytest.mark.parametrize(
    "effect", [{"effect": "move", "region": "gir"}, {"effect": "recruit", "size": 5},
               {"effect": "perform", "tile": "lp01"}],
)
def test_a_special_tile_on_all_needs_a_placed_pawn_for_its_effect(start, effect):
    """Training `all` needs no region, but every special effect does: no free placement."""
    state = showing(with_player(start, 0, tower=((5, 5), (3,))), "all", "special")
    assert refused(state, 0, Train("all", **effect)).code == "pawn_not_placed"
    assert refused(state, 0, Special(**effect)).code == "pawn_not_placed"
    assert not [a for a in legal_actions(state, 0) if isinstance(a, Train | Special)]
    # once placed (by the move), the same training works
    after, _ = play(state, 0, Move("alt"), Train("all", effect="move", region="gir"))
    assert after.players[0].region == "gir" and after.players[0].tokens == 7


def test_the_advanced_game_trains_only_in_the_pawns_region():
    state = on_turn(game(2, seed=4, variant="advanced"), 0)
    state = showing(placed(state, "gir"), "gir", "width")
    state = showing(state, "none", "base")
    for choice in ("none", "all"):
        assert refused(state, 0, Train(choice)).code in {"bad_choice", "all_not_allowed"}
    trainings = [a for a in legal_actions(state, 0) if isinstance(a, Train)]
    assert trainings == [Train("region")]
    after, _ = apply(state, 0, Train("region"))
    assert after.players[0].skills == Skills(width=1)


def test_the_first_move_places_the_pawn_even_after_other_actions(start):
    """§4: training with `all` and building need no region; the first move, later in the
    turn, still places the pawn anywhere."""
    state = showing(with_player(start, 0, team=(7, 7, 7, 5, 5, 2)), "all", "mix")
    state, _ = play(state, 0, Train("all"), Build(TOWER), Move("ebr"))
    assert state.players[0].region == "ebr" and state.players[0].skills.mix == 1
    assert state.players[0].tower == TOWER
