"""The game state of ``docs/rules.md`` as frozen attrs classes.

A :class:`GameState` is a complete, immutable snapshot; the engine returns a new one for
every applied action (changes go through :func:`shared.evolve.evolve`). Per-region data is
kept in tuples indexed like :data:`shared.board.REGIONS` (board order). The bag's order is
part of the state because refills draw from it, but it is secret: only its length is ever
shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

import attrs

from shared.actions import Action
from shared.board import REGION_INDEX, REGIONS, SKILLS, wheel_segments, wheel_tile_index
from shared.evolve import evolve


def _sorted_desc(sizes: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(sizes, reverse=True))


@attrs.frozen
class Skills:
    """A player's five skill ranks, 0–3 (§1)."""

    balance: int = 0
    base: int = 0
    mix: int = 0
    strength: int = 0
    width: int = 0

    def rank(self, skill: str) -> int:
        return getattr(self, skill)

    def as_dict(self) -> dict[str, int]:
        return {s.value: getattr(self, s.value) for s in SKILLS}

    def raised(self, skill: str) -> Skills:
        return evolve(self, **{skill: getattr(self, skill) + 1})


#: What a :class:`Taken` holds: a tile id or a prize name (str), or a size (int).
Item = TypeVar("Item", str, int)


@attrs.frozen
class Taken(Generic[Item]):
    """One thing a player took, with the region it belongs to (§5, §6, §9)."""

    item: Item
    region: str


@attrs.frozen
class Player:
    """One seat's pieces: pawn, team, standing tower, skills, tokens and what it took."""

    seat: int
    name: str
    region: str | None = None
    team: tuple[int, ...] = attrs.field(default=(), converter=_sorted_desc)
    tower: tuple[tuple[int, ...], ...] = ()
    skills: Skills = Skills()
    tokens: int = 7
    best: int = 0
    tiles: tuple[Taken[str], ...] = ()  # performance tile ids
    prizes: tuple[Taken[str], ...] = ()  # prize names
    sizes: tuple[Taken[int], ...] = ()  # size tokens
    taken_tokens: int = 0


@attrs.frozen
class Festival:
    """A festival on the calendar (§5): where, when, which size token, resolved or not."""

    round: int
    region: str
    town: str
    type: str
    size: int
    done: bool = False


@attrs.frozen
class Row:
    """A region's local performance row (§6): face-up tiles and tokens lying there."""

    tiles: tuple[str, ...] = ()
    tokens: int = 0


@attrs.frozen
class Prizes:
    """The prize supply left (§5.3)."""

    trophy: int = 12
    medal: int = 14
    ribbon: int = 14

    def left(self, prize: str) -> int:
        return getattr(self, prize)

    def take(self, prize: str) -> Prizes:
        return evolve(self, **{prize: getattr(self, prize) - 1})


@attrs.frozen
class Score:
    """A player's final score in the five categories of §9."""

    seat: int
    tower: int
    diversity: int
    prizes: int
    sizes: int
    performances: int

    @property
    def total(self) -> int:
        return self.tower + self.diversity + self.prizes + self.sizes + self.performances


@attrs.frozen
class TurnStep:
    """One action of the turn under way and the whole state just before it: what an
    ``undo`` takes back and what it goes back to."""

    before: GameState
    action: Action


@attrs.frozen
class GameState:
    """Everything about one game at one moment.

    ``round`` is 1–10 while playing; ``turn`` is the seat to act, or None once the game is
    over. ``done`` lists the once-per-turn actions (§4) the current seat has taken.
    ``resigned`` lists the seats that resigned (§10, "Resigning"), in the order they did.

    ``undo`` is the turn's last step (None at the start of a turn): its ``before`` is the
    state an ``undo`` returns, itself holding the step before, back to the turn's start. It
    is bookkeeping of the engine, not part of the game's public or secret facts: it takes no
    part in equality, hashing or ``repr`` (two states of the same position are equal however
    the turn got there), and nothing shows it (the view, the codec).
    """

    variant: str
    players: tuple[Player, ...]
    bag: tuple[int, ...]  # secret order; refills draw from the front
    regions: tuple[tuple[int, ...], ...]  # castellers per region, board order
    refill: int  # each region's refill level (§3.2)
    wheel: tuple[str, ...]  # board skill tile at each ring position 0–7 (§3.3)
    festivals: tuple[Festival, ...]  # calendar order
    rows: tuple[Row, ...]  # local performance rows, board order
    prizes: Prizes = Prizes()
    round: int = 1
    first: int = 0  # seat holding the first-player marker
    turn: int | None = 0
    turns_taken: int = 0  # turns finished in this round
    done: tuple[str, ...] = ()
    scores: tuple[Score, ...] | None = None
    winners: tuple[int, ...] | None = None
    resigned: tuple[int, ...] = ()
    undo: TurnStep | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def seats(self) -> int:
        return len(self.players)

    @property
    def over(self) -> bool:
        return self.scores is not None

    def region_castellers(self, region: str) -> tuple[int, ...]:
        return self.regions[REGION_INDEX[region]]

    def row(self, region: str) -> Row:
        return self.rows[REGION_INDEX[region]]

    def region_map(self) -> dict[str, tuple[int, ...]]:
        return dict(zip(REGIONS, self.regions, strict=True))

    def wheel_tiles(self) -> dict[str, str]:
        """What the wheel shows this round (§4): segment name → board skill tile."""
        return {
            segment: self.wheel[wheel_tile_index(i, self.round)]
            for i, segment in enumerate(wheel_segments(self.variant))
        }
