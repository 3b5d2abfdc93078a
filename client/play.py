"""``castell play``: a game against bots in one command, with nothing else running.

A :class:`server.app.CastellServer` is started inside this process, on a free loopback port
and without a database; the client connects to it like to any server, creates a room, seats
bots in the other seats and starts. The server stops when the client does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from client.controller import Controller
from client.session import Session

DEFAULT_BOT_DELAY = 0.6


Startup = Callable[[Controller], Awaitable[None]]


async def play(name: str, *, seats: int, variant: str, level: str, bot_delay: float,
               run: Callable[[Session, Startup], Awaitable[int]]) -> int:
    """Serve, connect, and hand the session to ``run`` with the steps that start the game."""
    from server.app import CastellServer
    from server.config import ServerConfig

    # The embedded server must not write on the player's screen.
    logging.getLogger("castell").addHandler(logging.NullHandler())
    logging.getLogger("castell").propagate = False
    logging.getLogger("websockets").addHandler(logging.NullHandler())
    logging.getLogger("websockets").propagate = False
    server = CastellServer(ServerConfig(host="127.0.0.1", port=0, bot_delay=bot_delay,
                                        ping_interval=None, idle_timeout=None))
    await server.start()
    try:
        # The room dies with this process: no seat token worth keeping.
        session = Session(f"ws://127.0.0.1:{server.port}", name, seats=None)
        await session.open()

        async def begin(controller: Controller) -> None:
            await controller.start_play(seats, variant, level)

        return await run(session, begin)
    finally:
        await server.close()
