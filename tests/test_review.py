"""The game review (shared.review, docs/review.md): a seeded 4-seat game of bots reviewed, its
figures checked turn by turn against the tower solver and the hard bot's search called
directly; the review as plain data and back; a turn the hard bot itself played is never
marked a mistake at the same budget (a property test); the review is a pure function of the
game, its seed and its budget."""

from __future__ import annotations

import json
import pickle
import random
import statistics

import attrs
import msgpack
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.review import bot_game
from shared import greedy, search
from shared.actions import Build, EndTurn, Move, Resign, Undo
from shared.engine import apply, legal_actions, new_game
from shared.events import FestivalResolved
from shared.record import GameRecordFile, RecordedAction
from shared.replay import record_steps
from shared.review import (
    CATEGORIES,
    MARKS,
    THRESHOLDS,
    Budget,
    Points,
    Review,
    ReviewError,
    accuracy_of,
    mark_of,
    net_line,
    reachable,
    review_game,
    review_moves,
    review_plan,
    sample_rng,
    search_turn,
    tower_from_text,
    tower_text,
    turn_start,
    with_searched,
)
from shared.scoring import score_player
from shared.solver import FestivalGoal, TallestGoal, best_with_training
from shared.tower import check_tower, festival_score
from tests.support.games import sometimes_tallest

#: One worker runs this module's tests (`--dist loadgroup` in .ci/run), so that its module
#: fixture is made once, not once in every worker that takes one of them.
pytestmark = [pytest.mark.timeout(120), pytest.mark.xdist_group("test_review")]

#: The tests' budget: small, so that a whole game is reviewed in a second or two.
SMALL = Budget(samples=1, candidates=2)
LINEUP = ("hard", "normal", "easy", "normal")
#: The turns of the seeded game the fixture's review searches.
SEARCHED = range(0, 40, 3)


