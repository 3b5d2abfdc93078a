"""Towers: legality under a player's skills (§7), the skills a tower uses, the local
performance tiles a tower completes (§6) and its festival score (§5.2).

Everything here is a pure function of a tower and skill ranks; nothing checks that the
castellers belong to the player's team (the rules engine does that).

A *tower* is a sequence of levels, bottom level first; a level is a sequence of casteller
sizes. *Ranks* are a mapping from skill name (``balance``, ``base``, ``mix``, ``strength``,
``width``) to rank, a missing skill counting as rank 0; a :class:`shared.state.Skills` (or
anything with an ``as_dict()`` method returning such a mapping) is accepted as well.

The public entry points return a :class:`TowerCheck` and never raise for a bad tower; they
raise :class:`ValueError` only for a programming mistake (an unknown skill name in
``ranks`` or ``require``, an unknown tile id).

Rule codes of an illegal :class:`TowerCheck` (stable, used on the wire as an error's rule):

=========================  ======================================================================
``tower_empty``            the tower has no level
``tower_empty_level``      a level holds no casteller
``tower_bad_size``         a level holds something that is not a casteller size (1–10)
``tower_mixed_sizes``      a level mixes sizes more than one apart (no skill allows it)
``tower_not_smaller``      a level holds a casteller bigger than one in the level below
``tower_not_narrower``     a level has more castellers than the level below
``tower_missing_skill``    the tower needs more Mix, Strength or Balance than the player has
``tower_too_wide``         the levels are wider than Width and Base together allow
``tower_skill_unused``     (with ``require``) no single reading uses all the required skills
``tile_wrong_shape``       (:func:`check_tile`) the counts per level are not the tile's shape
``tile_wrong_height``      (:func:`check_tile`) not exactly as many levels as the tile's points
``tile_skill_unused``      (:func:`check_tile`) no single reading uses every skill of the tile
=========================  ======================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from shared.board import FESTIVAL_MIN_LEVELS, MAX_RANK, SIZES, SKILLS, TILES, PerformanceTile
from shared.errors import RuleError

Levels = Sequence[Sequence[int]]

#: Skill names in a fixed order (the order of :data:`shared.board.SKILLS`).
SKILL_NAMES: Final = tuple(s.value for s in SKILLS)
#: The base width limit without Width (§7 rule 4).
BASE_WIDTH: Final = 3
_MIN_SIZE: Final = min(SIZES)
_MAX_SIZE: Final = max(SIZES)


@attrs.frozen
class TowerCheck:
    """The verdict on a tower.

    ``legal`` says whether the tower stands; when it does not, ``code`` is a stable rule
    code (see the module docstring), ``reason`` a sentence for the player and ``level`` the
    1-based level blamed (0 when the whole tower is to blame). When it is legal, ``uses`` are
    the skills of the reading chosen: the reading with the fewest skills that still uses every
    required skill (ties go to the alphabetically first set of skill names), and ``readings``
    lists the skill sets of every legal reading (§7 "uses"), smallest first.
    """

    legal: bool
    reason: str = ""
    code: str = ""
    uses: frozenset[str] = frozenset()
    readings: tuple[frozenset[str], ...] = ()
    level: int = 0

    def error(self) -> RuleError:
        """The :class:`RuleError` that refuses this tower (only for an illegal check)."""
        if self.legal:
            raise ValueError("a legal tower has no error")
        return RuleError(self.reason, code=self.code)

    def raise_if_illegal(self) -> None:
        """Raise :meth:`error` when the tower is illegal; do nothing when it is legal."""
        if not self.legal:
            raise self.error()


def _refuse(code: str, reason: str, level: int = 0) -> TowerCheck:
    return TowerCheck(False, reason=reason, code=code, level=level)


# Inputs -----------------------------------------------------------------------------------


def normalise_ranks(ranks: Mapping[str, int] | Any) -> dict[str, int]:
    """Ranks as a dict with all five skills (missing = 0); accepts a mapping or ``Skills``."""
    if not isinstance(ranks, Mapping) and hasattr(ranks, "as_dict"):
        ranks = ranks.as_dict()
    out = dict.fromkeys(SKILL_NAMES, 0)
    for skill, rank in ranks.items():
        if skill not in out:
            raise ValueError(f"unknown skill {skill!r}")
        out[skill] = int(rank)
    return out


def _skill_set(skills: Iterable[str]) -> frozenset[str]:
    if isinstance(skills, str):
        skills = (skills,)
    out = frozenset(skills)
    unknown = out - set(SKILL_NAMES)
    if unknown:
        raise ValueError(f"unknown skill(s) {sorted(unknown)!r}")
    return out


def _as_tower(levels: Any) -> tuple[tuple[tuple[int, ...], ...], TowerCheck | None]:
    """The tower as tuples, or the check that refuses its form."""
    try:
        tower = tuple(tuple(level) for level in levels)
    except TypeError:
        return (), _refuse("tower_bad_size", "a tower is a list of levels, each a list of sizes")
    if not tower:
        return tower, _refuse("tower_empty", "a tower needs at least one level")
    for i, level in enumerate(tower, 1):
        if not level:
            return tower, _refuse(
                "tower_empty_level", f"level {i} is empty: every level needs a casteller", i
            )
        for size in level:
            if type(size) is not int or not _MIN_SIZE <= size <= _MAX_SIZE:
                return tower, _refuse(
                    "tower_bad_size",
                    f"level {i} holds {size!r}, which is not a casteller size"
                    f" ({_MIN_SIZE} to {_MAX_SIZE})",
                    i,
                )
    return tower, None


# Words --------------------------------------------------------------------------------------


def _title(skill: str) -> str:
    return skill.capitalize()


def _and(items: Sequence[object], word: str = "and") -> str:
    words = [str(x) for x in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {word} " + words[-1]


def _levels_phrase(indices: Sequence[int]) -> str:
    return ("level " if len(indices) == 1 else "levels ") + _and(indices)


def describe_tower(levels: Levels) -> str:
    """A compact text form, e.g. ``[7,7,7] [5,5] [2]`` (bottom level first)."""
    return " ".join("[" + ",".join(map(str, level)) + "]" for level in levels)


def shape_of(levels: Levels) -> tuple[int, ...]:
    """Castellers per level, bottom to top (what a shape tile pictures, §6)."""
    return tuple(len(level) for level in levels)


def _shape_text(shape: Sequence[int]) -> str:
    return "·".join(map(str, shape))


# §7 readings ------------------------------------------------------------------------------


def width_readings(counts: Sequence[int], width: int, base: int) -> list[tuple[int, int]]:
    """Every legal (base levels, width uses) reading of a tower's counts (§7 "uses").

    ``counts`` must not grow upwards (rule 3 already checked). A reading uses width only as
    far as needed and counts a level as base only if it is wider than 3 + width uses, so the
    base levels are always the ``k`` bottom levels, each wider than every level above them.
    """
    out = []
    n = len(counts)
    for k in range(min(base, n) + 1):
        rest = counts[k] if k < n else 0
        w = max(0, rest - BASE_WIDTH)
        if w > width:
            continue
        if k and counts[k - 1] <= BASE_WIDTH + w:
            continue
        out.append((k, w))
    return out


def _reading_sets(forced: frozenset[str], readings: list[tuple[int, int]]) -> tuple:
    sets = {
        forced | ({"base"} if k else set()) | ({"width"} if w else set()) for k, w in readings
    }
    return tuple(sorted((frozenset(s) for s in sets), key=lambda s: (len(s), sorted(s))))


def _what(skill: str, found: list[int], tower: Sequence[Sequence[int]]) -> str:
    """What a tower does that needs ``skill``, naming the 1-based levels ``found``."""
    if len(found) == 1:
        i = found[0]
        level = tower[i - 1]
        return {
            "mix": f"level {i} mixes sizes {max(level)} and {min(level)}",
            "strength": f"level {i} stands on castellers of the same size",
            "balance": f"level {i} has as many castellers as level {i - 1}",
        }[skill]
    where = _levels_phrase(found)
    return {
        "mix": f"{where} mix two sizes",
        "strength": f"{where} stand on castellers of the same size",
        "balance": f"{where} have as many castellers as the level below them",
    }[skill]


def _shortfall(skill: str, rank: int, need: int, what: str) -> str:
    if rank == 0 and need == 1:
        return f"{what}: that needs {_title(skill)}"
    if need > MAX_RANK:
        return (
            f"{what}: that needs {_title(skill)} rank {need}, beyond the top rank {MAX_RANK}"
            " (each rank lets one level do it)"
        )
    return (
        f"{what}: that needs {_title(skill)} rank {need}"
        f" (each rank lets one level do it; you have rank {rank})"
    )


def _too_wide(counts: Sequence[int], width: int, base: int) -> TowerCheck:
    limit = BASE_WIDTH + width
    wide = [i for i, c in enumerate(counts, 1) if c > limit]
    if len(wide) == 1:
        what = f"level {wide[0]} is {counts[wide[0] - 1]} wide"
    else:
        what = f"{_levels_phrase(wide)} are {_and([counts[i - 1] for i in wide])} wide"
    if width == 0 and base == 0:
        why = "that needs Width or Base"
    else:
        allows = (
            f"a level holds at most {BASE_WIDTH} without Width"
            if width == 0
            else f"your Width {width} lets a level hold {limit}"
        )
        if base:
            plural = "s" if base > 1 else ""
            why = f"{allows}, and your Base {base} frees only {base} level{plural}"
        else:
            need = max(counts) - BASE_WIDTH
            why = f"{allows}; " + (
                f"that needs Width {need} or Base" if need <= MAX_RANK else "that needs Base"
            )
    return _refuse("tower_too_wide", f"{what}: {why}", wide[0])


# §7 legality --------------------------------------------------------------------------------


def check_tower(
    levels: Levels, ranks: Mapping[str, int] | Any, require: Iterable[str] = ()
) -> TowerCheck:
    """Check a tower against §7 for a player with skill ``ranks``.

    ``levels`` lists the levels bottom first, each a sequence of sizes. ``ranks`` maps skill
    names to ranks (missing = 0) or is a ``Skills``. With ``require`` (skill names), the tower
    is legal only if one single reading uses every required skill at once (a skill exhibition,
    §6). Returns a :class:`TowerCheck`; a bad tower is never an exception.
    """
    rank = normalise_ranks(ranks)
    required = _skill_set(require)
    tower, problem = _as_tower(levels)
    if problem is not None:
        return problem

    # Rules 1–3 as far as no skill can bend them.
    for i, level in enumerate(tower, 1):
        lo, hi = min(level), max(level)
        if hi - lo > 1:
            return _refuse(
                "tower_mixed_sizes",
                f"level {i} mixes sizes {hi} and {lo}: a level may only mix sizes one apart,"
                " with Mix",
                i,
            )
    for i in range(1, len(tower)):
        below, above = tower[i - 1], tower[i]
        if max(above) > min(below):
            return _refuse(
                "tower_not_smaller",
                f"level {i + 1} holds size {max(above)} above size {min(below)} in level {i}:"
                " each level must be smaller than the level below",
                i + 1,
            )
        if len(above) > len(below):
            return _refuse(
                "tower_not_narrower",
                f"level {i + 1} has {len(above)} castellers above {len(below)} in level {i}:"
                " a level may never be wider than the level below",
                i + 1,
            )

    # Mix, Strength and Balance uses are fixed by the tower itself.
    mixed = [i for i, level in enumerate(tower, 1) if max(level) != min(level)]
    strong = [i + 1 for i in range(1, len(tower)) if max(tower[i]) == min(tower[i - 1])]
    balanced = [i + 1 for i in range(1, len(tower)) if len(tower[i]) == len(tower[i - 1])]
    for skill, found in (("mix", mixed), ("strength", strong), ("balance", balanced)):
        if len(found) > rank[skill]:
            reason = _shortfall(skill, rank[skill], len(found), _what(skill, found, tower))
            return _refuse("tower_missing_skill", reason, found[rank[skill]])

    # Width and Base: the readings differ only in these two (§7 "uses").
    counts = shape_of(tower)
    readings = width_readings(counts, rank["width"], rank["base"])
    if not readings:
        return _too_wide(counts, rank["width"], rank["base"])
    forced = frozenset(
        skill for skill, found in (("mix", mixed), ("strength", strong), ("balance", balanced))
        if found
    )
    sets = _reading_sets(forced, readings)
    fitting = [s for s in sets if required <= s]
    if not fitting:
        return _refuse("tower_skill_unused", _unused_reason(required, sets))
    return TowerCheck(True, uses=fitting[0], readings=sets)


def _unused_reason(required: frozenset[str], sets: tuple[frozenset[str], ...]) -> str:
    anywhere = frozenset().union(*sets)
    missing = sorted(required - anywhere)
    if missing:
        return "the tower does not use " + _and([_title(s) for s in missing], "or")
    return "the tower cannot use " + _and([_title(s) for s in sorted(required)]) + " at once"


# §6 local performances ------------------------------------------------------------------------


def _tile(tile: PerformanceTile | str) -> PerformanceTile:
    if isinstance(tile, PerformanceTile):
        return tile
    try:
        return TILES[tile]
    except KeyError:
        raise ValueError(f"unknown performance tile {tile!r}") from None


def check_tile(
    levels: Levels, ranks: Mapping[str, int] | Any, tile: PerformanceTile | str
) -> TowerCheck:
    """Check whether a tower completes a local performance tile (§6).

    The tower must be legal (§7). A shape tile needs exactly its castellers per level; a skill
    exhibition needs exactly ``points`` levels and one reading that uses every listed skill.
    ``tile`` is a :class:`PerformanceTile` or its id. Team membership is not checked.
    """
    tile = _tile(tile)
    if tile.kind == "shape":
        check = check_tower(levels, ranks)
        if not check.legal:
            return check
        shape = shape_of(levels)
        if shape != tile.shape:
            return _refuse(
                "tile_wrong_shape",
                f"{tile.id} needs levels of {_shape_text(tile.shape)} castellers;"
                f" your tower is {_shape_text(shape)}",
            )
        return check
    check = check_tower(levels, ranks)
    if not check.legal:
        return check
    if len(levels) != tile.points:
        return _refuse(
            "tile_wrong_height",
            f"{tile.id} needs a tower of exactly {tile.points} levels; yours has {len(levels)}",
        )
    check = check_tower(levels, ranks, require=tile.skills)
    if not check.legal:
        wanted = _and([_title(s) for s in tile.skills])
        return _refuse(
            "tile_skill_unused",
            f"{tile.id} needs a tower that uses {wanted}; "
            + check.reason.replace("the tower", "yours", 1),
        )
    return check


# §5.2 festivals ---------------------------------------------------------------------------------

def enters_festival(levels: Levels, size: int) -> bool:
    """True if a (legal) tower may take part in a festival with size token ``size`` (§5.1)."""
    return len(levels) >= FESTIVAL_MIN_LEVELS and any(size in level for level in levels)


def festival_score(levels: Levels, size: int) -> int:
    """Festival score (§5.2): 1 per level + 1 per casteller of the festival's size."""
    return len(levels) + sum(level.count(size) for level in map(tuple, levels))
