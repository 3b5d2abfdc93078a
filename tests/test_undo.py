"""Undo within a turn (§4 "Taking an action back"): the state after an ``undo`` is exactly the
state before the action it takes back, back to the turn's start; the refusals; records and
bots."""

from __future__ import annotations

import random

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import bots
from shared.actions import (
    Action,
    Build,
    Dismantle,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
    Undo,
    action_fields,
)
from shared.engine import apply, legal_actions
from shared.errors import GameOver, NotYourTurn
from shared.events import Undone
from shared.messages import action_from_fields
from shared.record import GameRecordFile, RecordedAction, replay
from shared.state import GameState, Skills
from shared.view import build_view
from tests.support.games import (
    NAMES,
    game,
    play,
    random_game,
    refused,
    showing,
    sometimes_tallest,
    with_player,
    with_region,
    with_row,
)
from tests.support.rooms import room_info

TOWER_321 = ((9, 9, 9), (6, 6), (3,))  # completes lp04 (shape 3, 2, 1)


def ready() -> GameState:
    """Seat 0 to act at the start of a turn in Lleida, with a team, the tower of lp04
    standing, tokens, and Lleida's row holding lp04 and a token; Lleida holds 8, 6, 6, 2."""
    state = attrs.evolve(game(3, seed=2), first=0, turn=0, done=())
    state = with_row(state, "lle", tiles=("lp04", "lp19"), tokens=1)
    state = with_region(state, "lle", (8, 6, 6, 2))
    return with_player(state, 0, region="lle", team=(9, 9, 9, 6, 6, 3, 1), tower=TOWER_321,
                       skills=Skills(balance=1))


def special_tile(state: GameState) -> GameState:
    return showing(state, "lle", "special")


def same(after: GameState, before: GameState) -> None:
    """Everything that matters about two states is equal: every field of the state, the
    legal actions of each seat, the public view."""
    assert after == before
    assert attrs.asdict(after, recurse=False, filter=lambda a, _: a.eq) == \
        attrs.asdict(before, recurse=False, filter=lambda a, _: a.eq)
    for seat in range(before.seats):
        assert legal_actions(after, seat) == legal_actions(before, seat)
    room = room_info(before)
    assert build_view(room, after) == build_view(room, before)


EACH_KIND: list[tuple[str, Action, object]] = [
    ("move", Move("cen"), None),
    ("recruit one", Recruit((8,)), None),
    ("recruit two", Recruit((6, 6)), None),
    ("train a skill", Train("region"), lambda s: showing(s, "lle", "strength")),
    ("train all", Train("all"), lambda s: showing(s, "all", "width")),
    ("train special move", Train("region", effect="move", region="tar"), special_tile),
    ("train special recruit", Train("region", effect="recruit", size=8), special_tile),
    ("train special perform", Train("region", effect="perform", tile="lp04"), special_tile),
    ("special move", Special("move", region="ebr"), None),
    ("special recruit", Special("recruit", size=6), None),
    ("special perform", Special("perform", tile="lp04"), None),
    ("build", Build(((9, 9), (6,))), None),
    ("dismantle", Dismantle(), None),
]


@pytest.mark.parametrize(("action", "prepare"), [(a, p) for _, a, p in EACH_KIND],
                         ids=[name for name, _, _ in EACH_KIND])
def test_undo_takes_back_each_kind_of_action(action, prepare):
    before = prepare(ready()) if prepare else ready()
    after, _ = apply(before, 0, action)
    assert after != before  # the action changed the game
    back, events = apply(after, 0, Undo())
    assert events == [Undone(seat=0, action=action_fields(action))]
    same(back, before)
    assert back.undo is None  # the turn's start again: nothing more to take back
    assert refused(back, 0, Undo()).code == "nothing_to_undo"


def test_undo_goes_back_one_action_at_a_time_to_the_turn_s_start():
    start = showing(ready(), "all", "width")
    actions = [Move("cen"), Recruit((start.region_castellers("cen")[0],)),
               Special("move", region="lle"), Build(((9,), (6,))), Dismantle(),
               Train("all"), Build(((9, 9), (6,)))]
    seen = [start]
    for action in actions:
        state, _ = apply(seen[-1], 0, action)
        seen.append(state)
    state = seen[-1]
    for action, before in zip(reversed(actions), reversed(seen[:-1]), strict=True):
        state, events = apply(state, 0, Undo())
        assert events == [Undone(seat=0, action=action_fields(action))]
        same(state, before)
    assert state is start
    assert refused(state, 0, Undo()).code == "nothing_to_undo"


def test_after_an_undo_the_turn_goes_on_and_the_new_action_can_be_undone_too():
    start = ready()
    state, _ = play(start, 0, Move("cen"), Undo(), Move("alt"))
    assert state.players[0].region == "alt" and state.done == ("move",)
    back, events = apply(state, 0, Undo())
    assert events == [Undone(seat=0, action={"kind": "move", "region": "alt"})]
    same(back, start)


def test_nothing_to_undo_at_the_start_of_a_turn():
    error = refused(ready(), 0, Undo())
    assert (error.code, error.wire_code) == ("nothing_to_undo", "illegal_action")
    assert error.message == "you have nothing to take back this turn"