@pytest.fixture(scope="module")
def game() -> tuple[GameRecordFile, Review]:
    record = bot_game(LINEUP, seed=7, budget=SMALL)
    # (every third turn searched, among them a round's last turn in rounds 1, 4, 7 and 10:
    # each is checked below against the hard bot called again, so a whole game would cost
    # the suite twice its time for no other case)
    return record, review_game(record, seed=3, budget=SMALL, turns=SEARCHED)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list | tuple):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def test_a_seeded_four_seat_game_reviewed_against_the_solver_and_the_hard_bot(game):
    record, review = game
    steps = record_steps(record)
    states = [s for s, _ in steps]
    final = states[-1]
    assert final.over and review.finished
    # every turn of the game, in the order played: 10 rounds of 4
    assert [t.start for t in review.turns] == sorted(t.start for t in review.turns)
    assert sorted((t.round, t.seat) for t in review.turns) == [
        (r, s) for r in range(1, 11) for s in range(4)]
    searched = 0
    for turn in review.turns:
        before = states[turn.start]
        assert before.turn == turn.seat and before.round == turn.round
        assert isinstance(record.actions[turn.end - 1].action, EndTurn)
        assert turn.reviewed == (turn.index in SEARCHED)
        # the played line (net of undos) is the turn as it was played
        real = before
        for action in turn.played:
            real, _ = apply(real, turn.seat, action)
        assert real == states[turn.end]
        if not turn.reviewed:
            continue
        # the hard bot, called directly from the same information with the same generator
        start = turn_start(before)
        assert sorted(start.bag) == sorted(before.bag) and start.undo is None
        choice = search.choose(start, turn.seat, sample_rng(review.seed, turn.index),
                               samples=SMALL.samples, candidates=SMALL.candidates)
        assert turn.hard == choice.actions
        assert turn.aim == choice.aim.route[-1]
        if choice.margin is not None:
            assert turn.hard_expected == pytest.approx(choice.margin, abs=1e-6)
        if turn.samples:
            # both lines played out with the very same bag orders
            searched += 1
            rng = sample_rng(review.seed, turn.index)
            seeds = [rng.getrandbits(64) for _ in range(SMALL.samples)]
            mine, best = ([search.play_line(start, line, turn.seat, turn.round + 1,
                                            random.Random(s)) for s in seeds]
                          for line in (turn.played, turn.hard))
            assert turn.played_expected == pytest.approx(statistics.fmean(mine), abs=1e-6)
            assert turn.hard_expected == pytest.approx(statistics.fmean(best), abs=1e-6)
            assert turn.lost == pytest.approx(
                max(0.0, statistics.fmean(best) - statistics.fmean(mine)), abs=1e-6)
            least = max(0.0, min(b - m for b, m in zip(best, mine, strict=True)))
            assert turn.least == pytest.approx(least, abs=1e-6)
        else:
            assert turn.lost == 0.0 and turn.hard == turn.played
        if turn.least > 0 or turn.lost < THRESHOLDS[1]:
            assert turn.mark == mark_of(turn.lost)
        else:  # the samples disagree: at worst an inaccuracy
            assert turn.mark == "inaccuracy"
        # the exact solver's best tower, with the turn's open training
        last = states[turn.end - 1]
        player = last.players[turn.seat]
        festivals = [f for f in before.festivals if f.round == turn.round]
        assert [c.size for c in turn.towers] == ([f.size for f in festivals] or [None])
        for check in turn.towers:
            goal = TallestGoal() if check.size is None else FestivalGoal(check.size)
            trainable = () if "train" in last.done else tuple(dict.fromkeys(
                t for t in (last.wheel_tiles()[s] for s in (player.region, "all") if s)
                if t != "special"))
            found, skill = best_with_training(player.team, player.skills, goal, trainable)
            assert (check.best, check.score, check.train) == (
                found.levels if found else None, found.score if found else None, skill)
            if check.best is not None:
                ranks = player.skills.as_dict()
                if check.train:
                    ranks[check.train] += 1
                assert check_tower(check.best, ranks).legal
                if check.size is not None:
                    assert festival_score(check.best, check.size) == check.score
                assert check.score >= (check.played or 0)  # nothing standing beats the best
    assert searched >= 10  # most turns were weighed against another line
    # what each turn earned adds up to the final score, category by category (§9)
    for seat in range(4):
        earned = [t.earned for t in review.turns_of(seat)]
        assert Points(*(sum(getattr(e, c) for e in earned) for c in CATEGORIES)) \
            == Points.of(final.scores[seat]) == review.players[seat].final
    # the score race: after each round, as §9 counts it then
    assert len(review.scores) == 11 and all(p.total == 0 for p in review.scores[0])
    assert [p.total for p in review.scores[-1]] == [s.total for s in final.scores]
    # per player: accuracy, marks, the costliest turns worst first
    for p in review.players:
        mine = [t for t in review.turns_of(p.seat) if t.reviewed]  # (the searched ones)
        assert p.accuracy == accuracy_of(t.lost for t in mine)
        assert p.marks == tuple(sum(t.mark == m for t in mine) for m in MARKS)
        lost = sorted((t for t in mine if t.mark != "good"), key=lambda t: -t.lost)
        assert [review.turns[i].lost for i in p.costliest] == [t.lost for t in lost[:3]]
    # the easy bot loses more than the hard one
    by_level = {LINEUP[p.seat]: p for p in review.players}
    assert by_level["easy"].lost > by_level["hard"].lost
    # festivals: every one held, each participant's score within its best
    held = [e for _, events in steps for e in events if isinstance(e, FestivalResolved)]
    assert [(f.round, f.town) for f in review.festivals] == [(e.round, e.town) for e in held]
    for festival in review.festivals:
        top = max(r.score for r in festival.results) if festival.results else None
        for chance in festival.chances:
            if chance.entered:
                assert chance.there and chance.reach and chance.best >= chance.score
            if chance.seat in festival.winners:
                assert chance.would_win
            if chance.would_win:
                assert chance.reach and chance.best >= max(
                    (r.score for r in festival.results if r.seat != chance.seat), default=0)
        assert top is None or festival.winners


