"""The tower solver: the best legal tower (§7) a team can build for a goal.

Goals:

* :class:`FestivalGoal` — the highest festival score (§5.2) among towers that may enter a
  festival with that size token (§5.1: at least 4 levels, at least one casteller of the size);
  ties go to the tower with fewer castellers.
* :class:`TileGoal` — a tower that completes a local performance tile (§6), with as few
  castellers as possible; found whenever one exists.
* :class:`TallestGoal` — the most levels; ties go to the tower with more castellers.

:func:`best_tower` answers with a :class:`Solution` or ``None`` when no legal tower meets the
goal. Answers are exact (optimal) and deterministic. :func:`best_with_training` asks the same
with one more rank of a skill the turn may still train, and says which.

How it searches: castellers are placed bottom level first, walking a size pointer down from
10 to 1. A level is either ``n`` castellers of the pointer's size, or (with Mix) castellers
of the pointer's size and the size below it. After a level, the pointer stays on the level's
smallest size, whose castellers the next level may only use with Strength; moving the pointer
down frees the next size. The state of that walk — pointer, castellers left at the pointer,
count of the level below, Mix/Strength/Balance uses left, level index as far as it matters —
is memoised, so each state is solved once. Width and Base only bound the count of a level by
its index (§7: the base levels are the bottom ones), so they become *tracks*: bounds on the
counts of the first levels. Plain legality is one track; a skill exhibition that needs Base
or Width has one track per reading that uses them, and the tracks share the memo, because
once a level is past its track (or cannot reach the track's bounds) the level below is the
only bound left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from shared.board import FESTIVAL_MIN_LEVELS, MAX_RANK, SIZES, TILES, PerformanceTile
from shared.tower import BASE_WIDTH, festival_score, normalise_ranks

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


#: Bounds on the counts of a tower's first levels, bottom first: ((min, max), ...). Above
#: them a level is bounded only by the level below (§7 rule 3).
Track = tuple[tuple[int, int], ...]


@attrs.frozen
class _Spec:
    """One search: the allowed tracks, height limits and what to maximise.

    A tower is allowed if its counts fit one of ``tracks`` (§7 Width and Base bound a level's
    count by its index only) and it has at least the track's ``need`` levels.
    """

    tracks: tuple[tuple[Track, int], ...]  # (track, levels the tower must have at least)
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
    ``Player.team``); ``ranks`` maps skill names to ranks 0–3 (missing = 0) or is a
    ``Skills``. The tower uses each casteller of the team at most once.
    """
    counts = [0] * (_TOP + 1)
    for size in team:
        if type(size) is not int or not 1 <= size <= _TOP:
            raise ValueError(f"{size!r} is not a casteller size")
        counts[size] += 1
    rank = normalise_ranks(ranks)
    for skill, r in rank.items():
        if not 0 <= r <= MAX_RANK:
            raise ValueError(f"{skill} rank {r} is not 0 to {MAX_RANK}")
    wide = sum(counts) + 1
    # §7: legal iff the levels from index rank(base) up fit 3 + rank(width); the levels above
    # the first of those are narrower than it anyway.
    general = (((1, wide),) * rank["base"] + ((1, BASE_WIDTH + rank["width"]),), 0)

    if isinstance(goal, TallestGoal):
        spec = _Spec((general,), per_level=_LEVEL, per_casteller=1)
        found = _search(counts, rank, spec)
        return None if found is None else Solution(found, len(found))
    if isinstance(goal, FestivalGoal):
        spec = _Spec(
            (general,),
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
        found = _best_for_tile(counts, rank, tile, general)
        return None if found is None else Solution(found, tile.points)
    raise TypeError(f"not a solver goal: {goal!r}")


def best_with_training(team: Iterable[int], ranks: Mapping[str, int] | Any, goal: Goal,
                       trainable: Iterable[str]) -> tuple[Solution | None, str | None]:
    """The best tower for ``goal`` with the skills as they are, or once one skill of
    ``trainable`` (the skill tiles the turn may still train with) has gone up one rank (§4:
    a turn trains once, and a rank stops at 3): the tower, and the skill to train first —
    None when no training does strictly better (a higher score, or a tower at all)."""
    team = tuple(team)
    rank = normalise_ranks(ranks)
    best = best_tower(team, rank, goal)
    skill: str | None = None
    for name in dict.fromkeys(trainable):  # each skill once, in the order given
        if rank.get(name, MAX_RANK) >= MAX_RANK:
            continue
        found = best_tower(team, {**rank, name: rank[name] + 1}, goal)
        if found is not None and (best is None or found.score > best.score):
            best, skill = found, name
    return best, skill


def _tile(tile: PerformanceTile | str) -> PerformanceTile:
    if isinstance(tile, PerformanceTile):
        return tile
    if tile not in TILES:
        raise ValueError(f"unknown performance tile {tile!r}")
    return TILES[tile]


def _best_for_tile(
    counts: list[int], rank: dict[str, int], tile: PerformanceTile, general: tuple[Track, int]
) -> tuple[tuple[int, ...], ...] | None:
    """The tower with fewest castellers completing ``tile`` (§6), or None."""
    if tile.kind == "shape":
        # Levels from rank(base) up must fit the width limit (§7: base levels are the bottom ones).
        if any(n > BASE_WIDTH + rank["width"] for n in tile.shape[rank["base"]:]):
            return None
        n = len(tile.shape)
        track = tuple((k, k) for k in tile.shape)
        return _search(counts, rank, _Spec(((track, n),), n, n, per_casteller=-1))

    height = tile.points
    skills = set(tile.skills)
    if any(rank[s] == 0 for s in skills):
        return None
    used = frozenset(skills & {"mix", "strength", "balance"})
    if not skills & {"base", "width"}:
        tracks: tuple[tuple[Track, int], ...] = (general,)
    else:
        # One track per reading (k base levels, width used w times, §7 "uses") that uses the
        # tile's skills: k levels wider than 3 + w, then one of exactly 3 + w (or at most 3).
        wide = sum(counts) + 1
        readings = []
        for k in range(1 if "base" in skills else 0, rank["base"] + 1):
            for w in range(1 if "width" in skills else 0, rank["width"] + 1):
                top = BASE_WIDTH + w
                track = ((top + 1, wide),) * k + ((top, top) if w else (1, BASE_WIDTH),)
                need = k + (1 if w else 0)
                if need <= height:
                    readings.append((track, need))
        tracks = tuple(readings)
    spec = _Spec(tracks, height, height, used, per_casteller=-1)
    return _search(counts, rank, spec)


def _search(
    counts: list[int], rank: dict[str, int], spec: _Spec
) -> tuple[tuple[int, ...], ...] | None:
    """Maximise the spec's objective over legal towers; the best tower, or None.

    A state is ``(p, rem, edge, prev, ml, sl, bl, tr, i, has)``: the next level's biggest size
    is at most ``p``, of which ``rem`` castellers are left; ``edge`` when the level below ends
    on size ``p`` (so standing on it needs Strength); ``prev`` the count of the level below;
    Mix/Strength/Balance uses left; the track ``tr`` the counts follow (1-based; 0 once past
    its end, where only the level below bounds a count), the level index ``i`` (capped where
    it stops mattering) and ``has``: whether the festival's size is in the tower yet.

    States are packed into one int (fields at the shifts below): ints hash fast and, unlike
    tuples, give the garbage collector nothing to trace among thousands of memoised states.
    """
    c = counts
    wide = sum(c) + 1
    min_levels = spec.min_levels
    max_levels = spec.max_levels if spec.max_levels is not None else 1 << 30
    # Past its track, a level's index only matters for the height limits.
    icap = max(min_levels, spec.max_levels or 0)
    mix, strength, balance = rank["mix"], rank["strength"], rank["balance"]
    need_mix = "mix" in spec.used
    need_strength = "strength" in spec.used
    need_balance = "balance" in spec.used
    t = spec.size if spec.size is not None else 0
    w_level, w_size, w_cast = spec.per_level, spec.per_size, spec.per_casteller

    # Per (track, index), at [tr * 16 + i]: count bounds, whether the tower may end there,
    # the next level's track and its index as stored.
    n_tab = 16 * (len(spec.tracks) + 1)
    lo_tab, hi_tab = [1] * n_tab, [wide] * n_tab
    stop_tab = [True] * n_tab
    next_tr = [0] * n_tab
    next_i = [min(i + 1, icap) for _ in range(len(spec.tracks) + 1) for i in range(16)]
    # vac_tab: the track's bounds from here on are void for levels of at most this many
    # castellers (-1: never), and free_at the place to go then: a state that cannot exceed
    # them joins the states past every track, which other tracks and indices share.
    vac_tab = [-1] * n_tab
    free_at = [min(i, icap) for _ in range(len(spec.tracks) + 1) for i in range(16)]
    for tr, (track, need) in enumerate(spec.tracks, 1):
        for i in range(16):
            at = tr * 16 + i
            stop_tab[at] = i >= need
            if i < len(track):
                lo_tab[at], hi_tab[at] = track[i]
                if i + 1 < len(track):
                    next_tr[at], next_i[at] = tr, i + 1
                rest = track[i:]
                if i >= need and all(lo == 1 for lo, _ in rest):
                    vac_tab[at] = min(hi for _, hi in rest)

    # most[q]: the most castellers one level can hold with sizes <= q (a size and the next).
    most = [0] * (_TOP + 1)
    # fresh[q]: the biggest size <= q with castellers (0: none).
    fresh = [0] * (_TOP + 1)
    # pairs[q]: how many mixed levels could still stand with sizes <= q (their tops differ).
    pairs = [0] * (_TOP + 1)
    for q in range(1, _TOP + 1):
        most[q] = max(most[q - 1], c[q] + c[q - 1])
        fresh[q] = q if c[q] else fresh[q - 1]
        pairs[q] = pairs[q - 1] + (1 if c[q] and c[q - 1] else 0)
    # Mix uses left beyond what can still be used are merged, unless "used" must be seen.
    cap_mix = not need_mix

    # Bit layout, low to high: has 1, i 4, tr 4, bl 2, sl 2, ml 2, prev, edge 1, rem, p.
    w_rem = max(c).bit_length() or 1
    w_prev = wide.bit_length() + 1
    s_prev = 15
    s_edge = s_prev + w_prev
    s_rem = s_edge + 1
    s_p = s_rem + w_rem
    m_prev, m_rem = (1 << w_prev) - 1, (1 << w_rem) - 1
    edge_bit = 1 << s_edge

    # value[state]: the best value from the state on; choice[state]: the next state and the
    # level placed on the way, packed as (next << 2 * w_rem) | (a << w_rem) | b (a = b = 0: the
    # pointer moved down). A state without a choice ends the tower there.
    value: dict[int, int] = {}
    choice: dict[int, int] = {}
    #: A child already solved is read here without calling f (three in five are, in the
    #: searches of a bot game): 3.5% of the search's time.
    memo = value.get

    # A level's count matters to the next one only up to what the next one can reach; a
    # bigger count is stored as "reach + 1", which no level can equal (so no Balance use is
    # read into it). Where no level can stand on p (none left, or Strength spent on an edge),
    # the child starts at once on the next size with castellers (ending the tower stays
    # possible there). f() builds its children so, inline, for speed.
    def f(key: int) -> int:
        hit = value.get(key)
        if hit is not None:
            return hit
        has = key & 1
        at = (key >> 1) & 255  # tr * 16 + i
        i = at & 15
        bl = (key >> 9) & 3
        sl = (key >> 11) & 3
        ml = (key >> 13) & 3
        prev = (key >> s_prev) & m_prev
        edge = key & edge_bit
        rem = (key >> s_rem) & m_rem
        p = key >> s_p
        if not has and p < t:
            value[key] = _NEG
            return _NEG
        best, after = _NEG, -1
        if (
            stop_tab[at]
            and i >= min_levels
            and has
            and (not need_mix or ml < mix)
            and (not need_strength or sl < strength)
            and (not need_balance or bl < balance)
        ):
            best = 0
        # A level can stand on p whenever p > 0 (children are built that way).
        if p and i < max_levels:
            sl2 = sl - 1 if edge else sl
            nat = next_tr[at] * 16 + next_i[at]
            lo, hi, hn = lo_tab[at], hi_tab[at], hi_tab[nat]
            if prev < hi:
                hi = prev
            # A level of one size: n castellers of size p.
            has1 = 1 if has or p == t else 0
            per_one = w_cast + (w_size if p == t else 0)
            c1, m1 = c[p - 1], most[p - 1]
            ml1 = ml
            if cap_mix and ml1 > pairs[p - 1] + (1 if c1 else 0):
                ml1 = pairs[p - 1] + (1 if c1 else 0)
            vn, fat = vac_tab[nat], free_at[nat]
            common = (sl2 << 11) | has1
            stay = (p << s_p) | edge_bit | (ml1 << 13) | common
            jp = fresh[p - 1] if p > 1 else 0
            jreach = most[jp]
            jml = ml if not cap_mix or ml <= pairs[jp] else pairs[jp]
            jump = (jp << s_p) | (c[jp] << s_rem) | (jml << 13) | common
            jump |= (fat if jreach <= vn else nat) << 1
            if jreach > hn:
                jreach = hn
            for n in range(lo, (hi if hi < rem else rem) + 1):
                bl2 = bl
                if n == prev:
                    if not bl:
                        continue
                    bl2 = bl - 1
                r = rem - n
                if r and sl2:
                    reach = r + c1
                    if reach < m1:
                        reach = m1
                    child = stay | (r << s_rem) | ((fat if reach <= vn else nat) << 1)
                    if reach > hn:
                        reach = hn
                    child |= (n if n <= reach else reach + 1) << s_prev
                else:
                    child = jump | ((n if n <= jreach else jreach + 1) << s_prev)
                child |= bl2 << 9
                v = memo(child)
                if v is None:
                    v = f(child)
                if v > _NEG:
                    v += w_level + per_one * n
                    if v > best:
                        best, after = v, (child << 2 * w_rem) | (n << w_rem)
            # A mixed level (§7 Mix): a castellers of size p and b of size p - 1.
            if ml and c1:
                q = p - 1
                has2 = 1 if has1 or q == t else 0
                common = (sl2 << 11) | has2
                ml2 = ml - 1
                c2, m2 = c[q - 1], most[q - 1]
                ml2s = ml2
                if cap_mix and ml2s > pairs[q - 1] + (1 if c2 else 0):
                    ml2s = pairs[q - 1] + (1 if c2 else 0)
                stay = (q << s_p) | edge_bit | (ml2s << 13) | common
                jq = fresh[q - 1]
                jreach = most[jq]
                jml = ml2 if not cap_mix or ml2 <= pairs[jq] else pairs[jq]
                jump = (jq << s_p) | (c[jq] << s_rem) | (jml << 13) | common
                jump |= (fat if jreach <= vn else nat) << 1
                if jreach > hn:
                    jreach = hn
                for a in range(1, rem + 1):
                    top_gain = w_size * a if p == t else 0
                    for b in range(1, c1 + 1):
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
                        r = c1 - b
                        if r and sl2:
                            reach = r + c2
                            if reach < m2:
                                reach = m2
                            child = stay | (r << s_rem) | ((fat if reach <= vn else nat) << 1)
                            if reach > hn:
                                reach = hn
                            child |= (n if n <= reach else reach + 1) << s_prev
                        else:
                            child = jump | ((n if n <= jreach else jreach + 1) << s_prev)
                        child |= bl2 << 9
                        v = memo(child)
                        if v is None:
                            v = f(child)
                        if v > _NEG:
                            v += w_level + w_cast * n + top_gain
                            if q == t:
                                v += w_size * b
                            if v > best:
                                best, after = v, (child << 2 * w_rem) | (a << w_rem) | b
        if p > 1:
            # Move the pointer down: the next size is untouched by the levels below.
            q = fresh[p - 1]
            reach = most[q]
            qat = free_at[at] if reach <= vac_tab[at] else at
            if reach > hi_tab[at]:
                reach = hi_tab[at]
            qml = ml if not cap_mix or ml <= pairs[q] else pairs[q]
            child = (
                (q << s_p) | (c[q] << s_rem) | ((prev if prev <= reach else reach + 1) << s_prev)
                | (qml << 13) | (sl << 11) | (bl << 9) | (qat << 1) | has
            )
            v = f(child)
            if v > best:
                best, after = v, child << 2 * w_rem
        value[key] = best
        if after >= 0:
            choice[key] = after
        return best

    # The start, one per track: nothing below, the pointer on the biggest size in the team.
    top = fresh[_TOP]
    mix0 = mix if not cap_mix else min(mix, pairs[top])
    best, start = _NEG, -1
    for tr in range(1, len(spec.tracks) + 1):
        at = free_at[tr * 16] if most[top] <= vac_tab[tr * 16] else tr * 16
        reach = min(hi_tab[tr * 16], most[top])
        key = (
            (top << s_p) | (c[top] << s_rem) | ((reach + 1) << s_prev) | (mix0 << 13)
            | (strength << 11) | (balance << 9) | (at << 1) | (1 if t == 0 else 0)
        )
        v = f(key)
        if v > best:
            best, start = v, key
    if best <= _NEG:
        return None
    # Follow the recorded choices from the start to rebuild the tower.
    levels: list[tuple[int, ...]] = []
    key = start
    while key in choice:
        packed = choice[key]
        a, b = (packed >> w_rem) & m_rem, packed & m_rem
        if a:
            p = key >> s_p
            levels.append((p,) * a + (p - 1,) * b)
        key = packed >> 2 * w_rem
    return tuple(levels)
