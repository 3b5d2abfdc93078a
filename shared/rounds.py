"""The flow of play: the end of a turn (§4), the end of a round (§8), the end of the game (§9).

Seats play clockwise (seat + 1) from the holder of the first-player marker. After the last
turn of a round come its festivals, a refill after rounds 2/4/6/8, the wheel's turn (which
:func:`shared.board.wheel_tile_index` already counts from the round number), the marker passing
clockwise and the next round — or, after round 10, final scoring.
"""

from __future__ import annotations

from shared.board import REFILL_ROUNDS, REGIONS, ROUNDS
from shared.events import Event, GameEnded, Refilled, RoundStarted, TurnStarted
from shared.evolve import evolve
from shared.festival import resolve_round
from shared.scoring import final_scores
from shared.state import GameState


def refill(state: GameState) -> tuple[GameState, Refilled]:
    """§8.2: each region in board order draws from the bag up to its refill level."""
    bag = list(state.bag)
    regions = []
    drawn: dict[str, list[int]] = {}
    for region, here in zip(REGIONS, state.regions, strict=True):
        need = max(0, state.refill - len(here))
        new = bag[:need]
        del bag[:need]
        drawn[region] = sorted(new, reverse=True)
        regions.append(tuple(sorted((*here, *new), reverse=True)))
    state = evolve(state, bag=tuple(bag), regions=tuple(regions))
    return state, Refilled(drawn=drawn)


def end_turn(state: GameState) -> tuple[GameState, list[Event]]:
    """§4: the turn passes clockwise; after the round's last turn, the round ends."""
    assert state.turn is not None
    taken = state.turns_taken + 1
    if taken < state.seats:
        seat = (state.turn + 1) % state.seats
        return evolve(state, turn=seat, turns_taken=taken, done=()), [TurnStarted(seat)]
    return end_round(state)


def end_round(state: GameState) -> tuple[GameState, list[Event]]:
    """§8, in its order; after round 10, §9."""
    state, festivals = resolve_round(state)
    events: list[Event] = [*festivals]
    if state.round in REFILL_ROUNDS:
        state, refilled = refill(state)
        events.append(refilled)
    # §8.3 the wheel turns by itself: what it shows is computed from the round number
    first = (state.first + 1) % state.seats
    state = evolve(state, first=first, turns_taken=0, done=())
    if state.round >= ROUNDS:
        scores, winners = final_scores(state.players, state.resigned)
        state = evolve(state, turn=None, scores=scores, winners=winners)
        return state, [*events, GameEnded(scores=scores, winners=winners)]
    state = evolve(state, round=state.round + 1, turn=first)
    return state, [*events, RoundStarted(round=state.round, first=first), TurnStarted(first)]
