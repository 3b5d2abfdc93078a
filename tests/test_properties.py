"""Properties of whole games of random legal actions, random builds included (hypothesis).

Every game must reach the end of round 10 with consistent scores; castellers, special action
tokens and prizes are conserved after every action; towers stay legal; every listed legal
action applies; replaying the seed and the actions gives the same game.
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.actions import Build, Dismantle, EndTurn, Move, Recruit, Special, Train
from shared.board import ADJACENT, PRIZE_SUPPLY, REGIONS, SIZES, TILES
from shared.engine import apply, legal_actions, new_game
from shared.errors import RuleError
from shared.scoring import final_scores
from shared.state import GameState
from shared.tower import check_tower
from tests.support.games import NAMES, random_game


def random_tower(team: tuple[int, ...], rng: random.Random) -> list[list[int]]:
    """A candidate tower from the team: levels narrowing upwards, sizes going down, with
    now and then a level as wide as the one below or of the same size (for the skills)."""
    pool = Counter(team)
    levels: list[list[int]] = []
    width = rng.choice([1, 2, 3, 3, 4, 5])
    ceiling = max(SIZES)
    for _ in range(rng.randint(1, 7)):
        sizes = [s for s in sorted(pool, reverse=True) if s <= ceiling and pool[s]]
        if not sizes:
            break
        size = rng.choice(sizes[:2])
        level: list[int] = []
        for s in (size, size - 1):
            while pool[s] and len(level) < width:
                level.append(s)
                pool[s] -= 1
            if rng.random() < 0.7:
                break
        levels.append(level)
        ceiling = min(level) - (0 if rng.random() < 0.3 else 1)
        width = max(1, len(level) - (0 if rng.random() < 0.5 else 1))
    return levels


def tall_tower(team: tuple[int, ...], ranks: dict[str, int], rng: random.Random) -> list[list[int]]:
    """A greedy tall tower: as wide a bottom as Width allows, each level one narrower (or as
    wide, while Balance lasts), of the largest size that still has enough castellers."""
    pool = Counter(team)
    balance, strength = ranks["balance"], ranks["strength"]
    width = rng.randint(1, 3 + ranks["width"])
    ceiling = max(SIZES)
    levels: list[list[int]] = []
    while width >= 1:
        fits = [s for s in sorted(pool, reverse=True) if s <= ceiling and pool[s] >= width]
        if not fits:
            break
        size = fits[0]
        pool[size] -= width
        levels.append([size] * width)
        if strength and pool[size] and rng.random() < 0.5:
            strength -= 1
            ceiling = size
        else:
            ceiling = size - 1
        if balance and (width == 1 or rng.random() < 0.3):
            balance -= 1
        else:
            width -= 1
    return levels


def legal_build(state: GameState, seat: int, rng: random.Random, want: set[int] = frozenset()):
    """The best legal tower among a few random candidates, if any: the tallest, preferring
    towers that hold a size of ``want`` (this round's festivals)."""
    player = state.players[seat]
    ranks = player.skills.as_dict()
    candidates = [random_tower(player.team, rng) for _ in range(4)]
    candidates += [tall_tower(player.team, ranks, rng) for _ in range(3)]
    legal = [c for c in candidates if c and check_tower(c, ranks).legal]
    if not legal:
        return None
    best = max(legal, key=lambda c: (any(s in want for level in c for s in level), len(c)))
    return Build(best)


def distance(a: str, b: str) -> int:
    seen, frontier, steps = {a}, {a}, 0
    while b not in frontier:
        frontier = {n for r in frontier for n in ADJACENT[r]} - seen
        seen |= frontier
        steps += 1
    return steps


def check_invariants(state: GameState, before: GameState) -> None:
    seats = state.seats
    # 150 castellers: bag + regions + teams (a tower is made of its owner's team)
    everything = Counter(state.bag)
    for region in state.regions:
        everything.update(region)
    for player in state.players:
        everything.update(player.team)
        in_tower = Counter(c for level in player.tower for c in level)
        assert not in_tower - Counter(player.team)
        if player.tower:
            assert check_tower(player.tower, player.skills.as_dict()).legal
    assert everything == {size: 15 for size in SIZES}
    # special action tokens: unspent + lying on rows + taken = 7 per player
    tokens = sum(p.tokens + p.taken_tokens for p in state.players)
    assert tokens + sum(row.tokens for row in state.rows) == 7 * seats
    # prizes: supply + taken
    for prize, supply in PRIZE_SUPPLY.items():
        taken = sum(t.item == prize for p in state.players for t in p.prizes)
        assert state.prizes.left(prize) + taken == supply
    # tiles: in rows + taken = 14, each once
    tiles = [t for row in state.rows for t in row.tiles]
    tiles += [t.item for p in state.players for t in p.tiles]
    assert len(tiles) == len(set(tiles)) == 14
    for old, new in zip(before.players, state.players, strict=True):
        assert new.best >= old.best
        for skill, rank in old.skills.as_dict().items():
            assert rank <= new.skills.rank(skill) <= 3
        assert not Counter(old.team) - Counter(new.team)  # teams only grow


def choose(state: GameState, seat: int, actions: list, rng: random.Random) -> object:
    """A random legal action, nudged towards what scores: performing, building tall, going
    to this round's festivals and staying there — so that the games reach every rule."""
    performs = [a for a in actions if getattr(a, "effect", None) == "perform"]
    if performs and rng.random() < 0.8:
        return rng.choice(performs)
    if rng.random() < 0.3:
        build = legal_build(state, seat, rng)
        if build is not None:
            return build
    trainings = [a for a in actions if isinstance(a, Train) and a.effect is None]
    if trainings and rng.random() < 0.5:
        return rng.choice(trainings)
    if rng.random() < 0.1:
        return EndTurn()
    player = state.players[seat]
    here = player.region
    festivals = {f.region: f.size for f in state.festivals if f.round == state.round}
    if here in festivals and rng.random() < 0.5:
        build = legal_build(state, seat, rng, {festivals[here]})
        if build is not None and build.levels != player.tower:
            return build
    moves = [a for a in actions if isinstance(a, Move) or getattr(a, "effect", None) == "move"]
    if here is not None and here not in festivals and festivals:
        near = min(distance(here, r) for r in festivals)
        towards = [a for a in moves if min(distance(a.region, r) for r in festivals) < near]
        if towards and rng.random() < 0.7:
            return rng.choice(towards)
    others = [
        a for a in actions[:-1]
        if not (here in festivals and a in moves) and not isinstance(a, Dismantle)
    ]
    if rng.random() < 0.05 and Dismantle() in actions:
        return Dismantle()
    return rng.choice(others) if others else EndTurn()


def every_action() -> list:
    """Every non-build action worth trying (recruits larger size first, as listed)."""
    effects = [{"effect": "move", "region": r} for r in REGIONS]
    effects += [{"effect": "recruit", "size": s} for s in SIZES]
    effects += [{"effect": "perform", "tile": t} for t in TILES]
    out: list = [Move(r) for r in REGIONS]
    out += [Recruit([a]) for a in SIZES]
    out += [Recruit([a, b]) for a in SIZES for b in SIZES if a >= b]
    for choice in ("region", "all"):
        out += [Train(choice)] + [Train(choice, **e) for e in effects]
    out += [Special(**e) for e in effects] + [Dismantle(), EndTurn()]
    return out


EVERY_ACTION = every_action()


def applicable(state: GameState, seat: int) -> set:
    out = set()
    for action in EVERY_ACTION:
        try:
            apply(state, seat, action)
        except RuleError:
            continue
        out.add(action)
    return out


def play_random_game(seats: int, seed: int, variant: str, rng: random.Random, check_all: bool):
    """A whole game of :func:`choose`'s choices, checked before and after every action."""
    checked = 0

    def checked_choice(state: GameState, seat: int, rng: random.Random):
        nonlocal checked
        actions = legal_actions(state, seat)
        assert actions and actions[-1] == EndTurn()
        assert len(set(actions)) == len(actions)
        if check_all:
            for action in actions:
                apply(state, seat, action)  # must not raise
            if checked % 10 == 0:  # and nothing else applies
                assert applicable(state, seat) == set(actions)
        checked += 1
        return choose(state, seat, actions, rng)

    log = []
    kinds: Counter[str] = Counter()
    for step in random_game(seats, variant=variant, seed=seed, rng=rng, choose=checked_choice):
        assert step.events[0].seat == step.seat
        check_invariants(step.state, step.before)
        kinds.update(type(e).__name__ for e in step.events)
        log.append((step.seat, step.action))
    state = step.state
    # each festival resolved once, rounds 2-10 started, one end
    assert kinds["FestivalResolved"] == len(state.festivals)
    assert (kinds["RoundStarted"], kinds["GameEnded"], kinds["Refilled"]) == (9, 1, 4)
    return state, log


#: A game: its seats, seed and variant, and the seed of the random player's choices.
GAMES = {
    "seats": st.sampled_from([2, 3, 4]),
    "seed": st.integers(0, 2**32),
    "variant": st.sampled_from(["normal", "advanced"]),
    "choices": st.integers(0, 2**32),
}


@settings(max_examples=25, deadline=None)
@given(**GAMES)
def test_random_legal_games_reach_the_end_consistently(seats, seed, variant, choices):
    state, log = play_random_game(seats, seed, variant, random.Random(choices), check_all=False)
    assert state.round == 10 and state.turn is None
    assert all(f.done for f in state.festivals)
    scores, winners = final_scores(state.players)
    assert state.scores == scores and state.winners == winners
    assert [s.seat for s in state.scores] == list(range(seats))
    top = max(s.total for s in scores)
    assert all(scores[w].total == top for w in winners)
    # the game is its seed plus its actions
    replay = new_game(NAMES[:seats], variant=variant, seed=seed)
    for seat, action in log:
        replay, _ = apply(replay, seat, action)
    assert replay == state


@settings(max_examples=6, deadline=None)
@given(**GAMES)
def test_legal_actions_are_exactly_the_actions_that_apply(seats, seed, variant, choices):
    play_random_game(seats, seed, variant, random.Random(choices), check_all=True)


# Any action object, whatever its fields hold, is applied or refused with a RuleError. -------

anything = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 12), st.text(max_size=4),
    st.sampled_from([*REGIONS, "all", "region", "move", "recruit", "perform", "lp01", "lp20"]),
    st.lists(st.integers(0, 11), max_size=3), st.floats(allow_nan=True),
)
actions = st.one_of(
    st.builds(Move, anything),
    st.builds(Recruit, st.lists(anything, max_size=3)),
    st.builds(Train, anything, anything, anything, anything, anything),
    st.builds(Special, anything, anything, anything, anything),
    st.builds(Build, st.lists(st.lists(anything, max_size=4), max_size=5)),
)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 50), placed=st.booleans(), action=actions)
def test_any_action_is_applied_or_refused_by_a_rule(seed, placed, action):
    state = new_game(NAMES[:3], seed=seed)
    if placed:
        state, _ = apply(state, state.turn, Move(REGIONS[seed % 7]))
    try:
        apply(state, state.turn, action)
    except RuleError as error:
        assert error.code and error.message and error.code == error.code.lower()
