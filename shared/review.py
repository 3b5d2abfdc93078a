"""A finished game's review: every turn of every player held against the exact tower solver
and the ``hard`` bot (pure, sans-I/O; ``docs/review.md`` says what each figure means).

For each turn (§4: a seat's actions from its start to its ``end_turn``) the review keeps:

* what was played, the actions net of the ones taken back (§4 "Taking an action back");
* what it earned by the five categories of §9, from the turn's start to the end of its round
  (so the round's festivals, §5 and §8.1, count for the towers and pawns the turn left);
* the exact solver's best tower (:func:`shared.solver.best_with_training`) for each festival
  of the round (§5: the highest festival score; §7: the team and skills at the turn's end,
  and one more rank when the turn's training was still open), or the tallest tower in a
  round without one, next to what the standing tower made of it;
* the ``hard`` bot's line from the same information (:func:`shared.search.candidate_lines`
  from the turn's start with the bag unseen — its contents are what no region or team
  holds, :func:`shared.search.unseen_castellers`, as ``hint deep`` sees it — and its choice
  by :func:`shared.search.weigh`), and the expected points of the hard line and of the
  played line from the same samples: each sample shuffles the unseen bag, plays the line
  (a refill at its end draws from that shuffle, §8.2), then every seat with the ``normal``
  bot to the end of the next round (§8), and counts the seat's score less the best rival's
  (§9), exactly what the bot maximises;
* the points lost (the hard line's expectation less the played line's, never below 0) and
  the mark they give: good, inaccuracy, mistake or blunder (:data:`THRESHOLDS`), at worst
  an inaccuracy when in one of the samples the played line did as well as the hard one.

Per player: an accuracy figure (the mean over its turns of 100·exp(−lost /
:data:`ACCURACY_SCALE`)), its marks counted, and its three costliest turns. Per festival
held (§5): who entered and what they took, and for every player whether its pawn could have
reached the festival's region in its turn of that round (§2, §4: a move, a special move, a
special tile's move), the best score its team could have made there (§5.2, the training of
that turn still open) and whether that would have ranked first against the towers that did
enter (§5.3).

Everything random comes from the review's ``seed``, one stream per turn (so a turn reviewed
alone gives what it gives in a whole review, and the hard bot given that stream plays the
line the review finds): a review is a pure function of the game, the seed and the
:class:`Budget`. :meth:`Review.to_data` and :meth:`Review.from_data` turn it into plain
maps, lists, strings and numbers (towers written ``"9,9,9/7,7/5"``, a recruit's sizes
``"9,5"``), nesting at most five deep, for msgpack, JSON and the store; a 4-seat game's
review is about 35 KB of msgpack, within one frame of the wire (``docs/protocol.md``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs
import cattrs
from cattrs.errors import BaseValidationError

from shared import engine, search
from shared.actions import (
    ACTION_TYPES,
    Action,
    EndTurn,
    Move,
    Recorded,
    Resign,
    Special,
    Train,
    Undo,
    action_fields,
)
from shared.board import ALL_SEGMENT, SPECIAL_TILE, Variant
from shared.errors import CastellError, ProtocolError
from shared.events import Event, FestivalResolved, FestivalResult
from shared.record import GameRecordFile
from shared.scoring import score_player
from shared.solver import FestivalGoal, TallestGoal, best_with_training
from shared.state import GameState, Score
from shared.tower import enters_festival, festival_score

#: The version of a review's data (:meth:`Review.to_data`); a review of another version is
#: refused by :meth:`Review.from_data` (computed again instead).
VERSION: Final = 1
#: The marks of a turn, best first.
MARKS: Final = ("good", "inaccuracy", "mistake", "blunder")
#: The expected points lost from which a turn is an inaccuracy, a mistake, a blunder
#: (``docs/review.md`` says how they were chosen from measured games).
THRESHOLDS: Final = (1.0, 4.0, 8.0)
#: Points lost that take a turn's accuracy down to 100/e (about 37%): a mistake's.
ACCURACY_SCALE: Final = THRESHOLDS[1]
#: How many of a player's costliest turns the review names.
COSTLIEST: Final = 3
#: The five categories of §9, in its order.
CATEGORIES: Final = ("tower", "diversity", "prizes", "sizes", "performances")

Levels = tuple[tuple[int, ...], ...]
Progress = Callable[[int, int], None]


class ReviewError(CastellError):
    """Raised when a review's data cannot be read (another version, damaged data)."""

    code = "bad_review"


