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

import attrs

from client.control.commands import action_to_command
from client.control.completion import hint_lines as action_lines
from shared.actions import Action, Build, EndTurn, Move, Recruit, Special, Train
from shared.board import (
    ALL_SEGMENT,
    PRIZE_BY_RANK,
    PRIZE_POINTS,
    ROUNDS,
    TILES,
)
from shared.engine import apply, legal_actions
from shared.errors import CastellError
from shared.events import FestivalResolved, Performed, Trained
from shared.festival import takes_part
from shared.scoring import score_player
from shared.search import Choice, choose, unseen_castellers
from shared.solver import FestivalGoal, TallestGoal, TileGoal, best_tower, best_with_training
from shared.state import Festival, GameState, Player, Prizes
from shared.tower import SKILL_NAMES, enters_festival, festival_score
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


def _moves_to(state: GameState, seat: int, legal: list[Action]) -> dict[str, list[Action]]:
    """Region → the actions that take the pawn there this turn, by every route the rules
    allow (§4): a move, a special move (a token or a special tile), or one then the other.
    The engine says what is legal after the first step; the shortest route comes first."""
    out: dict[str, list[Action]] = {}
    firsts = [(a, r) for a in legal if (r := _moving(a)) is not None]
    for action, region in firsts:
        out.setdefault(region, [action])
    for action, _ in firsts:
        try:
            after, _ = apply(state, seat, action)
        except CastellError:
            continue
        for then in legal_actions(after, seat):
            there = _moving(then)
            if there is not None and there not in out and there != state.players[seat].region:
                out[there] = [action, then]
    return out


def _trainable(state: GameState, seat: int) -> dict[str, str]:
    """Skill → the ``train`` command that raises it now (§4: a skill tile on the pawn's
    region's segment or on the ``all`` segment, the training not yet taken this turn), as
    the engine lists the trainings."""
    shown = state.wheel_tiles()
    region = state.players[seat].region
    out: dict[str, str] = {}
    for action in legal_actions(state, seat):
        if isinstance(action, Train) and action.effect is None:
            segment = ALL_SEGMENT if action.choice == "all" else region
            if segment is not None:
                out.setdefault(shown[segment], action_to_command(action))
    return out


def _trainable_after(state: GameState, seat: int, route: list[Action]) -> dict[str, str]:
    """:func:`_trainable` once the pawn has taken ``route`` (a move there may show another
    skill; a route through a special tile has used the training)."""
    for action in route:
        try:
            state, _ = apply(state, seat, action)
        except CastellError:
            return {}
    return _trainable(state, seat)


def _recruit_to_enter(player: Player, size: int, recruits: list[Recruit]) -> str:
    """What to do when no tower of the team can enter a festival of ``size``: the recruit
    of this turn (of ``recruits``, legal now) that lets one enter, with the tower (solved by
    shared.solver, a call per recruit); else where to look further."""
    found = []
    for recruit in recruits:
        team = (*player.team, *recruit.sizes)
        tower = best_tower(team, player.skills, FestivalGoal(size))
        if tower is not None:
            found.append((tower.score, -len(recruit.sizes), recruit, tower))
    if not found:
        return ("  (`hint deep` looks further ahead: where to go and whom to recruit)"
                if not recruits else "  no recruit this turn is enough: `hint deep` looks "
                "further ahead")
    _, _, recruit, tower = max(found, key=lambda f: f[:2])
    return (f"  `{action_to_command(recruit)}` would let `{_build(tower.levels)}` enter "
            f"with {tower.score}")


