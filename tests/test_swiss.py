"""Swiss pairing and standings by value (server.core.swiss), against pairings worked out by
hand in this file from fixed results."""

from __future__ import annotations

from server.core.swiss import (
    Round,
    Table,
    pair_round,
    places_of,
    standings,
    table_points,
    table_sizes,
)


def seeds(names: str) -> dict[str, int]:
    return {p: i + 1 for i, p in enumerate(names)}


def play(r: Round, results: dict[tuple[str, ...], dict[str, tuple[int, int]]]) -> Round:
    """``r`` with each table's (place, score) per player from ``results``."""
    tables = []
    for t in r.tables:
        res = results[t.players]
        tables.append(Table(t.players, tuple(res[p][0] for p in t.players),
                            tuple(res[p][1] for p in t.players)))
    return Round(tuple(tables), r.bye)


def tables(r: Round) -> list[tuple[str, ...]]:
    return [t.players for t in r.tables]


def test_points_by_place_share_ties() -> None:
    assert table_points([1, 2]) == [1.0, 0.0]
    assert table_points([1, 1]) == [0.5, 0.5]
    assert table_points([2, 1, 3]) == [1.0, 2.0, 0.0]
    assert table_points([1, 1, 3]) == [1.5, 1.5, 0.0]
    assert table_points([1, 2, 2, 4]) == [3.0, 1.5, 1.5, 0.0]
    assert places_of([[2], [0, 1]], 3) == (2, 2, 1)


def test_table_sizes() -> None:
    assert table_sizes(8, 2) == [2, 2, 2, 2]
    assert table_sizes(7, 2) == [2, 2, 2, 1]
    assert table_sizes(9, 3) == [3, 3, 3]
    assert table_sizes(10, 3) == [3, 3, 2, 2]
    assert table_sizes(5, 4) == [3, 2]


def test_eight_players_three_rounds_two_seats() -> None:
    s = seeds("ABCDEFGH")
    r1 = pair_round(s, [], 2)
    assert tables(r1) == [("A", "B"), ("C", "D"), ("E", "F"), ("G", "H")]
    r1 = play(r1, {("A", "B"): {"A": (1, 12), "B": (2, 5)},
                   ("C", "D"): {"D": (1, 10), "C": (2, 8)},
                   ("E", "F"): {"E": (1, 9), "F": (2, 3)},
                   ("G", "H"): {"H": (1, 11), "G": (2, 7)}})
    # 1 point: A H D E by score (Buchholz 0 each); 0: C G B F (Buchholz 1 each) by score
    assert [x.player for x in standings(s, [r1])] == list("AHDECGBF")
    r2 = pair_round(s, [r1], 2)
    assert tables(r2) == [("A", "H"), ("D", "E"), ("C", "G"), ("B", "F")]
    r2 = play(r2, {("A", "H"): {"A": (1, 10), "H": (2, 6)},
                   ("D", "E"): {"E": (1, 10), "D": (2, 4)},
                   ("C", "G"): {"C": (1, 9), "G": (2, 2)},
                   ("B", "F"): {"F": (1, 8), "B": (2, 7)}})
    assert [x.player for x in standings(s, [r1, r2])] == list("EADHFCBG")
    r3 = pair_round(s, [r1, r2], 2)
    assert tables(r3) == [("E", "A"), ("D", "H"), ("F", "C"), ("B", "G")]
    r3 = play(r3, {("E", "A"): {"A": (1, 10), "E": (2, 9)},
                   ("D", "H"): {"D": (1, 8), "H": (2, 5)},
                   ("F", "C"): {"F": (1, 7), "C": (2, 3)},
                   ("B", "G"): {"G": (1, 6), "B": (2, 4)}})
    final = standings(s, [r1, r2, r3])
    assert [(x.player, x.points, x.buchholz) for x in final] == [
        ("A", 3, 3), ("E", 2, 7), ("D", 2, 4), ("F", 2, 3),
        ("H", 1, 6), ("C", 1, 5), ("G", 1, 2), ("B", 0, 6)]


