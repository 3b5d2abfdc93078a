"""The greedy bot: each time it is asked, it plans the rest of its turn and takes the first step.

A *plan* for the rest of a turn is a route for the pawn — stay; one move; a move then a
special move (or only a special move once the move is spent) — and, along that route, where
to recruit and what (§4), where to train and which tile (§4), which local performance tile to
complete where (§6, with a special action token or with a special tile of the wheel), and the
festival of this round (§5) in the region where the route ends. Every plan the rules allow is
scored in rough points of §9 (below) and the best one wins; its first step is the answer.
Asked again, the bot plans again from the new state.

A plan's score never depends on the bot's standing tower, so a build is always followed by
what it was built for: the performance (the plan, unchanged, now finds its tile's tower
standing) or the end of the turn (the festival tower, or none, is all that is left to do).
A turn therefore takes at most eight actions: move, recruit, train, special, a build before
each of two performances, the final build, ``end_turn``.

How a plan is scored (guesses about the future are marked *guess*):

* **festival** (at the route's end, this round): the festival tower the solver finds for
  the team and skills the plan ends with; the prize its rank earns against the rivals who
  have already played this round (their towers and places are final), the size token if it
  holds more of the size than each of them, and the rise of the best tower marker;
* **performance**: the tile's points and the special action tokens on its row (plus one,
  the bot's own token, when it spends one); a spent token costs what it could earn later
  (*guess*: 1.5 while tokens are fewer than turns left, 0.3 after);
* **region diversity**: the rise of §9.2's points from the regions the plan takes
  something in;
* **recruiting** (*guess*): each casteller is worth more when the team has few of its size
  and when its size is one of the festivals' size tokens of the next rounds;
* **training** (*guess*): how much the skill raises the solver's festival scores for the
  coming festivals, plus a small standing preference (Balance first: it is the cheapest
  way to a fourth level) and a bonus for skill exhibitions lying on the board;
* **position** (*guess*): ending near the regions of next round's festivals, and near a
  tile the team can perform now.

Solver answers are cached (a pure function of team, skills and goal), so the many plans of
a turn cost a few solver calls each time the team or skills change.
"""

from __future__ import annotations

import functools
import random
from collections import Counter, deque
from collections.abc import Iterator

import attrs

from shared.actions import Action, Build, EndTurn, Move, Recruit, Special, Train
from shared.board import (
    ADJACENT,
    ALL_SEGMENT,
    DIVERSITY_POINTS,
    MAX_RANK,
    PRIZE_BY_RANK,
    PRIZE_POINTS,
    REGIONS,
    ROUNDS,
    SPECIAL_TILE,
    TILES,
    Variant,
)
from shared.festival import of_size, takes_part
from shared.legal import neighbours, recruit_choices
from shared.scoring import regions_taken
from shared.solver import FestivalGoal, TileGoal, best_tower
from shared.state import Festival, GameState
from shared.tower import BASE_WIDTH, SKILL_NAMES, check_tile, enters_festival, festival_score

Team = tuple[int, ...]  # casteller sizes, biggest first
Ranks = tuple[int, ...]  # skill ranks in SKILL_NAMES order
Levels = tuple[tuple[int, ...], ...]

#: Weight of a festival by how many rounds ahead it is (*guess*); later ones are ignored.
_AHEAD_WEIGHT = (1.0, 0.8, 0.6, 0.45, 0.3)
#: Standing preference between skills when no coming festival tells them apart (*guess*).
_SKILL_PREFERENCE = {"balance": 0.9, "width": 0.7, "base": 0.5, "strength": 0.4, "mix": 0.4}
#: Bonus for ending a turn this many steps from a festival of the next round (*guess*).
_NEAR_FESTIVAL = {0: 2.5, 1: 2.0, 2: 0.5}
_SCARCE_TOKEN, _SPARE_TOKEN = 1.5, 0.3
#: How many later festivals a training is judged by (each costs solver calls).
_SKILL_LOOKAHEAD = 2
#: How many trainings a plan solves this round's festival for (each costs a solver call).
_FESTIVAL_TRAININGS = 3