def test_an_ended_turn_cannot_be_undone():
    state, _ = play(ready(), 0, Recruit((6,)), Move("cen"), EndTurn())
    assert state.turn == 1
    assert refused(state, 1, Undo()).code == "nothing_to_undo"
    with pytest.raises(NotYourTurn):
        apply(state, 0, Undo())


def test_the_last_turn_of_a_round_cannot_be_undone_either():
    state = attrs.evolve(ready(), turns_taken=2)  # seat 0 plays the round's last turn
    state, _ = play(state, 0, Move("cen"), EndTurn())
    assert state.round == 2 and state.turn == 1
    assert refused(state, 1, Undo()).code == "nothing_to_undo"


def test_another_seat_may_not_undo_the_seat_on_turn_s_actions():
    state, _ = apply(ready(), 0, Move("cen"))
    for seat in (1, 2):
        with pytest.raises(NotYourTurn) as info:
            apply(state, seat, Undo())
        assert info.value.code == "not_your_turn"
    assert state.players[0].region == "cen"  # untouched


def test_nothing_after_the_game_is_over():
    state, _ = apply(ready(), 0, Move("cen"))
    over = attrs.evolve(state, turn=None, scores=(), winners=())
    with pytest.raises(GameOver):
        apply(over, 0, Undo())


def test_the_steps_of_a_turn_stay_out_of_repr_and_equality():
    start = ready()
    state, _ = apply(start, 0, Move("cen"))
    moved_again = attrs.evolve(state, undo=None)
    assert moved_again == state and hash(moved_again) == hash(state)
    assert "TurnStep" not in repr(state) and "undo" not in repr(state)


def test_undo_is_an_action_of_the_wire_with_no_fields():
    assert action_fields(Undo()) == {"kind": "undo"}
    assert action_from_fields({"kind": "undo"}) == Undo()


# Over random games --------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 4), st.sampled_from(["normal", "advanced"]), st.integers(0, 10**6))
def test_apply_then_undo_gives_back_the_same_state_and_legal_actions(seats, variant, seed):
    rng = random.Random(seed)
    checked = 0
    for step in random_game(seats, variant=variant, seed=seed, choose=sometimes_tallest(0.2)):
        assert not any(isinstance(a, Undo) for a in legal_actions(step.before, step.seat))
        if step.state.over:
            break
        if isinstance(step.action, EndTurn):
            # a turn that ended cannot be taken back, neither by the next seat nor the last
            assert refused(step.state, step.state.turn, Undo()).code == "nothing_to_undo"
            continue
        back, events = apply(step.state, step.seat, Undo())
        assert events == [Undone(seat=step.seat, action=action_fields(step.action))]
        assert back is step.before
        same(back, step.before)
        if rng.random() < 0.2:  # now and then, back to the turn's start
            state = step.state
            while state.undo is not None:
                state, _ = apply(state, step.seat, Undo())
            assert state.done == ()
            assert refused(state, step.seat, Undo()).code == "nothing_to_undo"
        checked += 1
    assert checked > 0


def test_bots_never_undo():
    for level in bots.LEVELS:
        rng = random.Random(3)
        state = game(3, seed=3)
        plan = None
        # (a hard bot searches once a turn, the costliest part: its first four rounds will
        # do, each search one sample per candidate line: think=0, a deadline already past)
        for _ in range(400 if level != "hard" else 50):
            if state.over:
                break
            # as the server plays them: hard decides once a turn and follows its line
            plan = bots.follow(plan, state, state.turn) or bots.decide(state, state.turn,
                                                                       level, rng, think=0.0)
            assert not isinstance(plan.action, Undo)
            assert not any(isinstance(a, Undo) for a in plan.rest)
            state, _ = apply(state, state.turn, plan.action)


def test_a_policy_that_proposes_an_undo_has_its_turn_ended_instead(monkeypatch):
    state, _ = apply(ready(), 0, Move("cen"))  # an undo would be legal
    monkeypatch.setitem(bots.POLICIES, "random", lambda s, seat, rng: Undo())
    assert bots.choose(state, 0, "random", random.Random(0)) == EndTurn()


# Records --------------------------------------------------------------------------------------


def test_a_record_with_undos_replays_to_the_same_game():
    """A game with undos all along, through a record's JSON and back: every state again."""
    rng = random.Random(5)
    state = game(3, seed=5)
    played: list[RecordedAction] = []
    seen = [state]
    while not state.over:
        seat = state.turn
        if state.undo is not None and rng.random() < 0.3:
            action: Action = Undo()
        else:
            action = rng.choice(legal_actions(state, seat))
        state, _ = apply(state, seat, action)
        played.append(RecordedAction(seat, action))
        seen.append(state)
    assert sum(isinstance(a.action, Undo) for a in played) > 20
    record = GameRecordFile(room="r-1", name="Sala", variant="normal", seats=NAMES[:3],
                            bots=(False,) * 3, seed=5, actions=tuple(played))
    again = GameRecordFile.from_json(record.to_json())
    assert again == record
    assert [s for s, _ in replay(again)] == seen
