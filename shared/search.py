"""The ``hard`` bot: a determinised Monte Carlo search over the rest of its turn.

Where the ``normal`` bot (:mod:`shared.greedy`) scores each plan for the rest of its turn
with rough guesses about the future, ``hard`` plays the future out. Its candidates are the
greedy bot's best plan for each region the turn may end in (the few best of them); each
candidate becomes the whole line of actions the greedy bot would take to carry it out, and
that line is played on the state. The bag's order is secret (§1: only the refills of §8.2
reveal it), so each *sample* shuffles the bag it does not know, plays the line on it (a
line that ends the round draws the refill from that shuffle) and then every seat with the
``normal`` bot until the end of the next round (or of the game): the festivals of both
rounds held, every rival's replies made. A candidate is worth
its average over the samples of the bot's score (§9) less the best rival's; every candidate
sees the same shuffles, so that they differ by their own merit only. The best candidate's
line is the answer: the bot plays it out without searching again (:func:`plan`);
:func:`choose` gives it with what it aims at and its play-outs' average, for a hint that
says why.

The search is bounded twice: by a count of samples per candidate, which makes it a pure
function of the state and the seed (a benchmark is repeated exactly), and by a deadline, at
which it stops with what it has sampled (each candidate then has the same number of samples,
at least one, or the ``normal`` choice is taken).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence

import attrs

from shared import engine, greedy
from shared.actions import Action, EndTurn
from shared.board import CASTELLERS_PER_SIZE, SIZES
from shared.scoring import score_player
from shared.state import GameState

#: How many candidate plans (the greedy bot's best per end region) are played out.
CANDIDATES = 4
#: How many bag orders each candidate is played out with.
SAMPLES = 3
#: At most this many actions in one turn's line (a turn takes at most eight).
_LINE_MAX = 12


def line_to(state: GameState, seat: int, end: str | None) -> tuple[tuple[Action, ...], GameState]:
    """The greedy bot's actions for the rest of ``seat``'s turn when its turn must end in
    ``end``, and the state after them (the turn ended, or the game over)."""
    actions: list[Action] = []
    # (The seat may play the next turn too, last of one round and first of the next: the
    # line stops at its own end of turn.)
    while not state.over and len(actions) < _LINE_MAX:
        action = greedy.next_action(state, seat, end)
        if len(actions) == _LINE_MAX - 1:
            action = EndTurn()  # cut short: the turn still ends
        state, _ = engine.apply(state, seat, action)
        actions.append(action)
        if isinstance(action, EndTurn):
            break
    return tuple(actions), state


def play_line(state: GameState, line: Sequence[Action], seat: int, until_round: int,
              rng: random.Random) -> float:
    """One sample of ``line`` (``seat``'s actions for the rest of its turn) from ``state``:
    the bag shuffled, the line played on it (a refill its end of turn brings, §8.2, draws
    from that shuffle), then every seat played by the ``normal`` bot to the end of
    ``until_round`` (or of the game); ``seat``'s score less the best rival's (§9)."""
    # shuffled from its sorted contents: the true order (secret) cannot leak into the sample
    state = attrs.evolve(state, bag=tuple(rng.sample(sorted(state.bag), len(state.bag))))
    for action in line:
        state, _ = engine.apply(state, seat, action)
    while not state.over and state.round <= until_round:
        turn = state.turn
        assert turn is not None
        state, _ = engine.apply(state, turn, greedy.next_action(state, turn))
    totals = [score_player(p).total for p in state.players]
    mine = totals[seat]
    return mine - max(t for i, t in enumerate(totals) if i != seat)


def play_out(state: GameState, seat: int, until_round: int, rng: random.Random) -> float:
    """One sample from ``state`` as it stands (:func:`play_line` of no actions)."""
    return play_line(state, (), seat, until_round, rng)


@attrs.frozen
class Choice:
    """What :func:`choose` found: the ``actions`` of the line, the greedy bot's ``aim`` (the
    :class:`~shared.greedy.Plan` the line carries out: where the turn ends, the festival of
    this round there, the training, recruit and performance), the state ``after`` the line,
    and the line's average ``margin`` over its ``samples`` play-outs (its score less the best
    rival's, by the end of round ``until``); no samples (``margin`` None) when every
    candidate led to this one line."""

    actions: tuple[Action, ...]
    aim: greedy.Plan | None
    after: GameState
    margin: float | None = None
    samples: int = 0
    until: int | None = None


def candidate_lines(state: GameState, seat: int, candidates: int = CANDIDATES
                    ) -> dict[tuple[Action, ...], tuple[greedy.Plan, GameState]]:
    """The lines :func:`choose` weighs: for each of the greedy bot's best plans per end
    region (the first ``candidates`` of them, its best first), the line that carries it out,
    with its plan and the state after it; lines alike are kept once, in that order."""
    distinct: dict[tuple[Action, ...], tuple[greedy.Plan, GameState]] = {}
    for aim in greedy.route_ends(state, seat)[:candidates]:
        actions, after = line_to(state, seat, aim.route[-1])
        distinct.setdefault(actions, (aim, after))
    return distinct


def weigh(state: GameState, lines: Sequence[Sequence[Action]], seat: int, until: int,
          seeds: Sequence[int], *, deadline: float | None = None,
          clock: Callable[[], float] = time.monotonic) -> list[list[float]]:
    """Each line of ``lines`` played out from ``state`` (:func:`play_line`) once per seed,
    every line with the same shuffle of a seed: each line's margins, seed by seed
    (``deadline``, by ``clock``, stops after the first seed)."""
    values: list[list[float]] = [[] for _ in lines]
    for s in seeds:
        if deadline is not None and values[0] and clock() >= deadline:
            break
        for i, line in enumerate(lines):
            values[i].append(play_line(state, line, seat, until, random.Random(s)))
    return values


def choose(state: GameState, seat: int, rng: random.Random, *, samples: int = SAMPLES,
           candidates: int = CANDIDATES, deadline: float | None = None,
           clock: Callable[[], float] = time.monotonic) -> Choice:
    """The line ``hard`` plays for the rest of ``seat``'s turn, with what it aims at and what
    its play-outs gave it (see the module's text); ``deadline`` (by ``clock``) stops the
    sampling early."""
    if state.over or state.turn != seat:
        return Choice((EndTurn(),), None, state)
    state = attrs.evolve(state, undo=None)  # the turn's past is no part of the future
    distinct = candidate_lines(state, seat, candidates)
    if len(distinct) == 1:
        actions, (aim, after) = next(iter(distinct.items()))
        return Choice(actions, aim, after)
    until = state.round + 1
    seeds = [rng.getrandbits(64) for _ in range(samples)]
    lines = list(distinct)
    values = weigh(state, lines, seat, until, seeds, deadline=deadline, clock=clock)
    totals, done = [sum(v) for v in values], len(values[0])
    # the best average; among equals, the greedy bot's order (its best plan first)
    best = max(range(len(lines)), key=lambda i: totals[i])
    aim, after = distinct[lines[best]]
    return Choice(lines[best], aim, after, totals[best] / done, done, until)


def plan(state: GameState, seat: int, rng: random.Random, *, samples: int = SAMPLES,
         candidates: int = CANDIDATES, deadline: float | None = None,
         clock: Callable[[], float] = time.monotonic) -> tuple[Action, ...]:
    """The actions ``hard`` takes for the rest of ``seat``'s turn (see the module's text);
    ``deadline`` (by ``clock``) stops the sampling early."""
    return choose(state, seat, rng, samples=samples, candidates=candidates,
                  deadline=deadline, clock=clock).actions


def unseen_castellers(state: GameState) -> tuple[int, ...]:
    """What the bag holds, as far as anyone at the table can tell: every casteller (§1,
    fifteen of each size) not in a region or a team (a view says only how many), smallest
    first. Its order is anyone's guess: the search shuffles it."""
    left = Counter({size: CASTELLERS_PER_SIZE for size in SIZES})
    left.subtract(size for here in state.regions for size in here)
    left.subtract(size for player in state.players for size in player.team)
    unseen = tuple(sorted(left.elements()))
    return unseen if len(unseen) == len(state.bag) else state.bag
