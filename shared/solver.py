"""The tower solver: the best legal tower (§7) a team can build for a goal.

Goals:

* :class:`FestivalGoal` — the highest festival score (§5.2) among towers that may enter a
  festival with that size token (§5.1: at least 4 levels, at least one casteller of the size);
  ties go to the tower with fewer castellers.
* :class:`TileGoal` — a tower that completes a local performance tile (§6), with as few
  castellers as possible; found whenever one exists.
* :class:`TallestGoal` — the most levels; ties go to the tower with more castellers.

:func:`best_tower` answers with a :class:`Solution` or ``None`` when no legal tower meets the
goal. Answers are exact (optimal) and deterministic.

How it searches: castellers are placed bottom level first, walking a size pointer down from
10 to 1. A level is either ``n`` castellers of the pointer's size, or (with Mix) castellers
of the pointer's size and the size below it. After a level, the pointer stays on the level's
smallest size, whose castellers the next level may only use with Strength; moving the pointer
down frees the next size. The state of that walk — pointer, castellers left at the pointer,
count of the level below, Mix/Strength/Balance uses left, level index (as far as it matters)
— is memoised, so each state is solved once. Width and Base only bound the count of a level
by its index (§7: the base levels are the bottom ones); a skill exhibition that needs Base or
Width is solved once per reading that uses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from shared.board import SIZES, TILES, PerformanceTile
from shared.tower import BASE_WIDTH, festival_score, normalise_ranks

FESTIVAL_MIN_LEVELS: Final = 4
_TOP: Final = max(SIZES)
_NEG: Final = -(1 << 60)
#: Weight of one level in the objective; more than any count of castellers.
_LEVEL: Final = 1 << 10


@attrs.frozen
class FestivalGoal:
    """Maximise the festival score for size token ``size`` (§5)."""

    size: int


@attrs.frozen
class TileGoal:
    """Complete the local performance tile ``tile_id`` (§6) with as few castellers as possible."""

    tile_id: str


@attrs.frozen
class TallestGoal:
    """Build the most levels; ties go to more castellers."""


Goal = FestivalGoal | TileGoal | TallestGoal


@attrs.frozen
class Solution:
    """A tower found by :func:`best_tower`.

    ``levels`` lists the levels bottom first, each level's sizes biggest first. ``score`` is
    the goal's measure: the festival score (FestivalGoal), the tile's points (TileGoal) or the
    number of levels (TallestGoal).
    """

    levels: tuple[tuple[int, ...], ...]
    score: int

    @property
    def castellers(self) -> int:
        """How many castellers the tower holds."""
        return sum(len(level) for level in self.levels)


@attrs.frozen
class _Spec:
    """One search: bounds on each level's count, height limits and what to maximise."""

    bounds: tuple[tuple[int, int], ...]  # (min, max) count of level i, for the first levels
    default: tuple[int, int]  # (min, max) count of every later level
    min_levels: int = 1
    max_levels: int | None = None
    used: frozenset[str] = frozenset()  # of mix/strength/balance: each must be used
    size: int | None = None  # the festival's size: at least one is needed, each one scores
    per_level: int = 0
    per_size: int = 0
    per_casteller: int = 0


def best_tower(team: Iterable[int], ranks: Mapping[str, int] | Any, goal: Goal) -> Solution | None:
    """The best legal tower ``team`` can build for ``goal``, or ``None`` if there is none.

    ``team`` is the multiset of casteller sizes (any iterable of ints 1–10, e.g.
    ``Player.team``); ``ranks`` maps skill names to ranks (missing = 0) or is a ``Skills``.
    The tower uses each casteller of the team at most once.
    """
    counts = [0] * (_TOP + 1)
    for size in team:
        if type(size) is not int or not 1 <= size <= _TOP:
            raise ValueError(f"{size!r} is not a casteller size")
        counts[size] += 1
    rank = normalise_ranks(ranks)
    total = sum(counts)
    wide = (1, max(total, 1))
    general = ((wide,) * rank["base"], (1, BASE_WIDTH + rank["width"]))

    if isinstance(goal, TallestGoal):
        spec = _Spec(*general, per_level=_LEVEL, per_casteller=1)
        found = _search(counts, rank, spec)
        return None if found is None else Solution(found, len(found))
    if isinstance(goal, FestivalGoal):
        spec = _Spec(
            *general,
            min_levels=FESTIVAL_MIN_LEVELS,
            size=goal.size,
            per_level=_LEVEL,
            per_size=_LEVEL,
            per_casteller=-1,
        )
        found = _search(counts, rank, spec)
        return None if found is None else Solution(found, festival_score(found, goal.size))
    if isinstance(goal, TileGoal):
        tile = _tile(goal.tile_id)
        found = _best_for_tile(counts, rank, tile, total)
        return None if found is None else Solution(found, tile.points)
    raise TypeError(f"not a solver goal: {goal!r}")


