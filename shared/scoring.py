"""Final scoring (§9 of ``docs/rules.md``): the five categories, who wins, and the final
order (a player who resigned, §10 "Resigning", wins nothing and ranks last)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from shared.board import (
    DIVERSITY_POINTS,
    PRIZE_POINTS,
    SIZE_TOKEN_FIRST,
    SIZE_TOKEN_REPEAT,
    TILES,
)
from shared.state import Player, Score, Taken


def regions_taken(player: Player) -> set[str]:
    """§9.2: the regions in which the player took a tile, a prize or a size token."""
    took: tuple[Taken[str] | Taken[int], ...] = (*player.tiles, *player.prizes, *player.sizes)
    return {taken.region for taken in took}


def diversity_points(regions: int) -> int:
    """§9.2: 0-1 regions 0, 2 → 1, 3 → 3, 4 → 5, 5 → 7, 6 → 10, 7 → 14."""
    return DIVERSITY_POINTS[regions]


def size_token_points(sizes: Sequence[int]) -> int:
    """§9.4: the first token of a size is worth 2, each further one of that size 1."""
    return sum(
        SIZE_TOKEN_FIRST + SIZE_TOKEN_REPEAT * (n - 1) for n in Counter(sizes).values()
    )


def score_player(player: Player) -> Score:
    """The five categories of §9 for one player."""
    return Score(
        seat=player.seat,
        tower=player.best,
        diversity=diversity_points(len(regions_taken(player))),
        prizes=sum(PRIZE_POINTS[taken.item] for taken in player.prizes),
        sizes=size_token_points([taken.item for taken in player.sizes]),
        performances=sum(TILES[taken.item].points for taken in player.tiles)
        + player.taken_tokens,
    )


def winners(scores: Sequence[Score], resigned: Collection[int] = ()) -> tuple[int, ...]:
    """§9: the highest total; a tie goes to the best tower; a further tie is shared. A
    player who resigned (§10) is not among them (unless every player did)."""
    playing = [s for s in scores if s.seat not in resigned] or list(scores)
    best = max((s.total, s.tower) for s in playing)
    return tuple(s.seat for s in playing if (s.total, s.tower) == best)


def final_scores(players: Sequence[Player], resigned: Collection[int] = ()
                 ) -> tuple[tuple[Score, ...], tuple[int, ...]]:
    """Every player's :class:`Score` by seat, and the winning seats."""
    scores = tuple(score_player(p) for p in players)
    return scores, winners(scores, resigned)


def places(totals: Iterable[tuple[int, int]], winners: Collection[int],
           resigned: Sequence[int] = ()) -> dict[int, int]:
    """The final order (§9, §10) as each seat's place, 1 the first, from (seat, total) pairs:
    the winners first, then the others by total, equal totals sharing a place; then those
    who resigned, the last to resign first, the first to resign last."""
    pairs = list(totals)
    seats = {seat for seat, _ in pairs}
    order = sorted(((seat, (seat in winners, total)) for seat, total in pairs
                    if seat not in resigned), key=lambda sk: sk[1], reverse=True)
    place: dict[int, int] = {}
    for i, (seat, key) in enumerate(order):
        place[seat] = place[order[i - 1][0]] if i and key == order[i - 1][1] else i + 1
    gone = [seat for seat in reversed(resigned) if seat in seats]
    for j, seat in enumerate(gone):
        place[seat] = len(order) + j + 1
    return place


def ranked(place: dict[int, int]) -> list[int]:
    """The seats of :func:`places` in their final order (a shared place by seat)."""
    return sorted(place, key=lambda seat: (place[seat], seat))
