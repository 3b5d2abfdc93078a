"""§6 Local performances: completing a tile with a special action or a special training."""

from __future__ import annotations

import attrs
import pytest

from shared.actions import Build, EndTurn, Move, Special, Train
from shared.events import Performed
from shared.state import Skills, Taken
from tests.support.games import game, on_turn, play, refused, showing, with_player, with_row

TOWER_321 = ((9, 9, 9), (6, 6), (3,))  # shape lp04: 3,2,1


@pytest.fixture
def lleida():
    """Seat 0 to act, a 3-player game, Lleida's row holding lp04 (3,2,1) and lp19."""
    state = attrs.evolve(game(3, seed=2), first=0, turn=0)
    return with_row(state, "lle", tiles=("lp04", "lp19"), tokens=0)


def test_a_performance_collects_the_tokens_of_several_players(lleida):
    state, _ = play(lleida, 0, Move("lle"), Special("move", region="cen"), EndTurn())
    biggest = state.region_castellers("lle")[0]
    state, _ = play(state, 1, Move("lle"), Special("recruit", size=biggest), EndTurn())
    assert state.row("lle").tokens == 2
    state = with_player(state, 2, team=(9, 9, 9, 6, 6, 3, 1))
    state, events = play(state, 2, Move("lle"), Build(TOWER_321), Special("perform", tile="lp04"))
    player = state.players[2]
    assert player.tiles == (Taken("lp04", "lle"),)
    assert player.taken_tokens == 3  # two placed by others, and the one just spent
    assert player.tokens == 6
    assert state.row("lle").tiles == ("lp19",) and state.row("lle").tokens == 0
    assert Performed(seat=2, tile="lp04", region="lle", tokens=3) in events
    # the tower still stands after a performance
    assert player.tower == TOWER_321


def test_a_special_training_performs_without_spending_a_token(lleida):
    state = with_row(lleida, "lle", tokens=2)
    state = with_player(state, 0, region="lle", team=(9, 9, 9, 6, 6, 3), tower=TOWER_321)
    state = showing(state, "lle", "special")
    state, events = play(state, 0, Train("region", effect="perform", tile="lp04"))
    assert state.players[0].tokens == 7 and state.players[0].taken_tokens == 2
    assert state.row("lle").tokens == 0
    assert Performed(seat=0, tile="lp04", region="lle", tokens=2) in events


def test_a_skill_exhibition(lleida):
    # lp19: exactly 2 levels, using balance
    state = with_player(lleida, 0, region="lle", team=(6, 6, 4, 4), skills=Skills(balance=1))
    state, _ = play(state, 0, Build([[6, 6], [4, 4]]), Special("perform", tile="lp19"))
    assert state.players[0].tiles == (Taken("lp19", "lle"),)


def test_a_tower_that_does_not_match_is_refused_and_nothing_is_spent(lleida):
    state = with_player(lleida, 0, region="lle", team=(9, 9, 9, 6, 6, 3), tower=((9, 9, 9), (6,)))
    error = refused(state, 0, Special("perform", tile="lp04"))
    assert error.code == "tile_wrong_shape"
    error = refused(state, 0, Special("perform", tile="lp19"))
    assert error.code == "tile_skill_unused"  # 2 levels, but no balance used


def test_the_tile_must_be_in_the_row_of_the_pawns_region(lleida):
    state = with_player(lleida, 0, region="cen", team=(9, 9, 9, 6, 6, 3), tower=TOWER_321)
    state = with_row(state, "cen", tiles=("lp01",))
    error = refused(state, 0, Special("perform", tile="lp04"))
    assert error.code == "tile_not_in_row"
    assert error.message == "lp04 is not in the row of Catalunya Central"


@pytest.mark.parametrize("tile", ["lp33", "", 4, ["lp04"]])
def test_unknown_tiles(lleida, tile):
    state = with_player(lleida, 0, region="lle", tower=TOWER_321)
    assert refused(state, 0, Special("perform", tile=tile)).code == "unknown_tile"
    assert refused(state, 0, Special("perform")).code == "bad_effect"


def test_performing_needs_a_tower(lleida):
    state = on_turn(with_player(lleida, 0, region="lle"), 0)
    error = refused(state, 0, Special("perform", tile="lp04"))
    assert error.code == "no_tower"


def test_a_completed_tile_is_not_replaced(lleida):
    state = with_player(lleida, 0, region="lle", team=(9, 9, 9, 6, 6, 3), tower=TOWER_321)
    state, _ = play(state, 0, Special("perform", tile="lp04"))
    state = attrs.evolve(state, done=())
    assert state.row("lle").tiles == ("lp19",)
    assert refused(state, 0, Special("perform", tile="lp04")).code == "tile_not_in_row"


def test_a_special_move_leaves_its_token_behind_not_on_the_row_performed(lleida):
    """§4 + §6: the token of a special move lies on the row of the region left; a free
    performance (special tile) in the new region takes only the tokens lying there."""
    state = with_row(lleida, "lle", tokens=1)
    state = with_player(state, 0, region="cen", team=(9, 9, 9, 6, 6, 3), tower=TOWER_321)
    state = showing(state, "lle", "special")
    state, events = play(
        state, 0, Special("move", region="lle"), Train("region", effect="perform", tile="lp04")
    )
    player = state.players[0]
    assert (player.tokens, player.taken_tokens) == (6, 1)
    assert state.row("cen").tokens == 1 and state.row("lle").tokens == 0
    assert Performed(seat=0, tile="lp04", region="lle", tokens=1) in events


def test_an_exhibition_refuses_a_taller_tower_too(lleida):
    # lp19: exactly 2 levels using balance; three levels using balance is not it
    state = with_player(lleida, 0, region="lle", team=(6, 6, 4, 4, 1), skills=Skills(balance=1),
                        tower=((6, 6), (4, 4), (1,)))
    error = refused(state, 0, Special("perform", tile="lp19"))
    assert error.code == "tile_wrong_height"
    assert error.message == "lp19 needs a tower of exactly 2 levels; yours has 3"


def test_a_shape_refuses_an_extra_level_on_top(lleida):
    # lp04 is 3,2,1: a 3,2,1,1 tower (balance) holds the shape but is one level too tall
    state = with_player(lleida, 0, region="lle", team=(9, 9, 9, 6, 6, 3, 1),
                        skills=Skills(balance=1), tower=((9, 9, 9), (6, 6), (3,), (1,)))
    assert refused(state, 0, Special("perform", tile="lp04")).code == "tile_wrong_shape"