def _tile(tile: PerformanceTile | str) -> PerformanceTile:
    if isinstance(tile, PerformanceTile):
        return tile
    if tile not in TILES:
        raise ValueError(f"unknown performance tile {tile!r}")
    return TILES[tile]


def _best_for_tile(
    counts: list[int], rank: dict[str, int], tile: PerformanceTile, total: int
) -> tuple[tuple[int, ...], ...] | None:
    """The tower with fewest castellers completing ``tile`` (§6), or None."""
    limit = BASE_WIDTH + rank["width"]
    if tile.kind == "shape":
        # Levels from rank(base) up must fit the width limit (§7: base levels are the bottom ones).
        if any(n > limit for n in tile.shape[rank["base"]:]):
            return None
        bounds = tuple((n, n) for n in tile.shape)
        n = len(tile.shape)
        return _search(counts, rank, _Spec(bounds, (1, 1), n, n, per_casteller=-1))

    height = tile.points
    skills = set(tile.skills)
    if any(rank[s] == 0 for s in skills):
        return None
    used = frozenset(skills & {"mix", "strength", "balance"})
    common = {"min_levels": height, "max_levels": height, "used": used, "per_casteller": -1}
    if not skills & {"base", "width"}:
        wide = (1, max(total, 1))
        return _search(counts, rank, _Spec((wide,) * rank["base"], (1, limit), **common))
    # One search per reading (k base levels, width used w times) that uses the tile's skills.
    best = None
    for k in range(1 if "base" in skills else 0, rank["base"] + 1):
        for w in range(1 if "width" in skills else 0, rank["width"] + 1):
            if k + (1 if w else 0) > height:
                continue
            top = BASE_WIDTH + w
            bounds = ((top + 1, max(total, top + 1)),) * k + (((top, top),) if w else ())
            found = _search(counts, rank, _Spec(bounds, (1, top), **common))
            if found is not None and (best is None or _size(found) < _size(best)):
                best = found
    return best


def _size(levels: tuple[tuple[int, ...], ...]) -> int:
    return sum(map(len, levels))


