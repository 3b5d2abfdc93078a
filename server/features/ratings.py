"""Players' ratings: the mathematics (openskill's Plackett–Luce model), the number players
see, and the ``leaderboard`` and ``profile`` replies.

A rating is openskill's pair (``mu``, ``sigma``): a new account starts at the model's
defaults (25, 25/3). A rated game's final order — first place for the winners, ties as ties —
updates every seated account's pair at once (:func:`rate`), in the store transaction that
stores the game's result (:meth:`server.store.base.Store.finish`).

What players see is one integer (:func:`display`): the conservative estimate
``mu − 3·sigma`` (openskill's *ordinal*) on a scale where a new account stands at 1500:
``round(1500 + 20 · (mu − 3·sigma))`` (docs/protocol.md, "Ratings").

:class:`Ratings` answers ``leaderboard`` and ``profile`` from the store (every server has
one, in memory when it is given none).

**The floor of rated play** (docs/protocol.md, "Ratings and quick match"), pure functions
here, applied by the room (:func:`played`), the matcher and the seat requests
(:func:`may_meet`), and the replies (:func:`provisional`):

* a game where nobody played — every turn of every player only ended (:func:`played`) — is
  not rated: its result says why (:data:`NOBODY_PLAYED`);
* two accounts from one network (the /24 of an IPv4 address, the /64 of an IPv6 one) do not
  meet in rated play (:func:`may_meet`): not matched, not seated in one rated room;
* a rating is *provisional* until its account has played :data:`ESTABLISHED` ``.games``
  rated games against at least ``.opponents`` distinct opponents (:func:`provisional`):
  shown as such, and left off the leaderboard.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs
from openskill.models import PlackettLuce

from server.core.limits import network_of
from server.core.room_extras import NOBODY_PLAYED as NOBODY_PLAYED
from server.core.room_extras import played as played
from server.store.base import Placing, RatedGame, RatingRecord
from shared import messages as m
from shared.errors import CastellError
from shared.scoring import places

if TYPE_CHECKING:
    from server.core.room import Finish
    from server.store.base import Store

#: The model every rating is computed with (openskill's defaults: mu 25, sigma 25/3).
MODEL = PlackettLuce()
MU: float = MODEL.mu
SIGMA: float = MODEL.sigma

#: The displayed rating of a new account, and how many display points one point of
#: openskill's ordinal is worth.
BASE = 1500
SCALE = 20


@attrs.frozen
class Floor:
    """What makes a rating established: ``games`` rated games against ``opponents``
    distinct accounts at least."""

    games: int
    opponents: int


#: A rating is provisional until then (docs/protocol.md, "Ratings and quick match").
ESTABLISHED = Floor(games=5, opponents=3)

def provisional(games: int, opponents: int, floor: Floor = ESTABLISHED) -> bool:
    """Whether a rating of ``games`` rated games against ``opponents`` distinct accounts is
    still provisional."""
    return games < floor.games or opponents < floor.opponents


def may_meet(a: str | None, b: str | None) -> bool:
    """Whether players connected from addresses ``a`` and ``b`` may meet in rated play: not
    from one network (server.core.limits.network_of); an unknown address meets anyone."""
    return not a or not b or network_of(a) != network_of(b)


def check_may_sit(address: str | None, seated: Iterable[str | None]) -> None:
    """Refuse (``rated_room``) a seat of a rated room to a player connected from the network
    of one already seated there (``seated``: their addresses)."""
    if not all(may_meet(address, other) for other in seated):
        raise CastellError("a rated game is between players of different networks: an "
                           "account from yours already sits in this room", code="rated_room")


def display(mu: float, sigma: float) -> int:
    """The rating players see: ``round(1500 + 20 · (mu − 3·sigma))``."""
    return round(BASE + SCALE * (mu - 3 * sigma))


def rate(current: dict[str, tuple[float, float]], placings: tuple[Placing, ...],
         ) -> dict[str, tuple[float, float]]:
    """The accounts' new (mu, sigma) after a game finished in ``placings`` order; ``current``
    holds the known ratings (an account missing from it starts at the model's defaults)."""
    teams = [[MODEL.rating(*current.get(p.account, (MU, SIGMA)), name=p.account)]
             for p in placings]
    rated = MODEL.rate(teams, ranks=[float(p.place) for p in placings])
    return {p.account: (team[0].mu, team[0].sigma)
            for p, team in zip(placings, rated, strict=True)}


async def provisional_of(store: Store, accounts: tuple[str, ...]) -> dict[str, bool]:
    """Whether each of ``accounts``' rating is still provisional (:func:`provisional`)."""
    known = await store.ratings(accounts)
    opponents = await store.opponents(accounts)
    return {a: provisional(known[a].games if a in known else 0, opponents.get(a, 0))
            for a in accounts}


async def shown_ratings(store: Store, accounts: tuple[str, ...]) -> dict[str, int]:
    """The displayed ratings of ``accounts`` (a new account's is 1500)."""
    known = await store.ratings(accounts)
    return {a: display(known[a].mu, known[a].sigma) if a in known else display(MU, SIGMA)
            for a in accounts}


def placings(result: dict[str, Any], accounts: dict[int, str]) -> tuple[Placing, ...]:
    """A finished game's order for rating it (:func:`shared.scoring.places`): its winners
    (``result["winners"]``, after the rules' tie-breaks) first, then the others by total,
    equal totals sharing a place, and last those who resigned (``result["resigned"]``, the
    first to resign last: docs/rules.md §10); only the seats that belong to an account
    (``accounts``: seat → account)."""
    place = places(((int(s["seat"]), int(s["total"])) for s in result.get("scores", ())),
                   {int(seat) for seat in result.get("winners", ())},
                   [int(seat) for seat in result.get("resigned", ())])
    return tuple(Placing(seat, accounts[seat], place[seat])
                 for seat in sorted(place) if seat in accounts)


async def finish_rated(store: Store, write: Finish) -> list[RatedGame]:
    """Store a rated game's end: its result and, in the same transaction, its players'
    new ratings (the seats' accounts as stored)."""
    accounts = await store.seat_accounts(write.room)
    return await store.finish(write.room, write.result, write.finished_at,
                              expect_version=write.expect_version,
                              placings=placings(write.result, accounts))


def rating_changes(games: list[RatedGame]) -> dict[int, tuple[int, int]]:
    """Seat → (displayed rating before, after) of a rated game's end."""
    return {g.seat: (display(g.mu_before, g.sigma_before), display(g.mu_after, g.sigma_after))
            for g in games}


async def rated_changes(store: Store, room: str, accounts: dict[int, str],
                        ) -> dict[int, tuple[int, int]]:
    """What a finished rated room's end changed, read back from the store."""
    found: list[RatedGame] = []
    for account in set(accounts.values()):
        found.extend(g for g in await store.rated_games(account, 50) if g.room == room)
    return rating_changes(found)


def _entry(rank: int, r: RatingRecord) -> m.LeaderEntry:
    return m.LeaderEntry(rank=rank, name=r.name, rating=display(r.mu, r.sigma),
                         games=r.games, wins=r.wins)


class Ratings:
    """``leaderboard`` and ``profile`` for one server. See the module docstring."""

    def __init__(self, store: Store, *, min_games: int) -> None:
        self.store = store
        #: Rated games an account needs to appear on the leaderboard.
        self.min_games = min_games

    @property
    def games(self) -> int:
        """Rated games an account needs to be ranked: ``min_games``, and never fewer than
        an established rating needs (:data:`ESTABLISHED`)."""
        return max(self.min_games, ESTABLISHED.games)

    async def of(self, accounts: tuple[str, ...]) -> dict[str, int]:
        """The displayed ratings of ``accounts`` (a new account's is 1500)."""
        return await shown_ratings(self.store, accounts)

    async def leaderboard(self, limit: int, around: str | None) -> list[m.LeaderEntry]:
        """The ranked entries, established ratings only: the best ``limit``, or
        (``around``: an account) the ``limit`` around that account's place (the best ones
        when it is not ranked)."""
        store = self.store
        offset = 0
        if around is not None:
            rank = await store.rank_of(around, self.games, ESTABLISHED.opponents)
            if rank is not None:
                offset = max(0, rank - limit // 2)
        rows = await store.leaderboard(self.games, limit, offset, ESTABLISHED.opponents)
        return [_entry(offset + i + 1, r) for i, r in enumerate(rows)]

    async def profile(self, re: int, account: str, name: str, last: int) -> m.ProfileReply:
        store = self.store
        known = (await store.ratings((account,))).get(account)
        mu, sigma = (known.mu, known.sigma) if known else (MU, SIGMA)
        by_seats = await store.wins_by_seats(account)
        games = await store.rated_games(account, last)
        rank = await store.rank_of(account, self.games, ESTABLISHED.opponents)
        opponents = (await store.opponents((account,))).get(account, 0)
        return m.ProfileReply(
            re=re, name=name, rating=display(mu, sigma),
            games=known.games if known else 0, wins=known.wins if known else 0,
            rank=None if rank is None else rank + 1,
            by_seats=tuple(m.SeatsRecord(seats=n, games=g, wins=w)
                           for n, (g, w) in sorted(by_seats.items())),
            last=tuple(m.RatedResult(room=g.room, seats=g.seats, place=g.place,
                                     before=display(g.mu_before, g.sigma_before),
                                     after=display(g.mu_after, g.sigma_after),
                                     at=g.at) for g in games),
            provisional=provisional(known.games if known else 0, opponents),
        )
