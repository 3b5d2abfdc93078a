"""Positions for the lessons of ``castell learn``: game states built for a lesson, and whether
a state is one that a game could reach by the rules.

A lesson's position starts as a new game (§3, from a fixed seed) and is arranged with the
functions here. Each keeps what the rules keep (docs/rules.md): a casteller given to a team or
laid in a region comes out of the bag, one taken away goes back into it (§1, 150 in all); a
spent special action token lies on a row until a performance there takes it (§4, §6); a prize
comes out of the supply (§5); a tile taken leaves its row for good (§6). A function that cannot
do what it is asked (no such casteller left in the bag, say) raises ``ValueError``: a lesson
is written wrong, and its test says so.

:func:`problems` reads any state and names, in words, everything no game could have reached
(the lessons' tests require it to find nothing in their positions).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from shared.board import (
    BOARD_SKILL_TILES,
    CASTELLERS_PER_SIZE,
    FESTIVAL_ROUNDS,
    FESTIVALS_PER_ROUND,
    MAX_RANK,
    PRIZE_SUPPLY,
    REFILL_LEVEL,
    REGION_INDEX,
    REGIONS,
    ROUNDS,
    SIZE_TOKENS_PER_SIZE,
    SIZES,
    SPECIAL_TOKENS,
    TEAM_SIZE,
    TILES,
    TILES_PER_ROW,
    TOWNS,
    festival_type,
    wheel_segments,
    wheel_tile_index,
)
from shared.scoring import final_scores
from shared.state import GameState, Player, Row, Taken
from shared.tower import check_tower
from shared.turn import ONCE_PER_TURN

#: Most castellers one turn can bring into a team (§4): a recruit of two, a special recruit
#: and a special tile's recruit.
MOST_PER_TURN = 4


# Arranging a position ----------------------------------------------------------------------


def _exchange(bag: list[int], give_back: Iterable[int], take: Iterable[int]) -> list[int]:
    """The bag once ``give_back`` went into it and ``take`` came out of it."""
    out = [*bag, *give_back]
    for size in take:
        if size not in out:
            raise ValueError(f"no casteller of size {size} is left in the bag")
        out.remove(size)
    return out


def _player(state: GameState, seat: int, player: Player, **changes: Any) -> GameState:
    players = list(state.players)
    players[seat] = player
    return attrs.evolve(state, players=tuple(players), **changes)


def set_player(state: GameState, seat: int, *, team: Sequence[int] | None = None,
               **changes: Any) -> GameState:
    """Seat ``seat`` with ``team`` (its castellers changed through the bag, §1) and the other
    fields given (``region``, ``tower``, ``skills``, ``best``...)."""
    player = state.players[seat]
    bag = list(state.bag)
    if team is not None:
        bag = _exchange(bag, player.team, team)
        player = attrs.evolve(player, team=tuple(team))
    return _player(state, seat, attrs.evolve(player, **changes), bag=tuple(bag))


def set_region(state: GameState, region: str, castellers: Sequence[int]) -> GameState:
    """Region ``region`` holding ``castellers`` (those it held go back into the bag)."""
    index = REGION_INDEX[region]
    bag = _exchange(list(state.bag), state.regions[index], castellers)
    regions = list(state.regions)
    regions[index] = tuple(sorted(castellers, reverse=True))
    return attrs.evolve(state, regions=tuple(regions), bag=tuple(bag))


def spend(state: GameState, seat: int, region: str, tokens: int = 1) -> GameState:
    """Seat ``seat`` spent ``tokens`` special action tokens standing in ``region``: they lie
    on its row (§4)."""
    player = state.players[seat]
    rows = list(state.rows)
    row = rows[REGION_INDEX[region]]
    rows[REGION_INDEX[region]] = attrs.evolve(row, tokens=row.tokens + tokens)
    return _player(state, seat, attrs.evolve(player, tokens=player.tokens - tokens),
                   rows=tuple(rows))


def set_row(state: GameState, region: str, tiles: Sequence[str]) -> GameState:
    """Region ``region``'s row showing ``tiles`` (§3.5): a tile dealt to another row swaps
    places with the one it replaces; one dealt to no row replaces it (that one leaves the
    game, as the tiles not dealt did)."""
    rows = [list(row.tiles) for row in state.rows]
    target = rows[REGION_INDEX[region]]
    for i, tile in enumerate(tiles):
        if target[i] == tile:
            continue
        replaced = target[i]
        for row in rows:
            if tile in row:
                row[row.index(tile)] = replaced
        target[i] = tile
    new = tuple(attrs.evolve(old, tiles=tuple(row)) for old, row in zip(state.rows, rows,
                                                                          strict=True))
    return attrs.evolve(state, rows=new)


def take_tile(state: GameState, seat: int, tile: str) -> GameState:
    """Seat ``seat`` completed ``tile`` (§6): it takes the tile from its row, and every token
    lying on that row."""
    index = next(i for i, row in enumerate(state.rows) if tile in row.tiles)
    region = REGIONS[index]
    row = state.rows[index]
    rows = list(state.rows)
    rows[index] = Row(tiles=tuple(t for t in row.tiles if t != tile), tokens=0)
    player = state.players[seat]
    player = attrs.evolve(player, tiles=(*player.tiles, Taken(tile, region)),
                          taken_tokens=player.taken_tokens + row.tokens)
    return _player(state, seat, player, rows=tuple(rows))


def set_wheel(state: GameState, shows: Mapping[str, str]) -> GameState:
    """The wheel's ring arranged so that, in the state's round, each segment of ``shows``
    shows its tile (§4); the other tiles keep their order in the other ring positions."""
    segments = wheel_segments(state.variant)
    ring = list(state.wheel)
    fixed: set[int] = set()
    for segment, tile in shows.items():
        position = wheel_tile_index(segments.index(segment), state.round)
        if ring[position] != tile:
            other = next(i for i, t in enumerate(ring) if t == tile and i not in fixed)
            ring[position], ring[other] = ring[other], ring[position]
        fixed.add(position)
    return attrs.evolve(state, wheel=tuple(ring))


def set_festival(state: GameState, index: int, region: str, size: int) -> GameState:
    """The festival at ``index`` of the calendar held in ``region`` under size token ``size``
    (§3.4); a festival of the same type there before swaps towns with it."""
    festivals = list(state.festivals)
    festival = festivals[index]
    for i, other in enumerate(festivals):
        if i != index and other.type == festival.type and other.region == region:
            festivals[i] = attrs.evolve(other, region=festival.region,
                                        town=TOWNS[festival.region][other.type])
    festivals[index] = attrs.evolve(festival, region=region, town=TOWNS[region][festival.type],
                                    size=size)
    return attrs.evolve(state, festivals=tuple(festivals))


def hold_festival(state: GameState, index: int, scores: Mapping[int, int],
                  prizes: Mapping[int, str], size_token: int | None = None) -> GameState:
    """The festival at ``index`` held (§5) with these participants' ``scores``: each one's
    best tower at least its score, ``prizes`` from the supply, ``size_token`` to that seat;
    each belongs to the festival's region."""
    festival = state.festivals[index]
    supply = state.prizes
    players = list(state.players)
    for seat, score in scores.items():
        player = attrs.evolve(players[seat], best=max(players[seat].best, score))
        prize = prizes.get(seat)
        if prize is not None:
            supply = supply.take(prize)
            player = attrs.evolve(player, prizes=(*player.prizes, Taken(prize, festival.region)))
        if seat == size_token:
            player = attrs.evolve(player, sizes=(*player.sizes,
                                                 Taken(festival.size, festival.region)))
        players[seat] = player
    festivals = list(state.festivals)
    festivals[index] = attrs.evolve(festival, done=True)
    return attrs.evolve(state, players=tuple(players), prizes=supply,
                        festivals=tuple(festivals))


