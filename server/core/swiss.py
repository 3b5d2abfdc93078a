"""Swiss tournaments by value: points by placing, standings and their tie-break, pairing.

Pure (no I/O, no clock): :mod:`server.features.tournaments` feeds it the tournament's
players and the results of its rounds, and it answers the standings and the next round's
tables. The rules it implements (docs/protocol.md, "Swiss tournaments"):

**Points by placing.** At a table of ``n`` players the player placed ``k`` (1 is first) gets
``n - k`` points: at 2 seats a win is 1 and a loss 0, at 3 seats 2/1/0, at 4 seats 3/2/1/0.
Players placed equal share the points of the places they cover (a draw at 2 seats is 0.5
each; two sharing first at 3 seats get 1.5 each). A game's places are its ranking
(docs/rules.md §9 "Final scoring", and §10 "Resigning": a resigned player ranks last).

**A bye.** When the players cannot all be seated at tables of two or more (an odd number at
2 seats), the lowest in the standings who has not had a bye yet sits the round out and
scores :data:`BYE_POINTS` (1: a win at 2 seats, as in chess Swiss; the mean of a table at 3
seats). A bye counts no opponent.

**Standings** (:func:`standings`): by points, then Buchholz (the sum of the points of every
opponent met, once per game met), then the total game score (the sum of the player's
scores at their tables), then the seed (the order players joined in; lower first).

**Pairing** (:func:`pair_round`): players in standings order are seated top-down: the
round's tables are :func:`table_sizes` (as few tables as ``seats`` allows, their sizes as
equal as can be, larger first); each table takes the highest player not yet seated, then
the next highest who has met none of those at the table yet. When that leaves some
player with no table free of repeat opponents, the search backs up (a bounded search,
:data:`SEARCH_STEPS`) and, failing that, seats top-down allowing repeats. At 2 seats this is
the Swiss system paired top-down: 1st with 2nd, 3rd with 4th, and so on, each with the next
they have not met; at 3 and 4 seats, groups of players with close scores. A player who left
(``withdrawn``) is not paired again; their games count still.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

#: Points for a bye (see the module docstring).
BYE_POINTS = 1.0
#: How many tries the pairing's search makes before it allows repeat opponents.
SEARCH_STEPS = 20_000


@attrs.frozen
class Table:
    """One table of a round: its players (seat order) and, once played, each one's place
    (1 is first; equal places share) and game score."""

    players: tuple[str, ...]
    places: tuple[int, ...] | None = None
    scores: tuple[int, ...] | None = None

    @property
    def done(self) -> bool:
        return self.places is not None


@attrs.frozen
class Round:
    """A round: its tables and who had the bye (None: nobody)."""

    tables: tuple[Table, ...]
    bye: str | None = None


@attrs.frozen
class Standing:
    """One line of the standings."""

    rank: int
    player: str
    points: float
    buchholz: float
    score: int
    seed: int
    games: int


def table_points(places: Sequence[int]) -> list[float]:
    """Each player's points by their place at a table of ``len(places)`` (see the module
    docstring: place ``k`` of ``n`` gets ``n - k``; equal places share)."""
    n = len(places)
    out = []
    for p in places:
        tied = sum(1 for q in places if q == p)
        # the tied players cover places p .. p + tied - 1
        out.append(sum(n - k for k in range(p, p + tied)) / tied)
    return out


def places_of(ranking: Sequence[Sequence[int]], n: int) -> tuple[int, ...]:
    """The place of each of ``n`` seats from a ranking given as groups of seats, best first
    (seats in one group are placed equal)."""
    places = [0] * n
    k = 1
    for group in ranking:
        for seat in group:
            places[seat] = k
        k += len(group)
    return tuple(places)


def _totals(rounds: Iterable[Round]) -> tuple[dict[str, float], dict[str, int],
                                               dict[str, list[str]], dict[str, int]]:
    points: dict[str, float] = {}
    score: dict[str, int] = {}
    opponents: dict[str, list[str]] = {}
    games: dict[str, int] = {}
    for r in rounds:
        if r.bye is not None:
            points[r.bye] = points.get(r.bye, 0.0) + BYE_POINTS
        for t in r.tables:
            if t.places is None:
                continue
            for i, (p, pts) in enumerate(zip(t.players, table_points(t.places), strict=True)):
                points[p] = points.get(p, 0.0) + pts
                score[p] = score.get(p, 0) + (t.scores[i] if t.scores else 0)
                games[p] = games.get(p, 0) + 1
                opponents.setdefault(p, []).extend(q for q in t.players if q != p)
    return points, score, opponents, games


def standings(seeds: Mapping[str, int], rounds: Iterable[Round]) -> list[Standing]:
    """The standings of players ``seeds`` (player → seed) after ``rounds`` (tables not
    played yet count nothing), best first, by the tie-break of the module docstring."""
    points, score, opponents, games = _totals(rounds)
    lines = []
    for p, seed in seeds.items():
        buchholz = sum(points.get(q, 0.0) for q in opponents.get(p, []))
        lines.append((points.get(p, 0.0), buchholz, score.get(p, 0), seed, p, games.get(p, 0)))
    lines.sort(key=lambda x: (-x[0], -x[1], -x[2], x[3], x[4]))
    return [Standing(i + 1, p, pts, b, s, seed, g)
            for i, (pts, b, s, seed, p, g) in enumerate(lines)]


def table_sizes(n: int, seats: int) -> list[int]:
    """The sizes of a round's tables for ``n`` players at tables of at most ``seats``: as
    few tables as can be, sizes as equal as can be, larger first (a size of 1 is a bye)."""
    if n <= 0:
        return []
    count = -(-n // seats)
    base, extra = divmod(n, count)
    return [base + 1] * extra + [base] * (count - extra)


def met(rounds: Iterable[Round]) -> set[frozenset[str]]:
    """Every pair of players who have shared a table."""
    out: set[frozenset[str]] = set()
    for r in rounds:
        for t in r.tables:
            for i, a in enumerate(t.players):
                for b in t.players[i + 1:]:
                    out.add(frozenset((a, b)))
    return out


def pair_round(seeds: Mapping[str, int], rounds: Sequence[Round], seats: int,
               withdrawn: Iterable[str] = ()) -> Round:
    """The next round's tables (see the module docstring, "Pairing" and "A bye")."""
    gone = set(withdrawn)
    order = [s.player for s in standings(seeds, rounds) if s.player not in gone]
    bye = None
    sizes = table_sizes(len(order), seats)
    if sizes and sizes[-1] == 1:
        sizes.pop()
        had = {r.bye for r in rounds}
        bye = next((p for p in reversed(order) if p not in had), order[-1])
        order.remove(bye)
    seen = met(rounds)
    tables = _search(order, sizes, seen) or _greedy(order, sizes, seen)
    return Round(tuple(Table(tuple(t)) for t in tables), bye)


