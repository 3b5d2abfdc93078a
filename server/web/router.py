"""A browser's request to its page: the per-address rate limit, the routes, and the error
boundary of the web pages.

:class:`Web` is what the protocol edge asks (:class:`server.edge.admission.Admission`, for a
plain GET that is no WebSocket upgrade). It charges the asking address one token of its
bucket (``--web-rate``, ``--web-burst``: more is ``429``, with ``Retry-After``), finds the
page of the path, and answers it. A path no page has, an id no room, game, player or
tournament has (or a private one's), and a malformed query are all ``404`` with a page that
says so. Anything else that goes wrong is logged with its cause and answered ``500``: the
browser learns that something failed, never what (no traceback ever reaches a page).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, quote, unquote, urlsplit

from server.core.limits import Buckets
from server.web.answers import NotFound, Page, redirect
from server.web.pages import Pages, Site
from server.web.render import STYLE, render
from server.web.sources import Sources

if TYPE_CHECKING:
    from server.config import ServerConfig
    from server.ops.metrics import Metrics

log = logging.getLogger("castell.web")

#: What a room's, game's or tournament's id may look like (anything else: 404 at once).
ID: Final = re.compile(r"[A-Za-z0-9_-]{1,40}")
#: A ``Host`` header that may stand in the join command: a name or an address, and a port.
HOST: Final = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?"
                         r"|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")
#: The highest step a replay's page may be asked for (a game has far fewer).
STEP_MAX: Final = 100_000
#: Seconds between two sweeps of the full buckets.
SWEEP_EVERY: Final = 60.0

ROBOTS: Final = b"""User-agent: *
Disallow: /rooms/
Disallow: /games/*?
Disallow: /games/*/record
"""


class Web:
    """The web pages of one server (see the module docstring)."""

    def __init__(self, config: ServerConfig, sources: Sources, *,
                 metrics: Metrics | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.pages = Pages(sources)
        self.metrics = metrics
        self.clock = clock
        #: One bucket of pages per address.
        self.buckets = Buckets(config.web_rate, config.web_burst)
        self._swept = clock()

    def site(self, host: str | None, proto: str | None) -> Site:
        """What the pages say of the server, for a request that came to ``host`` (its
        ``Host`` header) over ``proto`` (a trusted proxy's ``X-Forwarded-Proto``)."""
        cfg = self.config
        join = cfg.web_join
        if join is None:
            scheme = "wss" if cfg.certfile or (proto or "").lower() == "https" else "ws"
            where = host if host is not None and HOST.fullmatch(host) \
                else f"{cfg.host}:{cfg.port}"
            join = f"{scheme}://{where}"
        return Site(cfg.web_name, join, cfg.web_refresh)

    async def answer(self, path: str, address: str, host: str | None = None,
                     proto: str | None = None) -> Page:
        """The answer to a GET of ``path`` from ``address``."""
        started = self.clock()
        if started - self._swept >= SWEEP_EVERY:
            self.buckets.sweep(started)
            self._swept = started
        site = self.site(host, proto)
        if not self.buckets.take(address, started):
            page = Page(429, render("error.html", site=site, status=429,
                                    title="Too many pages", what="This address asked for "
                                    "more pages than the server gives; wait a moment."),
                        headers=(("Retry-After",
                                  str(max(1, math.ceil(1 / max(self.config.web_rate,
                                                               1e-3))))),))
        else:
            page = await self._page(path, site)
        if self.metrics is not None:
            self.metrics.page(page.status, self.clock() - started)
        return page

    async def _page(self, path: str, site: Site) -> Page:
        try:
            return await self._route(path, site)
        except NotFound:
            return Page(404, render("error.html", site=site, status=404,
                                    title="Not found", what="There is no such page here: "
                                    "the game may be over and forgotten, private, or never "
                                    "have been."))
        except Exception:
            log.exception("the page %r could not be made", path[:200])
            return Page(500, render("error.html", site=site, status=500,
                                    title="Something failed", what="This page could not "
                                    "be made just now; the server's host has been told."))

    def _route(self, path: str, site: Site) -> Awaitable[Page]:
        """The page of ``path`` (raises :class:`NotFound` for none)."""
        try:
            split = urlsplit(path)
            parts = [unquote(part, errors="strict") for part in split.path.split("/")[1:]]
            query = parse_qs(split.query, max_num_fields=8, errors="strict")
        except ValueError as exc:  # a malformed path or query (bad %-escapes, too many)
            raise NotFound(path) from exc
        if len(parts) > 1 and parts[-1] == "":
            parts.pop()
        pages = self.pages
        match parts:
            case [""]:
                return pages.home.home(site)
            case ["style.css"]:
                return _static(Page(200, STYLE, content_type="text/css; charset=utf-8",
                                    cache="public, max-age=86400"))
            case ["robots.txt"]:
                return _static(Page(200, ROBOTS, content_type="text/plain; charset=utf-8",
                                    cache="public, max-age=86400"))
            case ["rooms", room] if ID.fullmatch(room):
                return pages.games.room(room, site)
            case ["games", room] if ID.fullmatch(room):
                return pages.games.game(room, _step(query), site)
            case ["games", room, "record"] if ID.fullmatch(room):
                return pages.games.record(room)
            case ["players"]:
                name = (query.get("name") or [""])[0].strip()
                return _static(redirect(f"/players/{quote(name, safe='')}" if name
                                        else "/leaderboard"))
            case ["players", name]:
                return pages.people.player(name, site)
            case ["leaderboard"]:
                return pages.people.leaderboard(site)
            case ["tournaments"]:
                return pages.home.tournaments(site)
            case ["tournaments", tid] if ID.fullmatch(tid):
                return pages.home.tournament(tid, site)
        raise NotFound(path)


async def _static(page: Page) -> Page:
    return page


def _step(query: dict[str, list[str]]) -> int | None:
    """A replay's ``?step=N`` (None: not given; :class:`NotFound` for a bad one)."""
    given = query.get("step")
    if not given:
        return None
    text = given[0]
    if not text.isascii() or not text.isdigit() or int(text) > STEP_MAX:
        raise NotFound(f"step {text!r}")
    return int(text)
