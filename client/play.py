"""``castell play``: a game against bots in one command, with nothing else running.

A :class:`server.app.CastellServer` is started inside this process, on a free loopback port,
keeping its games in ``play.sqlite3`` in the user's data folder; the client connects to it
like to any server and either takes back the seat of an unfinished game (its token kept in
the seat file under :data:`PLAY_HOME`, whatever port the server had then) or creates a room,
seats bots in the other seats and starts. The server stops when the client does; its games
stay in the file, and come back with it next time.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from client.controller import Controller
from client.session import Session

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
    from client.seats import SeatStore
    from server.app import CastellServer
    from server.config import ServerConfig
    from server.store import open_store

    # The embedded server must not write on the player's screen.
    logging.getLogger("castell").addHandler(logging.NullHandler())
    logging.getLogger("castell").propagate = False
    logging.getLogger("websockets").addHandler(logging.NullHandler())
    logging.getLogger("websockets").propagate = False
    server = CastellServer(ServerConfig(host="127.0.0.1", port=0, bot_delay=bot_delay,
                                        ping_interval=None, idle_timeout=None),
                           open_store(play_db_path()))
    await server.start()
    try:
        session = Session(f"ws://127.0.0.1:{server.port}", name, seats=SeatStore(),
                          home=PLAY_HOME)
        await session.open()

        async def begin(controller: Controller) -> None:
            await controller.start_play(seats, variant, level, resume)

        return await run(session, begin)
    finally:
        await server.close()