def _distances() -> dict[str, dict[str, int]]:
    """Steps between regions (§2), by breadth-first search."""
    out = {}
    for start in REGIONS:
        seen = {start: 0}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for there in ADJACENT[here]:
                if there not in seen:
                    seen[there] = seen[here] + 1
                    queue.append(there)
        out[start] = seen
    return out


_DIST = _distances()


def _useful(team: Team, ranks: Ranks, widest: int | None = None) -> Team:
    """The castellers of ``team`` a tower can use at all: §7 lets one size stand in at most
    1 + Strength levels (a level above another holds smaller sizes, or the same with
    Strength), each of at most 3 + Width castellers unless Base frees it. Fewer castellers
    make the solver's search smaller and give the same answer."""
    rank = dict(zip(SKILL_NAMES, ranks, strict=True))
    if widest is None:
        if rank["base"]:
            return team
        widest = BASE_WIDTH + rank["width"]
    cap = widest * (1 + rank["strength"])
    counts = Counter(team)
    return tuple(s for s in sorted(counts, reverse=True) for _ in range(min(counts[s], cap)))


@functools.lru_cache(maxsize=8192)
def _solve(team: Team, ranks: Ranks, goal: FestivalGoal | TileGoal) -> Levels | None:
    found = best_tower(team, dict(zip(SKILL_NAMES, ranks, strict=True)), goal)
    return None if found is None else found.levels


@functools.lru_cache(maxsize=8192)
def festival_tower(team: Team, ranks: Ranks, size: int) -> Levels | None:
    """The solver's festival tower (§5) for the team and skills, or None (cached)."""
    return _solve(_useful(team, ranks), ranks, FestivalGoal(size))


@functools.lru_cache(maxsize=8192)
def tile_tower(team: Team, ranks: Ranks, tile: str) -> Levels | None:
    """The solver's smallest tower completing ``tile`` (§6), or None (cached)."""
    shape = TILES[tile].shape
    return _solve(_useful(team, ranks, max(shape) if shape else None), ranks, TileGoal(tile))


def _joined(team: Team, sizes: tuple[int, ...]) -> Team:
    return tuple(sorted((*team, *sizes), reverse=True))


def _raised(ranks: Ranks, skill: str | None) -> Ranks:
    if skill is None:
        return ranks
    i = SKILL_NAMES.index(skill)
    return (*ranks[:i], ranks[i] + 1, *ranks[i + 1:])


@attrs.frozen
class Style:
    """How far a bot of this module looks: ``normal`` sees everything described above; the
    ``easy`` level plays the same game short-sighted. ``routes`` limits the route to a move
    (no special move); without ``planning``, a training is worth only the standing
    preference and where the turn ends is worth nothing; ``noise`` adds a random error of
    that many points (uniform, plus or minus) to each plan's value."""

    routes: bool = True
    planning: bool = True
    position: bool = True
    noise: float = 0.0


NORMAL = Style()
EASY = Style(routes=False, planning=False, position=True, noise=2.0)


@attrs.frozen
class Perform:
    """Complete ``tile`` at route index ``at``, by a special token or a special wheel tile."""

    at: int
    tile: str
    means: str  # "special" or "train"
    choice: str | None = None  # the wheel segment, for "train"


@attrs.frozen
class Training:
    """Train at route index ``at``: a skill tile, or a special tile's free recruit."""

    at: int
    action: Train
    skill: str | None  # the skill raised, None for a free recruit
    recruit: tuple[int, ...] = ()


