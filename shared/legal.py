"""Listing the legal actions of a seat (§4, §6, §7), for hints, completion and bots.

Every action but ``build`` (free-form: any legal tower) is listed exactly as
:func:`shared.engine.apply` would accept it: moves, each distinct choice of one or two
castellers to recruit, each usable training (one per effect for a ``special`` tile), each
special effect, ``dismantle`` when a tower stands, and ``end_turn``.

``undo`` is never listed: whether one is possible depends on the turn's steps, which the
public view does not show, and a list built from a view (the client's) must be the list built
from the state; and bots, which choose among these actions, never undo.
"""

from __future__ import annotations

from collections import Counter

from shared.actions import Action, Dismantle, EndTurn, Move, Recruit, Special, Train
from shared.board import ADJACENT, ALL_SEGMENT, MAX_RANK, REGIONS, SPECIAL_TILE, Variant
from shared.state import GameState, Player
from shared.tower import check_tile


def recruit_choices(castellers: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Each distinct choice of one or two castellers from a region, larger size first."""
    counts = Counter(castellers)
    sizes = sorted(counts, reverse=True)
    choices: list[tuple[int, ...]] = [(s,) for s in sizes]
    for i, a in enumerate(sizes):
        for b in sizes[i:]:
            if a != b or counts[a] >= 2:
                choices.append((a, b))
    return choices


def neighbours(region: str) -> list[str]:
    """The regions adjacent to ``region`` (§2), in board order."""
    return [r for r in REGIONS if r in ADJACENT[region]]


def effects(state: GameState, player: Player) -> list[dict[str, object]]:
    """Each special effect (§4) the player can perform now, as ``effect`` + its field."""
    if player.region is None:
        return []
    out: list[dict[str, object]] = [
        {"effect": "move", "region": r} for r in neighbours(player.region)
    ]
    out += [
        {"effect": "recruit", "size": s}
        for s in sorted(set(state.region_castellers(player.region)), reverse=True)
    ]
    if player.tower:
        ranks = player.skills.as_dict()
        out += [
            {"effect": "perform", "tile": t}
            for t in state.row(player.region).tiles
            if check_tile(player.tower, ranks, t).legal
        ]
    return out


def _trainings(state: GameState, player: Player) -> list[Action]:
    segments = []
    if player.region is not None:
        segments.append(("region", player.region))
    if state.variant == Variant.NORMAL:
        segments.append(("all", ALL_SEGMENT))
    shown = state.wheel_tiles()
    out: list[Action] = []
    for choice, segment in segments:
        tile = shown[segment]
        if tile == SPECIAL_TILE:
            out += [Train(choice, **e) for e in effects(state, player)]  # type: ignore[arg-type]
        elif player.skills.rank(tile) < MAX_RANK:
            out.append(Train(choice))
    return out


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Every legal action of ``seat`` now except ``build`` and ``undo``; empty when it may
    not act."""
    if state.over or seat != state.turn:
        return []
    player = state.players[seat]
    out: list[Action] = []
    if "move" not in state.done:
        targets = REGIONS if player.region is None else neighbours(player.region)
        out += [Move(r) for r in targets]
    if "recruit" not in state.done and player.region is not None:
        out += [Recruit(c) for c in recruit_choices(state.region_castellers(player.region))]
    if "train" not in state.done:
        out += _trainings(state, player)
    if "special" not in state.done and player.tokens > 0:
        out += [Special(**e) for e in effects(state, player)]  # type: ignore[arg-type]
    if player.tower:
        out.append(Dismantle())
    out.append(EndTurn())
    return out