def at_turn(state: GameState, round_: int, first: int, seat: int,
            done: Sequence[str] = ()) -> GameState:
    """Round ``round_``, ``first`` holding the first-player marker, ``seat`` on turn having
    taken the actions ``done`` this turn (§4)."""
    return attrs.evolve(state, round=round_, first=first, turn=seat,
                        turns_taken=(seat - first) % state.seats, done=tuple(done))


# Checking a position ------------------------------------------------------------------------


def turns_played(state: GameState, seat: int) -> int:
    """How many turns ``seat`` has ended so far (§4: one a round, clockwise from the first
    player)."""
    if state.over:
        return ROUNDS
    played = state.round - 1
    if (seat - state.first) % state.seats < state.turns_taken:
        played += 1
    return played


def problems(state: GameState) -> list[str]:
    """Everything in ``state`` that no game played by the rules could reach, in words (an
    empty list: nothing). It checks what the rules keep or bound: the 150 castellers (§1),
    regions no fuller than their refill level (§3, §8), teams, towers and skills (§4, §7),
    tokens, tiles and rows (§4, §6), the festival calendar and its prizes (§3, §5), the wheel
    (§3), whose turn it is (§4, §8), and the final scores (§9)."""
    out: list[str] = []
    seats = state.seats
    if not 2 <= seats <= 4 or [p.seat for p in state.players] != list(range(seats)):
        return [f"a game seats 2 to 4 players, in seats 0 up: not {seats}"]
    out += _castellers(state)
    out += _players(state)
    out += _tiles_and_tokens(state)
    out += _festivals(state)
    out += _turn(state)
    if sorted(state.wheel) != sorted(BOARD_SKILL_TILES):
        out.append(f"the wheel's ring holds {sorted(state.wheel)}, not the 8 board skill tiles")
    return out