def _search(order: list[str], sizes: list[int], seen: set[frozenset[str]],
            ) -> list[list[str]] | None:
    """Top-down seating with no repeat opponents, backing up when stuck; None when none is
    found within :data:`SEARCH_STEPS` tries."""
    steps = 0
    tables: list[list[str]] = [[] for _ in sizes]
    free = list(order)
    rank = {p: i for i, p in enumerate(order)}

    def fits(p: str, table: list[str]) -> bool:
        return all(frozenset((p, q)) not in seen for q in table)

    def fill(ti: int) -> bool:
        nonlocal steps
        if ti == len(sizes):
            return True
        table = tables[ti]
        if len(table) == sizes[ti]:
            return fill(ti + 1)
        # a table's first seat is the highest player left; the others, each below the last
        # seated (a table is one set of players, tried once), the highest that fits first
        candidates = (free[:1] if not table
                      else [p for p in free if rank[p] > rank[table[-1]]])
        for p in candidates:
            steps += 1
            if steps > SEARCH_STEPS:
                return False
            if table and not fits(p, table):
                continue
            table.append(p)
            at = free.index(p)
            free.remove(p)
            if fill(ti):
                return True
            table.pop()
            free.insert(at, p)
        return False

    return tables if fill(0) else None



def _greedy(order: list[str], sizes: list[int], seen: set[frozenset[str]]) -> list[list[str]]:
    """Top-down seating preferring players not met yet, allowing repeats when it must."""
    free = list(order)
    tables = []
    for size in sizes:
        table = [free.pop(0)]
        while len(table) < size:
            pick = next((p for p in free
                         if all(frozenset((p, q)) not in seen for q in table)), free[0])
            table.append(pick)
            free.remove(pick)
        tables.append(table)
    return tables
