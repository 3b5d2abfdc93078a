"""Festivals (§5 of ``docs/rules.md``): who takes part, their scores, prizes and size tokens.

A festival is resolved at the end of its round (§8.1) with the towers as they stand. It
changes players' best tower markers, prize tokens and size tokens, and the prize supply, then
is marked done.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.board import PRIZE_BY_RANK
from shared.events import FestivalResolved, FestivalResult
from shared.evolve import evolve
from shared.state import Festival, GameState, Player, Taken
from shared.tower import enters_festival, festival_score


def takes_part(player: Player, festival: Festival) -> bool:
    """§5.1: pawn in the festival's region, a tower of 4+ levels with the token's size."""
    return player.region == festival.region and enters_festival(player.tower, festival.size)


def of_size(tower: Sequence[Sequence[int]], size: int) -> int:
    """How many castellers of ``size`` stand in the tower (§5.4)."""
    return sum(level.count(size) for level in tower)


def ranks(scores: dict[int, int]) -> dict[int, int]:
    """§5.3: rank of each seat by score, ties sharing a rank and skipping the next (1, 1, 3)."""
    return {
        seat: 1 + sum(other > score for other in scores.values())
        for seat, score in scores.items()
    }


def resolve(state: GameState, index: int) -> tuple[GameState, FestivalResolved]:
    """Resolve the festival at ``index`` of the calendar (§5)."""
    festival = state.festivals[index]
    seats = state.seats
    players = list(state.players)
    scores = {
        p.seat: festival_score(p.tower, festival.size)
        for p in players
        if takes_part(p, festival)
    }
    rank_of = ranks(scores)
    # §5.3 a short supply goes first to the seat nearest the first player, clockwise
    order = sorted(scores, key=lambda seat: (rank_of[seat], (seat - state.first) % seats))
    table = PRIZE_BY_RANK[seats]
    supply = state.prizes
    prize_of: dict[int, str | None] = {}
    for seat in order:
        prize = table[rank_of[seat] - 1] if rank_of[seat] <= len(table) else None
        if prize is not None and supply.left(prize) > 0:
            supply = supply.take(prize)
            prize_of[seat] = prize.value
        else:
            prize_of[seat] = None
    # §5.4 the size token goes to the unique participant with the most of its size
    counts = {seat: of_size(players[seat].tower, festival.size) for seat in scores}
    most = max(counts.values(), default=0)
    leaders = [seat for seat, n in counts.items() if n == most]
    claimer = leaders[0] if len(leaders) == 1 else None

    for seat in order:
        player = players[seat]
        player = evolve(player, best=max(player.best, scores[seat]))  # §5.2 never down
        won = prize_of[seat]
        if won is not None:
            player = evolve(player, prizes=(*player.prizes, Taken(won, festival.region)))
        if seat == claimer:
            player = evolve(
                player, sizes=(*player.sizes, Taken(festival.size, festival.region))
            )
        players[seat] = player
    festivals = list(state.festivals)
    festivals[index] = evolve(festival, done=True)
    state = evolve(
        state, players=tuple(players), prizes=supply, festivals=tuple(festivals)
    )
    results = tuple(
        FestivalResult(
            seat=seat, score=scores[seat], prize=prize_of[seat], size_token=seat == claimer
        )
        for seat in order
    )
    event = FestivalResolved(
        round=festival.round, region=festival.region, town=festival.town, size=festival.size,
        results=results,
    )
    return state, event


def resolve_round(state: GameState) -> tuple[GameState, list[FestivalResolved]]:
    """§8.1: the festivals of the current round, in calendar order."""
    events = []
    for index, festival in enumerate(state.festivals):
        if festival.round == state.round and not festival.done:
            state, event = resolve(state, index)
            events.append(event)
    return state, events
