"""The ``hint`` command: what the player can do now, and the towers worth building.

Everything here is asked of ``shared``: the legal actions come from
:func:`shared.engine.legal_actions` on the state rebuilt from the view, the towers from
:func:`shared.solver.best_tower`, and whether a tile could be performed from the engine itself
(build the solver's tower on a copy of the state, then see whether a perform is legal), and
where the pawn can go this turn from the engine too (each move it allows, then each move it
allows after that one: a move then a special move, as the greedy bot plans). The client
never re-implements a rule.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import attrs

from client.control.commands import action_to_command
from client.control.completion import hint_lines as action_lines
from shared.actions import Action, Build, EndTurn, Move, Special, Train
from shared.board import CASTELLERS_PER_SIZE, PRIZE_BY_RANK, SIZES, TILES
from shared.engine import apply, legal_actions
from shared.errors import CastellError
from shared.search import plan
from shared.solver import FestivalGoal, TileGoal, best_tower
from shared.state import GameState, Player, Prizes
from shared.tower import enters_festival, festival_score
from shared.view import RoomStatus, View, state_from_view


def _build(levels: tuple[tuple[int, ...], ...]) -> str:
    return action_to_command(Build(levels))


def _moving(action: Action) -> str | None:
    """The region ``action`` takes the pawn to (§4: a move, or a move effect), else None."""
    if isinstance(action, Move):
        return action.region
    if isinstance(action, Special | Train) and action.effect == "move":
        return action.region
    return None


def _moves_to(state: GameState, seat: int, legal: list[Action]) -> dict[str, list[str]]:
    """Region → the commands that take the pawn there this turn, by every route the rules
    allow (§4): a move, a special move (a token or a special tile), or one then the other.
    The engine says what is legal after the first step; the shortest route comes first."""
    out: dict[str, list[str]] = {}
    firsts = [(a, r) for a in legal if (r := _moving(a)) is not None]
    for action, region in firsts:
        out.setdefault(region, [action_to_command(action)])
    for action, _ in firsts:
        try:
            after, _ = apply(state, seat, action)
        except CastellError:
            continue
        for then in legal_actions(after, seat):
            there = _moving(then)
            if there is not None and there not in out and there != state.players[seat].region:
                out[there] = [action_to_command(action), action_to_command(then)]
    return out


def _best_for(player: Player, size: int) -> str:
    """The best festival tower of ``player``'s team for a festival of ``size`` (§5)."""
    found = best_tower(player.team, player.skills, FestivalGoal(size))
    if found is None:
        article = "an" if size == 8 else "a"  # "an 8"
        return f"  no tower of your team can enter yet (it needs 4 levels and {article} {size})"
    now = festival_score(player.tower, size) if enters_festival(player.tower, size) else None
    if now is not None and now >= found.score:
        return f"  your tower already scores {now}, the best your team can do"
    have = f" (your tower now: {now})" if now is not None else ""
    return f"  best tower: `{_build(found.levels)}` scores {found.score}{have}"


def _festival_lines(state: GameState, player: Player, legal: list[Action]) -> list[str]:
    """This round's festivals (§5): can the pawn be there, and the best tower to enter;
    without one this round, the next round that has festivals, to prepare for."""
    coming = [f for f in state.festivals if f.round == state.round and not f.done]
    if not coming:
        later = [f for f in state.festivals if not f.done]
        lines: list[str] = []
        for f in (f for f in later if f.round == later[0].round):
            head = ("no festival this round; the next is in round" if not lines
                    else "and in round")
            lines.append(f"{head} {f.round}: {f.town} ({f.region}), size {f.size}")
            lines.append(_best_for(player, f.size))
        return lines
    moves = _moves_to(state, player.seat, legal) if legal else {}
    lines = []
    for f in coming:
        if player.region == f.region:
            where = "your pawn is there"
        elif f.region in moves:
            where = "get there with " + " then ".join(f"`{c}`" for c in moves[f.region])
        elif legal:
            where = "out of your pawn's reach this turn"
        else:
            where = "your pawn is elsewhere"
        lines.append(f"festival at the end of this round: {f.town} ({f.region}), size {f.size} "
                     f"— {where}")
        lines.append(_best_for(player, f.size))
    return lines


def _performs(state: GameState, seat: int, tile: str) -> list[str]:
    """The commands that would perform ``tile`` now, if the tower matched it."""
    return [action_to_command(a) for a in legal_actions(state, seat)
            if isinstance(a, Special | Train) and a.effect == "perform" and a.tile == tile]


def _tile_lines(state: GameState, seat: int, player: Player) -> list[str]:
    """The local performances of the pawn's region (§6) and how to complete each now."""
    if player.region is None:
        return []
    lines = []
    for tile in state.row(player.region).tiles:
        label = f"{tile} {TILES[tile].describe()} ({TILES[tile].points} pts)"
        found = best_tower(player.team, player.skills, TileGoal(tile))
        if found is None:
            lines.append(f"  {label}: not with your team and skills yet")
            continue
        steps = []
        if tuple(found.levels) != tuple(player.tower):
            steps.append(_build(found.levels))
            try:
                built, _ = apply(state, seat, Build(found.levels))
            except CastellError:
                built = None
        else:
            built = state
        performs = _performs(built, seat, tile) if built is not None else []
        if performs:
            steps.append(performs[0])
            lines.append(f"  {label}: " + " then ".join(f"`{s}`" for s in steps))
        else:
            lines.append(f"  {label}: tower `{_build(found.levels)}`, but no perform effect is "
                         f"left this turn (a token, or a special tile to train)")
    if lines:
        lines.insert(0, f"performances in {player.region}:")
    return lines


