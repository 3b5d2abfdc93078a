"""The server's front page (``/``) and its tournaments (``/tournaments``, ``/tournaments/ID``).

The front page says how to join (the one command), then what is on: the games in play and
the rooms waiting for players (the public room list every server sharing the directory
shows, as ``list_rooms`` gives it; the players and round of those this server holds), who is
online here (signed-in accounts that do not hide their presence, and a count of every
connection), the top of the leaderboard, the tournaments, and the games finished lately. It
is made at most once every :data:`HOME_TTL` seconds, however many ask, and each of its lists
is cut to a few dozen lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from server.features.tournaments import LISTED
from server.store.base import RoomRecord
from server.web.answers import NotFound, Page
from server.web.cache import Cache
from server.web.render import render
from server.web.sources import Sources, finished_game
from shared.errors import CastellError
from shared.view import RoomStatus

if TYPE_CHECKING:
    from server.web.pages import Site

#: Seconds the front page is kept, and a tournament's pages.
HOME_TTL: Final = 2.0
TOURNAMENT_TTL: Final = 5.0
#: Rooms of the room list the front page reads at most, and lines of each of its lists.
WALK: Final = 1000
SHOWN: Final = 30
#: Places of the leaderboard on the front page, and tournaments and finished games.
TOP: Final = 10
TOURNAMENTS: Final = 10
FINISHED: Final = 10


class HomePages:
    """``/``, ``/tournaments`` and ``/tournaments/ID`` (see the module docstring)."""

    def __init__(self, sources: Sources, cache: Cache[Page]) -> None:
        self.sources = sources
        self.cache = cache
        #: Whether each finished room read lately is a game the pages show (a finished
        #: game never changes: each is read once).
        self.games: Cache[bool] = Cache(FINISHED * 20)

    async def home(self, site: Site) -> Page:
        return await self.cache.get(("home", site), lambda: self._home(site), ttl=HOME_TTL)

    async def _rooms(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, int]:
        """The public rooms: those in play and those waiting (at most :data:`SHOWN` each),
        and how many of each the list holds (as far as :data:`WALK` rooms)."""
        src = self.sources
        playing: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        counts = {RoomStatus.PLAYING: 0, RoomStatus.WAITING: 0}
        after: str | None = None
        seen = 0
        while seen < WALK:
            page, _, more = await src.directory.list_page(after, src.config.max_listed)
            for summary in page:
                if summary.status not in counts:
                    continue
                counts[RoomStatus(summary.status)] += 1
                shown = playing if summary.status == RoomStatus.PLAYING else waiting
                if len(shown) < SHOWN:
                    shown.append(self._line(summary))
            seen += len(page)
            if not more or not page:
                break
            after = page[-1].room
        return playing, waiting, counts[RoomStatus.PLAYING], counts[RoomStatus.WAITING]

    def _line(self, summary: Any) -> dict[str, Any]:
        """A room's line: its summary, and (held here) its round and players."""
        line = {"room": summary.room, "name": summary.name, "seats": summary.seats,
                "taken": summary.taken, "variant": summary.variant,
                "turn_seconds": summary.turn_seconds, "rated": summary.rated,
                "round": None, "players": []}
        runner = self.sources.lobby.rooms.get(summary.room)
        if runner is not None and not runner.room.private:
            room = runner.room
            state = room.state
            line["round"] = state.round if state is not None else None
            line["players"] = [p.name for p in sorted(room.info().players,
                                                      key=lambda p: p.seat)]
        return line

    def _online(self) -> list[dict[str, Any]]:
        """The signed-in accounts connected here that do not hide their presence, by name,
        with where each is (a private room unnamed)."""
        src = self.sources
        out = []
        for account, conns in src.accounts.connections.items():
            if account in src.presence.hidden:
                continue
            where = src.presence.here(account)
            name = next((c.name for c in conns if c.name), None)
            if where is None or name is None:
                continue
            out.append({"name": name, "state": where[0], "room": where[1],
                        "room_name": where[2]})
        out.sort(key=lambda o: str(o["name"]).casefold())
        return out

    async def _finished(self) -> list[RoomRecord]:
        """The public games finished last that were played to their end (not called off,
        not closed by the host), latest first."""
        out = []
        for room in await self.sources.store.list_finished(limit=FINISHED * 3):
            if room.private or room.started_at is None:
                continue

            async def shows(room_id: str = room.room) -> bool:
                return finished_game(await self.sources.store.load(room_id)) is not None

            if await self.games.get(room.room, shows):
                out.append(room)
            if len(out) >= FINISHED:
                break
        return out

    async def _home(self, site: Site) -> Page:
        src = self.sources
        playing, waiting, in_play, open_ = await self._rooms()
        online = self._online()
        finished = await self._finished()
        return Page(200, render(
            "home.html", site=site, playing=playing, waiting=waiting, in_play=in_play,
            open=open_, online=online[:SHOWN * 2], online_count=len(online),
            connected=src.connected(), leaders=await src.ratings.leaderboard(TOP, None),
            tournaments=(await src.tournaments.listed())[:TOURNAMENTS], finished=finished))

    async def tournaments(self, site: Site) -> Page:
        async def make() -> Page:
            listed = await self.sources.tournaments.listed()
            return Page(200, render("tournaments.html", site=site, tournaments=listed,
                                    listed=LISTED))

        return await self.cache.get(("tournaments", site), make, ttl=TOURNAMENT_TTL)

    async def tournament(self, tid: str, site: Site) -> Page:
        async def make() -> Page:
            try:
                t = await self.sources.tournaments.get(tid)
            except CastellError as exc:
                raise NotFound(tid) from exc
            names = {a: p.name for a, p in t.players.items()}
            rounds = [{"number": i, "bye": names.get(r["bye"]) if r["bye"] else None,
                       "tables": [{"room": table["room"],
                                   "players": [names[a] for a in table["players"]],
                                   "places": table["places"], "scores": table["scores"]}
                                  for table in r["tables"]]}
                      for i, r in enumerate(t.played, 1)]
            return Page(200, render("tournament.html", site=site, t=t, reply=t.reply(0),
                                    rounds=list(reversed(rounds))))

        return await self.cache.get(("tournament", tid, site), make, ttl=TOURNAMENT_TTL)