@attrs.frozen
class Budget:
    """How hard the review looks, as the ``hard`` bot's search is bounded (:mod:`shared.search`):
    bag orders per line, and candidate lines per turn."""

    samples: int = search.SAMPLES
    candidates: int = search.CANDIDATES

    def __attrs_post_init__(self) -> None:
        if self.samples < 1 or self.candidates < 1:
            raise ValueError("a review needs at least one sample and one candidate line")


#: The budget a review uses unless told: the ``hard`` bot's own.
DEFAULT_BUDGET: Final = Budget()


@attrs.frozen
class Points:
    """Points by the five categories of §9."""

    tower: int = 0
    diversity: int = 0
    prizes: int = 0
    sizes: int = 0
    performances: int = 0

    @property
    def total(self) -> int:
        return self.tower + self.diversity + self.prizes + self.sizes + self.performances

    @classmethod
    def of(cls, score: Score) -> Points:
        return cls(score.tower, score.diversity, score.prizes, score.sizes, score.performances)

    def minus(self, other: Points) -> Points:
        return Points(*(getattr(self, c) - getattr(other, c) for c in CATEGORIES))


@attrs.frozen
class TowerCheck:
    """The exact solver's best tower for one goal of a turn, beside the tower that stood.

    ``size`` is the festival's size token (``town`` and ``region`` where it is held) or None
    for the tallest tower (a round without festivals). ``best`` is the solver's tower (None:
    the team can build none that meets the goal), ``score`` its festival score (§5.2) or its
    levels, ``train`` the skill the turn's open training had to raise for it (None: none was
    needed); ``played`` the standing tower's score at the turn's end (None: it does not
    enter, §5.1) and ``there`` whether the pawn ended the turn in the festival's region."""

    size: int | None
    town: str | None
    region: str | None
    best: Levels | None
    score: int | None
    train: str | None
    played: int | None
    there: bool

    @property
    def short(self) -> int:
        """How far the standing tower fell short of the best one (0 when it did not)."""
        if self.score is None:
            return 0
        return max(0, self.score - (self.played or 0))


@attrs.frozen
class TurnReview:
    """One turn of one player, reviewed (see the module's text).

    ``start`` and ``end`` index the game's states (:func:`shared.replay.steps`: 0 is the
    setup, n the state after the n-th action): the turn's start, and the state after its
    ``end_turn``. ``hard`` is None for a turn the review did not search (the review was asked
    for other turns); ``aim`` the region the hard line ends in; ``samples`` how many bag
    orders the expectations averaged (0: every line the bot weighed was the one played, so
    nothing was played out and nothing was lost), played out to the end of round ``until``.
    ``lost`` is the expected points lost (the hard line's expectation less the played
    line's, at least 0), ``least`` the least the played line lost in any one bag order (0
    when in one of them it did as well), and ``mark`` the mark :func:`mark_of` gives
    ``lost`` — at worst an inaccuracy when ``least`` is 0: the samples did not all agree.
    """

    index: int
    round: int
    seat: int
    start: int
    end: int
    played: tuple[Action, ...]
    earned: Points
    towers: tuple[TowerCheck, ...]
    hard: tuple[Action, ...] | None = None
    aim: str | None = None
    hard_expected: float | None = None
    played_expected: float | None = None
    samples: int = 0
    until: int | None = None
    lost: float = 0.0
    least: float = 0.0
    mark: str | None = None

    @property
    def reviewed(self) -> bool:
        return self.hard is not None

    @property
    def same_as_hard(self) -> bool:
        """The turn played what the hard bot would (its actions, or a state alike)."""
        return self.reviewed and self.lost == 0.0 and (
            self.samples == 0 or self.hard_expected == self.played_expected)


@attrs.frozen
class FestivalChance:
    """One player at one festival (§5): whether its pawn stood ``there`` and its tower
    ``entered`` (its ``score``), whether the pawn could ``reach`` the region in its turn of
    that round, the ``best`` festival score its team could have made (with ``train`` raised
    by the turn's open training; None: no tower of the team could enter), and whether that
    ``would_win``: reachable, and no lower than every other tower that entered."""

    seat: int
    there: bool
    entered: bool
    score: int | None
    reach: bool
    best: int | None
    train: str | None
    would_win: bool