def test_the_review_as_plain_data_and_back(game):
    _, review = game
    data = review.to_data()
    assert _depth(data) <= 5  # a reply carrying it stays within the wire's 6
    assert Review.from_data(json.loads(json.dumps(data))) == review
    assert Review.from_data(msgpack.unpackb(msgpack.packb(data))) == review
    turn = data["turns"][5]
    assert isinstance(turn["played"][0], dict) and "kind" in turn["played"][0]
    # damaged data is refused in words
    with pytest.raises(ReviewError, match="version"):
        Review.from_data({**data, "version": 99})
    with pytest.raises(ReviewError, match="damaged"):
        Review.from_data({**data, "turns": [{**turn, "seat": "two"}]})
    with pytest.raises(ReviewError, match="damaged"):
        Review.from_data({**data, "turns": [{**turn, "played": [{"kind": "fly"}]}]})
    with pytest.raises(ReviewError, match="not a review"):
        Review.from_data([1, 2])
    assert tower_from_text(tower_text(((9, 9, 9), (7, 7), (5,)))) == ((9, 9, 9), (7, 7), (5,))
    assert tower_text(((9, 9, 9), (7, 7), (5,))) == "9,9,9/7,7/5"


def test_a_review_is_a_function_of_the_game_its_seed_and_budget(game):
    record, review = game
    some = [0, 15, 30]  # (searched in the whole review too)
    told = []
    alone = review_game(record, seed=3, budget=SMALL, turns=some,
                        progress=lambda done, total: told.append((done, total)))
    # a turn reviewed alone says what it says in the whole review
    assert [alone.turns[i] for i in some] == [review.turns[i] for i in some]
    assert all(not t.reviewed and t.mark is None for t in alone.turns if t.index not in some)
    # the progress is told turn by turn
    assert told == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_a_review_in_parts_is_the_whole_review(game):
    # what a server's workers compute, the plan then one job per turn in any order (a job
    # crosses to a worker by pickle), is exactly the review of the whole game
    record, review = game
    plan, jobs = review_plan(record, seed=3, budget=SMALL)
    assert not any(t.reviewed for t in plan.turns)
    assert [i for i, _ in jobs] == list(range(len(review.turns)))
    # (the fixture's review searched the turns of SEARCHED: the same jobs here)
    done = [pickle.loads(pickle.dumps(search_turn(plan.turns[i], start, seed=3, budget=SMALL)))
            for i, start in reversed(pickle.loads(pickle.dumps(jobs))) if i in SEARCHED]
    assert with_searched(plan, done) == review
    # turns left out stay unsearched, and the players are summed over the others
    part = with_searched(plan, done[:5])
    assert sum(t.reviewed for t in part.turns) == 5
    assert sum(sum(p.marks) for p in part.players) == 5


def test_a_turn_net_of_its_undos_and_an_unfinished_game():
    assert net_line([Move("cen"), Undo(), Move("lle"), Build(((3,),)), Undo(), EndTurn()]) \
        == (Move("lle"), EndTurn())
    start = new_game(["Anna", "Biel"], "normal", 5)
    moves, state = [], start
    while state.round < 3 or state.turn != 1:  # two rounds and a half, ending mid-round
        seat = state.turn
        action = greedy.next_action(state, seat)
        state, _ = apply(state, seat, action)
        moves.append((seat, action))
    moves.append((1, next(a for a in legal_actions(state, 1) if isinstance(a, Move))))
    review = review_moves(start, moves, seed=1, budget=SMALL, turns=[0])
    ended = sum(isinstance(a, EndTurn) for _, a in moves)
    assert ended in (4, 5)
    assert not review.finished and len(review.turns) == ended  # the last turn is not whole
    assert len(review.scores) == 3  # the setup and two rounds
    assert review.turns[0].reviewed and not review.turns[-1].reviewed


