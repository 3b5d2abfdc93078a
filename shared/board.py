"""The board's fixed data: every table of ``docs/rules.md`` as typed constants.

Nothing here changes during a game. Regions, wheel segments, festival towns, performance
tiles, prize values and the scoring tables are all named by the ids used in code and on
the wire.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import attrs

# §1 Components -------------------------------------------------------------------------

SIZES: Final = tuple(range(1, 11))
CASTELLERS_PER_SIZE: Final = 15
CASTELLER_COUNT: Final = len(SIZES) * CASTELLERS_PER_SIZE  # 150
SIZE_TOKENS_PER_SIZE: Final = 3
SPECIAL_TOKENS: Final = 7
TEAM_SIZE: Final = 7
ROUNDS: Final = 10
MIN_SEATS: Final = 2
MAX_SEATS: Final = 4
MAX_RANK: Final = 3


class Skill(StrEnum):
    BALANCE = "balance"
    BASE = "base"
    MIX = "mix"
    STRENGTH = "strength"
    WIDTH = "width"


SKILLS: Final = tuple(Skill)

#: The 8 board skill tiles (§1): one per skill and three `special`.
SPECIAL_TILE: Final = "special"
BOARD_SKILL_TILES: Final = (*[s.value for s in SKILLS], SPECIAL_TILE, SPECIAL_TILE, SPECIAL_TILE)


class Variant(StrEnum):
    NORMAL = "normal"
    ADVANCED = "advanced"


# §2 The map ---------------------------------------------------------------------------

#: Region ids in board order, with their names.
REGION_NAMES: Final = {
    "alt": "Alt Pirineu",
    "gir": "Girona",
    "cen": "Catalunya Central",
    "lle": "Lleida",
    "bcn": "Barcelona",
    "tar": "Tarragona",
    "ebr": "Terres de l'Ebre",
}
REGIONS: Final = tuple(REGION_NAMES)
REGION_INDEX: Final = {r: i for i, r in enumerate(REGIONS)}

_BORDERS: Final = (
    ("alt", "gir"), ("alt", "cen"), ("alt", "lle"), ("gir", "cen"), ("gir", "bcn"),
    ("cen", "bcn"), ("cen", "lle"), ("cen", "tar"), ("lle", "tar"), ("lle", "ebr"),
    ("bcn", "tar"), ("tar", "ebr"),
)
#: The dashed coastal route counts as adjacency too (§2).
_COASTAL: Final = (("bcn", "ebr"),)

ADJACENT: Final[dict[str, frozenset[str]]] = {
    r: frozenset(
        b if a == r else a for a, b in (*_BORDERS, *_COASTAL) if r in (a, b)
    )
    for r in REGIONS
}


def adjacent(a: str, b: str) -> bool:
    """True when regions ``a`` and ``b`` share a border or the coastal route (§2)."""
    return b in ADJACENT.get(a, ())


#: Castellers dealt to each region at setup = its refill level (§3.2), by player count.
REFILL_LEVEL: Final = {2: 3, 3: 4, 4: 5}

# §3/§4 The skill wheel ------------------------------------------------------------------

ALL_SEGMENT: Final = "all"
NONE_SEGMENT: Final = "none"
#: Wheel segments clockwise (§3.3); the last is `all` (normal) or `none` (advanced).
WHEEL_REGIONS: Final = ("alt", "gir", "bcn", "tar", "ebr", "lle", "cen")


def wheel_segments(variant: str) -> tuple[str, ...]:
    """The 8 segment names for a variant, in wheel order."""
    last = ALL_SEGMENT if variant == Variant.NORMAL else NONE_SEGMENT
    return (*WHEEL_REGIONS, last)


def wheel_tile_index(segment: int, round_: int) -> int:
    """Ring position shown by ``segment`` in round ``round_`` (§4): (i + r − 1) mod 8."""
    return (segment + round_ - 1) % 8


# §5 Festivals ---------------------------------------------------------------------------

FESTIVAL_ROUNDS: Final = tuple(range(3, 11))
#: Festivals per round, by player count (§5 table).
FESTIVALS_PER_ROUND: Final = {
    2: {3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1},
    3: {3: 1, 4: 1, 5: 2, 6: 2, 7: 1, 8: 1, 9: 2, 10: 2},
    4: {3: 1, 4: 2, 5: 2, 6: 2, 7: 1, 8: 2, 9: 2, 10: 2},
}


def festival_type(round_: int) -> str:
    """Type I tiles serve rounds 3–6, type II rounds 7–10 (§5)."""
    return "I" if round_ <= 6 else "II"


#: Festival towns by region and type (§5).
TOWNS: Final = {
    "alt": {"I": "La Seu d'Urgell", "II": "Puigcerdà"},
    "gir": {"I": "Girona", "II": "Figueres"},
    "cen": {"I": "Manresa", "II": "Vic"},
    "lle": {"I": "Lleida", "II": "Balaguer"},
    "bcn": {"I": "Barcelona", "II": "Vilafranca del Penedès"},
    "tar": {"I": "Valls", "II": "Tarragona"},
    "ebr": {"I": "Tortosa", "II": "Amposta"},
}

FESTIVAL_MIN_LEVELS: Final = 4


class Prize(StrEnum):
    TROPHY = "trophy"
    MEDAL = "medal"
    RIBBON = "ribbon"


PRIZES: Final = tuple(Prize)
PRIZE_SUPPLY: Final = {Prize.TROPHY: 12, Prize.MEDAL: 14, Prize.RIBBON: 14}
PRIZE_POINTS: Final[dict[str, int]] = {Prize.TROPHY: 5, Prize.MEDAL: 3, Prize.RIBBON: 1}
#: Prize for each rank (1-based) by player count (§5.3); missing rank = no prize.
PRIZE_BY_RANK: Final = {
    2: (Prize.TROPHY,),
    3: (Prize.TROPHY, Prize.MEDAL),
    4: (Prize.TROPHY, Prize.MEDAL, Prize.RIBBON),
}

# §6 Local performances ------------------------------------------------------------------


@attrs.frozen
class PerformanceTile:
    """A local performance tile (§6): a tower shape or a skill exhibition."""

    id: str
    kind: str  # "shape" or "exhibition"
    points: int
    shape: tuple[int, ...] = ()  # castellers per level, bottom to top (shape tiles)
    skills: tuple[str, ...] = ()  # skills the tower must use (exhibition tiles)

    def describe(self) -> str:
        """A short player-facing description, e.g. ``shape 3·2·1`` or ``4 levels: mix+strength``."""
        if self.kind == "shape":
            return "shape " + "·".join(map(str, self.shape))
        return f"{self.points} levels: " + "+".join(self.skills)


def _shape(n: int, points: int, *counts: int) -> PerformanceTile:
    return PerformanceTile(f"lp{n:02d}", "shape", points, shape=counts)


def _exhibition(n: int, points: int, *skills: str) -> PerformanceTile:
    return PerformanceTile(f"lp{n:02d}", "exhibition", points, skills=skills)


_TILES: Final = (
    _shape(1, 2, 2, 1),
    _shape(2, 2, 3, 1),
    _shape(3, 2, 3, 2),
    _shape(4, 3, 3, 2, 1),
    _shape(5, 3, 2, 2, 1),
    _shape(6, 3, 3, 3, 1),
    _shape(7, 3, 3, 2, 2),
    _shape(8, 4, 4, 2, 1),
    _shape(9, 4, 3, 3, 2),
    _shape(10, 4, 3, 2, 1, 1),
    _shape(11, 5, 4, 3, 2, 1),
    _shape(12, 5, 3, 3, 2, 1),
    _shape(13, 5, 5, 3, 2, 1),
    _shape(14, 5, 2, 2, 2, 1),
    _shape(15, 6, 6, 4, 2, 1),
    _shape(16, 7, 4, 4, 3, 2, 1),
    _exhibition(17, 2, "mix"),
    _exhibition(18, 2, "strength"),
    _exhibition(19, 2, "balance"),
    _exhibition(20, 2, "width"),
    _exhibition(21, 3, "mix"),
    _exhibition(22, 3, "strength"),
    _exhibition(23, 3, "balance"),
    _exhibition(24, 3, "base"),
    _exhibition(25, 3, "width"),
    _exhibition(26, 4, "mix", "strength"),
    _exhibition(27, 4, "balance", "width"),
    _exhibition(28, 4, "base", "mix"),
    _exhibition(29, 4, "strength", "balance"),
    _exhibition(30, 5, "width", "base"),
    _exhibition(31, 5, "mix", "balance"),
    _exhibition(32, 5, "strength", "width"),
)
TILES: Final[dict[str, PerformanceTile]] = {t.id: t for t in _TILES}
TILES_PER_ROW: Final = 2

# §8 End of a round ---------------------------------------------------------------------

#: Rounds after which the regions are refilled from the bag (§8.2).
REFILL_ROUNDS: Final = (2, 4, 6, 8)

# §9 Final scoring -----------------------------------------------------------------------

#: Region diversity points by number of regions with anything taken (0..7).
DIVERSITY_POINTS: Final = (0, 0, 1, 3, 5, 7, 10, 14)
SIZE_TOKEN_FIRST: Final = 2
SIZE_TOKEN_REPEAT: Final = 1
