"""Every page the server serves, by what it shows, sharing one bounded cache.

:class:`Pages` puts the page groups together: the front page and tournaments
(:mod:`server.web.home`), a game in play and a finished one (:mod:`server.web.games`), the
players and the leaderboard (:mod:`server.web.people`). :class:`Site` is what every page says
of the server itself: its name, the one command that joins it, how often a live game's page
refreshes. A page's answer is kept in the cache under a key that holds the site too, so that
pages made for one ``Host`` are never served for another.
"""

from __future__ import annotations

from typing import Final

import attrs

from server.web.answers import Page
from server.web.cache import Cache
from server.web.games import GamePages
from server.web.home import HomePages
from server.web.people import PeoplePages
from server.web.sources import Sources

#: Pages kept at once (the least recently asked for go first): a live page for each room
#: a server holds by default (--max-rooms), and the others.
PAGES_KEPT: Final = 2048


@attrs.frozen
class Site:
    """The server as every page names it: ``name``; ``join``, the address ``castell``
    joins it at; ``refresh``, the seconds after which a live game's page reloads itself."""

    name: str
    join: str
    refresh: int


class Pages:
    """The page groups and their cache (see the module docstring)."""

    def __init__(self, sources: Sources) -> None:
        self.cache: Cache[Page] = Cache(PAGES_KEPT)
        self.home = HomePages(sources, self.cache)
        self.games = GamePages(sources, self.cache)
        self.people = PeoplePages(sources, self.cache)