def _best_for(player: Player, size: int, trainable: dict[str, str] | None = None,
              there: str | None = None, recruits: list[Recruit] | None = None) -> str:
    """The best festival tower of ``player``'s team for a festival of ``size`` (§5), with
    one more rank of a skill ``trainable`` still offers this turn (skill → its ``train``
    command; ``there``: the region the pawn must reach first to train so) when that does
    better (shared.solver.best_with_training)."""
    trainable = trainable or {}
    found, skill = best_with_training(player.team, player.skills, FestivalGoal(size),
                                      trainable)
    if found is None:
        article = "an" if size == 8 else "a"  # "an 8"
        return (f"  no tower of your team can enter yet (it needs 4 levels and {article} "
                f"{size})\n{_recruit_to_enter(player, size, recruits or [])}")
    now = festival_score(player.tower, size) if enters_festival(player.tower, size) else None
    if skill is not None:
        without = best_tower(player.team, player.skills, FestivalGoal(size))
        where = f" in {there}" if there is not None and trainable[skill] == "train region" \
            else ""
        rest = (f"without it your team can enter with {without.score} at most"
                if without is not None else "without it your team cannot enter")
        return (f"  best tower: train {skill} first (`{trainable[skill]}`{where}), then "
                f"`{_build(found.levels)}` scores {found.score}; {rest}")
    if now is not None and now >= found.score:
        return f"  your tower already scores {now}, the best your team can do"
    have = f" (your tower now: {now})" if now is not None else ""
    return f"  best tower: `{_build(found.levels)}` scores {found.score}{have}"


def _festival_lines(state: GameState, player: Player, legal: list[Action]) -> list[str]:
    """This round's festivals (§5): can the pawn be there, and the best tower to enter;
    without one this round, the next round that has festivals, to prepare for."""
    coming = [f for f in state.festivals if f.round == state.round and not f.done]
    recruits = [a for a in legal if isinstance(a, Recruit)]
    if not coming:
        later = [f for f in state.festivals if not f.done]
        lines: list[str] = []
        for f in (f for f in later if f.round == later[0].round):
            head = ("no festival this round; the next is in round" if not lines
                    else "and in round")
            lines.append(f"{head} {f.round}: {f.town} ({f.region}), size {f.size}")
            lines.extend(_best_for(player, f.size, recruits=recruits).split("\n"))
        return lines
    moves = _moves_to(state, player.seat, legal) if legal else {}
    lines = []
    for f in coming:
        trainable: dict[str, str] = {}
        there = None
        if player.region == f.region:
            where = "your pawn is there"
            trainable = _trainable(state, player.seat) if legal else {}
        elif f.region in moves:
            route = moves[f.region]
            where = "get there with " + " then ".join(f"`{action_to_command(a)}`"
                                                      for a in route)
            trainable, there = _trainable_after(state, player.seat, route), f.region
        elif legal:
            where = "out of your pawn's reach this turn"
        else:
            where = "your pawn is elsewhere"
        lines.append(f"festival at the end of this round: {f.town} ({f.region}), size {f.size} "
                     f"— {where}")
        lines.extend(_best_for(player, f.size, trainable, there, recruits).split("\n"))
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
    the game out, :mod:`shared.search`, for at most ``seconds``), and why: what the line
    aims at (the festival, the tower, what it takes) and what its play-outs expect. The
    bag's order is not in the view, and the search needs none: it shuffles the bag it does
    not know, with a generator seeded by the position, so one position gives one hint."""
    if seat is None:
        return ["spectators get no hints: join a game to play"]
    if view is None or view.status != RoomStatus.PLAYING:
        return hint_lines(view, seat)
    state = state_from_view(view)
    if state.turn != seat:
        return hint_lines(view, seat)
    state = attrs.evolve(state, bag=unseen_castellers(state))
    # The play-outs' randomness drawn from the position itself: asked again from the same
    # position, the hint is the same (as long as the search ends within its time)
    choice = choose(state, seat, random.Random(repr(state)),
                    deadline=time.monotonic() + seconds)
    steps = ["end" if isinstance(a, EndTurn) else action_to_command(a) for a in choice.actions]
    return ["the hard bot would play, in this order:",
            *(f"  {i}. {step}" for i, step in enumerate(steps, 1)),
            "why:", *(f"  - {reason}" for reason in deep_reasons(state, seat, choice))]


def deep_reasons(state: GameState, seat: int, choice: Choice) -> list[str]:
    """Why the hard bot plays ``choice`` from ``state``: the festival of this round its turn
    ends at and the tower it enters there (its score, its rank among the towers standing
    there, the prize that rank takes while the supply lasts, §5), the training, recruits
    and performances of the line (as the engine reports them, replayed), the points its
    score gains now (§9), and its play-outs' average against the best rival."""
    out: list[str] = []
    before = state
    events = []
    for action in choice.actions:
        try:
            state, happened = apply(state, seat, action)
        except CastellError:
            break
        events.extend(happened)
    me = state.players[seat]
    aim = choice.aim
    festival = aim.festival if aim is not None else None
    held = next((e for e in events if isinstance(e, FestivalResolved)
                 and festival is not None and e.town == festival.town), None)
    if festival is not None:
        head = (f"the festival at {festival.town} ({festival.region}) at the end of this "
                f"round, size {festival.size}")
        if not enters_festival(me.tower, festival.size):
            out.append(f"{head}: its tower would not enter it")
        else:
            score = festival_score(me.tower, festival.size)
            tower = f"`{_build(me.tower)}` scores {score} there"
            if held is not None:
                mine = next((r for r in held.results if r.seat == seat), None)
                took = mine.prize if mine is not None and mine.prize else "no prize"
                out.append(f"{head}: {tower}, and it is held at once: {took}")
            else:
                out.append(f"{head}: {tower}, {_standing(before, seat, festival, score)}")
    elif aim is not None and aim.route[-1] is not None:
        out.append(f"no festival this round in its reach: it ends the turn in {aim.route[-1]}")
    for event in events:
        if isinstance(event, Trained) and event.seat == seat and event.tile in SKILL_NAMES:
            out.append(f"it raises {event.tile}")
        elif isinstance(event, Performed) and event.seat == seat:
            tokens = f" and {event.tokens} token{'s' if event.tokens != 1 else ''}" \
                if event.tokens else ""
            out.append(f"it completes {event.tile} in {event.region}: "
                       f"{TILES[event.tile].points} points{tokens}")
    recruits = [a.sizes if isinstance(a, Recruit) else (a.size,) for a in choice.actions
                if isinstance(a, Recruit) or (isinstance(a, Special | Train)
                                              and a.effect == "recruit" and a.size is not None)]
    if recruits:
        out.append("it recruits " + " and ".join(" ".join(map(str, r)) for r in recruits))
    gain = score_player(me).total - score_player(before.players[seat]).total
    if gain:
        out.append(f"its score now goes from {score_player(before.players[seat]).total} to "
                   f"{score_player(me).total} ({gain:+d})")
    if choice.margin is not None:
        ahead = "ahead of" if choice.margin >= 0 else "behind"
        until = "the game" if choice.until is None or choice.until >= ROUNDS \
            else f"round {choice.until}"
        out.append(f"played out {choice.samples} time{'s' if choice.samples != 1 else ''} to "
                   f"the end of {until}: on average {abs(choice.margin):.1f} points {ahead} "
                   f"the best rival")
    else:
        out.append("every plan it weighed came to this line: nothing to play out")
    return out