def _search(
    counts: list[int], rank: dict[str, int], spec: _Spec
) -> tuple[tuple[int, ...], ...] | None:
    """Maximise the spec's objective over legal towers; the best tower, or None.

    A state is ``(p, rem, edge, prev, ml, sl, bl, i, has)``: the next level's biggest size is
    at most ``p``, of which ``rem`` castellers are left; ``edge`` when the level below ends on
    size ``p`` (so standing on it needs Strength); ``prev`` the count of the level below;
    Mix/Strength/Balance uses left; the level index ``i`` (capped where it stops mattering);
    ``has`` whether the festival's size is in the tower yet.
    """
    c = counts
    bounds, (dlo, dhi) = spec.bounds, spec.default
    icap = max(len(bounds), spec.min_levels, spec.max_levels or 0)
    lo_at = [b[0] for b in bounds] + [dlo] * (icap + 1 - len(bounds))
    hi_at = [b[1] for b in bounds] + [dhi] * (icap + 1 - len(bounds))
    min_levels = spec.min_levels
    max_levels = spec.max_levels if spec.max_levels is not None else icap + 1
    mix, strength, balance = rank["mix"], rank["strength"], rank["balance"]
    need_mix = "mix" in spec.used
    need_strength = "strength" in spec.used
    need_balance = "balance" in spec.used
    t = spec.size if spec.size is not None else 0
    w_level, w_size, w_cast = spec.per_level, spec.per_size, spec.per_casteller

    # most[q]: the most castellers one level can hold with sizes <= q (a size and the next).
    most = [0] * (_TOP + 1)
    # fresh[q]: the biggest size <= q with castellers left untouched (0: none).
    fresh = [0] * (_TOP + 1)
    # pairs[q]: how many mixed levels could still stand with sizes <= q (their tops differ).
    pairs = [0] * (_TOP + 1)
    for q in range(1, _TOP + 1):
        most[q] = max(most[q - 1], c[q] + c[q - 1])
        fresh[q] = q if c[q] else fresh[q - 1]
        pairs[q] = pairs[q - 1] + (1 if c[q] and c[q - 1] else 0)
    cap_mix = "mix" not in spec.used

    def settle(p: int, rem: int, edge: bool, prev: int, ml: int, sl: int, bl: int, i: int,
               has: bool) -> tuple:
        """The state to memoise for a position: where nothing can be placed at ``p``, the
        pointer moves down at once (ending the tower stays possible there), and the counts
        and Mix uses left that can no longer matter are merged."""
        if not rem or (edge and not sl):
            p = fresh[p - 1] if p > 1 else 0
            rem, edge = c[p], False
        if p:
            # The next level can hold at most ``reach``; a bigger count below it is stored as
            # reach + 1, which no level can equal (so no Balance use is read into it).
            reach = rem + c[p - 1]
            if reach < most[p - 1]:
                reach = most[p - 1]
            if reach > hi_at[i]:
                reach = hi_at[i]
            if ml and cap_mix:
                can = pairs[p - 1] + (1 if c[p - 1] and (sl or not edge) else 0)
                if ml > can:
                    ml = can
        else:
            reach = 0
            if cap_mix:
                ml = 0
        return (p, rem, edge, prev if prev <= reach else reach + 1, ml, sl, bl, i, has)

    # memo[state] = (best value from the state on, next state, level placed or None)
    memo: dict[tuple, tuple[int, tuple | None, tuple | None]] = {}

    def f(state: tuple) -> int:
        hit = memo.get(state)
        if hit is not None:
            return hit[0]
        p, rem, edge, prev, ml, sl, bl, i, has = state
        if not has and p < t:
            memo[state] = (_NEG, None, None)
            return _NEG
        best, after, placed = _NEG, None, None
        if (
            i >= min_levels
            and has
            and (not need_mix or ml < mix)
            and (not need_strength or sl < strength)
            and (not need_balance or bl < balance)
        ):
            best = 0
        # settle() guarantees that a level can stand on p when p > 0.
        if p and i < max_levels:
            sl2 = sl - 1 if edge else sl
            ni = i + 1 if i < icap else i
            lo, hi = lo_at[i], hi_at[i]
            if prev < hi:
                hi = prev
            # A level of one size: n castellers of size p.
            has1 = has or p == t
            per_one = w_cast + (w_size if p == t else 0)
            for n in range(lo, (hi if hi < rem else rem) + 1):
                bl2 = bl
                if n == prev:
                    if not bl:
                        continue
                    bl2 = bl - 1
                child = settle(p, rem - n, True, n, ml, sl2, bl2, ni, has1)
                v = f(child)
                if v > _NEG:
                    v += w_level + per_one * n
                    if v > best:
                        best, after, placed = v, child, (p, n, 0)
            # A mixed level (§7 Mix): a castellers of size p and b of size p - 1.
            if ml and p > 1 and c[p - 1]:
                q = p - 1
                below = c[q]
                has2 = has1 or q == t
                ml2 = ml - 1
                for a in range(1, rem + 1):
                    top_gain = w_size * a if p == t else 0
                    for b in range(1, below + 1):
                        n = a + b
                        if n > hi:
                            break
                        if n < lo:
                            continue
                        bl2 = bl
                        if n == prev:
                            if not bl:
                                continue
                            bl2 = bl - 1
                        child = settle(q, below - b, True, n, ml2, sl2, bl2, ni, has2)
                        v = f(child)
                        if v > _NEG:
                            v += w_level + w_cast * n + top_gain
                            if q == t:
                                v += w_size * b
                            if v > best:
                                best, after, placed = v, child, (p, a, b)
        if p > 1:
            # Move the pointer down: the next size is untouched by the levels below.
            q = fresh[p - 1]
            child = settle(q, c[q], False, prev, ml, sl, bl, i, has)
            v = f(child)
            if v > best:
                best, after, placed = v, child, None
        memo[state] = (best, after, placed)
        return best

    start = settle(_TOP, c[_TOP], False, 1 << 30, mix, strength, balance, 0, t == 0)
    state: tuple | None = start
    if f(start) <= _NEG:
        return None
    # Follow the recorded choices from the start to rebuild the tower.
    levels: list[tuple[int, ...]] = []
    while state is not None:
        _, state, placed = memo[state]
        if placed is not None:
            top, a, b = placed
            levels.append((top,) * a + (top - 1,) * b)
    return tuple(levels)
