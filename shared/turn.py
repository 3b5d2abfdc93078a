"""What a player does on a turn: the four actions of §4, local performances (§6) and the
free tower actions of §7.

Each public function takes the state, the seat on turn (the engine has checked it) and the
action, checks the action against the rules, and returns the new state with the events the
action caused (the engine adds :class:`~shared.events.ActionTaken` itself). Every refusal is
a :class:`~shared.errors.RuleError` with a stable code; since states are immutable, a refused
action leaves nothing behind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, NoReturn

from shared.actions import EFFECT_FIELD, Build, Dismantle, Move, Recruit, Special, Train
from shared.board import (
    ALL_SEGMENT,
    MAX_RANK,
    REGION_INDEX,
    REGION_NAMES,
    SIZES,
    SPECIAL_TILE,
    TILES,
    Variant,
    adjacent,
)
from shared.errors import RuleError
from shared.events import Event, Performed, Trained
from shared.evolve import evolve
from shared.state import GameState, Player, Taken
from shared.tower import check_tile, check_tower

Result = tuple[GameState, list[Event]]

#: §4: each of these at most once per turn (the names are those of ``GameState.done``).
ONCE_PER_TURN = ("move", "recruit", "train", "special")
_ALREADY = {
    "move": ("already_moved", "you already moved this turn"),
    "recruit": ("already_recruited", "you already recruited this turn"),
    "train": ("already_trained", "you already trained this turn"),
    "special": ("already_special", "you already took a special action this turn"),
}
_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def refuse(code: str, message: str) -> NoReturn:
    """Refuse the action: the rule ``code`` and a sentence for the player."""
    raise RuleError(message, code=code)


def _count(n: int, size: int) -> str:
    """``no 6``, ``only one 6``, ``only two 6s``: how few castellers of a size there are."""
    word = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return ("" if n == 0 else "only ") + f"{word} {size}" + ("s" if n > 1 else "")


# Shared pieces -----------------------------------------------------------------------------


def _with_player(state: GameState, player: Player, **changes: Any) -> GameState:
    players = list(state.players)
    players[player.seat] = player
    return evolve(state, players=tuple(players), **changes)


def _mark_done(state: GameState, kind: str) -> GameState:
    return evolve(state, done=(*state.done, kind))


def _once(state: GameState, kind: str) -> None:
    """§4: each action at most once per turn."""
    if kind in state.done:
        refuse(*_ALREADY[kind])


def _placed(player: Player) -> str:
    """§4: until the pawn is on the board, nothing that needs a region is allowed."""
    if player.region is None:
        refuse("pawn_not_placed", "your pawn is not on the board yet: move it to any region first")
    return player.region


def _region_id(value: object) -> str:
    if not isinstance(value, str) or value not in REGION_INDEX:
        refuse("unknown_region", f"there is no region {value!r}")
    return value


def _size(value: object) -> int:
    if type(value) is not int or value not in SIZES:
        refuse("bad_size", f"{value!r} is not a casteller size (1 to 10)")
    return value


def _tile_id(value: object) -> str:
    if not isinstance(value, str) or value not in TILES:
        refuse("unknown_tile", f"there is no local performance tile {value!r}")
    return value


def _without(pool: Iterable[int], sizes: Iterable[int]) -> tuple[int, ...]:
    rest = list(pool)
    for size in sizes:
        rest.remove(size)
    return tuple(rest)


# The effects: a move, taking castellers, completing a local performance ---------------------


def _move_to(state: GameState, seat: int, target: object) -> GameState:
    """§4: to an adjacent region, or anywhere while the pawn is not on the board."""
    region = _region_id(target)
    player = state.players[seat]
    here = player.region
    if here == region:
        refuse("already_there", f"your pawn is already in {REGION_NAMES[region]}")
    if here is not None and not adjacent(here, region):
        refuse("not_adjacent", f"{REGION_NAMES[region]} is not adjacent to {REGION_NAMES[here]}")
    return _with_player(state, evolve(player, region=region))


def _take(state: GameState, seat: int, sizes: tuple[int, ...]) -> GameState:
    """§4: move castellers of ``sizes`` from the pawn's region into the team."""
    player = state.players[seat]
    region = _placed(player)
    here = state.region_castellers(region)
    available = Counter(here)
    for size, wanted in sorted(Counter(sizes).items(), reverse=True):
        if wanted > available[size]:
            refuse(
                "not_in_region",
                f"there is {_count(available[size], size)} in {REGION_NAMES[region]}",
            )
    regions = list(state.regions)
    regions[REGION_INDEX[region]] = _without(here, sizes)
    player = evolve(player, team=(*player.team, *sizes))
    return _with_player(state, player, regions=tuple(regions))


def _perform(state: GameState, seat: int, value: object) -> Result:
    """§6: complete a tile of the pawn's region's row with the standing tower; take the tile
    and every special action token lying on that row."""
    tile_id = _tile_id(value)
    player = state.players[seat]
    region = _placed(player)
    row = state.row(region)
    if tile_id not in row.tiles:
        refuse("tile_not_in_row", f"{tile_id} is not in the row of {REGION_NAMES[region]}")
    if not player.tower:
        refuse("no_tower", "you have no tower standing: build one first")
    check = check_tile(player.tower, player.skills.as_dict(), tile_id)
    if not check.legal:
        refuse(check.code, check.reason)
    rows = list(state.rows)
    rows[REGION_INDEX[region]] = evolve(
        row, tiles=tuple(t for t in row.tiles if t != tile_id), tokens=0
    )
    player = evolve(
        player,
        tiles=(*player.tiles, Taken(tile_id, region)),
        taken_tokens=player.taken_tokens + row.tokens,
    )
    state = _with_player(state, player, rows=tuple(rows))
    return state, [Performed(seat=seat, tile=tile_id, region=region, tokens=row.tokens)]