def _standing(state: GameState, seat: int, festival: Festival, score: int) -> str:
    """Where ``score`` ranks at ``festival`` among the rivals' towers standing there now, the
    prize that rank takes while the supply lasts (§5.3), and how far the best-tower marker
    goes up (§5.2); the rivals still to play this round may change theirs."""
    rivals = [p for p in state.players if p.seat != seat and takes_part(p, festival)]
    rank = 1 + sum(festival_score(p.tower, festival.size) > score for p in rivals)
    place = _PLACE[rank - 1] if rank <= len(_PLACE) else f"{rank}th"
    table = PRIZE_BY_RANK[len(state.players)]
    if rank > len(table):
        prize = "no prize at that place"
    elif state.prizes.left(table[rank - 1]) <= 0:
        prize = f"but no {_PLURAL[table[rank - 1]]} left"
    else:
        won = table[rank - 1]
        prize = f"a {won}, {PRIZE_POINTS[won]} points"
    best = state.players[seat].best
    marker = f"; its best tower from {best} to {score} (+{score - best})" if score > best else ""
    return f"{place} of the towers standing there now ({prize}{marker})"


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
        tallest = best_tower(player.team, player.skills, TallestGoal()) \
            if player.team else None
        lines.extend("  " + line for line in action_lines(
            legal, {k: v for k, v in tiles.items() if v},
            _build(tallest.levels) if tallest is not None else None))
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
