"""The pages of players: ``/players/NAME`` (an account's rating, its history as a chart, its
last games, where it is now) and ``/leaderboard``.

A player's page shows what the protocol's ``profile`` and ``leaderboard`` show anyone, and
the account's finished public games; a private game is never listed (its rating change is
only a point of the chart, with no room to it). Where the player is now is said only for an
account that does not hide its presence (``friends``' rule), and never names a private room.
Each page is kept a few seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from server.core.names import name_key
from server.features.moderation import closed_reason
from server.features.ratings import display
from server.web.answers import NotFound, Page
from server.web.cache import Cache
from server.web.render import render
from server.web.sources import Sources
from server.web.svg import rating_history

if TYPE_CHECKING:
    from server.web.pages import Site

#: Seconds a player's page and the leaderboard are kept.
PEOPLE_TTL: Final = 10.0
#: Rated games a player's chart shows at most (the latest), and games listed.
CHARTED: Final = 100
LISTED: Final = 20
#: Places of the leaderboard's page.
LEADERBOARD: Final = 100
#: The longest name looked up (names are shorter: docs/protocol.md, "Names").
NAME_MAX: Final = 64


class PeoplePages:
    """``/players/NAME`` and ``/leaderboard`` (see the module docstring)."""

    def __init__(self, sources: Sources, cache: Cache[Page]) -> None:
        self.sources = sources
        self.cache = cache

    async def player(self, name: str, site: Site) -> Page:
        if not name.strip() or len(name) > NAME_MAX:
            raise NotFound(name)
        key = name_key(name)
        return await self.cache.get(("player", key, site), lambda: self._player(name, site),
                                    ttl=PEOPLE_TTL)

    async def _player(self, name: str, site: Site) -> Page:
        src = self.sources
        account = await src.accounts.owner(name)
        if account is None:
            raise NotFound(name)
        profile = await src.ratings.profile(0, account.account, account.name, last=0)
        rated = list(reversed(await src.store.rated_games(account.account, CHARTED)))
        points = [display(rated[0].mu_before, rated[0].sigma_before)] if rated else []
        points += [display(g.mu_after, g.sigma_after) for g in rated]
        changes = {g.room: (display(g.mu_before, g.sigma_before),
                            display(g.mu_after, g.sigma_after)) for g in rated}
        games = []
        for game in await src.store.account_games(account.account, finished=True,
                                                  limit=LISTED * 2):
            room, result = game.room, game.result or {}
            if room.private or closed_reason(result) is not None or not result.get("scores"):
                continue
            totals = {int(s["seat"]): int(s["total"]) for s in result["scores"]}
            won = game.seat in result.get("winners", ())
            games.append({"room": room.room, "name": room.name, "seats": room.seats,
                          "names": [n for n in game.names if n is not None],
                          "score": totals.get(game.seat), "won": won,
                          "finished_at": room.finished_at,
                          "rating": changes.get(room.room)})
        where = None
        if not await src.store.hidden(account.account):
            where = (await src.presence.of([account.account])).get(account.account)
        return Page(200, render(
            "player.html", site=site, profile=profile, games=games[:LISTED],
            chart=rating_history(points) if len(points) > 1 else None, where=where))

    async def leaderboard(self, site: Site) -> Page:
        async def make() -> Page:
            entries = await self.sources.ratings.leaderboard(LEADERBOARD, None)
            return Page(200, render("leaderboard.html", site=site, entries=entries,
                                    games=self.sources.ratings.games))

        return await self.cache.get(("leaderboard", site), make, ttl=PEOPLE_TTL)