def test_a_game_with_a_resignation_is_reviewed_around_it():
    # §10 "Resigning": Carme resigns in the middle of Biel's turn in round 2; the game goes
    # on (her seat played out), and the turn the resignation fell in is listed but not
    # searched
    start = new_game(["Anna", "Biel", "Carme"], "normal", 8)
    moves, state, resigned = [], start, False
    while state.round < 3:
        seat = state.turn
        action = greedy.next_action(state, seat)
        if state.round == 2 and seat == 1 and not resigned:
            state, _ = apply(state, 2, Resign())
            moves.append((2, Resign()))
            resigned = True
        state, _ = apply(state, seat, action)
        moves.append((seat, action))
    review = review_moves(start, moves, seed=1, budget=SMALL)
    with_resign = [t for t in review.turns
                   if any(isinstance(a, Resign) for _, a in moves[t.start:t.end])]
    assert len(with_resign) == 1 and not with_resign[0].reviewed
    assert all(not isinstance(a, Resign) for a in with_resign[0].played)
    assert all(t.reviewed for t in review.turns if t not in with_resign)
    # in parts, the turn of the resignation is no job, and the review is the same
    record = GameRecordFile(room="r", name="r", variant="normal",
                            seats=("Anna", "Biel", "Carme"), bots=(False,) * 3, seed=8,
                            actions=tuple(RecordedAction(seat, a) for seat, a in moves))
    plan, jobs = review_plan(record, seed=1, budget=SMALL)
    assert with_resign[0].index not in {i for i, _ in jobs}
    assert with_searched(plan, [search_turn(plan.turns[i], start, seed=1, budget=SMALL)
                                for i, start in jobs]) == attrs.evolve(review, room="r",
                                                                       name="r")


def test_the_first_turn_reaches_every_region_and_marks_follow_the_thresholds():
    state = new_game(["Anna", "Biel"], "normal", 1)
    assert len(reachable(state, state.turn)) == 7
    assert [mark_of(t) for t in (0.0, *THRESHOLDS)] == list(MARKS)
    assert mark_of(THRESHOLDS[1] - 0.01) == "inaccuracy"
    assert accuracy_of([]) is None and accuracy_of([0.0, 0.0]) == 100.0


# The hard bot's own turns ---------------------------------------------------------------------


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@example(seed=21, turns=7, review_seed=0, budget=Budget(2, 2))  # ends round 2: a refill
@given(seed=st.integers(0, 10**6), turns=st.integers(0, 39), review_seed=st.integers(0, 1000),
       budget=st.sampled_from([Budget(1, 2), Budget(2, 2), Budget(1, 3)]))
def test_a_turn_the_hard_bot_played_is_never_a_mistake_at_the_same_budget(seed, turns,
                                                                          review_seed, budget):
    """The hard bot plays a turn of a 4-seat game, anywhere in the game, at a budget, with
    the bag orders the review draws for that turn (its generator, :func:`sample_rng`), from
    the real state (the true bag, which it must not read); the review at the same budget
    finds the very line it played, and nothing lost."""
    start = new_game(["Anna", "Biel", "Carme", "Dani"], "normal", seed)
    state, moves, index = start, [], 0
    rng, choose = random.Random(seed), sometimes_tallest(0.3)
    while index < turns:  # random turns before, towers among them (cheaper than bots)
        seat = state.turn
        action = choose(state, seat, rng)
        state, _ = apply(state, seat, action)
        moves.append((seat, action))
        index += isinstance(action, EndTurn)
    seat = state.turn
    for action in search.plan(state, seat, sample_rng(review_seed, turns),
                              samples=budget.samples, candidates=budget.candidates):
        state, _ = apply(state, seat, action)
        moves.append((seat, action))
    review = review_moves(start, moves, seed=review_seed, budget=budget, turns=[turns])
    turn = review.turns[turns]
    assert turn.seat == seat and turn.reviewed
    assert turn.hard == turn.played
    assert turn.lost == 0.0 and turn.mark == "good", (turn.lost, turn.hard, turn.played)


def test_scores_points_by_category():
    state = new_game(["Anna", "Biel"], "normal", 2)
    points = Points.of(score_player(state.players[0]))
    assert points == Points() and points.total == 0
    assert Points(1, 2, 3, 4, 5).minus(Points(1, 1, 1, 1, 1)) == Points(0, 1, 2, 3, 4)


def test_the_review_doc_says_the_thresholds_the_code_marks_by():
    from pathlib import Path

    from shared.review import ACCURACY_SCALE

    doc = (Path(__file__).resolve().parent.parent / "docs" / "review.md").read_text()
    low, mid, high = (f"{t:g}" for t in THRESHOLDS)
    assert f"| good | less than {low} |" in doc
    assert f"| inaccuracy | {low} to less than {mid} |" in doc
    assert f"| mistake | {mid} to less than {high} |" in doc
    assert f"| blunder | {high} or more |" in doc
    assert f"100 · e^(−lost / {ACCURACY_SCALE:g})" in doc
