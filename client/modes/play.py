"""``castell play``: a game against bots in one command, with nothing else running.

A :class:`server.app.CastellServer` is started inside this process, on a free loopback port,
keeping its games in ``play.sqlite3`` in the user's data folder; the client connects to it
like to any server, signed in with an account key kept for :data:`PLAY_HOME` (the embedded
server knows who it is whatever its port, so the account is the same every time: its lobby's
`games`, `replay N` and `abandon N` list and handle this computer's games), and either takes
back the seat of an unfinished game (its token kept in the seat file under
:data:`PLAY_HOME`, whatever port the server had then) or creates a room, seats bots in the
other seats and starts. The server stops when the client does; its games
stay in the file, and come back with it next time: ``castell play --games`` lists them and
``castell play --export [ROOM]`` writes one to a record file for ``castell replay``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from client.control.controller import Controller
from client.net.session import Session

if TYPE_CHECKING:
    from server.store.base import GameRecord

DEFAULT_BOT_DELAY = 0.6
#: The name the seats of ``castell play`` games are kept under in the seat file (the
#: embedded server's port changes every time).
PLAY_HOME = "castell play"


Startup = Callable[[Controller], Awaitable[None]]


def play_db_path() -> Path:
    """``play.sqlite3`` in the user's data folder (created if missing): apart from the file a
    ``castell-server`` on this computer keeps, which it holds locked while it runs."""
    import platformdirs

    folder = platformdirs.user_data_path("castell", appauthor=False)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "play.sqlite3"


async def play(name: str, *, seats: int, variant: str, level: str, bot_delay: float,
               run: Callable[[Session, Startup], Awaitable[int]],
               resume: str | None = None) -> int:
    """Serve, connect, and hand the session to ``run`` with the steps that start the game
    (``resume``: ``"resume"`` the unfinished game, ``"new"`` one, None: ask)."""
    from client.local.keys import KeyStore
    from client.local.seats import SeatStore
    from server.app import CastellServer
    from server.config import ServerConfig
    from server.store import open_store

    # The embedded server must not write on the player's screen.
    logging.getLogger("castell").addHandler(logging.NullHandler())
    logging.getLogger("castell").propagate = False
    logging.getLogger("websockets").addHandler(logging.NullHandler())
    logging.getLogger("websockets").propagate = False
    # One worker process for the bots' thinking: the screen stays quick while a hard bot
    # thinks, and a laptop keeps its other cores.
    server = CastellServer(ServerConfig(host="127.0.0.1", port=0, bot_delay=bot_delay,
                                        bot_workers=1,
                                        ping_interval=None, idle_timeout=None),
                           open_store(play_db_path()))
    await server.start()
    try:
        session = Session(f"ws://127.0.0.1:{server.port}", name, seats=SeatStore(),
                          home=PLAY_HOME, keys=KeyStore())
        await session.open()

        async def begin(controller: Controller) -> None:
            await controller.start_play(seats, variant, level, resume)

        return await run(session, begin)
    finally:
        await server.close()


# Kept games: listed and exported ---------------------------------------------------------

#: How many kept games ``castell play --games`` lists, newest first.
GAMES_LISTED = 20


async def _kept(room: str | None = None) -> list[GameRecord]:
    """The games kept in ``play.sqlite3``, newest first (only ``room`` when given), read
    without taking the file from a ``castell play`` running meanwhile."""
    from server.store import open_store

    path = play_db_path()
    if not path.exists():
        return []
    async with open_store(path, read_only=True) as store:
        if room is not None:
            record = await store.load(room)
            return [record] if record is not None else []
        rooms = [s.room for s in await store.unfinished_summaries()]
        rooms += await store.list_finished(GAMES_LISTED)
        rooms.sort(key=lambda r: (r.finished_at or r.started_at or r.created_at), reverse=True)
        loaded = [await store.load(r.room) for r in rooms[:GAMES_LISTED]]
        return [record for record in loaded if record is not None]


def game_line(record: GameRecord) -> str:
    """One kept game in a line: id, when, how it stands, and who sat (with the scores of a
    finished game): ``r7f3a09c1  2026-11-30 18:02  over: Anna 63 (won) · Pau·greedy 57``."""
    import time

    room = record.room
    when = time.strftime("%Y-%m-%d %H:%M",
                         time.localtime(room.finished_at or room.started_at or room.created_at))
    seats = sorted(record.seats, key=lambda s: s.seat)
    result = record.result
    if result is not None:
        totals = [score.get("total") for score in result.get("scores", ())]
        winners = set(result.get("winners", ()))
        resigned = set(result.get("resigned", ()))
        who = " · ".join(
            f"{s.name} {totals[s.seat] if s.seat < len(totals) else '?'}"
            f"{' (won)' if s.seat in winners else ' (resigned)' if s.seat in resigned else ''}"
            for s in seats)
        how = f"over: {who}"
    else:
        done = len(record.actions)
        how = (f"unfinished, {done} action{'s' if done != 1 else ''} in: "
               + " · ".join(s.name for s in seats))
    return f"{room.room}  {when}  {how}"


async def list_games(out: TextIO) -> int:
    """``castell play --games``: the kept games, newest first, and how to export one."""
    games = await _kept()
    if not games:
        print("No game is kept yet: `castell play` starts one.", file=out)
        return 0
    print(f"Games kept on this computer (newest first, at most {GAMES_LISTED}):", file=out)
    for record in games:
        print("  " + game_line(record), file=out)
    print("`castell play --export ROOM` writes one to a file for `castell replay`; "
          "`castell play --resume` goes back to an unfinished one.", file=out)
    return 0


async def export_kept(room: str | None, output: str | None, out: TextIO) -> int:
    """``castell play --export [ROOM]``: write a kept game (the newest finished one unless
    told) to a record file that ``castell replay`` reads; an unfinished game too, said so
    (its record holds the seed: the bag's order is no secret from its only player)."""
    from server.ops.export import export_game

    games = await _kept(room)
    if room is None:
        games = [g for g in games if g.result is not None]
    if not games:
        print("castell play: " + (f"no kept game is called {room!r} (`castell play --games` "
                                  "lists them)" if room is not None else
                                  "no finished game is kept yet (`castell play --games` "
                                  "lists them all)"), file=sys.stderr)
        return 1
    record = games[0]
    path = output or f"castell-{record.room.room}.json"
    try:
        export_game(record, path)
    except FileExistsError:
        print(f"castell play: {path} exists already: give another with --output FILE",
              file=sys.stderr)
        return 1
    unfinished = "" if record.result is not None else \
        " (not over yet: the record shows the whole bag)"
    print(f"wrote {path}{unfinished}: `castell replay {path}` steps through it", file=out)
    return 0