@attrs.frozen
class Plan:
    """The rest of a turn, and its score."""

    value: float
    route: tuple[str | None, ...]  # route[0] is where the pawn stands now
    legs: tuple[str, ...]  # how each step of the route is taken: "move" or "special"
    recruit: tuple[int, tuple[int, ...]] | None = None  # (route index, sizes)
    training: Training | None = None
    perform: Perform | None = None
    festival: Festival | None = None  # the festival of this round at the route's end


class _Turn:
    """One seat's view of the rest of its turn: what it may still do, and the scores."""

    def __init__(self, state: GameState, seat: int, style: Style = NORMAL,
                 rng: random.Random | None = None) -> None:
        self.state = state
        self.seat = seat
        self.style = style
        self.rng = rng
        self.me = me = state.players[seat]
        self.team: Team = me.team
        self.ranks: Ranks = tuple(me.skills.rank(s) for s in SKILL_NAMES)
        done = state.done
        self.can_move = "move" not in done
        self.can_recruit = "recruit" not in done
        self.can_train = "train" not in done
        self.can_special = "special" not in done and me.tokens > 0
        self.shown = state.wheel_tiles()
        self.normal = state.variant == Variant.NORMAL
        turns_left = ROUNDS - state.round + 1
        self.token_cost = _SCARCE_TOKEN if me.tokens < turns_left else _SPARE_TOKEN
        self.have = regions_taken(me)
        self.my_sizes = {taken.item for taken in me.sizes}
        # the festivals ahead: their size tokens, weighted by how soon they come
        self.ahead: list[tuple[Festival, float]] = [
            (f, _AHEAD_WEIGHT[f.round - state.round])
            for f in state.festivals
            if not f.done and 0 <= f.round - state.round < len(_AHEAD_WEIGHT)
        ]
        self.now = [f for f, _ in self.ahead if f.round == state.round]
        self.next = [f for f, _ in self.ahead if f.round == state.round + 1]
        self.later = [(f, w) for f, w in self.ahead if f.round > state.round]
        # rivals whose turn in this round is over: their towers and places are final
        played = {(state.first + k) % state.seats for k in range(state.turns_taken)}
        self.rivals = [p for p in state.players if p.seat in played and p.seat != seat]
        self._recruits: dict[tuple[str, tuple[int, ...], int], tuple[tuple[int, ...], float]]
        self._recruits = {}
        self._festivals: dict[tuple[str, Team, Ranks], tuple[float, Festival | None, bool]] = {}
        self._skills: dict[str, float] = {}
        self._positions: dict[str, float] = {}

    # the guesses ------------------------------------------------------------------------

    def _casteller_value(self, size: int, counts: Counter[int]) -> float:
        """*guess*: one more casteller of ``size`` for a team with ``counts``."""
        n = counts[size]
        value = 1.0 if n == 0 else 0.6 if n < 3 else 0.15 if n < 6 else 0.05
        for festival, weight in self.ahead:
            if festival.size == size:
                value += weight * (3.0 if n == 0 else 1.5 if n < 4 else 0.5)
        return value + 0.01 * size  # big castellers make bottoms

    def best_recruit(
        self, region: str, taken: tuple[int, ...] = (), most: int = 2
    ) -> tuple[tuple[int, ...], float]:
        """The best choice of up to ``most`` castellers in ``region`` (without ``taken``)."""
        key = (region, taken, most)
        if key not in self._recruits:
            here = list(self.state.region_castellers(region))
            for size in taken:
                here.remove(size)
            best: tuple[tuple[int, ...], float] = ((), 0.0)
            for choice in recruit_choices(tuple(here)):
                if len(choice) > most:
                    continue
                counts = Counter(self.team)
                value = 0.0
                for size in choice:
                    value += self._casteller_value(size, counts)
                    counts[size] += 1
                if value > best[1]:
                    best = (choice, value)
            self._recruits[key] = best
        return self._recruits[key]

    def skill_value(self, skill: str) -> float:
        """*guess*: what one more rank of ``skill`` is worth for the coming festivals."""
        if skill not in self._skills and not self.style.planning:
            rank = self.ranks[SKILL_NAMES.index(skill)]
            self._skills[skill] = _SKILL_PREFERENCE[skill] / (1 + rank)
        if skill not in self._skills:
            rank = self.ranks[SKILL_NAMES.index(skill)]
            raised = _raised(self.ranks, skill)
            gain = 0.0
            # this round's festival is scored with the plan itself; of the later ones, the
            # nearest few are enough to tell skills apart
            for festival, weight in self.later[:_SKILL_LOOKAHEAD]:
                before = festival_tower(self.team, self.ranks, festival.size)
                after = festival_tower(self.team, raised, festival.size)
                gain += weight * (
                    (festival_score(after, festival.size) if after else 0)
                    - (festival_score(before, festival.size) if before else 0)
                )
            exhibitions = sum(
                skill in TILES[tile].skills for row in self.state.rows for tile in row.tiles
            )
            self._skills[skill] = (
                0.5 * gain
                + _SKILL_PREFERENCE[skill] / (1 + rank)
                + 0.2 * exhibitions
            )
        return self._skills[skill]

    def position_value(self, region: str) -> float:
        """*guess*: ending the turn in ``region``, for the next turn."""
        if region not in self._positions:
            value = 0.0
            if self.state.round < ROUNDS and self.style.position:
                for festival in self.next:
                    value += _NEAR_FESTIVAL.get(_DIST[region][festival.region], 0.0)
                tiles = [
                    TILES[tile].points + self.state.row(near).tokens
                    for near in (region, *ADJACENT[region])
                    for tile in self.state.row(near).tiles
                    if tile_tower(self.team, self.ranks, tile) is not None
                ]
                value += 0.3 * max(tiles, default=0)
            self._positions[region] = value
        return self._positions[region]

    def can_perform(self, team: Team, tile: str) -> bool:
        """Whether ``team`` (the bot's team, maybe with recruits) can complete ``tile``: a
        tile the team can complete stays possible with more castellers, so the team
        without recruits answers first, for every plan at once."""
        if tile_tower(self.team, self.ranks, tile) is not None:
            return True
        return team != self.team and tile_tower(team, self.ranks, tile) is not None

    # this round's festival ---------------------------------------------------------------

    def festival_value(
        self, region: str, team: Team, ranks: Ranks
    ) -> tuple[float, Festival | None, bool]:
        """§5 at the end of this round in ``region``: the points, the festival, whether the
        bot takes something there (for §9.2)."""
        key = (region, team, ranks)
        if key not in self._festivals:
            best: tuple[float, Festival | None, bool] = (0.0, None, False)
            for festival in self.now:
                if festival.region != region:
                    continue
                tower = festival_tower(team, ranks, festival.size)
                if tower is None:
                    continue
                score = festival_score(tower, festival.size)
                mine = of_size(tower, festival.size)
                rivals = [p for p in self.rivals if takes_part(p, festival)]
                # §5.3 ties share a rank
                rank = 1 + sum(festival_score(p.tower, festival.size) > score for p in rivals)
                table = PRIZE_BY_RANK[self.state.seats]
                prize = 0.0
                if rank <= len(table) and self.state.prizes.left(table[rank - 1]) > 0:
                    prize = PRIZE_POINTS[table[rank - 1]]
                token = 0.0
                if all(of_size(p.tower, festival.size) < mine for p in rivals):  # §5.4
                    token = 1.0 if festival.size in self.my_sizes else 2.0  # §9.4
                value = prize + token + max(0, score - self.me.best)
                if value > best[0]:
                    best = (value, festival, bool(prize or token))
            self._festivals[key] = best
        return self._festivals[key]

    # plans --------------------------------------------------------------------------------

    def routes(self) -> Iterator[tuple[tuple[str | None, ...], tuple[str, ...]]]:
        """Every route the moves left allow: stay, move, move + special move."""
        here = self.me.region
        if here is not None:
            yield (here,), ()
        if self.can_move:
            for there in REGIONS if here is None else neighbours(here):
                yield (here, there), ("move",)
                if self.can_special and self.style.routes:
                    for further in neighbours(there):
                        if further != here:
                            yield (here, there, further), ("move", "special")
        elif self.can_special and here is not None and self.style.routes:
            for there in neighbours(here):
                yield (here, there), ("special",)

    def segments(self, region: str) -> list[tuple[str, str]]:
        """The wheel segments a player in ``region`` may train with: (choice, segment)."""
        out = [("region", region)]
        if self.normal:
            out.append(("all", ALL_SEGMENT))
        return out

    def plan(self, route: tuple[str | None, ...], legs: tuple[str, ...]) -> Plan:
        """The best plan along ``route``."""
        state = self.state
        stops = [i for i, region in enumerate(route) if region is not None]
        special_free = self.can_special and "special" not in legs
        value = -self.token_cost * legs.count("special")

        recruit: tuple[int, tuple[int, ...]] | None = None
        if self.can_recruit:
            best = 0.0
            for i in stops:
                stop = route[i]
                assert stop is not None  # stops are where the route has a region
                sizes, worth = self.best_recruit(stop)
                if sizes and worth > best:
                    recruit, best = (i, sizes), worth
            value += best

        def team_at(i: int) -> Team:
            if recruit is None or i < recruit[0]:
                return self.team
            return _joined(self.team, recruit[1])

        trainings: list[tuple[float, Training | None]] = [(0.0, None)]
        performs: list[tuple[float, Perform | None]] = [(0.0, None)]
        skill_seen: set[str] = set()
        for i in stops:
            region = route[i]
            assert region is not None
            row = state.row(region)
            doable = [t for t in row.tiles if self.can_perform(team_at(i), t)]
            for tile in doable:
                worth = TILES[tile].points + row.tokens
                if special_free:
                    # §6 the spent token lies on the row first, so it comes back as a point
                    performs.append((worth + 1 - self.token_cost, Perform(i, tile, "special")))
            if not self.can_train:
                continue
            for choice, segment in self.segments(region):
                shown = self.shown[segment]
                if shown == SPECIAL_TILE:
                    for tile in doable:
                        worth = TILES[tile].points + row.tokens
                        performs.append((worth, Perform(i, tile, "train", choice)))
                    taken = recruit[1] if recruit is not None and recruit[0] == i else ()
                    single, worth = self.best_recruit(region, taken, most=1)
                    if single:
                        action = Train(choice, effect="recruit", size=single[0])
                        trainings.append((worth, Training(i, action, None, single)))
                elif self.ranks[SKILL_NAMES.index(shown)] < MAX_RANK:
                    # the same skill anywhere on the route: train it at the first stop
                    if shown in skill_seen:
                        continue
                    skill_seen.add(shown)
                    trainings.append(
                        (self.skill_value(shown), Training(i, Train(choice), shown))
                    )

        end = route[-1]
        assert end is not None
        value += self.position_value(end)
        team_end = team_at(len(route) - 1)
        # the best training while the wheel is free, with the festival it leads to; only
        # the most promising few are worth solving for (a festival never gets worse with
        # more castellers or skills, so the others keep the festival of no training)
        scored = []
        promising = sorted(trainings[1:], key=lambda t: -t[0])[:_FESTIVAL_TRAININGS]
        for worth, training in trainings:
            team, ranks = team_end, self.ranks
            if training is not None and (worth, training) in promising:
                team = _joined(team, training.recruit)
                ranks = _raised(ranks, training.skill)
            fest = self.festival_value(end, team, ranks)
            scored.append((worth + fest[0], training, fest))
        free = max(scored, key=lambda s: s[0])
        idle = scored[0]  # no training: the wheel performs instead

        best_plan: Plan | None = None
        best_total = 0.0
        for worth, perform in performs:
            rest, training, fest = idle if perform and perform.means == "train" else free
            total = worth + rest
            gained = set()
            if perform is not None:
                gained.add(route[perform.at])
            if fest[2]:
                gained.add(end)
            total += (
                DIVERSITY_POINTS[len(self.have | gained)] - DIVERSITY_POINTS[len(self.have)]
            )
            if best_plan is None or total > best_total + 1e-9:
                best_total = total
                best_plan = Plan(
                    value + total, route, legs, recruit, training, perform, fest[1]
                )
        assert best_plan is not None
        return best_plan

    def plans(self) -> list[Plan]:
        """The best plan along each route, in route order (staying, then board order)."""
        return [self.plan(route, legs) for route, legs in self.routes()]

    def best(self, end: str | None = None) -> Plan:
        """The best plan of all routes (the first of equals: staying, then board order);
        with ``end``, of the routes that end there (if any does)."""
        best: Plan | None = None
        routes = list(self.routes())
        if end is not None and any(route[-1] == end for route, _ in routes):
            routes = [(route, legs) for route, legs in routes if route[-1] == end]
        for route, legs in routes:
            candidate = self.plan(route, legs)
            if self.style.noise and self.rng is not None:
                noise = self.rng.uniform(-self.style.noise, self.style.noise)
                candidate = attrs.evolve(candidate, value=candidate.value + noise)
            if best is None or candidate.value > best.value + 1e-9:
                best = candidate
        assert best is not None
        return best

    # the first step -------------------------------------------------------------------------

    def first_step(self, plan: Plan) -> Action:
        """The action that starts ``plan``: what is due where the pawn stands, then a move,
        then the festival tower, then the end of the turn."""
        me = self.me
        if plan.training is not None and plan.training.at == 0:
            return plan.training.action
        if plan.recruit is not None and plan.recruit[0] == 0:
            return Recruit(plan.recruit[1])
        perform = plan.perform
        if perform is not None and perform.at == 0:
            if not me.tower or not check_tile(me.tower, me.skills, perform.tile).legal:
                tower = tile_tower(self.team, self.ranks, perform.tile)
                assert tower is not None
                return Build(tower)
            if perform.means == "special":
                return Special("perform", tile=perform.tile)
            assert perform.choice is not None
            return Train(perform.choice, effect="perform", tile=perform.tile)
        if len(plan.route) > 1:
            there = plan.route[1]
            assert there is not None
            return Move(there) if plan.legs[0] == "move" else Special("move", region=there)
        festival = plan.festival
        if festival is not None:
            tower = festival_tower(self.team, self.ranks, festival.size)
            standing = (
                festival_score(me.tower, festival.size)
                if enters_festival(me.tower, festival.size) else -1
            )
            if tower is not None and festival_score(tower, festival.size) > standing:
                return Build(tower)
        return EndTurn()


def best_plan(state: GameState, seat: int) -> Plan:
    """The greedy bot's plan for the rest of ``seat``'s turn."""
    return _Turn(state, seat).best()


def next_action(state: GameState, seat: int, end: str | None = None, *,
                style: Style = NORMAL, rng: random.Random | None = None) -> Action:
    """The greedy bot's next action at ``seat``: the first step of its best plan (with
    ``end``, of its best plan that ends the turn in that region; with ``style`` and ``rng``,
    as a bot of that style sees it)."""
    if state.over or state.turn != seat:
        return EndTurn()
    turn = _Turn(state, seat, style, rng)
    return turn.first_step(turn.best(end))


def route_ends(state: GameState, seat: int) -> list[Plan]:
    """The best plan for each region the turn can end in, best first (ties: route order)."""
    ends: dict[str | None, Plan] = {}
    for plan in _Turn(state, seat).plans():
        end = plan.route[-1]
        if end not in ends or plan.value > ends[end].value + 1e-9:
            ends[end] = plan
    return sorted(ends.values(), key=lambda p: -p.value)