def _effect_of(action: Train | Special) -> tuple[str, object]:
    """The effect named by a train or special action and its one argument (§4)."""
    effect = action.effect
    if not isinstance(effect, str) or effect not in EFFECT_FIELD:
        refuse("bad_effect", f"{effect!r} is not an effect: move, recruit or perform")
    field = EFFECT_FIELD[effect]
    value = getattr(action, field)
    if value is None:
        refuse("bad_effect", f"a special {effect} needs a {field}")
    for other in EFFECT_FIELD.values():
        if other != field and getattr(action, other) is not None:
            refuse("bad_effect", f"a special {effect} takes a {field}, not a {other}")
    return effect, value


def _do_effect(state: GameState, seat: int, effect: str, value: object) -> Result:
    if effect == "move":
        return _move_to(state, seat, value), []
    if effect == "recruit":
        return _take(state, seat, (_size(value),)), []
    return _perform(state, seat, value)


# The four actions of a turn (§4) --------------------------------------------------------------


def move(state: GameState, seat: int, action: Move) -> Result:
    """§4 move: to an adjacent region; the first move places the pawn anywhere."""
    _once(state, "move")
    return _mark_done(_move_to(state, seat, action.region), "move"), []


def recruit(state: GameState, seat: int, action: Recruit) -> Result:
    """§4 recruit: one or two castellers of the pawn's region join the team."""
    _once(state, "recruit")
    if not 1 <= len(action.sizes) <= 2:
        refuse("bad_recruit", "recruit one or two castellers")
    sizes = tuple(_size(size) for size in action.sizes)
    _placed(state.players[seat])
    return _mark_done(_take(state, seat, sizes), "recruit"), []


def train(state: GameState, seat: int, action: Train) -> Result:
    """§4 train: the tile the wheel shows for the pawn's region or the 'all' segment."""
    _once(state, "train")
    player = state.players[seat]
    if action.choice == "all":
        if state.variant == Variant.ADVANCED:
            refuse("all_not_allowed", "the advanced game has no 'all' segment")
        segment = ALL_SEGMENT
    elif action.choice == "region":
        segment = _placed(player)
    else:
        refuse("bad_choice", f"train with 'region' or 'all', not {action.choice!r}")
    tile = state.wheel_tiles()[segment]
    where = "the 'all' segment" if segment == ALL_SEGMENT else REGION_NAMES[segment]
    has_effect = any(
        getattr(action, f) is not None for f in ("effect", *EFFECT_FIELD.values())
    )
    if tile == SPECIAL_TILE:
        # §4: a special tile gives one special effect at once, with no token spent or placed
        if not has_effect:
            refuse(
                "effect_missing",
                f"the wheel shows a special tile for {where}: choose move, recruit or perform",
            )
        effect, value = _effect_of(action)
        _placed(player)
        state, events = _do_effect(state, seat, effect, value)
        return _mark_done(state, "train"), [Trained(seat=seat, tile=tile), *events]
    if has_effect:
        refuse(
            "not_special",
            f"the wheel shows {tile.capitalize()} for {where}, not a special tile",
        )
    if player.skills.rank(tile) >= MAX_RANK:
        refuse("rank_max", f"{tile.capitalize()} is already at rank {MAX_RANK}")
    state = _with_player(state, evolve(player, skills=player.skills.raised(tile)))
    return _mark_done(state, "train"), [Trained(seat=seat, tile=tile)]


def special(state: GameState, seat: int, action: Special) -> Result:
    """§4 special action: spend a token onto the pawn's region's row, then the effect."""
    _once(state, "special")
    effect, value = _effect_of(action)
    player = state.players[seat]
    if player.tokens < 1:
        refuse("no_tokens", "you have no special action tokens left")
    region = _placed(player)
    # §4 the spent token goes on the row of the pawn's region, before a special move
    rows = list(state.rows)
    row = rows[REGION_INDEX[region]]
    rows[REGION_INDEX[region]] = evolve(row, tokens=row.tokens + 1)
    state = _with_player(state, evolve(player, tokens=player.tokens - 1), rows=tuple(rows))
    state, events = _do_effect(state, seat, effect, value)
    return _mark_done(state, "special"), events


# Free actions (§7) --------------------------------------------------------------------------


def build(state: GameState, seat: int, action: Build) -> Result:
    """§7: replace the standing tower with a legal one made of the team's castellers."""
    levels = action.levels
    player = state.players[seat]
    # the tower's own verdict first: it also refuses what is not a tower of sizes 1-10
    check = check_tower(levels, player.skills.as_dict())
    if not check.legal:
        refuse(check.code, check.reason)
    have = Counter(player.team)
    for size, wanted in sorted(Counter(s for level in levels for s in level).items(), reverse=True):
        if wanted > have[size]:
            refuse("not_in_team", f"your team has {_count(have[size], size)}")
    return _with_player(state, evolve(player, tower=levels)), []


def dismantle(state: GameState, seat: int, action: Dismantle) -> Result:
    """§7: take the standing tower down (the castellers stay in the team)."""
    player = state.players[seat]
    if not player.tower:
        refuse("no_tower", "you have no tower to dismantle")
    return _with_player(state, evolve(player, tower=())), []