_PLURAL = {"trophy": "trophies", "medal": "medals", "ribbon": "ribbons"}
_PLACE = ("1st", "2nd", "3rd")


def prizes_gone(prizes: Prizes, seats: int) -> str | None:
    """``no trophies left`` when the supply has run out of a prize that festivals of a game of
    ``seats`` award (§5.3), else None."""
    gone = [p for p in PRIZE_BY_RANK.get(seats, ()) if prizes.left(p) <= 0]
    if not gone:
        return None
    return f"no {' or '.join(_PLURAL[p] for p in gone)} left"


def supply_text(prizes: Prizes, seats: int) -> str:
    """The prize supply in brief: ``prizes: trophy 11 medal 14 ribbon 14``, or once a prize
    festivals award has run out, ``no trophies left · medal 3 ribbon 14``."""
    gone = prizes_gone(prizes, seats)
    if gone is None:
        return "prizes: " + " ".join(f"{p} {prizes.left(p)}" for p in _PLURAL)
    rest = " ".join(f"{p} {prizes.left(p)}" for p in _PLURAL if prizes.left(p) > 0)
    return f"{gone} · {rest}" if rest else gone


def supply_note(prizes: Prizes, seats: int) -> str | None:
    """The prize supply run out, in a sentence: ``no trophies left: a festival's 1st place
    wins no prize`` (§5.3), or None while every prize festivals award is left."""
    gone = prizes_gone(prizes, seats)
    if gone is None:
        return None
    table = PRIZE_BY_RANK[seats]
    places = [_PLACE[i] for i, p in enumerate(table) if prizes.left(p) <= 0]
    wins = "wins" if len(places) == 1 else "win"
    return f"{gone}: a festival's {' and '.join(places)} place {wins} no prize"


#: How long ``hint deep`` may think: what a server gives its ``hard`` bots by default.
DEEP_HINT_SECONDS = 1.5


def deep_hint_lines(view: View | None, seat: int | None, seconds: float) -> list[str]:
    """What ``hint deep`` shows: the turn the ``hard`` bot would play from here (it plays
    the game out, :mod:`shared.search`, for at most ``seconds``). The bag's order is not in
    the view, and the search needs none: it shuffles the bag it does not know."""
    if seat is None:
        return ["spectators get no hints: join a game to play"]
    if view is None or view.status != RoomStatus.PLAYING:
        return hint_lines(view, seat)
    state = state_from_view(view)
    if state.turn != seat:
        return hint_lines(view, seat)
    state = attrs.evolve(state, bag=unseen_castellers(state))
    line = plan(state, seat, random.Random(), deadline=time.monotonic() + seconds)
    steps = ["end" if isinstance(a, EndTurn) else action_to_command(a) for a in line]
    return ["the hard bot would play, in this order:",
            *(f"  {i}. {step}" for i, step in enumerate(steps, 1)),
            "(it plays the game out to the end of next round, a few times, for each of its "
            "best plans)"]


def unseen_castellers(state: GameState) -> tuple[int, ...]:
    """What the bag holds, as far as anyone at the table can tell: every casteller (§1,
    fifteen of each size) not in a region or a team (a view says only how many). Its order
    is anyone's guess: the search shuffles it."""
    left = Counter({size: CASTELLERS_PER_SIZE for size in SIZES})
    left.subtract(size for here in state.regions for size in here)
    left.subtract(size for player in state.players for size in player.team)
    unseen = tuple(sorted(left.elements()))
    return unseen if len(unseen) == len(state.bag) else state.bag


def hint_lines(view: View | None, seat: int | None) -> list[str]:
    """What ``hint`` shows to ``seat`` looking at ``view``."""
    if seat is None:
        return ["spectators get no hints: join a game to play"]
    if view is None or view.status == RoomStatus.WAITING:
        return ["hints come once the game has started"]
    if view.status != RoomStatus.PLAYING:
        return ["the game is over"]
    state = state_from_view(view)
    player = state.players[seat]
    legal = legal_actions(state, seat)
    lines: list[str] = []
    if legal:
        wheel = view.wheel
        tiles = {"region": wheel.get(player.region or ""), "all": wheel.get("all")}
        lines.append("you can:")
        lines.extend("  " + line for line in action_lines(
            legal, {k: v for k, v in tiles.items() if v}))
        if player.region is None and "move" not in state.done:
            # §4: what needs a region waits for the first move, which may go anywhere
            lines.append("  recruit, train with your region and special: once `move` has "
                         "put your pawn on the board (any region)")
    else:
        turn = state.turn
        whose = state.players[turn].name if turn is not None else "nobody"
        lines.append(f"it is {whose}'s turn; on yours, `hint` lists what you can do")
    lines.extend(_festival_lines(state, player, legal))
    note = supply_note(state.prizes, len(state.players))
    if note is not None:
        lines.append(note)
    if legal:
        lines.extend(_tile_lines(state, seat, player))
    return lines
