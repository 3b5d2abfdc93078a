"""§5 Festivals, resolved at the end of their round (§8.1), on states built from seeded games."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.actions import EndTurn
from shared.board import TOWNS
from shared.engine import apply
from shared.events import FestivalResolved, FestivalResult
from shared.state import Festival, Prizes, Skills, Taken
from tests.support.games import game, with_player

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


def test_two_players_rank_two_takes_nothing():
    state, [event] = resolve(at_festival(2, [FOUR_ONE_FIVE, FIVE_TWO_FIVES]))
    assert {r.seat: r.prize for r in event.results} == {1: "trophy", 0: None}
    assert state.players[0].prizes == () and state.prizes == Prizes(trophy=11)
    assert state.players[0].best == 5  # a prizeless participant still moves its marker


def test_four_players_distinct_scores_trophy_medal_ribbon_then_nothing():
    six = ((9, 9, 9), (7, 7), (5,), (4,), (3,), (1,))  # 6 levels + one 5 = 7
    towers = [FOUR_ONE_FIVE, FIVE_TWO_FIVES, six, ((9, 9, 9), (5, 5, 5), (3,), (2,), (1,))]
    state, [event] = resolve(at_festival(4, towers))
    assert [(r.seat, r.score, r.prize) for r in event.results] == [
        (3, 8, "trophy"), (1, 7, "medal"), (2, 7, "medal"), (0, 5, None),
    ]
    assert state.prizes == Prizes(trophy=11, medal=12, ribbon=14)


def test_a_tie_for_rank_two_shares_the_medal_rank():
    towers = [FOUR_THREE_FIVES, FIVE_TWO_FIVES, ((9, 9, 9), (5, 5, 5), (3,), (2,), (1,))]
    _, [event] = resolve(at_festival(3, towers))
    assert {r.seat: r.prize for r in event.results} == {2: "trophy", 0: "medal", 1: "medal"}


def test_a_short_supply_starts_at_the_first_player_even_when_he_is_not_tied():
    """§5.3: seat 1 holds the marker and is out; of seats 0 and 2, seat 2 comes first."""
    towers = [FIVE_TWO_FIVES, None, FIVE_TWO_FIVES]
    state, [event] = resolve(at_festival(3, towers, first=1, prizes=Prizes(trophy=1)))
    assert {r.seat: r.prize for r in event.results} == {2: "trophy", 0: None}
    assert state.players[2].prizes == (Taken("trophy", "bcn"),)


def test_the_short_supply_uses_the_marker_of_the_round_being_ended():
    """§8: festivals come before the marker passes, so the round's own first player wins the
    tie, not the next round's."""
    towers = [FIVE_TWO_FIVES, FIVE_TWO_FIVES]
    state, [event] = resolve(at_festival(2, towers, first=1, prizes=Prizes(trophy=1)))
    assert [r.prize for r in event.results] == ["trophy", None]
    assert event.results[0].seat == 1 and state.first == 0


def test_the_size_only_needs_to_stand_somewhere_in_the_tower():
    # exactly 4 levels, the one 1 on top: takes part with 4 + 1
    state, [event] = resolve(at_festival(2, [FOUR_ONE_FIVE, None], size=3))
    assert [(r.seat, r.score, r.size_token) for r in event.results] == [(0, 5, True)]
    assert state.players[0].sizes == (Taken(3, "bcn"),)


# §5 read literally, against the engine, on random festivals -----------------------------------

_level = st.lists(st.sampled_from([4, 5, 6]), min_size=1, max_size=3)
_entry = st.one_of(st.none(), st.lists(_level, min_size=1, max_size=6).map(
    lambda levels: tuple(tuple(level) for level in levels)))


def literal_festival(state, festival):
    """§5 as written: participants, scores, prizes rank by rank (ties clockwise from the
    first player while the supply lasts), the size token to a unique most."""
    n = state.seats
    players = {p.seat: p for p in state.players}
    scores = {
        s: len(p.tower) + sum(level.count(festival.size) for level in p.tower)
        for s, p in players.items()
        if p.region == festival.region and len(p.tower) >= 4
        and any(festival.size in level for level in p.tower)
    }
    supply = {"trophy": state.prizes.trophy, "medal": state.prizes.medal,
              "ribbon": state.prizes.ribbon}
    table = {2: ["trophy"], 3: ["trophy", "medal"], 4: ["trophy", "medal", "ribbon"]}[n]
    prizes = {}
    for rank in sorted({1 + sum(o > sc for o in scores.values()) for sc in scores.values()}):
        tied = [s for s, sc in scores.items() if 1 + sum(o > sc for o in scores.values()) == rank]
        for s in sorted(tied, key=lambda s: (s - state.first) % n):
            prize = table[rank - 1] if rank <= len(table) else None
            if prize and supply[prize]:
                supply[prize] -= 1
                prizes[s] = prize
    counts = {s: sum(level.count(festival.size) for level in players[s].tower) for s in scores}
    top = [s for s in counts if counts[s] == max(counts.values())]
    return scores, prizes, (top[0] if len(top) == 1 else None), supply


@settings(max_examples=150, deadline=None)
@given(
    seats=st.sampled_from([2, 3, 4]), first=st.integers(0, 3),
    entries=st.lists(_entry, min_size=4, max_size=4),
    away=st.lists(st.booleans(), min_size=4, max_size=4),
    bests=st.lists(st.integers(0, 12), min_size=4, max_size=4),
    supply=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
)
def test_festivals_follow_the_rules_read_literally(seats, first, entries, away, bests, supply):
    """Two festivals in one round (bcn, then alt): each as §5 says, the second one given
    the prize supply the first one left."""
    calendar = (festival("bcn", 5, 5), festival("alt", 5, 5))
    state = at_festival(seats, [None] * seats, festivals=calendar, round=5, first=first % seats,
                        prizes=Prizes(*supply))
    for seat in range(seats):
        tower = entries[seat] or ()
        region = "alt" if away[seat] else "bcn"
        state = with_player(state, seat, region=region, tower=tower, best=bests[seat],
                            team=tuple(c for level in tower for c in level))
    expected = {seat: {"best": bests[seat], "prizes": (), "sizes": ()} for seat in range(seats)}
    supply_left, ahead = None, state
    for fest in calendar:
        scores, prizes, claimer, supply_left = literal_festival(ahead, fest)
        for seat, score in scores.items():
            expected[seat]["best"] = max(expected[seat]["best"], score)
        for seat, prize in prizes.items():
            expected[seat]["prizes"] += (Taken(prize, fest.region),)
        if claimer is not None:
            expected[claimer]["sizes"] += (Taken(fest.size, fest.region),)
        ahead = attrs.evolve(ahead, prizes=Prizes(**supply_left))
    after, events = resolve(state)
    assert [e.region for e in events] == ["bcn", "alt"]
    for seat in range(seats):
        p = after.players[seat]
        assert {"best": p.best, "prizes": p.prizes, "sizes": p.sizes} == expected[seat], seat
    assert after.prizes == Prizes(**supply_left)