def test_nine_players_three_rounds_three_seats() -> None:
    s = seeds("ABCDEFGHI")
    r1 = pair_round(s, [], 3)
    assert tables(r1) == [("A", "B", "C"), ("D", "E", "F"), ("G", "H", "I")]
    r1 = play(r1, {("A", "B", "C"): {"C": (1, 30), "A": (2, 25), "B": (3, 20)},
                   ("D", "E", "F"): {"D": (1, 28), "E": (2, 22), "F": (3, 15)},
                   ("G", "H", "I"): {"I": (1, 26), "G": (2, 24), "H": (3, 10)}})
    r2 = pair_round(s, [r1], 3)
    assert tables(r2) == [("C", "D", "I"), ("A", "G", "E"), ("B", "F", "H")]
    r2 = play(r2, {("C", "D", "I"): {"D": (1, 20), "C": (2, 18), "I": (3, 12)},
                   ("A", "G", "E"): {"G": (1, 21), "E": (1, 21), "A": (3, 15)},
                   ("B", "F", "H"): {"H": (1, 19), "B": (2, 14), "F": (3, 9)}})
    assert [x.player for x in standings(s, [r1, r2])] == list("DCGEIHABF")
    r3 = pair_round(s, [r1, r2], 3)
    assert tables(r3) == [("D", "G", "B"), ("C", "E", "H"), ("I", "A", "F")]
    r3 = play(r3, {("D", "G", "B"): {"B": (1, 20), "D": (2, 15), "G": (3, 10)},
                   ("C", "E", "H"): {"E": (1, 25), "H": (2, 20), "C": (3, 5)},
                   ("I", "A", "F"): {"A": (1, 30), "F": (2, 20), "I": (3, 10)}})
    final = standings(s, [r1, r2, r3])
    assert [(x.player, x.points) for x in final] == [
        ("D", 5), ("E", 4.5), ("C", 3), ("B", 3), ("A", 3), ("H", 3),
        ("G", 2.5), ("I", 2), ("F", 1)]
    # A and H tie on points and Buchholz (16); the game score (70 to 49) puts A first
    by = {x.player: x for x in final}
    assert (by["A"].buchholz, by["H"].buchholz, by["A"].score, by["H"].score) == (16, 16, 70, 49)


def test_repeat_opponents_are_avoided_by_backing_up() -> None:
    # Standings P Q R S; P met Q and Q met S: top-down P-R would leave Q-S, a repeat.
    s = seeds("PQRS")
    past = Round((Table(("P", "Q"), (1, 1), (0, 0)), Table(("Q", "S"), (1, 1), (0, 0)),
                  Table(("R", "S"), (1, 1), (0, 0))))
    assert [x.player for x in standings(s, [past])] == list("QSPR")
    # Q: P, S met -> Q-R; then S-P
    assert tables(pair_round(s, [past], 2)) == [("Q", "R"), ("S", "P")]
    past = Round((Table(("P", "Q"), (1, 2), (0, 0)), Table(("Q", "S"), (2, 1), (0, 0))))
    # P 1, S 1 (S Buchholz 0, P Buchholz 0; P seed first), Q 0, R 0 -> P S Q R
    assert [x.player for x in standings(s, [past])] == list("PSQR")
    # P-S fresh, then Q-R
    assert tables(pair_round(s, [past], 2)) == [("P", "S"), ("Q", "R")]


def test_backtracking_when_the_greedy_choice_strands_a_pair() -> None:
    s = seeds("PQRS")
    # tables not played yet count no points but their players have met: order by seed
    # P Q R S; P met Q, Q met S: P-R first would leave Q-S, a repeat
    past = [Round((Table(("P", "Q")),)), Round((Table(("Q", "S")),))]
    assert tables(pair_round(s, past, 2)) == [("P", "S"), ("Q", "R")]


def test_bye_goes_to_the_lowest_without_one_and_left_players_are_not_paired() -> None:
    s = seeds("ABCDE")
    r1 = pair_round(s, [], 2)
    assert (tables(r1), r1.bye) == ([("A", "B"), ("C", "D")], "E")
    r1 = play(r1, {("A", "B"): {"A": (1, 1), "B": (2, 0)},
                   ("C", "D"): {"C": (1, 1), "D": (2, 0)}})
    assert standings(s, [r1])[0].points == 1 and {x.player: x.points for x in
                                                  standings(s, [r1])}["E"] == 1
    r2 = pair_round(s, [r1], 2)
    assert r2.bye == "D" and tables(r2) == [("A", "C"), ("E", "B")]
    r2b = pair_round(s, [r1], 2, withdrawn=["B"])
    assert r2b.bye is None and tables(r2b) == [("A", "C"), ("E", "D")]
