"""Setting up a game (§3 of ``docs/rules.md``): the one place where the game uses chance.

Everything random — the bag's order, the wheel's ring, the festival calendar and its size
tokens, the local performance rows and the first player — is drawn here, in the order of §3,
from one generator seeded by the game's seed. Nothing later needs randomness: refills draw
from the front of the stored bag. So a game is its seed plus its list of actions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from shared.board import (
    BOARD_SKILL_TILES,
    CASTELLERS_PER_SIZE,
    FESTIVAL_ROUNDS,
    FESTIVALS_PER_ROUND,
    MAX_SEATS,
    MIN_SEATS,
    REFILL_LEVEL,
    REGIONS,
    SIZE_TOKENS_PER_SIZE,
    SIZES,
    SPECIAL_TOKENS,
    TEAM_SIZE,
    TILES,
    TILES_PER_ROW,
    TOWNS,
    Variant,
    festival_type,
)
from shared.state import Festival, GameState, Player, Row


def _draw(bag: list[int], count: int) -> tuple[int, ...]:
    """Take ``count`` castellers from the front of the bag (fewer if it runs out)."""
    drawn = tuple(bag[:count])
    del bag[:count]
    return tuple(sorted(drawn, reverse=True))


def _calendar(seats: int, rng: random.Random) -> tuple[Festival, ...]:
    """§3.4: one shuffled town tile per calendar space, then one size token under each."""
    stacks = {kind: list(REGIONS) for kind in ("I", "II")}
    for stack in stacks.values():
        rng.shuffle(stack)
    spaces = [
        (round_, festival_type(round_))
        for round_ in FESTIVAL_ROUNDS
        for _ in range(FESTIVALS_PER_ROUND[seats][round_])
    ]
    regions = [stacks[kind].pop(0) for _, kind in spaces]
    size_tokens = [size for size in SIZES for _ in range(SIZE_TOKENS_PER_SIZE)]
    rng.shuffle(size_tokens)
    return tuple(
        Festival(round=round_, region=region, town=TOWNS[region][kind], type=kind, size=size)
        for (round_, kind), region, size in zip(spaces, regions, size_tokens, strict=False)
    )


#: A new game's seed is drawn from 0 to 2**SEED_BITS - 1: an integer every JSON reader holds
#: exactly (a double's 53 bits), as every integer on the wire must be. Games stored before
#: drew 63 bits: their records carry such a seed as a decimal string (``shared.record``).
SEED_BITS = 53


def new_game(names: Sequence[str], variant: str = "normal", seed: int = 0) -> GameState:
    """The whole setup of §3 for players ``names`` (seats 0..n-1 in that order).

    Raises ``ValueError`` for a seat count outside 2–4 or an unknown variant: those are the
    caller's mistakes, not moves a player made.
    """
    seats = len(names)
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise ValueError(f"a game has {MIN_SEATS} to {MAX_SEATS} players, not {seats}")
    if variant not in tuple(Variant):
        raise ValueError(f"unknown variant {variant!r}: 'normal' or 'advanced'")
    rng = random.Random(seed)

    # §3.1 every casteller in the bag, shuffled
    bag = [size for size in SIZES for _ in range(CASTELLERS_PER_SIZE)]
    rng.shuffle(bag)
    # §3.2 deal to each region in board order; the count is the refill level
    refill = REFILL_LEVEL[seats]
    regions = tuple(_draw(bag, refill) for _ in REGIONS)
    # §3.3 the 8 board skill tiles in ring positions 0-7
    wheel = list(BOARD_SKILL_TILES)
    rng.shuffle(wheel)
    # §3.4 festival calendar
    festivals = _calendar(seats, rng)
    # §3.5 two face-up local performance tiles per row; the rest leave the game
    tiles = list(TILES)
    rng.shuffle(tiles)
    rows = tuple(
        Row(tiles=tuple(tiles[i * TILES_PER_ROW:(i + 1) * TILES_PER_ROW]))
        for i in range(len(REGIONS))
    )
    # §3.6 each player's pieces and a team of 7 from the bag
    players = tuple(
        Player(seat=seat, name=name, team=_draw(bag, TEAM_SIZE), tokens=SPECIAL_TOKENS)
        for seat, name in enumerate(names)
    )
    # §3.7 the first player at random
    first = rng.randrange(seats)
    return GameState(
        variant=str(variant),
        players=players,
        bag=tuple(bag),
        regions=regions,
        refill=refill,
        wheel=tuple(wheel),
        festivals=festivals,
        rows=rows,
        round=1,
        first=first,
        turn=first,
    )