def _castellers(state: GameState) -> list[str]:
    out = []
    everything = Counter(state.bag)
    for region, here in zip(REGIONS, state.regions, strict=True):
        everything.update(here)
        if len(here) > REFILL_LEVEL[state.seats]:
            out.append(f"{region} holds {len(here)} castellers: more than its refill level "
                       f"{REFILL_LEVEL[state.seats]}")
    for player in state.players:
        everything.update(player.team)
    wrong = {size: n for size in SIZES if (n := everything[size]) != CASTELLERS_PER_SIZE}
    if wrong or set(everything) - set(SIZES):
        out.append(f"the castellers are not 15 of each size 1 to 10: {dict(everything)}")
    return out


def _players(state: GameState) -> list[str]:
    out = []
    for p in state.players:
        who = f"seat {p.seat}"
        turns = turns_played(state, p.seat)
        now = p.seat == state.turn
        if p.region is not None and p.region not in REGION_INDEX:
            out.append(f"{who}'s pawn stands in no region: {p.region!r}")
        if p.region is None and p.tokens < SPECIAL_TOKENS:
            out.append(f"{who} spent a token with no pawn on the board")
        grown = len(p.team) - TEAM_SIZE
        if not 0 <= grown <= MOST_PER_TURN * (turns + now):
            out.append(f"{who}'s team of {len(p.team)} cannot come from 7 and {turns} turns")
        if p.tower:
            check = check_tower(p.tower, p.skills.as_dict())
            if not check.legal:
                out.append(f"{who}'s tower is not legal: {check.reason}")
            if Counter(s for level in p.tower for s in level) - Counter(p.team):
                out.append(f"{who}'s tower holds castellers its team has not")
        ranks = p.skills.as_dict().values()
        trained = turns + (now and "train" in state.done)
        if any(not 0 <= r <= MAX_RANK for r in ranks) or sum(ranks) > trained:
            out.append(f"{who}'s skills {p.skills.as_dict()} cannot come from {trained} "
                       f"trainings")
        spent = SPECIAL_TOKENS - p.tokens
        if not 0 <= spent <= turns + (now and "special" in state.done):
            out.append(f"{who} spent {spent} tokens in {turns} turns")
        took = [*p.prizes, *p.sizes]
        if took and p.best < 5:
            out.append(f"{who} took a prize or a size token with a best tower of {p.best}")
        if p.best and not any(f.done for f in state.festivals):
            out.append(f"{who} has a best tower of {p.best} before any festival")
    return out


