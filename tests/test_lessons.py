"""The lessons of ``castell learn`` by value: every position is one the rules could reach,
every lesson's answer is accepted by the engine and does what the lesson asks, its mistake is
refused by the engine for the rule the lesson names, and every other legal action is judged
(a step, or off the lesson's point). And the position checker itself finds what is wrong."""

from __future__ import annotations

from collections import Counter

import attrs
import pytest

from client.learn import positions as pos
from client.learn.lessons import LEARNER, LESSONS, Lesson, Verdict, lesson_index, table
from client.screens import rulebook
from shared.actions import Build, Dismantle, EndTurn, Move, Special, Undo
from shared.engine import apply, legal_actions
from shared.errors import RuleError
from shared.state import Skills

NAMES = ("Anna", "Biel", "a learner called Núria")
BY_KEY = {lesson.key: lesson for lesson in LESSONS}


def test_the_lessons_follow_the_issue_in_order():
    assert [lesson.key for lesson in LESSONS] == [
        "moving", "recruiting", "training", "building", "festivals", "performances", "special",
        "scoring"]
    assert lesson_index("festivals") == 4 and lesson_index("nope") is None


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_each_lesson_says_what_it_teaches_and_where_the_rules_tell_it(lesson: Lesson):
    assert set(lesson.sections) <= set(range(1, 10)) and lesson.sections
    assert lesson.topic in rulebook.topics()
    assert rulebook.SECTIONS[lesson.sections[0]][1] is not None
    for text in (lesson.teaches, lesson.ask, lesson.hint, lesson.learned):
        assert text.strip() and len(text) < 420


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_each_position_is_legal_with_the_learner_on_turn(lesson: Lesson, name: str):
    state = lesson.position(name)
    assert pos.problems(state) == []
    assert state.turn == LEARNER and state.players[LEARNER].name == name
    assert len({p.name.casefold() for p in state.players}) == 3
    assert state.undo is None  # nothing to take back at a lesson's start


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_the_answer_is_accepted_and_does_what_the_lesson_asks(lesson: Lesson):
    start = state = lesson.position("Anna")
    verdicts = []
    for action in lesson.answer:
        state, _ = apply(state, LEARNER, action)
        verdicts.append(lesson.judge(start, action, state))
        assert pos.problems(state) == []
    assert verdicts == [Verdict.STEP] * (len(lesson.answer) - 1) + [Verdict.DONE]
    assert not lesson.goal(start, start)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_the_mistake_is_refused_by_the_engine_for_the_rule_named(lesson: Lesson):
    with pytest.raises(RuleError) as refused:
        apply(lesson.position("Anna"), LEARNER, lesson.mistake)
    assert refused.value.code == lesson.mistake_rule
    assert refused.value.message  # said in words, which the lesson shows as they are


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_every_listed_action_is_judged_and_the_answer_is_among_them(lesson: Lesson):
    """What the client's completion offers (the engine's list, builds aside): each applies and
    is judged; a one-action answer is listed, and done; some other is off the point."""
    start = lesson.position("Anna")
    verdicts: dict[Verdict, list] = {verdict: [] for verdict in Verdict}
    for action in legal_actions(start, LEARNER):
        after, _ = apply(start, LEARNER, action)
        verdicts[lesson.judge(start, action, after)].append(action)
    if len(lesson.answer) == 1 and not isinstance(lesson.answer[0], Build):
        assert lesson.answer[0] in verdicts[Verdict.DONE]
    assert all(isinstance(a, Dismantle) for a in verdicts[Verdict.STEP])
    # (the game's last turn, every token spent, has nothing left but to end it or rebuild)
    assert verdicts[Verdict.OFF] or lesson.key == "scoring", "no listed action misses"


def test_steps_are_kept_and_an_undo_is_a_step():
    lesson = BY_KEY["festivals"]
    start = lesson.position("Anna")
    built, _ = apply(start, LEARNER, lesson.answer[0])
    assert lesson.judge(start, lesson.answer[0], built) is Verdict.STEP
    back, _ = apply(built, LEARNER, Undo())
    assert back == start and lesson.judge(start, Undo(), back) is Verdict.STEP
    ended, _ = apply(start, LEARNER, EndTurn())  # the festival held without the learner
    assert lesson.judge(start, EndTurn(), ended) is Verdict.OFF


def test_the_first_lesson_is_done_by_a_move_not_a_special_move():
    lesson = BY_KEY["moving"]
    start = lesson.position("Anna")
    assert lesson.judge(start, Move("lle"), apply(start, LEARNER, Move("lle"))[0]) \
        is Verdict.DONE
    special = Special("move", region="lle")
    assert lesson.judge(start, special, apply(start, LEARNER, special)[0]) is Verdict.OFF


