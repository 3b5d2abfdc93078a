"""§3 Setup: what a new game holds for each player count, and that only its seed varies it."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from shared.board import (
    BOARD_SKILL_TILES,
    FESTIVALS_PER_ROUND,
    REGIONS,
    SIZES,
    TILES,
    TOWNS,
)
from shared.engine import new_game
from tests.support.games import NAMES, game

REFILL = {2: 3, 3: 4, 4: 5}


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_regions_teams_and_bag(seats):
    state = game(seats, seed=7)
    assert state.refill == REFILL[seats]
    assert [len(r) for r in state.regions] == [REFILL[seats]] * 7
    assert [len(p.team) for p in state.players] == [7] * seats
    assert len(state.bag) == 150 - 7 * REFILL[seats] - 7 * seats
    everything = [*state.bag, *(c for r in state.regions for c in r)]
    everything += [c for p in state.players for c in p.team]
    assert Counter(everything) == {size: 15 for size in SIZES}


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_players_start_empty_handed(seats):
    state = game(seats, seed=3)
    assert [p.name for p in state.players] == list(NAMES[:seats])
    assert [p.seat for p in state.players] == list(range(seats))
    for player in state.players:
        assert player.region is None
        assert player.tokens == 7
        assert player.tower == ()
        assert set(player.skills.as_dict().values()) == {0}
        assert player.best == 0
        assert (player.tiles, player.prizes, player.sizes, player.taken_tokens) == ((), (), (), 0)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_wheel_and_local_performance_rows(seats):
    state = game(seats, seed=11)
    assert sorted(state.wheel) == sorted(BOARD_SKILL_TILES)
    assert [len(row.tiles) for row in state.rows] == [2] * 7
    dealt = [t for row in state.rows for t in row.tiles]
    assert len(set(dealt)) == 14 and set(dealt) <= set(TILES)
    assert all(row.tokens == 0 for row in state.rows)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_calendar_follows_the_festival_table(seats):
    state = game(seats, seed=5)
    per_round = Counter(f.round for f in state.festivals)
    assert per_round == FESTIVALS_PER_ROUND[seats]
    assert [f.round for f in state.festivals] == sorted(f.round for f in state.festivals)
    for kind, rounds in (("I", range(3, 7)), ("II", range(7, 11))):
        of_kind = [f for f in state.festivals if f.type == kind]
        assert {f.round for f in of_kind} == set(rounds)
        assert len({f.region for f in of_kind}) == len(of_kind)  # one tile per region and type
        assert all(f.town == TOWNS[f.region][kind] for f in of_kind)
    # one size token under each festival, from 3 of each size
    assert all(f.size in SIZES and not f.done for f in state.festivals)
    assert max(Counter(f.size for f in state.festivals).values()) <= 3


def test_first_player_is_random_and_starts_round_one():
    firsts = set()
    for seed in range(40):
        state = game(4, seed)
        assert state.round == 1 and state.turn == state.first
        assert state.done == () and state.turns_taken == 0 and not state.over
        firsts.add(state.first)
    assert firsts == {0, 1, 2, 3}


def test_same_seed_same_game_other_seed_other_game():
    assert game(3, seed=42) == game(3, seed=42)
    assert game(3, seed=42) != game(3, seed=43)
    bags = {game(2, seed).bag for seed in range(10)}
    assert len(bags) == 10


def test_setup_leaves_the_global_generator_alone():
    random.seed(99)
    expected = random.random()
    random.seed(99)
    new_game(NAMES[:2], seed=1)
    assert random.random() == expected


def test_variant_is_kept():
    assert game(2, variant="advanced").variant == "advanced"
    assert game(2).variant == "normal"
    assert game(2, variant="advanced").wheel_tiles().keys() == {*REGIONS, "none"}


@pytest.mark.parametrize("names", [(), ("solo",), tuple("abcde")])
def test_seat_count_outside_two_to_four_is_refused(names):
    with pytest.raises(ValueError):
        new_game(names)


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError):
        new_game(NAMES[:2], variant="expert")


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 9, 2024])
def test_regions_are_dealt_in_board_order_then_the_teams_in_seat_order(seats, seed):
    """§3.1, §3.2, §3.6: the shuffle of the bag comes first; each region in board order
    takes the next castellers off it, then each player 7, and refills draw what is left.
    (A stored game is its seed plus its actions: this order must never change.)"""
    bag = [size for size in SIZES for _ in range(15)]
    random.Random(seed).shuffle(bag)
    state = game(seats, seed)
    level = REFILL[seats]

    def deal(count):
        dealt = tuple(sorted(bag[:count], reverse=True))
        del bag[:count]
        return dealt

    assert state.regions == tuple(deal(level) for _ in REGIONS)
    assert [p.team for p in state.players] == [deal(7) for _ in range(seats)]
    assert state.bag == tuple(bag)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_each_festival_has_one_size_token_and_the_calendar_is_dealt_fresh(seats):
    """§3.4: over many seeds every size turns up under festivals, never more than 3 times in
    one game, and each type's towns are a random pick from the 7 regions."""
    sizes, firsts = Counter(), set()
    for seed in range(30):
        festivals = game(seats, seed).festivals
        count = Counter(f.size for f in festivals)
        assert sum(count.values()) == len(festivals) and max(count.values()) <= 3
        sizes.update(count)
        firsts.add(festivals[0].region)
    assert set(sizes) == set(SIZES)
    assert firsts == set(REGIONS)