def _tiles_and_tokens(state: GameState) -> list[str]:
    out = []
    taken = [t for p in state.players for t in p.tiles]
    dealt = [t for row in state.rows for t in row.tiles]
    ids = [*dealt, *(t.item for t in taken)]
    if len(set(ids)) != len(ids) or not set(ids) <= set(TILES):
        out.append(f"the performance tiles are not distinct tiles of the game: {sorted(ids)}")
    for region, row in zip(REGIONS, state.rows, strict=True):
        gone = sum(t.region == region for t in taken)
        if len(row.tiles) + gone != TILES_PER_ROW:
            out.append(f"{region}'s row shows {len(row.tiles)} tiles and {gone} were taken "
                       f"there: it was dealt {TILES_PER_ROW}")
    tokens = sum(p.tokens + p.taken_tokens for p in state.players)
    tokens += sum(row.tokens for row in state.rows)
    if tokens != SPECIAL_TOKENS * state.seats:
        out.append(f"{tokens} special action tokens in the game, not {SPECIAL_TOKENS} a player")
    return out


def _festivals(state: GameState) -> list[str]:
    out = []
    rounds = [f.round for f in state.festivals]
    wanted = [r for r in FESTIVAL_ROUNDS for _ in range(FESTIVALS_PER_ROUND[state.seats][r])]
    if rounds != wanted:
        out.append(f"the calendar's festivals fall in rounds {rounds}, not {wanted}")
    for f in state.festivals:
        if f.type != festival_type(f.round) or TOWNS.get(f.region, {}).get(f.type) != f.town:
            out.append(f"the festival at {f.town} does not fit round {f.round}")
        if f.done != (state.over or f.round < state.round):
            out.append(f"the festival of round {f.round} at {f.town} is "
                       f"{'held' if f.done else 'not held'} in round {state.round}")
    for kind in ("I", "II"):
        towns = [f.region for f in state.festivals if f.type == kind]
        if len(set(towns)) != len(towns):
            out.append(f"a type {kind} town holds two festivals")
    sizes = Counter(f.size for f in state.festivals)
    if any(n > SIZE_TOKENS_PER_SIZE for n in sizes.values()):
        out.append(f"more than {SIZE_TOKENS_PER_SIZE} size tokens of one size: {dict(sizes)}")
    held = Counter((f.size, f.region) for f in state.festivals if f.done)
    tokens = Counter((int(t.item), t.region) for p in state.players for t in p.sizes)
    if tokens - held:
        out.append(f"size tokens taken at no festival held: {sorted(tokens - held)}")
    at = Counter(f.region for f in state.festivals if f.done)
    won = Counter(t.region for p in state.players for t in p.prizes)
    if any(n > at[region] * state.seats for region, n in won.items()):
        out.append("more prizes taken in a region than its festivals gave")
    for prize, supply in PRIZE_SUPPLY.items():
        taken = sum(t.item == prize for p in state.players for t in p.prizes)
        if state.prizes.left(prize) + taken != supply:
            out.append(f"{prize} tokens: {state.prizes.left(prize)} left and {taken} "
                       f"taken, not {supply}")
    return out


def _turn(state: GameState) -> list[str]:
    if state.over:
        expected = final_scores(state.players)
        if state.turn is not None or (state.scores, state.winners) != expected:
            return ["the game is over, but its turn or final scores are not the rules'"]
        return []
    out = []
    if not 1 <= state.round <= ROUNDS or not 0 <= state.first < state.seats:
        out.append(f"round {state.round}, first player {state.first}: no such turn")
    elif state.turn != (state.first + state.turns_taken) % state.seats:
        out.append(f"seat {state.turn} is on turn, after {state.turns_taken} turns from the "
                   f"first player {state.first}")
    if len(set(state.done)) != len(state.done) or not set(state.done) <= set(ONCE_PER_TURN):
        out.append(f"this turn's actions {state.done} are not each once of {ONCE_PER_TURN}")
    if state.turn is not None and "move" in state.done and \
            state.players[state.turn].region is None:
        out.append("the player on turn moved, yet has no pawn on the board")
    if state.scores is not None or state.winners is not None:
        out.append("final scores in a game still under way")
    return out