def test_the_festival_lesson_gives_the_trophy_and_the_size_token():
    lesson = BY_KEY["festivals"]
    state = lesson.position("Anna")
    for action in lesson.answer:
        state, events = apply(state, LEARNER, action)
    me = state.players[LEARNER]
    assert [(t.item, t.region) for t in me.prizes] == [("trophy", "cen")]
    assert [(t.item, t.region) for t in me.sizes] == [(5, "cen")]
    assert me.best == 6 and state.round == 4
    result = next(e for e in events if e.KIND == "festival")
    assert [(r.seat, r.score, r.prize) for r in result.results] == [(0, 6, "trophy"),
                                                                     (1, 5, "medal")]


def test_the_last_lesson_ends_the_game_with_the_learner_winning():
    lesson = BY_KEY["scoring"]
    state, _ = apply(lesson.position("Anna"), LEARNER, EndTurn())
    assert state.over and state.winners == (LEARNER,)
    assert pos.problems(state) == []


def test_a_learner_called_like_an_example_player_sits_beside_others():
    assert [p.name for p in table("biel").players] == ["biel", "Carme", "Dani"]


# The checker finds what no game could reach --------------------------------------------------


def _player(state, seat, **changes):
    players = list(state.players)
    players[seat] = attrs.evolve(players[seat], **changes)
    return attrs.evolve(state, players=tuple(players))


BROKEN = {
    "a casteller out of nowhere": (
        lambda s: _player(s, 1, team=(*s.players[1].team, 10)), "15 of each size"),
    "a region over its refill level": (
        lambda s: attrs.evolve(s, regions=((*s.regions[0], s.bag[0]), *s.regions[1:]),
                               bag=s.bag[1:]), "refill level"),
    "an illegal tower": (
        lambda s: _player(s, 0, tower=((9, 9), (9, 9))), "tower is not legal"),
    "a tower of castellers not in the team": (
        lambda s: _player(s, 0, tower=((10,),)), "its team has not"),
    "skills never trained": (
        lambda s: _player(s, 0, skills=Skills(width=3)), "trainings"),
    "a token gone": (lambda s: _player(s, 0, tokens=6), "special action tokens"),
    "a tile in two rows": (
        lambda s: attrs.evolve(s, rows=(s.rows[1], *s.rows[1:])), "distinct tiles"),
    "a festival held early": (
        lambda s: attrs.evolve(s, festivals=(attrs.evolve(s.festivals[0], done=True),
                                             *s.festivals[1:])), "held in round 2"),
    "a prize out of nowhere": (
        lambda s: attrs.evolve(s, prizes=attrs.evolve(s.prizes, trophy=11)), "trophy tokens"),
    "the wrong seat on turn": (lambda s: attrs.evolve(s, turn=1), "seat 1 is on turn"),
    "an action twice": (lambda s: attrs.evolve(s, done=("move", "move")), "once"),
    "a team too big for the turns played": (
        lambda s: pos.set_player(s, 0, team=(*s.players[0].team, 1, 1, 1, 2, 2, 2, 3, 3, 3)),
        "cannot come from"),
    "final scores in a running game": (
        lambda s: attrs.evolve(s, winners=(0,)), "final scores"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_the_checker_names_what_no_game_could_reach(name):
    breaks, words = BROKEN[name]
    start = BY_KEY["moving"].position("Anna")
    found = pos.problems(breaks(start))
    assert any(words in problem for problem in found), found


def test_a_size_token_from_no_festival_and_a_best_tower_before_any_are_found():
    state = BY_KEY["special"].position("Anna")
    assert pos.problems(state) == []
    forged = _player(state, 1, sizes=(*state.players[1].sizes, *state.players[0].sizes))
    assert any("size tokens taken at no festival" in p for p in pos.problems(forged))
    early = _player(BY_KEY["moving"].position("Anna"), 2, best=7)
    assert any("before any festival" in p for p in pos.problems(early))


def test_arranging_a_position_takes_castellers_from_the_bag_or_says_why_not():
    start = table("Anna")
    state = pos.set_region(start, "alt", (10, 10, 10))
    assert Counter(state.bag) == \
        Counter(start.bag) + Counter(start.regions[0]) - Counter((10, 10, 10))
    assert state.regions[0] == (10, 10, 10) and pos.problems(state) == []
    with pytest.raises(ValueError, match="no casteller of size 10"):
        pos.set_player(state, 0, team=(10,) * 15)
