"""Player actions (§4 and §7 of ``docs/rules.md``) as small frozen value types.

Each action class has a ``KIND`` — the ``kind`` used on the wire — and fields named exactly as
in ``docs/protocol.md``. ``Train`` and ``Special`` carry their effect flat (``effect`` plus one
of ``region`` / ``size`` / ``tile``), as the wire does; the engine checks the combination.

A game's list of actions also holds its resignations (:class:`Resign`, §10 "Resigning"):
not an action of the board game, and never sent as an ``action`` request (it has a request of
its own), but kept where it happened among the actions, so that a replay of the list goes
the way the game went. :data:`RECORDED_TYPES` is what such a list may hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import attrs


def _sizes(value: Iterable[int]) -> tuple[int, ...]:
    # A typed converter: with a bare ``tuple`` the checker would not know the item type.
    return tuple(value)


def _levels(value: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(level) for level in value)


@attrs.frozen
class Move:
    """Move your pawn to an adjacent region (anywhere on your first move)."""

    KIND: ClassVar[str] = "move"
    region: str


@attrs.frozen
class Recruit:
    """Take one or two castellers of the given sizes from your pawn's region."""

    KIND: ClassVar[str] = "recruit"
    sizes: tuple[int, ...] = attrs.field(converter=_sizes)


@attrs.frozen
class Train:
    """Use the skill tile the wheel shows for your region (``region``) or ``all``.

    When that tile is ``special``, ``effect`` and its field say which free effect to perform.
    """

    KIND: ClassVar[str] = "train"
    choice: str
    effect: str | None = None
    region: str | None = None
    size: int | None = None
    tile: str | None = None


@attrs.frozen
class Special:
    """Spend a special action token for one effect: ``move``, ``recruit`` or ``perform``."""

    KIND: ClassVar[str] = "special"
    effect: str
    region: str | None = None
    size: int | None = None
    tile: str | None = None


@attrs.frozen
class Build:
    """Build (or rebuild) your tower: levels of sizes, bottom level first (§7)."""

    KIND: ClassVar[str] = "build"
    levels: tuple[tuple[int, ...], ...] = attrs.field(converter=_levels)


@attrs.frozen
class Dismantle:
    """Take your tower down; the castellers stay in your team."""

    KIND: ClassVar[str] = "dismantle"


@attrs.frozen
class EndTurn:
    """End your turn."""

    KIND: ClassVar[str] = "end_turn"


@attrs.frozen
class Undo:
    """Take back your last action of this turn (repeated, back to the turn's start)."""

    KIND: ClassVar[str] = "undo"


Action = Move | Recruit | Train | Special | Build | Dismantle | EndTurn | Undo

ACTION_TYPES: dict[str, type[Action]] = {
    cls.KIND: cls for cls in (Move, Recruit, Train, Special, Build, Dismantle, EndTurn, Undo)
}


@attrs.frozen
class Resign:
    """``seat`` concedes the game (docs/rules.md §10, "Resigning"), on its turn or not.

    ``ends``: the game ends with it whoever is left (the room says so when no one is left to
    play it but bots); it also ends when fewer than two players have not resigned."""

    KIND: ClassVar[str] = "resign"
    ends: bool = False


#: What a game's list of actions holds: actions, and resignations where they happened.
Recorded = Action | Resign

#: The kinds a game's list of actions (the store's, a record file's) may hold.
RECORDED_TYPES: dict[str, type[Recorded]] = {**ACTION_TYPES, Resign.KIND: Resign}

#: Effects of a special action (§4) and the field each one needs.
EFFECT_FIELD: dict[str, str] = {"move": "region", "recruit": "size", "perform": "tile"}


def action_fields(action: Recorded) -> dict[str, Any]:
    """The action as its wire fields: ``kind`` plus every field that is set.

    Tuples become lists so that the result is plain msgpack data.
    """
    out: dict[str, Any] = {"kind": action.KIND}
    for field in attrs.fields(type(action)):
        value = getattr(action, field.name)
        if value is None:
            continue
        if field.name == "levels":
            value = [list(level) for level in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[field.name] = value
    return out
