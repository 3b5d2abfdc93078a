"""The pages of one game: ``/rooms/ID`` (a game being played, as a spectator sees it),
``/games/ID`` (a finished game: its final table, score race, step-through replay and review)
and ``/games/ID/record`` (its record, for ``castell replay``).

A room this server has in memory is shown from its public view (:meth:`Room.info` and its
state, as every member is pushed them) and its history's last events; its page is cached by
the room's version and public facts, so a change makes a new page and a page asked for a
thousand times between two changes is made once; and a game that changes faster than that
is shown as it stood at most :data:`FRESH` seconds ago, so that its page is made at most so
often however fast it moves. A room not in memory (unloaded, or served
by another node of a cluster) is read from the store and replayed for its page, which is
kept a few seconds. A private room is never shown, nor its game: its pages answer as those
of a room that does not exist. A finished game is replayed once (off the event loop) and
kept, so stepping through it costs a view and a template.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import msgpack

from server.ops.export import record_file
from server.web import board as b
from server.web.answers import NotFound, Page
from server.web.cache import Cache
from server.web.render import render
from server.web.replays import Replay, replay, review_summary
from server.web.sources import Sources, finished_game, shown
from server.web.svg import score_race
from shared.codec import event_to_wire
from shared.describe import status_text
from shared.replay import record_steps
from shared.review import Review, ReviewError
from shared.view import RoomInfo, RoomStatus, SeatInfo, View, make_view

if TYPE_CHECKING:
    from server.runtime.runner import RoomRunner
    from server.web.pages import Site

log = logging.getLogger("castell.web")

#: Seconds a live game's page is served as it is, however the game moved meanwhile (its
#: watchers reload every --web-refresh seconds, 5 unless told).
FRESH: Final = 2.0
#: History entries (versions) a live page reads for its last events.
HISTORY_ENTRIES: Final = 24
#: Finished games whose replays are kept at once (each a few hundred states).
REPLAYS_KEPT: Final = 16
#: Seconds a finished game's page is kept before its review is looked for again.
GAME_TTL: Final = 60.0
#: Steps of a replay whose events a step's page lists.
STEP_EVENTS: Final = 8


class GamePages:
    """``/rooms/ID``, ``/games/ID`` and its record (see the module docstring)."""

    def __init__(self, sources: Sources, cache: Cache[Page], *,
                 clock: Callable[[], float] = time.time) -> None:
        self.sources = sources
        self.cache = cache
        #: The page made last for each room, for :data:`FRESH` seconds (on the cache's
        #: clock); the pages themselves are the cache's.
        self.latest: Cache[Page] = Cache(cache.size, clock=lambda: cache.clock())
        self.replays: Cache[Replay] = Cache(REPLAYS_KEPT)
        self.clock = clock

    # -- a game in play ---------------------------------------------------------------------

    async def room(self, room_id: str, site: Site) -> Page:
        """A game being played (or a room waiting for players), as a spectator sees it."""
        runner = self.sources.lobby.rooms.get(room_id)
        refresh = float(self.sources.config.web_refresh)
        if runner is not None:
            room = runner.room
            if room.private:
                raise NotFound(room_id)
            # A game that moves faster than its watchers reload is shown as it was at most
            # FRESH seconds ago: its page is made at most that often, however many ask.
            latest = self.latest.peek((room_id, site))
            if latest is not None:
                return latest
            info = room.info()
            key = ("room", room_id, room.version, info, site)
            # the time left on a turn is said as of the page: made again once a refresh old
            page = await self.cache.get(key, lambda: self._live(runner, info, site),
                                        ttl=refresh if info.deadline is not None else None)
            self.latest.put((room_id, site), page, ttl=FRESH)
            return page
        return await self.cache.get(("stored room", room_id, site),
                                    lambda: self._stored(room_id, site), ttl=refresh)

    async def _live(self, runner: RoomRunner, info: RoomInfo, site: Site) -> Page:
        view = make_view(info, runner.room.state)  # (before any wait: the view of the key)
        try:
            entries = await runner.history(None, HISTORY_ENTRIES)
            events = [e for entry in entries for e in entry.events]
        except Exception as exc:  # the page goes without its events
            log.warning("room %s: no events for its page: %s", runner.id, exc)
            events = []
        return self._room_page(view, events, site)

    async def _stored(self, room_id: str, site: Site) -> Page:
        record = shown(await self.sources.store.load(room_id))
        if record is None:
            raise NotFound(room_id)
        r = record.room
        info = RoomInfo(room=r.room, name=r.name, variant=r.variant, seats=r.seats,
                        turn_seconds=r.turn_seconds, status=r.status,
                        players=tuple(SeatInfo(s.seat, s.name, bot=s.bot)
                                      for s in record.seats))
        if r.status == RoomStatus.WAITING:
            return self._room_page(make_view(info, None), [], site)
        steps = await asyncio.to_thread(lambda: record_steps(record_file(record)))
        events = [event_to_wire(e) for _, step in steps[-HISTORY_ENTRIES:] for e in step]
        state = steps[-1][0]
        return self._room_page(make_view(info, state), events, site)

    def _room_page(self, view: View, events: list[dict[str, Any]], site: Site) -> Page:
        shown_board = b.board(view, events, self.clock())
        playing = view.status != RoomStatus.FINISHED
        return Page(200, render("room.html", site=site, room=view.room, board=shown_board,
                                refresh=site.refresh if playing else None))

    # -- a finished game ----------------------------------------------------------------------

    async def _replay(self, room_id: str) -> Replay:
        async def make() -> Replay:
            game = finished_game(await self.sources.store.load(room_id))
            if game is None:
                raise NotFound(room_id)
            return await asyncio.to_thread(replay, game)

        return await self.replays.get(room_id, make)

    async def _review(self, room_id: str) -> dict[str, Any] | None:
        """The game's review in words, once one is kept (None: none yet)."""
        stored = await self.sources.store.review(room_id)
        if stored is None:
            return None
        try:
            return review_summary(Review.from_data(msgpack.unpackb(stored, raw=False)))
        except (ReviewError, ValueError) as exc:
            log.warning("room %s: its kept review cannot be read: %s", room_id, exc)
            return None

    async def game(self, room_id: str, step: int | None, site: Site) -> Page:
        """A finished game at ``step`` of its replay (None: its end)."""
        async def make() -> Page:
            game = await self._replay(room_id)
            at = game.last if step is None else step
            if not 0 <= at <= game.last:
                raise NotFound(f"{room_id} step {step}")
            view = game.view(at)
            end = view if at == game.last else game.view(game.last)
            shown_board = b.board(view, game.events_until(at, STEP_EVENTS))
            chart = score_race(game.series, game.round_starts, None if step is None else at)
            names = [(seat, name) for seat, name in enumerate(game.record.seats)]
            return Page(200, render(
                "game.html", site=site, room=room_id, board=shown_board, chart=chart,
                final=b.score_table(end), outcome=status_text(end),
                names=names, step=at, last=game.last, chosen=step is not None,
                rounds=list(enumerate(game.round_starts, 1)),
                review=await self._review(room_id), record=game.record))

        return await self.cache.get(("game", room_id, step, site), make, ttl=GAME_TTL)

    async def record(self, room_id: str) -> Page:
        """The finished game's record file, to download for ``castell replay``."""
        game = finished_game(await self.sources.store.load(room_id))
        if game is None:
            raise NotFound(room_id)
        return Page(200, game.to_json().encode(), content_type="application/json",
                    cache="max-age=3600",
                    headers=(("Content-Disposition",
                              f'attachment; filename="castell-{room_id}.json"'),))