@attrs.frozen
class FestivalReview:
    """A festival as it was held (``results``, as :class:`~shared.events.FestivalResolved`
    gives them) and every player's chance at it."""

    round: int
    town: str
    region: str
    size: int
    results: tuple[FestivalResult, ...]
    chances: tuple[FestivalChance, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        top = max((r.score for r in self.results), default=None)
        return tuple(r.seat for r in self.results if r.score == top)


@attrs.frozen
class PlayerReview:
    """One player's summary: ``accuracy`` (0–100; None when no turn of theirs was
    reviewed), the count of their turns by mark (in :data:`MARKS` order), the points lost in
    all, their :data:`COSTLIEST` costliest turns (indices into :attr:`Review.turns`, worst
    first, among the turns marked worse than good) and their final points (§9)."""

    seat: int
    name: str
    bot: bool
    accuracy: float | None
    marks: tuple[int, ...]
    lost: float
    costliest: tuple[int, ...]
    final: Points


@attrs.frozen
class Review:
    """A whole game's review (see the module's text).

    ``scores[r][seat]`` is every player's points after round ``r`` (``scores[0]``: the
    setup, all zero); ``finished`` whether the game had ended (an unfinished game is
    reviewed up to its last whole turn).
    """

    room: str
    name: str
    variant: str
    seats: tuple[str, ...]
    bots: tuple[bool, ...]
    seed: int
    budget: Budget
    finished: bool
    scores: tuple[tuple[Points, ...], ...]
    turns: tuple[TurnReview, ...]
    festivals: tuple[FestivalReview, ...]
    players: tuple[PlayerReview, ...]
    version: int = VERSION

    def turns_of(self, seat: int) -> tuple[TurnReview, ...]:
        return tuple(t for t in self.turns if t.seat == seat)

    def costliest(self, count: int | None = None) -> tuple[TurnReview, ...]:
        """The turns that lost points, the costliest first (ties: the earlier first)."""
        lost = sorted((t for t in self.turns if t.lost > 0), key=lambda t: (-t.lost, t.index))
        return tuple(lost if count is None else lost[:count])

    def to_data(self) -> dict[str, Any]:
        """The review as plain data (maps, lists, strings, numbers, None), nesting at most
        five deep."""
        data: dict[str, Any] = _converter.unstructure(self)
        return data

    @classmethod
    def from_data(cls, data: Any) -> Review:
        """The review held by ``data`` (:meth:`to_data`'s form); :class:`ReviewError` when
        it is not one of this version."""
        if not isinstance(data, Mapping):
            raise ReviewError("not a review")
        if data.get("version") != VERSION:
            raise ReviewError(f"a review of version {data.get('version')!r}; this Castell reads "
                              f"version {VERSION}")
        try:
            review: Review = _converter.structure(data, cls)
        except (BaseValidationError, ProtocolError, KeyError, TypeError, ValueError) as exc:
            raise ReviewError(f"a damaged review: {_why(exc)}") from None
        return review


# Reviewing ---------------------------------------------------------------------------------


def review_game(record: GameRecordFile, *, seed: int = 0, budget: Budget = DEFAULT_BUDGET,
                progress: Progress | None = None, turns: Iterable[int] | None = None) -> Review:
    """The review of a recorded game (its seats, variant, seed and actions), with the
    review's own ``seed``; ``progress(done, total)`` is called as the turns are searched
    (first with 0), ``turns`` limits the search to those turn indices (the others are
    listed with what they played and earned, unmarked)."""
    start = engine.new_game(list(record.seats), record.variant, record.seed)
    return review_moves(start, [(a.seat, a.action) for a in record.actions], room=record.room,
                        name=record.name, bots=record.bots, seed=seed, budget=budget,
                        progress=progress, turns=turns)


def review_moves(start: GameState, moves: Sequence[tuple[int, Recorded]], *, room: str = "",
                 name: str = "", bots: Sequence[bool] | None = None, seed: int = 0,
                 budget: Budget = DEFAULT_BUDGET, progress: Progress | None = None,
                 turns: Iterable[int] | None = None) -> Review:
    """The review of the game that went from ``start`` (a game's setup) through ``moves``
    (seat, action), as :func:`review_game`. Raises what the rules engine raises for a move
    it refuses."""
    states: list[GameState] = [start]
    events: list[list[Event]] = [[]]
    for seat, action in moves:
        state, happened = engine.apply(states[-1], seat, action)
        states.append(state)
        events.append(happened)
    spans = _turn_spans(states, moves)
    round_end = _round_ends(states, spans)
    wanted = set(range(len(spans))) if turns is None else set(turns) & set(range(len(spans)))
    total = len(wanted)
    if progress is not None:
        progress(0, total)
    reviewed: list[TurnReview] = []
    done = 0
    for index, (first, end) in enumerate(spans):
        turn = _turn(states, moves, index, first, end, round_end, seed, budget,
                     search_it=index in wanted)
        reviewed.append(turn)
        if index in wanted:
            done += 1
            if progress is not None:
                progress(done, total)
    by_round_seat = {(t.round, t.seat): t for t in reviewed}
    reach: dict[int, frozenset[str]] = {}
    festivals = tuple(
        _festival(states, event, by_round_seat, reach)
        for i, happened in enumerate(events) for event in happened
        if isinstance(event, FestivalResolved))
    seats = tuple(p.name for p in start.players)
    rounds = [start, *(round_end[r] for r in sorted(round_end))]
    scores = tuple(tuple(Points.of(score_player(p)) for p in s.players) for s in rounds)
    last = states[-1]
    final = tuple(Points.of(score_player(p)) for p in last.players)
    bot_flags = tuple(bots) if bots is not None else (False,) * len(seats)
    players = tuple(_player(seat, seats[seat], bot_flags[seat], reviewed, final[seat])
                    for seat in range(len(seats)))
    return Review(room=room, name=name, variant=start.variant, seats=seats, bots=bot_flags,
                  seed=seed, budget=budget, finished=last.over, scores=scores,
                  turns=tuple(reviewed), festivals=festivals, players=players)


def review_plan(record: GameRecordFile, *, seed: int = 0, budget: Budget = DEFAULT_BUDGET
                ) -> tuple[Review, tuple[tuple[int, GameState], ...]]:
    """A review in parts, as a server's bot workers compute it one turn at a time: the
    review of ``record`` with no turn searched, and the turns to search, each as its index
    and its start as the search takes it (:func:`turn_start`). :func:`search_turn` searches
    one, :func:`with_searched` puts them in; together they give exactly what
    :func:`review_game` gives for the same seed and budget."""
    review = review_game(record, seed=seed, budget=budget, turns=())
    states = [engine.new_game(list(record.seats), record.variant, record.seed)]
    for recorded in record.actions:
        states.append(engine.apply(states[-1], recorded.seat, recorded.action)[0])
    kinds = [type(a.action) for a in record.actions]
    jobs = tuple((t.index, turn_start(states[t.start])) for t in review.turns
                 if Resign not in kinds[t.start:t.end])
    return review, jobs


def search_turn(turn: TurnReview, start: GameState, *, seed: int = 0,
                budget: Budget = DEFAULT_BUDGET) -> TurnReview:
    """Turn ``turn`` of a :func:`review_plan`, searched from ``start`` (the plan's), as
    :func:`review_game` searches it."""
    return _searched(turn, start, sample_rng(seed, turn.index), budget)


def with_searched(review: Review, searched: Iterable[TurnReview]) -> Review:
    """``review`` with the turns ``searched`` in place of its own of the same index, and
    each player's summary made again from them."""
    by_index = {t.index: t for t in searched}
    turns = tuple(by_index.get(t.index, t) for t in review.turns)
    players = tuple(_player(p.seat, p.name, p.bot, turns, p.final) for p in review.players)
    return attrs.evolve(review, turns=turns, players=players)


def mark_of(lost: float) -> str:
    """The mark of a turn that lost ``lost`` expected points (:data:`THRESHOLDS`)."""
    return MARKS[sum(lost >= t for t in THRESHOLDS)]


def accuracy_of(losses: Iterable[float]) -> float | None:
    """The accuracy of turns that lost ``losses``: the mean of 100·exp(−lost / scale)
    (None for no turns)."""
    values = [100.0 * math.exp(-lost / ACCURACY_SCALE) for lost in losses]
    return round(sum(values) / len(values), 1) if values else None


def turn_start(state: GameState) -> GameState:
    """The start of a turn as the review searches it: the bag unseen (its contents as anyone
    at the table can count them, :func:`shared.search.unseen_castellers`; each sample
    shuffles them) and no turn steps to take back."""
    return attrs.evolve(state, bag=search.unseen_castellers(state), undo=None)


def sample_rng(seed: int, index: int) -> random.Random:
    """The generator turn ``index``'s bag orders are drawn from (one seed per sample, as
    :func:`shared.search.choose` draws them from its generator): one stream per turn."""
    return random.Random(f"castell-review:{seed}:{index}")


def net_line(actions: Iterable[Action]) -> tuple[Action, ...]:
    """A turn's actions without the ones taken back (§4: each ``undo`` takes back the action
    before it)."""
    kept: list[Action] = []
    for action in actions:
        if isinstance(action, Undo):
            if kept:
                kept.pop()
        else:
            kept.append(action)
    return tuple(kept)


def reachable(state: GameState, seat: int) -> frozenset[str]:
    """The regions ``seat``'s pawn can stand in at the end of the turn that starts at
    ``state`` (§4: a move, a special move, a special tile's move, in any order; the first
    move of the game goes anywhere, §4 "Move"), its own region included."""
    here = state.players[seat].region
    out: set[str] = {here} if here is not None else set()
    seen = {(here, frozenset(state.done))}
    frontier = [state]
    while frontier:
        after: list[GameState] = []
        for s in frontier:
            for action in engine.legal_actions(s, seat):
                if not _moves(action):
                    continue
                new, _ = engine.apply(s, seat, action)
                key = (new.players[seat].region, frozenset(new.done))
                if key not in seen:
                    seen.add(key)
                    out.add(new.players[seat].region or "")
                    after.append(new)
        frontier = after
    out.discard("")
    return frozenset(out)


# The parts of a review -----------------------------------------------------------------------


def _moves(action: Action) -> bool:
    if isinstance(action, Move):
        return True
    return isinstance(action, Special | Train) and action.effect == "move"


def _turn_spans(states: Sequence[GameState], moves: Sequence[tuple[int, Recorded]]
                ) -> list[tuple[int, int]]:
    """Each whole turn as (index of its start state, index of the state after its
    ``end_turn``); a last turn not ended is left out."""
    spans = []
    first = 0
    for i, (_seat, action) in enumerate(moves):
        if isinstance(action, EndTurn):
            spans.append((first, i + 1))
            first = i + 1
    return spans


def _round_ends(states: Sequence[GameState], spans: Sequence[tuple[int, int]]
                ) -> dict[int, GameState]:
    """Round → the state after its last turn (festivals held, §8)."""
    out = {}
    for first, end in spans:
        if states[end].over or states[end].round != states[first].round:
            out[states[first].round] = states[end]
    return out


def _trainable(state: GameState, seat: int, region: str | None) -> tuple[str, ...]:
    """The skills the turn may still raise by training (§4): the skill tiles the wheel shows
    on ``region``'s segment and (normal game) the ``all`` segment; none once it trained."""
    if "train" in state.done:
        return ()
    shown = state.wheel_tiles()
    segments = [region] if region is not None else []
    if state.variant == Variant.NORMAL:
        segments.append(ALL_SEGMENT)
    return tuple(dict.fromkeys(t for t in (shown[s] for s in segments) if t != SPECIAL_TILE))


def _towers(before: GameState, last: GameState, seat: int) -> tuple[TowerCheck, ...]:
    """The solver's best towers for the turn (the state ``last`` is the turn's end, before
    its ``end_turn``): one per festival of the round, or the tallest."""
    player = last.players[seat]
    trainable = _trainable(last, seat, player.region)
    coming = [f for f in before.festivals if f.round == before.round]
    out = []
    for f in coming:
        found, skill = best_with_training(player.team, player.skills, FestivalGoal(f.size),
                                          trainable)
        played = (festival_score(player.tower, f.size)
                  if enters_festival(player.tower, f.size) else None)
        out.append(TowerCheck(f.size, f.town, f.region, found.levels if found else None,
                              found.score if found else None, skill, played,
                              player.region == f.region))
    if not coming:
        found, skill = best_with_training(player.team, player.skills, TallestGoal(),
                                          trainable)
        out.append(TowerCheck(None, None, None, found.levels if found else None,
                              found.score if found else None, skill,
                              len(player.tower) if player.tower else None, False))
    return tuple(out)


def _turn(states: Sequence[GameState], moves: Sequence[tuple[int, Recorded]], index: int,
          first: int, end: int, round_end: Mapping[int, GameState], seed: int,
          budget: Budget, *, search_it: bool) -> TurnReview:
    before = states[first]
    seat = before.turn
    assert seat is not None
    # (a resignation within the turn, its player's or another's, §10 "Resigning", is no
    # action of the turn: the turn is listed with what it played, but not searched, since
    # its start state does not know of it)
    span = [action for _, action in moves[first:end]]
    played = net_line(a for a in span if not isinstance(a, Resign))
    search_it = search_it and not any(isinstance(a, Resign) for a in span)
    after_round = round_end.get(before.round, states[-1])
    earned = Points.of(score_player(after_round.players[seat])).minus(
        Points.of(score_player(before.players[seat])))
    towers = _towers(before, states[end - 1], seat)
    turn = TurnReview(index=index, round=before.round, seat=seat, start=first, end=end,
                      played=played, earned=earned, towers=towers)
    if not search_it:
        return turn
    return _searched(turn, turn_start(before), sample_rng(seed, index), budget)


def _searched(turn: TurnReview, start: GameState, rng: random.Random, budget: Budget
              ) -> TurnReview:
    """The turn with the hard bot's line and both lines' expectations (the module's text)."""
    seat = turn.seat
    lines = search.candidate_lines(start, seat, budget.candidates)
    played_after = start
    for action in turn.played:
        played_after, _ = engine.apply(played_after, seat, action)
    keys = list(lines)
    match = next((i for i, k in enumerate(keys) if lines[k][1] == played_after), None)
    if len(keys) == 1 and match == 0:  # the bot weighs nothing: it plays what was played
        return attrs.evolve(turn, hard=keys[0], aim=lines[keys[0]][0].route[-1],
                            mark=mark_of(0.0))
    until = start.round + 1
    seeds = [rng.getrandbits(64) for _ in range(budget.samples)]
    judged = keys if match is not None else [*keys, turn.played]
    values = search.weigh(start, judged, seat, until, seeds)
    totals = [sum(v) for v in values]
    best = max(range(len(keys)), key=lambda i: totals[i])
    mine = values[match if match is not None else len(keys)]
    done = len(mine)
    hard, played = totals[best] / done, sum(mine) / done
    lost = round(max(0.0, hard - played), 6)
    least = round(max(0.0, min(h - m for h, m in zip(values[best], mine, strict=True))), 6)
    mark = mark_of(lost)
    if least == 0 and MARKS.index(mark) > 1:  # in some bag order it did as well: noise?
        mark = MARKS[1]
    return attrs.evolve(turn, hard=keys[best], aim=lines[keys[best]][0].route[-1],
                        hard_expected=round(hard, 6), played_expected=round(played, 6),
                        samples=done, until=until, lost=lost, least=least, mark=mark)


def _festival(states: Sequence[GameState], event: FestivalResolved,
              turns: Mapping[tuple[int, int], TurnReview],
              reach: dict[int, frozenset[str]]) -> FestivalReview:
    """Every player's chance at the festival ``event`` reports (the module's text);
    ``reach`` keeps :func:`reachable` by a turn's start (a round's festivals share it)."""
    chances = []
    results = {r.seat: r for r in event.results}

    for seat in range(len(states[0].players)):
        turn = turns.get((event.round, seat))
        mine = results.get(seat)
        if turn is None:  # (a game stopped mid-round has no such turn)
            chances.append(FestivalChance(seat, False, mine is not None,
                                          mine.score if mine else None, False, None, None,
                                          False))
            continue
        before, last = states[turn.start], states[turn.end - 1]
        player = last.players[seat]
        # the team it had at its turn's end; the skills it had at its start, and the
        # training of that turn open on the segment of any region its pawn could stand in,
        # or the `all` segment
        if turn.start not in reach:
            reach[turn.start] = reachable(before, seat)
        regions = reach[turn.start]
        trainable = tuple(dict.fromkeys(
            skill for region in (*sorted(regions), None)
            for skill in _trainable(before, seat, region)))
        found, skill = best_with_training(player.team, before.players[seat].skills,
                                          FestivalGoal(event.size), trainable)
        reaches = event.region in regions
        rivals = [r.score for r in event.results if r.seat != seat]
        best = found.score if found is not None else None
        would_win = reaches and best is not None and best >= max(rivals, default=0)
        chances.append(FestivalChance(seat, player.region == event.region, mine is not None,
                                      mine.score if mine else None, reaches, best, skill,
                                      would_win))
    return FestivalReview(event.round, event.town, event.region, event.size,
                          tuple(event.results), tuple(chances))


def _player(seat: int, name: str, bot: bool, turns: Sequence[TurnReview], final: Points
            ) -> PlayerReview:
    mine = [t for t in turns if t.seat == seat and t.reviewed]
    marks = tuple(sum(t.mark == m for t in mine) for m in MARKS)
    costly = sorted((t for t in mine if t.mark != MARKS[0]), key=lambda t: (-t.lost, t.index))
    return PlayerReview(seat=seat, name=name, bot=bot,
                        accuracy=accuracy_of(t.lost for t in mine), marks=marks,
                        lost=round(sum(t.lost for t in mine), 6),
                        costliest=tuple(t.index for t in costly[:COSTLIEST]), final=final)


# Plain data --------------------------------------------------------------------------------


def tower_text(levels: Levels) -> str:
    """A tower as the review's data writes it: levels bottom first, ``"9,9,9/7,7/5"``."""
    return "/".join(",".join(map(str, level)) for level in levels)


def tower_from_text(text: str) -> Levels:
    """The tower :func:`tower_text` wrote (:class:`ValueError` for anything else)."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"{text!r} is not a tower")
    return tuple(tuple(int(s) for s in level.split(",")) for level in text.split("/"))


def _action_data(action: Action) -> dict[str, Any]:
    """An action's wire fields, its lists written as text (``levels`` as a tower,
    ``sizes`` as ``"9,5"``), so that an action is a map of scalars."""
    fields = action_fields(action)
    if "levels" in fields:
        fields["levels"] = tower_text(action.levels)  # type: ignore[union-attr]
    if "sizes" in fields:
        fields["sizes"] = ",".join(map(str, fields["sizes"]))
    return fields


def _action_from_data(data: Any, _: Any) -> Action:
    from shared.messages import action_from_fields

    if not isinstance(data, Mapping):
        raise ValueError(f"{data!r} is not an action")
    fields = dict(data)
    if isinstance(fields.get("levels"), str):
        fields["levels"] = [list(level) for level in tower_from_text(fields["levels"])]
    if isinstance(fields.get("sizes"), str):
        fields["sizes"] = [int(size) for size in fields["sizes"].split(",")]
    return action_from_fields(fields)


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseValidationError):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _why(inner) if inner is not exc else str(exc)
    return str(exc) or type(exc).__name__


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    for kind in ACTION_TYPES.values():
        conv.register_unstructure_hook(kind, _action_data)
    conv.register_structure_hook_func(lambda t: t == Action, _action_from_data)
    levels = Levels
    optional = Levels | None
    conv.register_unstructure_hook_func(lambda t: t in (levels, optional),
                                        lambda v: None if v is None else tower_text(v))
    conv.register_structure_hook_func(
        lambda t: t in (levels, optional),
        lambda v, _: None if v is None else tower_from_text(v))

    def strict(kind: type) -> Callable[[Any, Any], Any]:
        def check(value: Any, _: Any) -> Any:
            if kind is float and type(value) is int:
                return float(value)
            if type(value) is not kind:
                raise TypeError(f"{value!r} is not a {kind.__name__}")
            return value
        return check

    for scalar in (int, float, str, bool):
        conv.register_structure_hook(scalar, strict(scalar))
    return conv


_converter = _make_converter()
