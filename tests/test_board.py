"""The board data matches the tables of docs/rules.md."""

from collections import Counter

from shared import board


def test_adjacency_is_symmetric_and_includes_the_coastal_route():
    for a, neighbours in board.ADJACENT.items():
        for b in neighbours:
            assert a in board.ADJACENT[b]
    assert board.adjacent("bcn", "ebr")
    assert not board.adjacent("gir", "tar")
    assert sum(len(n) for n in board.ADJACENT.values()) == 2 * 13


def test_tiles_and_wheel():
    assert len(board.TILES) == 32
    assert Counter(t.kind for t in board.TILES.values()) == {"shape": 16, "exhibition": 16}
    assert len(board.BOARD_SKILL_TILES) == 8
    assert board.wheel_segments("normal")[-1] == "all"
    assert board.wheel_segments("advanced")[-1] == "none"


def test_festival_counts_per_player_count():
    assert {n: sum(per.values()) for n, per in board.FESTIVALS_PER_ROUND.items()} == {
        2: 8, 3: 12, 4: 14,
    }
